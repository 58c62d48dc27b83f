#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-callgrind.sh - instructions per op (callgrind, exact and repeatable)
# for each atombench backend and workload on one token file.
# usage: tools/bench-callgrind.sh ATOMBENCH FILE [BACKENDS] [OUTDIR]
#   BACKENDS  space-separated (default: atomtab glib libxml2 naive)
#   OUTDIR    where the callgrind.out files go (default: a temp dir, removed)
# Each figure is the inclusive Ir of one workload function (wl_stream,
# wl_hit, wl_miss, wl_repeat; --toggle-collect) divided by its op count.
set -e
bench=$1 file=$2
backends=${3:-"atomtab glib libxml2 naive"}
out=${4:-}
[ -n "$bench" ] && [ -n "$file" ] || { echo "usage: $0 ATOMBENCH FILE [BACKENDS] [OUTDIR]" >&2; exit 2; }
[ -x "$bench" ] || { echo "bench-callgrind: $bench: not an executable" >&2; exit 2; }
[ -r "$file" ] || { echo "bench-callgrind: cannot read $file" >&2; exit 2; }
if [ -z "$out" ]; then
    out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
REP_OPS=${REP_OPS:-100000}
SEED=${SEED:-1}   # atomtab's hash seed, fixed so the counts repeat exactly

# measure BACKEND WORKLOAD FUNC [LEN]: prints Ir per op
measure() {
    f="$out/callgrind.$1.$2${4:+.$4}"
    extra=""
    [ -n "$4" ] && extra="--len $4"
    ops=$(valgrind --tool=callgrind --callgrind-out-file="$f" --collect-atstart=no \
        --toggle-collect="$3" "$bench" --child "$1" "$file" --only "$2" $extra \
        --rep-ops "$REP_OPS" --seed "$SEED" 2>/dev/null | sed -n 's/.* ops=\([0-9]*\).*/\1/p')
    [ "$2" = repeat ] && ops=$REP_OPS
    ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$f" 2>/dev/null)
    [ -n "$ir" ] || ir=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$f" 2>/dev/null)
    if [ -z "$ir" ] || [ "$ir" = 0 ] || [ -z "$ops" ] || [ "$ops" = 0 ]; then
        echo "bench-callgrind: $1 $2: no count (ops '$ops', Ir '$ir')" >&2
        : > "$out/failed"; printf 'n/a'; return
    fi
    awk -v ir="$ir" -v ops="$ops" 'BEGIN { printf "%.1f", ir / ops }'
}

printf '%-8s %10s %10s %10s %10s %10s\n' backend stream hit miss rep3 rep101
for b in $backends; do
    printf '%-8s %10s %10s %10s %10s %10s\n' "$b" \
        "$(measure "$b" stream wl_stream)" "$(measure "$b" hit wl_hit)" \
        "$(measure "$b" miss wl_miss)" "$(measure "$b" repeat wl_repeat 3)" \
        "$(measure "$b" repeat wl_repeat 101)"
done
echo "(Ir per op, callgrind; $file; repeat: $REP_OPS ops; atomtab seed $SEED)"
[ ! -e "$out/failed" ] || { echo "bench-callgrind: some counts failed (n/a above)" >&2; exit 1; }
