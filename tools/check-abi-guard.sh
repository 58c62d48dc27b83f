#!/bin/sh
# SPDX-License-Identifier: MIT
# check-abi-guard.sh - make check-abi's own test: in scratch copies of the
# sources, one deliberate change each, the library is built as make
# check-abi builds it and tools/check-abi.sh is run against the committed
# baseline. Incompatible changes must fail it, compatible ones pass:
#   a public struct's field retyped (atab_stats.statics_seen: 64 -> 32 bits)  fails
#   an existing enumerator's value changed (ATAB_EREFS)                       fails
#   a public function no longer exported (atab_count)                        fails
#   a function added (atab_abi_probe)                                        passes
#   an enumerator added (ATAB_EABI_GUARD, after the last)                     passes
#   a private struct's layout changed (struct atab_table)                     passes
# usage: tools/check-abi-guard.sh SCRATCH-DIR BASELINE.xml  (from the top of the tree)
set -eu
[ $# = 2 ] || { echo "usage: $0 SCRATCH-DIR BASELINE.xml" >&2; exit 2; }
mkdir -p "$1"
scratch=$(cd "$1" && pwd) base=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
version=$(cat VERSION)
fail() { echo "check-abi-guard: $*" >&2; exit 1; }
[ -f "$base" ] || fail "no baseline $2"

# case NAME EXPECT FILE SED-SCRIPT [FILE SED-SCRIPT...]: a copy of the
# sources with each FILE edited by its script (an edit that changes
# nothing is an error, so no case can pass by missing its target), built,
# then checked; EXPECT is pass or fail.
case_() {
    name=$1 expect=$2; shift 2
    dir=$scratch/$name
    rm -rf "$dir"
    mkdir -p "$dir/test"
    cp -R src include tools Makefile VERSION "$dir/"
    cp test/tests.txt test/hook_tests.txt "$dir/test/"
    while [ $# -ge 2 ]; do
        cp "$dir/$1" "$dir/$1.orig"
        sed "$2" "$dir/$1.orig" > "$dir/$1"
        ! cmp -s "$dir/$1" "$dir/$1.orig" || fail "$name: the edit left $1 unchanged"
        shift 2
    done
    (cd "$dir" && make --no-print-directory O=build ALLOCATOR=system OPT="-O2 -g" CFLAGS= \
        lib > build.log 2>&1) || { cat "$dir/build.log"; fail "$name: the library did not build"; }
    so=$dir/build/libatomtab.so.$version
    status=0
    (cd "$dir" && sh tools/check-abi.sh "$so" "$base") > "$dir/check.log" 2>&1 || status=$?
    if [ $expect = pass ] && [ $status = 0 ]; then
        echo "check-abi-guard: $name: passes, as it should"
    elif [ $expect = fail ] && grep -q 'check-abi: ABI changed' "$dir/check.log"; then
        echo "check-abi-guard: $name: fails, as it should ($(grep -m1 -E \
            '^ *(\[C\]|\[D\]|[0-9]+ Removed function)' "$dir/check.log" | sed 's/^ *//'))"
    else
        cat "$dir/check.log"
        fail "$name: check-abi exited $status, expected to $expect"
    fi
}

case_ struct-field fail include/atomtab.h \
    's/^\(    \)size_t statics_seen;/\1uint32_t statics_seen;/'
case_ enum-value fail include/atomtab.h 's/ATAB_EREFS = -6,/ATAB_EREFS = -16,/'
case_ removed-function fail include/atomtab.h \
    's/^ATAB_API size_t atab_count(atab_table \*t);/size_t atab_count(atab_table *t);/'
case_ added-function pass \
    include/atomtab.h 's/^ATAB_API const char \*atab_version(void);/&\nATAB_API int atab_abi_probe(void);/' \
    src/error.c '$a\
int atab_abi_probe(void) { return 1; }'
nm -D --defined-only "$scratch/added-function/build/libatomtab.so.$version" |
    grep -q ' atab_abi_probe$' || fail "added-function: atab_abi_probe is not exported"
case_ added-enumerator pass include/atomtab.h \
    's/^\(    ATAB_EABI = -7\)  /\1, ATAB_EABI_GUARD = -8/'
case_ private-struct pass src/table.h 's/^struct atab_table {$/&\n    uint64_t abi_guard_pad[3];/'
rm -rf "$scratch"
echo "check-abi-guard: the ABI check fails on each incompatible change and passes the compatible ones"
