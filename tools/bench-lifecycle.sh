#!/bin/sh
# SPDX-License-Identifier: MIT
# bench-lifecycle.sh - throughput and reader latency of atomtab
# (bench/threads.c, bench/latency.c) and string_cache (bench/sc) on one
# token file, then the goals as same-run ratios: atomtab against
# string_cache (mix and hit, one thread), atomtab's scaling and CPU per op
# from 1 to 2 and 16 threads, a reader's p99 and p99.99 beside churning
# threads against alone.
# usage: tools/bench-lifecycle.sh ATOMTHREADS ATOMLATENCY SC_BENCH FILE [OUTDIR]
#   SC_BENCH  the bench/sc binary, or "" to run atomtab alone (its own
#             ratios only)
#   OUTDIR    where each run's JSON is kept (default: a temp dir, removed)
# Knobs (environment): LC_THREADS (1,2,16), LC_MODES (hit,same,samedyn,mix),
#   LC_MS (300), LC_REPS (3), LC_ROUNDS (3), LC_BATCHES (2000000),
#   LC_CHURNERS (1: the churning threads beside the latency test's reader),
#   LC_PIN1 (the CPU for the pinned one-thread runs below: the last by
#   default; "none" skips them).
# Throughput runs in rounds: in each, every mode runs atomtab then
# string_cache back to back (each the median of LC_REPS runs per thread
# count, the counts interleaved), so the two figures of a ratio are seconds
# apart. A figure is the median over the rounds, and a goal's ratio the
# median of the rounds' own ratios, with their range beside it: a slow spell
# of a shared machine moves one round, not the result. Where mix runs, each
# round also runs it with a table per thread (atomthreads --private): with
# no line of any table shared, its scaling is what the machine itself
# allows, the floor under the shared table's. And where hit or mix runs
# beside string_cache, each round also runs both at one thread pinned to
# one CPU (taskset, LC_PIN1): on a KVM guest an unpinned thread's speed
# moves by up to 1.8x from one process to the next, and a one-thread ratio
# against string_cache is then a draw; pinned, both run on the same CPU
# seconds apart, as atompeers runs its peers. The goals against
# string_cache at one thread are the pinned runs' ratios; the scaling
# ratios (16T / 1T) keep the unpinned one thread of their own process.
set -e
threads_bin=$1 latency_bin=$2 sc_bin=$3 file=$4 out=${5:-}
[ -n "$threads_bin" ] && [ -n "$latency_bin" ] && [ -n "$file" ] || {
    echo "usage: $0 ATOMTHREADS ATOMLATENCY SC_BENCH FILE [OUTDIR]" >&2; exit 2; }
if [ -z "$out" ]; then
    out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
# an earlier run's figures in OUTDIR would be read as this run's
rm -f "$out"/threads.*.json "$out"/latency.*.json
THREADS=${LC_THREADS:-1,2,16} MODES=${LC_MODES:-hit,same,samedyn,mix}
MS=${LC_MS:-300} REPS=${LC_REPS:-3} ROUNDS=${LC_ROUNDS:-3} BATCHES=${LC_BATCHES:-2000000}
CHURNERS=${LC_CHURNERS:-1}
PIN1=${LC_PIN1:-$(( $(nproc) - 1 ))}
pin1=""
[ "$PIN1" != none ] && [ -n "$sc_bin" ] && command -v taskset >/dev/null 2>&1 && pin1="taskset -c $PIN1"
impls="atomtab"
[ -n "$sc_bin" ] && impls="atomtab string_cache"

