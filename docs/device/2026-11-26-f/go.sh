#!/bin/sh
# SPDX-License-Identifier: MIT
# shared grace periods (new) against 6e516e5 (old): gracecount, mix at 1-16 threads, reader beside 15 churners; interleaved
d=$(dirname "$0"); out=$1; f="$d/nodejs-api-docs.atoms"
{
for v in old new old new; do
  echo "== gracecount $v"; "$d/$v/atomgracecount" --threads 1,2,4,8,16 --atoms 400000 2>&1 | tail -5
done
for r in 1 2; do for v in old new; do
  echo "== mix $v round $r"; "$d/$v/atomthreads" --threads 1,2,4,8,16 --modes mix --ms 300 --reps 3 "$f" 2>&1 | tail -7
done; done
for v in old new old new; do
  echo "== latency $v"; "$d/$v/atomlatency" --batches 1000000 --churners 15 "$f" 2>&1 | tail -4
done
} > "$out/g.txt" 2>&1
