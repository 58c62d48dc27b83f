#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh - the device bundle's one script (make device-bundle copies it
# into build/device/ beside static binaries and the corpora): runs, on a
# bare machine with only a shell, coreutils and awk,
#   (d) machine.txt     lscpu, nproc, uname, memory, the bundle's versions
#   (a) peers.txt       atompeers: one thread, atomtab beside string_cache,
#                       ustr, lasso, GLib, libxml2 and naive, on the bundled
#                       corpus and the C-headers corpus
#   (b)+(c) lifecycle.txt   bench-lifecycle.sh: hit, samedyn and mix at
#                       1, 2, 4, 8, 16 threads, atomtab beside string_cache
#                       (Mops/s, CPU ns per op), one thread of each pinned
#                       to the last CPU, mix with a table per thread (the
#                       floor), then the reader-latency test alone and
#                       beside 15 churning threads, and the goals as
#                       same-run ratios
#   gap.txt             one thread of atomtab and string_cache on the
#                       bundled corpus, each way the figures are taken,
#                       pinned to the same CPU, in interleaved rounds:
#                       atompeers' children (one pass, wall time),
#                       atomthreads (300 ms runs, CPU time) on a worker
#                       beside the main thread's idle record, on the main
#                       thread itself (--inline), and on a worker alone on
#                       the table (--warm-thread), and bench/sc's threads
#                       mode; what tells the harnesses' one-thread hit and
#                       mix apart where they disagree; first, what a chain
#                       of adds to one word in memory costs a step against
#                       the same in a register (atomthreads --chain)
#   ab.txt              candidate builds timed against each other, one
#                       thread, pinned: each pair the bundle holds
#                       (Makefile: DEVICE_AB; tools/ab.sh), on both
#                       corpora, B/A as ab.sh gives it
#   lifecycle.json      every JSON the lifecycle runs wrote, one after another
#   gracecount.txt      atomgracecount: grace periods (membarrier calls)
#                       per 1,000 transient atoms at 1, 2, 4, 8, 16 threads
#   urcu.txt            atomurcu: one grace period of ours against
#                       liburcu-memb's, and call_rcu per item, with 1, 2, 4,
#                       8, 16 readers in sections
#   run.log             what each step printed on stderr, and its timing
# usage: run.sh OUTDIR      (at most these 9 files in OUTDIR)
# SCALE (default 1) multiplies the run's lengths: SCALE=0.05 is a smoke
# run of the whole script. At SCALE=1 it took 184 s on a 2-core machine
# (peers 107 s, lifecycle 77 s) before ab.txt, whose two passes take about
# 26 s a pair more (157 s for six); the thread runs have fixed lengths, so
# 16 cores should take about as long, and STEP_TIMEOUT stops any step but
# gap and ab (fixed lengths too) that runs past it: with seven pairs the
# whole stays under 8 minutes (AB_PASSES=1 saves about 90 s).
# Knobs: AB_PASSES (2: ab.txt's passes), CHURNERS (15), THREADS
# (1,2,4,8,16), STEP_TIMEOUT (170 s a step), ROUNDS (2: the lifecycle's
# rounds), PEERS_CPU (the CPU that atompeers and its children run on,
# through taskset where there is one; default the last CPU; "none" leaves
# them where the scheduler puts them). On a
# 16-vCPU KVM guest, unpinned, atomtab's corpus hit read 8.97 ns in one
# run and 12.4-13.0 in three others, every peer as much slower; pinned to
# CPU 3 or 11, 7.4-8.3 ns, and its mix time over string_cache's
# 0.62-0.65 in six runs (0.66-0.74 in three unpinned).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR}
mkdir -p "$out" || exit 1
S=${SCALE:-1} AB_PASSES=${AB_PASSES:-2} CHURNERS=${CHURNERS:-15} THREADS=${THREADS:-1,2,4,8,16} ROUNDS=${ROUNDS:-2}
PEERS_CPU=${PEERS_CPU:-$(( $(nproc) - 1 ))}
pin=""
[ "$PEERS_CPU" != none ] && command -v taskset >/dev/null 2>&1 && pin="taskset -c $PEERS_CPU"
STEP_TIMEOUT=${STEP_TIMEOUT:-170}
log=$out/run.log
: > "$log"
t_start=$(date +%s)

# scale V MIN: V * SCALE rounded, at least MIN
scale() { awk -v v="$1" -v s="$S" -v m="$2" 'BEGIN { x = int(v * s + 0.5); print x < m ? m : x }'; }
# step NAME FILE CMD...: CMD's stdout into OUTDIR/FILE (kept as far as it
# got), its stderr and timing into run.log; a step past STEP_TIMEOUT is
# stopped and the next one runs
step() {
    name=$1 file=$2
    shift 2
    t0=$(date +%s)
    echo "== $name: $*" >> "$log"
    if command -v timeout >/dev/null 2>&1; then
        timeout "$STEP_TIMEOUT" "$@" > "$out/$file" 2>> "$log"
    else
        "$@" > "$out/$file" 2>> "$log"
    fi
    echo "== $name: exit $?, $(( $(date +%s) - t0 )) s" >> "$log"
    echo "== $name done ($(( $(date +%s) - t_start )) s)"
}

# fixed NAME FILE FUNC: as step, for a shell function whose runs have fixed
# lengths (timeout cannot run a function, and these need none)
fixed() {
    t0=$(date +%s)
    echo "== $1: $3" >> "$log"
    "$3" > "$out/$2" 2>> "$log"
    echo "== $1: exit $?, $(( $(date +%s) - t0 )) s" >> "$log"
    echo "== $1 done ($(( $(date +%s) - t_start )) s)"
}