# field JSON MODE THREADS NAME: a throughput figure ("" when absent)
field() {
    [ -f "$1" ] || return 0   # a mode this run did not measure
    awk -v m="\"mode\": \"$2\", \"threads\": $3," -v k="\"$4\": " '
        index($0, m) { s = substr($0, index($0, k) + length(k)); sub(/[,}].*/, "", s); print s }' "$1"
}
# lat JSON PHASE NAME: a latency figure
lat() {
    awk -v p="\"$2\": {" -v k="\"$3\": " '
        index($0, p) { s = substr($0, index($0, k) + length(k)); sub(/[,}].*/, "", s); print s }' "$1"
}
# ratio A B: A/B to 2 places, or n/a
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'
}
# med V...: the median of the values that are numbers ("" when none)
med() {
    printf '%s\n' "$@" | awk '$1 ~ /^[0-9.]+$/' | sort -g | awk '{ v[NR] = $1 }
        END { if (NR) printf "%.3f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# range V...: "lo-hi" of the values that are numbers
range() {
    printf '%s\n' "$@" | awk '$1 ~ /^[0-9.]+$/' | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 }
        END { if (NR) printf "%s-%s", lo, hi }'
}
# fieldr IMPL MODE THREADS NAME: the figure of every round
fieldr() {
    for r in $(seq "$ROUNDS"); do field "$out/threads.$1.$2.r$r.json" "$2" "$3" "$4"; done
}
# rratio IMPL_A MODE_A THREADS_A NAME_A IMPL_B MODE_B THREADS_B NAME_B: each
# round's A/B, then "median (lo-hi)"
rratio() {
    rs=""
    for r in $(seq "$ROUNDS"); do
        rs="$rs $(ratio "$(field "$out/threads.$1.$2.r$r.json" "$2" "$3" "$4")" \
            "$(field "$out/threads.$5.$6.r$r.json" "$6" "$7" "$8")")"
    done
    m=$(med $rs)
    if [ -z "$m" ]; then echo "n/a"; else printf '%.2f (%s)' "$m" "$(range $rs)"; fi
}
# goal NAME VALUE OP LIMIT: one line of the goals table (VALUE: a ratio,
# maybe followed by its rounds' range, which is printed after the verdict)
goal() {
    awk -v n="$1" -v v="$2" -v op="$3" -v l="$4" 'BEGIN {
        met = v == "n/a" ? "n/a" : (op == ">=" ? v + 0 >= l : v + 0 <= l) ? "met" : "NOT met"
        r = index(v, " ") ? substr(v, index(v, " ") + 1) : ""
        printf "  %-44s %7s   goal %s %-4s %-8s %s\n", n, v + 0 == 0 && v != "0" ? v : sprintf("%.2f", v), op, l, met, r }'
}

echo "== machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
    "$(uname -sr)"
[ -z "$sc_bin" ] || echo "== peers: $("$sc_bin" --versions)"
echo "== throughput: median of $ROUNDS rounds, each the median of $REPS x $MS ms, threads $THREADS, $file"
modes=$(echo "$MODES" | tr ',' ' ')
# run_at / run_sc R M: one round's atomtab and string_cache runs of mode M
run_at() {
    "$threads_bin" --json --threads "$THREADS" --modes "$2" --ms "$MS" --reps "$REPS" \
        "$file" > "$out/threads.atomtab.$2.r$1.json"
}
run_sc() {
    [ -z "$sc_bin" ] || "$sc_bin" --json --threads "$THREADS" --modes "$2" --ms "$MS" \
        --reps "$REPS" "$file" > "$out/threads.string_cache.$2.r$1.json"
}
for r in $(seq "$ROUNDS"); do
    for m in $modes; do
        # the order alternates by round, so a drift within a round does not
        # always fall on the same side of a ratio
        if [ $((r % 2)) = 1 ]; then run_at "$r" "$m"; run_sc "$r" "$m"
        else run_sc "$r" "$m"; run_at "$r" "$m"; fi
        [ "$m" != mix ] || "$threads_bin" --json --private --threads "$THREADS" --modes mix \
            --ms "$MS" --reps "$REPS" "$file" > "$out/threads.private.mix.r$r.json"
        case "$pin1,$m" in ,*) ;; *,hit|*,mix)
            for who in $([ $((r % 2)) = 1 ] && echo "at sc" || echo "sc at"); do
                if [ "$who" = at ]; then
                    $pin1 "$threads_bin" --json --threads 1 --modes "$m" --ms "$MS" \
                        --reps "$REPS" "$file" > "$out/threads.atomtab_pin1.$m.r$r.json"
                else
                    $pin1 "$sc_bin" --json --threads 1 --modes "$m" --ms "$MS" \
                        --reps "$REPS" "$file" > "$out/threads.string_cache_pin1.$m.r$r.json"
                fi
            done
        esac
    done
