#!/bin/sh
# SPDX-License-Identifier: MIT
# one thread on the Xeon: atomthreads and string_cache's bench, unpinned and
# on fixed CPUs (taskset), alternated; atompeers (atomtab, string_cache) too
B=$(cd "$(dirname "$0")" && pwd); C=$B/nodejs-api-docs.atoms
echo "taskset: $(command -v taskset) perf: $(command -v perf)"
grep MHz /proc/cpuinfo | sort | uniq -c
for r in 1 2 3; do
  for cpu in none 3 11; do
    pre=""; [ "$cpu" != none ] && [ -n "$(command -v taskset)" ] && pre="taskset -c $cpu"
    echo "== round $r cpu $cpu"
    $pre "$B/atomthreads" --threads 1 --modes hit,mix --reps 3 "$C" 2>&1 | sed -n '/^hit\|^mix/s/^/atab /p'
    $pre "$B/atomtab-sc-bench" --threads 1 --modes hit,mix --reps 3 "$C" 2>&1 | sed -n '/^hit\|^mix/s/^/sc   /p'
    $pre "$B/atompeers" --reps 3 --backends atomtab,string_cache --sc "$B/atomtab-sc-bench" "$C" 2>&1 | grep -E "^(hit|hitrel|mix|mixpre) "
  done
done
