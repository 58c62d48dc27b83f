#!/bin/sh
# SPDX-License-Identifier: MIT
# old (946d10f, the session's start) against new (this bundle), interleaved, every peer, the corpus
d=$(dirname "$0"); out=$1
for r in 1 2; do for v in old new; do
  b="$d/atompeers"; [ $v = old ] && b="$d/old/atompeers"
  echo "== $v round $r"; "$b" --reps 5 --sc "$d/atomtab-sc-bench" "$d/nodejs-api-docs.atoms" 2>&1 | grep -E "^(hit|stream|hitrel|mix|mixpre|B/atom|goal) "
done; done > "$out/ab.txt" 2>&1
