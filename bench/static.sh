#!/bin/sh
# SPDX-License-Identifier: MIT
# static.sh - the static-atom benchmarks (make bench-static): table creation
# cost with none / the default set / a 10,000-atom set (callgrind
# instructions per atab_table_new), the corpus's static-hit share, static
# vs dynamic hit cost (callgrind instructions per op and ns ratio in the
# same run), the default set's read-only bytes.
# usage: bench/static.sh BUILD_DIR CORPUS
set -eu
O=$1
CORPUS=$2
CG="valgrind --tool=callgrind --collect-atstart=no"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# instructions collected in a callgrind run, divided by what the program printed
per() {
    out=$tmp/cg.out
    n=$($CG --callgrind-out-file="$out" "$@" 2>/dev/null)
    total=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$out")
    [ -n "$total" ] || total=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$out")
    echo "$total $n" | awk '{ printf "%.1f", $1 / $2 }'
}

echo "== atab_table_new (callgrind instructions per call, mean of 10 after a warm-up)"
for mode in none default 10k default+10k; do
    printf '  %-12s %s\n' "$mode" "$(per "$O/bench/static_new" "$mode" 10)"
done
echo "== atab_table_new + atab_table_free of the empty table (the same, per pair)"
for mode in none default; do
    printf '  %-12s %s\n' "$mode" "$(per "$O/bench/static_new" "$mode" 10 free)"
done

echo "== the default set"
size -A "$O/obj/atomtab_atoms.o" | awk '$1 == ".rodata" || $1 ~ /^\.data\.rel\.ro/ {
    printf "  %-20s %s bytes\n", $1, $2 }'
grep -m1 '_COUNT' "$O/gen/atomtab_atoms.h" | awk '{ printf "  atoms                %s\n", $3 }'

echo "== corpus: $CORPUS"
"$O/bench/static_hits" "$CORPUS"
echo "== callgrind instructions per op"
for ph in static dynamic first dynmiss; do
    printf '  %-8s %s\n' "$ph" "$(per "$O/bench/static_hits" "$CORPUS" "$ph")"
done
