#!/bin/sh
# SPDX-License-Identifier: MIT
# ab.sh - two commits of atomtab timed against each other in one process
# (bench/abtest.c): each commit's libatomtab.a is built in a worktree of its
# own, one build's global symbols are renamed B_..., and both link into one
# atomabtest, whose rounds alternate between them; then again with the
# builds' places swapped. On a shared machine whose times swing from run to
# run, B/A is then a same-run ratio.
# usage: tools/ab.sh REV_A REV_B FILE [ROUNDS] [WORKLOADS]
#   REV_A, REV_B  commits (or WORK for the working tree as it is)
#   ROUNDS        rounds a build and workload (default 10)
#   WORKLOADS     a comma list of stream,hit,hitrel,mix,mix2 (default all)
# Knobs (environment): CC (cc), AB_CFLAGS (extra -D... for both builds),
# AB_STATIC=DIR/NAME: build the two binaries linked -static, as
# DIR/ab-NAME and DIR/ba-NAME (FILE, ROUNDS and WORKLOADS unused), for a
# machine with no compiler (the device bundle: tools/device-run.sh runs
# them), and run nothing.
set -e
a=$1 b=$2 file=$3 rounds=${4:-10} only=${5:-stream,hit,hitrel,mix,mix2}
[ -n "$a" ] && [ -n "$b" ] && [ -n "$file" ] || {
    echo "usage: $0 REV_A REV_B FILE [ROUNDS] [WORKLOADS]" >&2; exit 2; }
# (FILE is read after both builds, and tee would hide the binaries' failure)
[ -n "${AB_STATIC:-}" ] || [ -r "$file" ] || { echo "ab.sh: cannot read $file" >&2; exit 2; }
CC=${CC:-cc}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'for w in "$tmp"/wt-*; do [ -d "$w" ] && git -C "$root" worktree remove --force "$w"; done; rm -rf "$tmp"' EXIT

# lib REV NAME: builds REV's libatomtab.a as $tmp/NAME.a
lib() {
    if [ "$1" = WORK ]; then
        src=$root
    else
        src=$tmp/wt-$2
        git -C "$root" worktree add -q --detach "$src" "$1"
    fi
    make -C "$src" -s O="$tmp/build-$2" CFLAGS="${AB_CFLAGS:-}" "$tmp/build-$2/libatomtab.a" >/dev/null
    cp "$tmp/build-$2/libatomtab.a" "$tmp/$2.a"
}
lib "$a" a
lib "$b" b
# each build once as itself and once renamed, so that two binaries hold
# them in both places: what the place itself costs (link order, which table
# is made first) cancels in the geometric mean of the two B/A
for v in a b; do
    nm -g --defined-only "$tmp/$v.a" | awk 'NF == 3 { print $3 " B_" $3 }' | sort -u > "$tmp/syms-$v"
    objcopy --redefine-syms="$tmp/syms-$v" "$tmp/$v.a" "$tmp/$v-renamed.a"
done
# bin NAME ITSELF RENAMED: atomabtest with build ITSELF as A and RENAMED as B
bin() {
    $CC -O2 -std=c11 -D_GNU_SOURCE -I"$root/include" ${AB_STATIC:+-static -s} \
        "$root/bench/abtest.c" -o "$tmp/$1" "$tmp/$2.a" "$tmp/$3-renamed.a" -lxxhash -pthread
}
bin ab a b
bin ba b a
name() { [ "$1" = WORK ] && echo "working tree on $(git -C "$root" rev-parse --short HEAD)" ||
    git -C "$root" rev-parse --short "$1"; }
if [ -n "${AB_STATIC:-}" ]; then
    d=$(dirname "$AB_STATIC") n=$(basename "$AB_STATIC")
    mkdir -p "$d"
    cp "$tmp/ab" "$d/ab-$n" && cp "$tmp/ba" "$d/ba-$n"
    echo "A = $a ($(name "$a")), B = $b ($(name "$b"))" > "$d/ab-$n.txt"
    exit 0
fi
echo "A = $a ($(name "$a")), B = $b ($(name "$b"))"
"$tmp/ab" "$file" --rounds "$rounds" --only "$only" | tee "$tmp/out-ab"
echo "the same with B linked as itself and A renamed (its ratios are A/B):"
"$tmp/ba" "$file" --rounds "$rounds" --only "$only" | tee "$tmp/out-ba"
echo "B/A, the geometric mean of both runs (best, mean):"
awk -f "$root/tools/ab-ratio.awk" "$tmp/out-ab" "$tmp/out-ba"
