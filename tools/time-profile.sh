#!/bin/sh
# SPDX-License-Identifier: MIT
# time-profile.sh - where one atombench workload's time goes, as shares of
# its samples (perf's cpu-clock event: timer sampling, which needs no
# hardware counters, so it works in a VM). Call graphs are unwound from
# the stacks' DWARF information (the library keeps no frame pointers), and
# perf script names the inlined functions from the debug information.
# Callgrind counts instructions; this shows the stalls they hide (a miss,
# a locked instruction, a load that waits for a store, a page fault).
# usage: tools/time-profile.sh ATOMBENCH FILE [WORKLOAD] [RUNS] [TOP]
#   WORKLOAD  stream, hit, miss or repeat (default stream); the shares are
#             of the samples inside wl_WORKLOAD
#   RUNS      runs of atombench, seeds 1..RUNS (default 6)
#   TOP       rows of each list (default 30)
# Prints the functions the samples were in (self) and those on their
# stacks (inclusive), each as a share of the workload's samples.
set -e
bench=$1 file=$2 wl=${3:-stream} runs=${4:-6} top=${5:-30}
[ -n "$bench" ] && [ -n "$file" ] || {
    echo "usage: $0 ATOMBENCH FILE [WORKLOAD] [RUNS] [TOP]" >&2; exit 2; }
case $wl in
stream|hit|miss|repeat) ;;
*) echo "$0: no workload '$wl' (stream, hit, miss or repeat)" >&2; exit 2 ;;
esac
command -v perf > /dev/null || { echo "$0: perf not found (Debian: linux-perf)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
i=1
while [ "$i" -le "$runs" ]; do
    perf record -q -e cpu-clock -F 15000 --call-graph dwarf,8192 -o "$tmp/perf.data" \
        "$bench" --child atomtab "$file" --only "$wl" --seed "$i" > /dev/null
    perf script -i "$tmp/perf.data" 2> "$tmp/script.log" >> "$tmp/script" || {
        echo "$0: perf script failed:" >&2; cat "$tmp/script.log" >&2; exit 1; }
    rm -f "$tmp/perf.data"
    i=$((i + 1))
done
# perf script: a header line, then one frame a line ("addr sym+off (dso)"),
# a blank line after each sample.
awk -v root="wl_$wl" -v top="$top" '
function flush(   i, seen) {
    if (nf == 0) return
    inside = 0
    for (i = 1; i <= nf; i++) if (f[i] == root) inside = 1
    if (inside) {
        n++; self[f[1]]++
        for (i = 1; i <= nf; i++) if (!(f[i] in seen)) { seen[f[i]] = 1; incl[f[i]]++ }
    }
    nf = 0
}
/^$/ { flush(); next }
/^[ \t]/ { sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym); f[++nf] = sym; next }
{ flush() }
END {
    flush()
    if (!n) { print "no samples inside " root > "/dev/stderr"; exit 1 }
    printf "%d samples inside %s\n", n, root
    sorter = "sort -rn | head -n " top
    print "self:"
    for (k in self) printf "%6.1f%% %s\n", 100 * self[k] / n, k | sorter
    close(sorter)
    print "inclusive:"
    for (k in incl) printf "%6.1f%% %s\n", 100 * incl[k] / n, k | sorter
}' "$tmp/script"
