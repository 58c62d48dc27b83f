#!/bin/sh
# SPDX-License-Identifier: MIT
# decide.sh [ROUNDS]: main (var/base, 3b53c49) against the two-way cache
# (var/new, 8f0e164), alternated, order rotated each round: atomthreads
# hits at 1, 8 and 16 threads and mix at 16 (3 x 200 ms each), then one
# thread pinned to the last CPU, atompeers' atomtab child on the C-header
# tokens and on the bundled corpus.
B=build/device; C=$B/nodejs-api-docs.atoms; H=$B/c-headers.tokens
cpu=$(( $(nproc) - 1 )); pin="taskset -c $cpu"; command -v taskset >/dev/null 2>&1 || pin=""
n=${1:-6}
for r in $(seq "$n"); do
  for v in base new; do
    echo "== round $r $v"
    "$B/var/$v/atomthreads" --threads 1,8,16 --modes hit --reps 3 --ms 200 "$C" 2>&1 |
      sed -n '1s/.*round trip \([0-9.]*\) ns.*/rt \1/p;/^hit/p'
    "$B/var/$v/atomthreads" --threads 16 --modes mix --reps 3 --ms 200 "$C" 2>&1 | sed -n '/^mix/p'
    echo "headers $($pin "$B/var/$v/atompeers" --child atomtab "$H" | sed 's/ bytes=[0-9]*//')"
    echo "corpus $($pin "$B/var/$v/atompeers" --child atomtab "$C" | sed 's/ bytes=[0-9]*//')"
  done
done
