#!/bin/sh
# SPDX-License-Identifier: MIT
# locked.sh OUT [REPS]: one thread, pinned to the last CPU: atomtab's
# atompeers child built three ways (build/var/v0: as on main; v1: the
# count's CAS a plain load and store; v2: v1 and the shard lock's take and
# drop plain too; v1 and v2 are one-thread measurement builds only, not
# code to ship) beside naive and ustr, on both corpora, alternated, with
# the hardware's event counts per op where the machine lends them
# (ATAB_PMU=1, bench/pmu.h).
out=${1:?usage: locked.sh OUT [REPS]}; reps=${2:-4}
mkdir -p "$out"
cpu=$(( $(nproc) - 1 )); pin="taskset -c $cpu"
command -v taskset >/dev/null 2>&1 || pin=""
d=build/device
{ echo "== $(date -u)"; nproc; cat /proc/sys/kernel/perf_event_paranoid; grep -m1 'model name' /proc/cpuinfo
  grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -c . ; ls /sys/bus/event_source/devices/ 2>&1
  cat /sys/kernel/mm/transparent_hugepage/enabled 2>&1; echo "pin: ${pin:-none}"; } > "$out/machine.txt"
for r in $(seq "$reps"); do
  for f in $d/c-headers.tokens $d/nodejs-api-docs.atoms; do
    for v in v0 v1 v2; do
      echo "== rep $r $(basename $f) atomtab $v"
      ATAB_PMU=1 $pin build/var/$v/atompeers --child atomtab "$f" 2>&1
    done
    echo "== rep $r $(basename $f) naive"
    ATAB_PMU=1 $pin build/var/v0/atompeers --child naive "$f" 2>&1
    echo "== rep $r $(basename $f) ustr"
    $pin $d/atomtab-sc-bench --peer ustr --limit 100000000 "$f" 2>&1
  done
done > "$out/locked.txt"
echo done
