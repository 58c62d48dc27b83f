#!/bin/sh
# SPDX-License-Identifier: MIT
# check-tools.sh - the tools' failure paths that need a process of their
# own, and the generator's man page (make test runs it):
#  - an input that cannot be read to its end is an error (exit 1 for
#    atomtab-report, 2 for atomtab-genstatic) with a message, never a
#    success on what was read: a directory (EISDIR), and a 64 MB line under
#    `ulimit -v` 50 MB (getline fails with ENOMEM); genstatic then writes
#    no output;
#  - atomtab-report's usage errors name the option, and it reads CRLF lines
#    as LF ones;
#  - every option each tool's --help names is in its man page;
#  - every public function in include/atomtab.h says whether it is
#    thread-safe (a declaration right after another shares its comment).
# usage: tools/check-tools.sh BUILD-DIR
set -eu
O=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-tools: $*" >&2; exit 1; }
report="$O/atomtab-report"
gen="$O/atomtab-genstatic"

# expect STATUS MESSAGE-PART COMMAND...: runs it, checks status and stderr
expect() {
    want=$1 part=$2
    shift 2
    set +e
    "$@" >/dev/null 2>"$tmp/err"
    rc=$?
    set -e
    [ "$rc" = "$want" ] && grep -q -- "$part" "$tmp/err" ||
        fail "$* exited $rc (want $want, message '$part'): $(cat "$tmp/err")"
}
expect 1 "cannot read $tmp: Is a directory" "$report" "$tmp"
expect 2 "cannot read $tmp: Is a directory" "$gen" --name x --no-default "$tmp" "$tmp/x.c" "$tmp/x.h"

# a line longer than the address space allows: run under ulimit -v in a
# subshell, fed from a pipe (no 64 MB file)
big_line() { head -c 67108864 /dev/zero | tr '\0' x; echo; }
set +e
big_line | (ulimit -v 50000 && exec "$report" -) >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "Cannot allocate memory" "$tmp/err" ||
    fail "atomtab-report on a 64 MB line under ulimit -v: exit $rc: $(cat "$tmp/err")"
set +e
big_line | (ulimit -v 50000 && exec "$gen" --name x --no-default /dev/stdin "$tmp/x.c" "$tmp/x.h") \
    2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "Cannot allocate memory" "$tmp/err" ||
    fail "atomtab-genstatic on a 64 MB line under ulimit -v: exit $rc: $(cat "$tmp/err")"
[ ! -e "$tmp/x.c" ] && [ ! -e "$tmp/x.h" ] || fail "atomtab-genstatic wrote a partial set"

# usage errors say what is wrong; CRLF lines are the same tokens as LF lines
expect 2 "--process needs a name" "$report" --process
printf 'div\r\nspan-x\r\nspan-x\n' | "$report" --json - > "$tmp/crlf.json" ||
    fail "atomtab-report on CRLF lines exited non-zero"
grep -q '"path":"atoms-dynamic","kind":2,"units":1,"amount":1,' "$tmp/crlf.json" ||
    fail "atomtab-report made more than one atom of span-x from CRLF and LF lines: $(grep atoms-dynamic "$tmp/crlf.json")"

# each tool's man page documents every option its --help names
for tool in "$gen" "$report"; do
    page=tools/$(basename "$tool").1
    "$tool" --help > "$tmp/help" || fail "$tool --help exited non-zero"
    for opt in $(grep -o -- '--[a-z][a-z-]*' "$tmp/help" | sort -u); do
        grep -q -- "$(echo "$opt" | sed 's/-/\\\\-/g')" "$page" ||
            fail "option $opt is in --help but not in $page"
    done
done
awk '/^ATAB_API/ { if (text !~ /[Tt]hread-safe/ && last != NR - 1) { print; bad = 1 }
                   text = ""; last = NR; next }
     { text = text $0 }
     END { exit bad }' include/atomtab.h >"$tmp/nothread" ||
    fail "no thread-safety line for: $(cat "$tmp/nothread")"
echo "check-tools: read errors fail both tools; the man pages have every option;"
echo "check-tools: every public function says whether it is thread-safe"
