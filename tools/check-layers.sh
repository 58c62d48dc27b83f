#!/bin/sh
# SPDX-License-Identifier: MIT
# check-layers.sh - the library's files call one another in layers: no two
# of them call each other, straight or around a loop. From the objects'
# symbols (nm): an object that uses a global symbol another defines calls
# it. tsort orders them, top (callers) first, or names a loop; on a loop
# this prints the calls along it and fails.
# usage: tools/check-layers.sh OBJECT.o...
#        tools/check-layers.sh --self-test [CC]   (its own test: a loop of
#        two scratch objects must fail, a chain of them pass)
set -eu

if [ "${1:-}" = "--self-test" ]; then
    cc=${2:-cc}
    t=$(mktemp -d)
    trap 'rm -rf "$t"' EXIT
    printf 'int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n' > "$t/a.c"
    printf 'int a(int);\nint b(int x) { return x ? a(x - 1) : 1; }\n' > "$t/b.c"
    printf 'int a(int);\nint c(int x) { return a(x); }\n' > "$t/c.c"
    printf 'int b(int x) { return x; }\n' > "$t/b2.c"
    for f in a b c b2; do $cc -c -o "$t/$f.o" "$t/$f.c"; done
    if sh "$0" "$t/a.o" "$t/b.o" "$t/c.o" > "$t/loop.log" 2>&1; then
        echo "check-layers: a loop of a.o and b.o passed" >&2
        exit 1
    fi
    grep -q '  a -> b: b' "$t/loop.log" && grep -q '  b -> a: a' "$t/loop.log" || {
        echo "check-layers: the loop's calls were not named:" >&2
        cat "$t/loop.log" >&2
        exit 1
    }
    mkdir "$t/ok"
    cp "$t/a.o" "$t/c.o" "$t/ok/"
    cp "$t/b2.o" "$t/ok/b.o"
    sh "$0" "$t/ok/a.o" "$t/ok/b.o" "$t/ok/c.o" > "$t/ok.log" 2>&1 || {
        echo "check-layers: a chain c -> a -> b failed:" >&2
        cat "$t/ok.log" >&2
        exit 1
    }
    grep -q '^layers, top first: c a b$' "$t/ok.log" || {
        echo "check-layers: the chain's order is wrong:" >&2
        cat "$t/ok.log" >&2
        exit 1
    }
    echo "check-layers: its own test passed (a loop fails, a chain passes in order)"
    exit 0
fi

[ $# -gt 0 ] || { echo "usage: $0 OBJECT.o... | --self-test [CC]" >&2; exit 2; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
names=""
for o in "$@"; do
    n=$(basename "$o" .o)
    nm -g --defined-only "$o" | awk 'NF == 3 { print $3 }' | sort -u > "$t/$n.def"
    nm -u "$o" | awk '{ print $NF }' | sort -u > "$t/$n.und"
    names="$names $n"
done
: > "$t/edges"
: > "$t/calls"
for a in $names; do
    echo "$a $a" >> "$t/edges"   # every object in the order, called or not
    for b in $names; do
        [ "$a" = "$b" ] && continue
        used=$(comm -12 "$t/$a.und" "$t/$b.def" | tr '\n' ' ')
        [ -n "$used" ] || continue
        echo "$a $b" >> "$t/edges"
        echo "$a -> $b: $used" >> "$t/calls"
    done
done
if ! tsort "$t/edges" > "$t/order" 2> "$t/loop"; then
    loop=$(sed -n 's/^tsort: \([^: ]*\)$/\1/p' "$t/loop" | sort -u | tr '\n' ' ')
    echo "check-layers: these files call each other, around one loop or more: $loop" >&2
    echo "their calls among themselves (caller -> callee: the names it uses):" >&2
    for a in $loop; do
        for b in $loop; do
            grep "^$a -> $b: " "$t/calls" | sed 's/^/  /' >&2 || true
        done
    done
    exit 1
fi
echo "layers, top first: $(tr '\n' ' ' < "$t/order" | sed 's/ $//')"
