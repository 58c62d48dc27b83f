#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-plots.sh - runs the benchmarks that docs/plots draws, with settings
# modest enough for a shared 2-core machine (about a minute and a half), and
# keeps each one's --json output in OUTDIR beside meta.json (machine, date,
# commit, the command of each). tools/bench-plots.py draws them.
# usage: tools/bench-plots.sh OUTDIR
# The programs, from the environment (make bench-plots sets them); one that
# is empty is skipped with a message, and the chart drawn from it keeps the
# SVG it had:
#   IDREAD ATOMBENCH ATOMPEERS ATOMTHREADS MEMBYTES MEMBYTES_LIBC   bench/ programs
#   SC_BENCH     bench/sc (string_cache, ustr, lasso): string_cache drawn
#                beside atomthreads, all three beside atompeers' C backends
#   NODE_ADDON   atomtab.node, for bench/node-idread.js (NODE: node)
#   CORPUS BIG_TOKENS   the token files (BIG_TOKENS only for atombench)
# Knobs, for steadier figures (defaults in brackets):
#   PLOTS_IDREAD_ITERS [1000000]  PLOTS_IDREAD_REPEATS [5]
#   PLOTS_NODE_ITERS [10e6]  PLOTS_NODE_SLOW_ITERS [1e6]  PLOTS_NODE_RUNS [3]
#   PLOTS_SUITE_REPS [3]  PLOTS_PEERS_REPS [3]
#   PLOTS_THREADS [1,2,4,8,16]  PLOTS_MODES [hit,same,samedyn,mix]
#   PLOTS_MS [200]  PLOTS_REPS [3]
set -e
out=$1
[ -n "$out" ] && [ -n "$CORPUS" ] || { echo "usage: CORPUS=FILE ... $0 OUTDIR" >&2; exit 2; }
mkdir -p "$out"
rm -f "$out"/*.json   # no chart may draw a stale file beside fresh ones
NODE=${NODE:-node}
IDREAD_ITERS=${PLOTS_IDREAD_ITERS:-1000000} IDREAD_REPEATS=${PLOTS_IDREAD_REPEATS:-5}
NODE_ITERS=${PLOTS_NODE_ITERS:-10e6} NODE_SLOW_ITERS=${PLOTS_NODE_SLOW_ITERS:-1e6}
NODE_RUNS=${PLOTS_NODE_RUNS:-3} SUITE_REPS=${PLOTS_SUITE_REPS:-3}
PEERS_REPS=${PLOTS_PEERS_REPS:-3}
THREADS=${PLOTS_THREADS:-1,2,4,8,16} MODES=${PLOTS_MODES:-hit,same,samedyn,mix}
MS=${PLOTS_MS:-200} REPS=${PLOTS_REPS:-3}
commands=""

# json_str S: S as a JSON string literal
json_str() {
    printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"
}
# run NAME FILE CMD...: runs CMD into OUTDIR/FILE (kept only if CMD
# succeeds) and records the command under NAME in meta.json
run() {
    name=$1 file=$2
    shift 2
    echo "== $name: $*"
    "$@" > "$out/$file.tmp"
    mv "$out/$file.tmp" "$out/$file"
    commands="$commands${commands:+, }$(json_str "$name"): $(json_str "$*")"
}
skipped() { echo "== $1: SKIPPED ($2); its chart keeps the SVG it had"; }

if [ -n "$IDREAD" ]; then
    run idread idread.json "$IDREAD" --json --iters "$IDREAD_ITERS" --repeats "$IDREAD_REPEATS"
else skipped idread "no IDREAD"; fi

if [ -n "$NODE_ADDON" ] && command -v "$NODE" >/dev/null 2>&1; then
    # the environment, in the recorded command, as a shell would take it
    run node-idread node-idread.json env ATOMTAB_BENCH_ITERS="$NODE_ITERS" \
        ATOMTAB_BENCH_SLOW_ITERS="$NODE_SLOW_ITERS" ATOMTAB_BENCH_RUNS="$NODE_RUNS" \
        ATOMTAB_NODE="$NODE_ADDON" "$NODE" bench/node-idread.js --json
else skipped node-idread "no node, or no addon built"; fi

if [ -n "$ATOMBENCH" ]; then
    run suite suite.json "$ATOMBENCH" --json --reps "$SUITE_REPS" "$CORPUS" $BIG_TOKENS
else skipped suite "no ATOMBENCH"; fi

if [ -n "$ATOMPEERS" ]; then
    run peers peers.json "$ATOMPEERS" --json --reps "$PEERS_REPS" --sc "$SC_BENCH" \
        "$CORPUS" $BIG_TOKENS
else skipped peers "no ATOMPEERS"; fi

if [ -n "$ATOMTHREADS" ]; then
    run threads threads.atomtab.json "$ATOMTHREADS" --json --threads "$THREADS" \
        --modes "$MODES" --ms "$MS" --reps "$REPS" "$CORPUS"
else skipped threads "no ATOMTHREADS"; fi
if [ -n "$SC_BENCH" ]; then
    run threads-sc threads.string_cache.json "$SC_BENCH" --json --threads "$THREADS" \
        --modes "$MODES" --ms "$MS" --reps "$REPS" "$CORPUS"
else skipped threads-sc "bench/sc not built: no rustup cargo"; fi

if [ -n "$MEMBYTES" ]; then
    run membytes membytes.json "$MEMBYTES" --json "$CORPUS"
else skipped membytes "no MEMBYTES"; fi
if [ -n "$MEMBYTES_LIBC" ]; then
    run membytes-libc membytes-libc.json "$MEMBYTES_LIBC" --json "$CORPUS"
else skipped membytes-libc "only with ALLOCATOR=system"; fi

# meta.json: what the charts' subtitles and footnotes say
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
os=$(sed -n 's/^PRETTY_NAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' /etc/os-release 2>/dev/null)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
# the charts themselves and their data do not make a tree dirty
dirty=false
[ -z "$(git status --porcelain --untracked-files=no -- . ':(exclude)docs/plots' 2>/dev/null)" ] ||
    dirty=true
node=""
command -v "$NODE" >/dev/null 2>&1 && node=$("$NODE" --version)
cat > "$out/meta.json" <<EOF
{"cpu": $(json_str "${cpu:-unknown}"), "nproc": $(nproc 2>/dev/null || echo 0), "os": $(json_str "${os:-$(uname -s)}"),
 "kernel": $(json_str "$(uname -r)"), "cc": $(json_str "$(${CC:-cc} --version 2>/dev/null | head -n 1)"),
 "node": $(json_str "$node"), "date": $(json_str "$(date -u '+%Y-%m-%d %H:%M UTC')"),
 "commit": $(json_str "$commit"), "dirty": $dirty,
 "commands": {$commands}}
EOF
echo "== JSON in $out"
