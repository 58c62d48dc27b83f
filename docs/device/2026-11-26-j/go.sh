#!/bin/sh
# SPDX-License-Identifier: MIT
# queues of 2,048 (f21a97a, new) against 1,024 (068e6c9, old), interleaved:
# grace periods, mix at 1-16 threads, a reader beside 15 churning threads
d=$(dirname "$0"); f="$d/nodejs-api-docs.atoms"; out=$1
{
for v in old new old new; do
  b="$d"; [ $v = old ] && b="$d/old"
  echo "== gracecount $v"; "$b/atomgracecount" --threads 1,2,4,8,16 --atoms 400000 2>&1 | tail -5
done
for r in 1 2; do for v in old new; do
  b="$d"; [ $v = old ] && b="$d/old"
  echo "== mix $v round $r"; "$b/atomthreads" --threads 1,2,4,8,16 --modes mix --ms 300 --reps 3 "$f" 2>&1 | tail -6
done; done
for v in old new old new; do
  b="$d"; [ $v = old ] && b="$d/old"
  echo "== latency $v"; "$b/atomlatency" --batches 1000000 --churners 15 "$f" 2>&1 | tail -3
done
} > "$out/q.txt" 2>&1