machine() {
    echo "== date"; date -u
    echo "== uname -a"; uname -a
    echo "== nproc"; nproc
    echo "== lscpu"; lscpu 2>/dev/null || grep -m 1 'model name' /proc/cpuinfo
    echo "== memory"; free -m 2>/dev/null || head -n 3 /proc/meminfo
    echo "== transparent huge pages (enabled, defrag)"
    cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag 2>&1
    echo "== kernel command line"; cat /proc/cmdline 2>&1
    echo "== bundle"; cat "$here/VERSIONS"
    echo "== SCALE=$S CHURNERS=$CHURNERS THREADS=$THREADS ROUNDS=$ROUNDS peers: ${pin:-not pinned}"
}
machine > "$out/machine.txt" 2>> "$log"

# (a) one thread, every peer; SCALE < 1: fewer repeats, a prefix of each corpus
reps=$(scale 5 1)
limit=$(awk -v s="$S" 'BEGIN { print (s >= 1 ? 0 : int(1700000 * s)) }')
step peers peers.txt $pin "$here/atompeers" --sc "$here/atomtab-sc-bench" --reps "$reps" \
    $( [ "$limit" -gt 0 ] && echo --limit "$limit" ) \
    "$here/nodejs-api-docs.atoms" "$here/c-headers.tokens"

# (e) one thread, the harnesses side by side (gap.txt, above)
gap() {
    echo "== atomthreads --chain (store-to-load forwarding: a counter stepped in memory)"
    $pin "$here/atomthreads" --chain
    for r in $(seq 1 "$(scale 3 1)"); do
        echo "== round $r: atompeers --child atomtab, then --peer string_cache (ns per op)"
        $pin "$here/atompeers" --child atomtab "$here/nodejs-api-docs.atoms"
        $pin "$here/atomtab-sc-bench" --peer string_cache "$here/nodejs-api-docs.atoms" | tail -n 1
        for v in "" --inline --warm-thread; do
            echo "== round $r: atomthreads ${v:-(a worker)} (Mops/s, CPU ns per op)"
            $pin "$here/atomthreads" $v --threads 1 --modes hit,mix --reps 3 \
                --ms "$(scale 300 20)" "$here/nodejs-api-docs.atoms" | grep -E '^(hit|mix) '
        done
        echo "== round $r: atomtab-sc-bench --threads 1 (string_cache)"
        $pin "$here/atomtab-sc-bench" --threads 1 --modes hit,mix --reps 3 \
            --ms "$(scale 300 20)" "$here/nodejs-api-docs.atoms" | grep -E '^(hit|mix) '
    done
}
fixed gap gap.txt gap

# (b) threads and (c) reader latency beside CHURNERS churning threads
lc=$(mktemp -d)
step lifecycle lifecycle.txt env LC_THREADS="$THREADS" LC_MODES=hit,samedyn,mix \
    LC_MS="$(scale 300 20)" LC_REPS=3 LC_ROUNDS="$ROUNDS" LC_BATCHES="$(scale 2000000 20000)" \
    LC_CHURNERS="$CHURNERS" sh "$here/bench-lifecycle.sh" "$here/atomthreads" \
    "$here/atomlatency" "$here/atomtab-sc-bench" "$here/nodejs-api-docs.atoms" "$lc"
for f in "$lc"/*.json; do
    [ -f "$f" ] && { echo "== $(basename "$f")"; cat "$f"; }
done > "$out/lifecycle.json"
rm -rf "$lc"
step gracecount gracecount.txt "$here/atomgracecount" --threads "$THREADS" \
    --atoms "$(scale 400000 16000)"
step urcu urcu.txt "$here/atomurcu" --threads "$THREADS" \
    --calls "$(scale 2000 50)" --items "$(scale 200000 5000)"

# (f) candidate builds against the bundle's commit, one thread, pinned
# (ab.txt): each pair ab-NAME and ba-NAME (tools/ab.sh's two binaries, A
# and B linked in both places; ab-NAME.txt names their commits), on the
# C headers and the bundled corpus; B/A the geometric mean of both
# binaries' ratios (ab-ratio.awk): below 1, B is faster; AB_PASSES
# passes over every pair, one after another. Last, so that a run stopped
# early has the rest
abx() {
    abt=$(mktemp -d)
    for pass in $(seq 1 "$AB_PASSES"); do
        for d in "$here"/ab-*.txt; do
            [ -f "$d" ] || continue
            n=$(basename "$d" .txt) && n=${n#ab-}
            for w in c-headers.tokens:hit,stream,hitrel nodejs-api-docs.atoms:hit,hitrel,mix; do
                echo "== pass $pass: $n, ${w%%:*}: $(cat "$d")"
                for v in ab ba; do
                    $pin "$here/$v-$n" "$here/${w%%:*}" --rounds "$(scale 10 2)" \
                        --only "${w#*:}" > "$abt/$v"
                done
                cat "$abt/ab" "$abt/ba"
                echo "B/A, the geometric mean of both (best, mean):"
                awk -f "$here/ab-ratio.awk" "$abt/ab" "$abt/ba"
            done
        done
    done
    rm -rf "$abt"
}
fixed ab ab.txt abx

echo "== run.sh: $(( $(date +%s) - t_start )) s in all" | tee -a "$log"