done
printf '%-8s %7s %12s %10s %14s %10s %18s\n' mode threads "atomtab Mops" cpu-ns/op \
    "strcache Mops" cpu-ns/op "atab/sc (rounds)"
for m in $modes; do
    for n in $(echo "$THREADS" | tr ',' ' '); do
        a=$(med $(fieldr atomtab "$m" "$n" mops))
        ac=$(med $(fieldr atomtab "$m" "$n" cpu_ns_per_op))
        s="" sc="" rs="-"
        if [ -n "$sc_bin" ]; then
            s=$(med $(fieldr string_cache "$m" "$n" mops))
            sc=$(med $(fieldr string_cache "$m" "$n" cpu_ns_per_op))
            rs=$(rratio atomtab "$m" "$n" mops string_cache "$m" "$n" mops)
        fi
        printf '%-8s %7s %12s %10s %14s %10s %18s\n' "$m" "$n" "$a" "$ac" "${s:--}" "${sc:--}" "$rs"
    done
done
[ -n "$pin1" ] && ls "$out"/threads.atomtab_pin1.*.r1.json >/dev/null 2>&1 &&
    echo "one thread pinned to CPU $PIN1 (taskset), atomtab then string_cache"
for m in hit mix; do
    [ -n "$pin1" ] && [ -f "$out/threads.atomtab_pin1.$m.r1.json" ] || continue
    printf '%-8s %7s %12s %10s %14s %10s %18s\n' "$m" 1 \
        "$(med $(fieldr atomtab_pin1 "$m" 1 mops))" "$(med $(fieldr atomtab_pin1 "$m" 1 cpu_ns_per_op))" \
        "$(med $(fieldr string_cache_pin1 "$m" 1 mops))" \
        "$(med $(fieldr string_cache_pin1 "$m" 1 cpu_ns_per_op))" \
        "$(rratio atomtab_pin1 "$m" 1 mops string_cache_pin1 "$m" 1 mops)"
done
case " $modes " in *" mix "*)
    echo "mix, a table per thread (atomthreads --private: no table line shared)"
    for n in $(echo "$THREADS" | tr ',' ' '); do
        printf '%-8s %7s %12s %10s\n' mix "$n" "$(med $(fieldr private mix "$n" mops))" \
            "$(med $(fieldr private mix "$n" cpu_ns_per_op))"
    done
esac
# The core-to-core round trip that each atomtab run measured as it began
# (atomthreads; null where the process may not run on CPUs 0 and 1): the
# figures of threads that share lines move with it.
trips=$(for r in $(seq "$ROUNDS"); do for m in $modes; do
    sed -n 's/.*"round_trip_ns": \([0-9.]*\).*/\1/p' "$out/threads.atomtab.$m.r$r.json"
done; done)
if [ -n "$trips" ]; then
    tmed=$(med $trips | awk '{ printf "%.1f", $1 }')
    echo "== core-to-core round trip as each atomtab run began: $(range $trips) ns (median $tmed)"
fi

echo "== reader latency: ns per batch of 64 hits, $BATCHES batches, alone / beside $CHURNERS churning thread(s)"
"$latency_bin" --json --batches "$BATCHES" --churners "$CHURNERS" "$file" \
    > "$out/latency.atomtab.json"
[ -z "$sc_bin" ] || "$sc_bin" --latency --json --batches "$BATCHES" --churners "$CHURNERS" \
    "$file" > "$out/latency.string_cache.json"
printf '%-13s %-6s %8s %8s %8s %8s %9s\n' impl phase p50 p99 p99.9 p99.99 max
for i in $impls; do
    for ph in alone churn; do
        printf '%-13s %-6s' "$i" "$ph"
        for q in p50 p99 p999 p9999 max; do printf ' %8s' "$(lat "$out/latency.$i.json" $ph $q)"; done
        echo
    done
