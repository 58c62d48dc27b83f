#!/bin/sh
# SPDX-License-Identifier: MIT
d=$(dirname "$0"); f="$d/nodejs-api-docs.atoms"; out=$1
V="base q8k c4k noholds all"
{
for r in 1 2; do for v in $V; do
  echo "== threads $v round $r"; timeout 60 "$d/v/$v/atomthreads" --threads 1,2,4,8,16 --modes hit,mix --ms 300 --reps 3 "$f" 2>&1 | tail -12
done; done
for v in base q8k all; do echo "== grace $v"; timeout 30 "$d/v/$v/atomgracecount" --threads 1,2,16 --atoms 400000 2>&1 | tail -3; done
for r in 1 2 3; do for v in $V; do
  echo "== latency $v round $r"; timeout 30 "$d/v/$v/atomlatency" --batches 1000000 --churners 15 "$f" 2>&1 | tail -3
done; done
} > "$out/diag.txt" 2>&1
echo done
