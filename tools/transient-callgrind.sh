#!/bin/sh
# SPDX-License-Identifier: MIT
# transient-callgrind.sh - instructions per transient atom (callgrind,
# exact and repeatable): bench/transient.c's three loops collected after its
# warm-up, then 8 x mix - 7 x hit - snprintf per 8 ops; and run_alone, a
# transient atom with no hits between (ops / 8 of them).
# The table's hash seed places every key, and so moves these counts a
# little from one seed to the next (a random seed: 393-408 instructions a
# transient atom in runs of one build). Each seed of SEEDS runs once, with
# its figures on a line of their own (the same seed gives the same counts
# to the instruction); the last line is the median over the seeds, the
# figure to quote, with the range.
# usage: tools/transient-callgrind.sh ATOMTRANSIENT FILE [OPS]
#   SEEDS  the table seeds, a space-separated list (default "1 2 3 4 5")
set -e
bin=$1 file=$2 ops=${3:-400000}
[ -n "$bin" ] && [ -n "$file" ] || { echo "usage: $0 ATOMTRANSIENT FILE [OPS]" >&2; exit 2; }
seeds=${SEEDS:-"1 2 3 4 5"}
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
for seed in $seeds; do
    valgrind --tool=callgrind --callgrind-out-file="$out/cg" --collect-atstart=no \
        --toggle-collect=run_hit --toggle-collect=run_mix --toggle-collect=run_fmt \
        --toggle-collect=run_alone \
        "$bin" --ops "$ops" --reps 1 --seed "$seed" "$file" >/dev/null 2>"$out/vg.log" ||
        { echo "transient-callgrind: $bin failed under valgrind (seed $seed):" >&2
          cat "$out/vg.log" >&2; exit 1; }
    callgrind_annotate --inclusive=yes "$out/cg" 2>/dev/null | awk -v ops="$ops" -v seed="$seed" '
        /:run_hit / { gsub(",", "", $1); hit = $1 }
        /:run_mix / { gsub(",", "", $1); mix = $1 }
        /:run_fmt / { gsub(",", "", $1); fmt = $1 }
        /:run_alone / { gsub(",", "", $1); alone = $1 }
        END {
            if (!hit || !mix || !fmt || !alone) { print "transient-callgrind: no counts" > "/dev/stderr"; exit 1 }
            printf "seed %s: Ir per op: hit + release %.1f, mix %.1f, snprintf %.1f; transient atom %.1f, alone %.1f\n",
                seed, hit / ops, mix / ops, fmt / (ops / 8),
                (8 * mix / ops) - (7 * hit / ops) - fmt / (ops / 8), alone / int(ops / 8)
        }' | tee -a "$out/lines"
done
# the median and range of each seed's transient atom and alone figures
awk 'BEGIN { n = 0 } { for (i = 1; i <= NF; i++) { if ($i == "atom") t[n] = $(i + 1) + 0;
                                   if ($i == "alone") a[n] = $(i + 1) + 0 } n++ }
    function med(v, n,    i, j, x) {
        for (i = 1; i < n; i++) for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
            x = v[j]; v[j] = v[j - 1]; v[j - 1] = x }
        return n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2
    }
    END {
        if (n == 0) { print "transient-callgrind: no seed gave counts" > "/dev/stderr"; exit 1 }
        mt = med(t, n); lo = t[0]; hi = t[n - 1]; ma = med(a, n)
        printf "transient atom %.1f Ir (median of %d seeds; %.1f-%.1f), alone %.1f\n",
            mt, n, lo, hi, ma
    }' "$out/lines"
