#!/bin/sh
# SPDX-License-Identifier: MIT
# transient-callgrind.sh - instructions per transient atom (callgrind,
# exact and repeatable): bench/transient.c's three loops collected after its
# warm-up, then 8 x mix - 7 x hit - snprintf per 8 ops; and run_alone, a
# transient atom with no hits between (ops / 8 of them).
# usage: tools/transient-callgrind.sh ATOMTRANSIENT FILE [OPS]
set -e
bin=$1 file=$2 ops=${3:-400000}
[ -n "$bin" ] && [ -n "$file" ] || { echo "usage: $0 ATOMTRANSIENT FILE [OPS]" >&2; exit 2; }
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out/cg" --collect-atstart=no \
    --toggle-collect=run_hit --toggle-collect=run_mix --toggle-collect=run_fmt \
    --toggle-collect=run_alone \
    "$bin" --ops "$ops" --reps 1 "$file" >/dev/null 2>&1
callgrind_annotate --inclusive=yes "$out/cg" 2>/dev/null | awk -v ops="$ops" '
    /:run_hit / { gsub(",", "", $1); hit = $1 }
    /:run_mix / { gsub(",", "", $1); mix = $1 }
    /:run_fmt / { gsub(",", "", $1); fmt = $1 }
    /:run_alone / { gsub(",", "", $1); alone = $1 }
    END {
        if (!hit || !mix || !fmt || !alone) { print "transient-callgrind: no counts"; exit 1 }
        printf "Ir per op: hit + release %.1f, mix %.1f, snprintf %.1f; transient atom %.1f, alone %.1f\n",
            hit / ops, mix / ops, fmt / (ops / 8), (8 * mix / ops) - (7 * hit / ops) - fmt / (ops / 8),
            alone / int(ops / 8)
    }'
