#!/bin/sh
# SPDX-License-Identifier: MIT
# five builds of atomthreads (var/NAME), alternated, order rotated each round:
# mix at 1,2,4,8,16 threads and hit at 1 and 16, 3 x 200 ms each
B=$(cd "$(dirname "$0")" && pwd); C=$B/nodejs-api-docs.atoms
[ $# -gt 0 ] || set -- base pfw swpfw pad all
for r in ${ROUNDS:-1 2 3 4}; do
  for v in "$@"; do
    echo "== round $r $v"
    "$B/var/$v/atomthreads" --threads 1,2,4,8,16 --modes mix --reps 3 --ms 200 "$C" 2>&1 | sed -n '1s/.*round trip \([0-9.]*\) ns.*/rt \1/p;/^mix/p'
    "$B/var/$v/atomthreads" --threads 1,16 --modes hit --reps 3 --ms 200 "$C" 2>&1 | sed -n '/^hit/p'
  done
  first=$1; shift; set -- "$@" "$first"
done
