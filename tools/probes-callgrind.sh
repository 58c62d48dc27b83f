#!/bin/sh
# SPDX-License-Identifier: MIT
# probes-callgrind.sh - instructions per repeated hit, string by string
# (bench/probes.c under callgrind; the goal: max/median <= 1.3).
# usage: tools/probes-callgrind.sh ATOMPROBES FILE [OUTDIR] [-- PROBES_ARGS...]
#   OUTDIR  where the dumps and probes.tsv go (default: a temp dir, removed)
# atomprobes dumps once per string ("probe INDEX LEN", --reps hits) and once
# for a corpus sample ("corpus N", one hit per token); with
# --collect-atstart=no --toggle-collect=probe_hit each dump holds exactly
# those calls, so Ir per hit = the dump's total / its hits. Prints min /
# median / p99 / max Ir per hit and max/median for the 8-16-byte strings
# and the 100-byte ones (a class each: a longer key costs more to hash and
# compare whatever the probe), the worst strings, and the corpus average.
# Each figure includes probe_hit's own few instructions (call and check).
set -e
bin=$1 file=$2
[ -n "$bin" ] && [ -n "$file" ] || {
    echo "usage: $0 ATOMPROBES FILE [OUTDIR] [-- PROBES_ARGS...]" >&2; exit 2; }
shift 2
out=""
if [ $# -gt 0 ] && [ "$1" != "--" ]; then out=$1; shift; fi
[ "${1:-}" = "--" ] && shift
if [ -z "$out" ]; then
    out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
rm -f "$out"/callgrind.probes*

reps=100   # atomprobes' default; --reps N among the args overrides it
prev=""
for a in "$@"; do [ "$prev" = --reps ] && reps=$a; prev=$a; done

valgrind --tool=callgrind --collect-atstart=no --toggle-collect=probe_hit \
    --callgrind-out-file="$out/callgrind.probes" "$bin" "$@" "$file" \
    2>"$out/valgrind.log" | sed 's/^/  /'

# One line per dump: LABEL-WORDS... TOTAL, then Ir per hit per string.
for f in "$out"/callgrind.probes.*; do
    awk '/^desc: Trigger: Client Request:/ { sub(/^desc: Trigger: Client Request: /, ""); l = $0 }
         /^(summary|totals):/ { ir = $2 }
         END { print l, ir }' "$f"
done > "$out/dumps.txt"
awk -v reps="$reps" '$1 == "probe" { printf "%d\t%d\t%.2f\n", $2, $3, $4 / reps }' \
    "$out/dumps.txt" | sort -t "$(printf '\t')" -k3,3n > "$out/probes.tsv"
[ -s "$out/probes.tsv" ] || { echo "probes-callgrind: no dumps (see $out/valgrind.log)" >&2; exit 1; }

# summary CLASS AWK-FILTER: n, min, median, p99 (nearest rank), max, max/median
summary() {
    awk -F '\t' "$2"' { v[n++] = $3 }
        END { if (!n) exit; m = n % 2 ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2
              r = int(0.99 * n); if (r < 0.99 * n) r++
              printf "%-6s %5d %8.1f %8.1f %8.1f %8.1f %10.2f\n", c, n, v[0], m, v[r - 1], v[n - 1], v[n - 1] / m }' \
        c="$1" "$out/probes.tsv"
}
echo "Ir per hit (atab_intern + atab_release, callgrind, $reps hits per string):"
printf '%-6s %5s %8s %8s %8s %8s %10s\n' class n min median p99 max max/median
summary short '$2 < 100'
summary long '$2 >= 100'
echo "worst 5 (index, length, Ir per hit):"
sort -t "$(printf '\t')" -k3,3nr "$out/probes.tsv" | head -5 | sed 's/^/  /'
awk '$1 == "corpus" { printf "corpus hit average (first %d tokens, once each): %.1f Ir\n", $2, $3 / $2 }' \
    "$out/dumps.txt"
