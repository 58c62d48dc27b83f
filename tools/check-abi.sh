#!/bin/sh
# SPDX-License-Identifier: MIT
# check-abi.sh - the shared library's ABI against the baseline recorded for
# its soname (make check-abi, make abi-baseline; CHANGELOG.md says when the
# baseline and the soname move).
#   1. only atab_* symbols are exported;
#   2. the library has debug info (abidw reads the types from DWARF);
#   3. abidw dumps the library's ABI (types from include/ only: the
#      library's private structs are opaque to its users), and abidiff
#      compares the baseline with it. Added functions and variables and
#      added enumerators pass; any other change fails, with abidiff's report.
# --record writes the dump as the baseline, after the same checks against
# the baseline already there (an incompatible ABI needs a new soname, so a
# new baseline file: it is never written over the old one).
# usage: tools/check-abi.sh [--record] LIBRARY.so BASELINE.xml
set -eu
record=no
if [ "${1:-}" = --record ]; then record=yes; shift; fi
[ $# = 2 ] || { echo "usage: $0 [--record] LIBRARY.so BASELINE.xml" >&2; exit 2; }
so=$1 base=$2
fail() { echo "check-abi: $*" >&2; exit 1; }
[ -f "$so" ] || fail "no $so"
for tool in abidw abidiff nm readelf; do
    command -v $tool >/dev/null 2>&1 || fail "$tool missing (tools/deps.sh abi installs it)"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. exported symbols
nm -D --defined-only "$so" | awk 'NF == 3 { print $3 }' > "$tmp/syms"
[ -s "$tmp/syms" ] || fail "$so exports nothing"
if grep -v '^atab_' "$tmp/syms" > "$tmp/foreign"; then
    fail "$so exports symbols outside atab_*: $(tr '\n' ' ' < "$tmp/foreign")"
fi
echo "check-abi: $(wc -l < "$tmp/syms") exported symbols, every one atab_*"

# 2. debug info
readelf -S --wide "$so" | grep -q '\.debug_info' ||
    fail "$so has no debug info: build it with -g (make check-abi does)"

# 3. the ABI: exported functions and variables, and the types in include/
# they reach (the library's private structs are opaque to its users). The
# baseline leaves out source locations, the build's paths, the C library
# functions the library calls, and numbers its types by a hash of each, so
# that it changes little when only the library's insides or line numbers
# do; the dump compared with it keeps file:line for abidiff's report.
inc=$(dirname "$0")/../include
dump() {
    abidw --headers-dir "$inc" --drop-private-types --drop-undefined-syms \
        --type-id-style hash --no-corpus-path --no-comp-dir-path "$@"
}
dump --short-locs --out-file "$tmp/new.xml" "$so"
soname=$(sed -n "1s/.* soname='\([^']*\)'.*/\1/p" "$tmp/new.xml")
if [ ! -f "$base" ]; then
    if [ $record = yes ]; then
        dump --no-show-locs --out-file "$base" "$so"
        echo "check-abi: recorded $base ($soname, new)"
        exit 0
    fi
    fail "no baseline $base for $soname: a new soname records one with make abi-baseline"
fi
base_soname=$(sed -n "1s/.* soname='\([^']*\)'.*/\1/p" "$base")
[ "$soname" = "$base_soname" ] ||
    fail "$so is $soname but $base records $base_soname"
arch=$(sed -n "1s/.* architecture='\([^']*\)'.*/\1/p" "$tmp/new.xml")
base_arch=$(sed -n "1s/.* architecture='\([^']*\)'.*/\1/p" "$base")
if [ "$arch" != "$base_arch" ]; then
    echo "check-abi: SKIPPED: $base records $base_arch, this build is $arch"
    exit 0
fi

# abidiff's status is a bit set: 1 error, 2 usage, 4 an ABI change,
# 8 an incompatible one. With --no-added-syms added functions and
# variables are no change; added enumerators are harmless by default.
status=0
abidiff --no-added-syms "$base" "$tmp/new.xml" > "$tmp/diff" 2>&1 || status=$?
if [ $status != 0 ]; then
    cat "$tmp/diff"
    [ $((status & 3)) = 0 ] || fail "abidiff could not compare (status $status)"
    fail "ABI changed against $base (abidiff status $status): an incompatible" \
         "change needs a new major version (VERSION, the header) and a new baseline"
fi
abidiff "$base" "$tmp/new.xml" > "$tmp/added" 2>&1 || true
added=$(sed -n 's/^Functions changes summary:.* \([0-9][0-9]*\) Added functions*$/\1/p' \
        "$tmp/added")
added_vars=$(sed -n 's/^Variables changes summary:.* \([0-9][0-9]*\) Added variables*$/\1/p' \
        "$tmp/added")
echo "check-abi: $so ($soname) is compatible with $base" \
     "(${added:-0} functions and ${added_vars:-0} variables added)"
grep '^  \[A\]' "$tmp/added" || true
if [ $record = yes ]; then
    dump --no-show-locs --out-file "$base" "$so"
    echo "check-abi: recorded $base"
fi