done

echo "== goals, same-run ratios ($(nproc) CPUs; the median of $ROUNDS rounds, their range in brackets): against string_cache, thread scaling, reader latency under churn"
if [ -n "$sc_bin" ]; then
    for m in mix hit; do
        if [ -n "$pin1" ] && [ -f "$out/threads.atomtab_pin1.$m.r1.json" ]; then
            goal "$m 1T pinned: atomtab / string_cache Mops/s" \
                "$(rratio atomtab_pin1 "$m" 1 mops string_cache_pin1 "$m" 1 mops)" ">=" 1.5
            echo "    unpinned, as in the table above: $(rratio atomtab "$m" 1 mops string_cache "$m" 1 mops)"
        else
            goal "$m 1T: atomtab / string_cache Mops/s" \
                "$(rratio atomtab "$m" 1 mops string_cache "$m" 1 mops)" ">=" 1.5
        fi
    done
else
    echo "  (atomtab / string_cache ratios skipped: no string_cache driver)"
fi
goal "atomtab mix Mops/s 2T / 1T" "$(rratio atomtab mix 2 mops atomtab mix 1 mops)" ">=" 1.6
goal "atomtab mix cpu-ns/op 2T / 1T" \
    "$(rratio atomtab mix 2 cpu_ns_per_op atomtab mix 1 cpu_ns_per_op)" "<=" 1.2
case " $modes " in *" mix "*)
    echo "    the floor, a table per thread: mix cpu-ns/op 2T / 1T" \
        "$(rratio private mix 2 cpu_ns_per_op private mix 1 cpu_ns_per_op)"
esac
goal "atomtab mix Mops/s 16T / 1T" "$(rratio atomtab mix 16 mops atomtab mix 1 mops)" ">=" 1.5
case ",$THREADS," in *,16,*)   # goals for 16 cores: only where there are 16
    if [ "$(nproc)" -ge 16 ]; then
        goal "atomtab mix cpu-ns/op 16T / 1T" \
            "$(rratio atomtab mix 16 cpu_ns_per_op atomtab mix 1 cpu_ns_per_op)" "<=" 1.3
        echo "    the floor, a table per thread: mix cpu-ns/op 16T / 1T" \
            "$(rratio private mix 16 cpu_ns_per_op private mix 1 cpu_ns_per_op)"
        goal "atomtab hit Mops/s 16T / 1T" "$(rratio atomtab hit 16 mops atomtab hit 1 mops)" ">=" 12
    else
        echo "  (16-core goals, mix cpu-ns/op and hit Mops/s 16T / 1T: skipped on $(nproc) CPUs)"
    fi
esac
if [ -n "$sc_bin" ] && [ "$THREADS" != "${THREADS#*,}" ]; then
    for n in $(echo "$THREADS" | tr ',' ' '); do
        [ "$n" = 1 ] && continue   # the 1T line above
        goal "mix ${n}T: atomtab / string_cache Mops/s" \
            "$(rratio atomtab mix "$n" mops string_cache mix "$n" mops)" ">=" 1.5
    done
fi
L=$out/latency.atomtab.json
goal "atomtab latency p99 churn / alone" \
    "$(ratio "$(lat "$L" churn p99)" "$(lat "$L" alone p99)")" "<=" 1.5
goal "atomtab latency p99.99 churn / alone" \
    "$(ratio "$(lat "$L" churn p9999)" "$(lat "$L" alone p9999)")" "<=" 3
if [ -n "$sc_bin" ]; then
    L=$out/latency.string_cache.json
    echo "  for reference, string_cache: mix 2T/1T $(rratio string_cache mix 2 mops string_cache mix 1 mops)," \
        "latency p99 churn/alone $(ratio "$(lat "$L" churn p99)" "$(lat "$L" alone p99)")," \
        "p99.99 churn/alone $(ratio "$(lat "$L" churn p9999)" "$(lat "$L" alone p9999)")"
fi
