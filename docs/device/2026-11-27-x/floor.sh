#!/bin/sh
# SPDX-License-Identifier: MIT
# floor.sh [ROUNDS]: what more threads cost atomtab with nothing shared.
# Each round: atomthreads, hit and mix at 1-16 threads pinned (worker i on
# CPU i), on one shared table and then with a table per thread
# (--private), 3 x 200 ms each; then the reader-latency test alone and
# beside 15 churning threads. After the rounds, atompeers on the C-header
# tokens, pinned to the last CPU, five repeats.
B=build/device; C=$B/nodejs-api-docs.atoms; H=$B/c-headers.tokens
cpu=$(( $(nproc) - 1 )); pin="taskset -c $cpu"; command -v taskset >/dev/null 2>&1 || pin=""
n=${1:-3}
for r in $(seq "$n"); do
  for v in shared private; do
    echo "== round $r $v"
    flag=""; [ "$v" = private ] && flag=--private
    "$B/atomthreads" --threads 1,2,4,8,16 --modes hit,mix --reps 3 --ms 200 --pin $flag "$C" 2>&1
  done
  echo "== round $r latency"
  "$B/atomlatency" --batches 2000000 --churners 15 "$C" 2>&1
done
echo "== atompeers, C headers, CPU $cpu"
$pin "$B/atompeers" --sc "$B/atomtab-sc-bench" --reps 5 "$H" 2>&1
