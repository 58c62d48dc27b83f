#!/bin/sh
# SPDX-License-Identifier: MIT
d=$(dirname "$0"); out=$1
{
for r in 1 2 3; do for v in base tag debt pf; do
  echo "== C-h $v round $r"; timeout 60 "$d/p/$v/atompeers" --reps 5 --backends atomtab,naive,ustr --sc "$d/atomtab-sc-bench" "$d/c-headers.tokens" 2>&1 | grep -E "^(hit|stream|hitrel|mix|B/atom) "
done; done
for r in 1 2; do for v in base tag debt; do
  echo "== corpus $v round $r"; timeout 60 "$d/p/$v/atompeers" --reps 5 --backends atomtab,naive,string_cache --sc "$d/atomtab-sc-bench" "$d/nodejs-api-docs.atoms" 2>&1 | grep -E "^(hit|stream|hitrel|mix|B/atom) "
done; done
for r in 1 2; do for v in base tag debt; do
  echo "== threads $v round $r"; timeout 60 "$d/v/$v/atomthreads" --threads 1,2,16 --modes hit,mix --ms 300 --reps 3 "$d/nodejs-api-docs.atoms" 2>&1 | tail -7
done; done
} > "$out/diag2.txt" 2>&1
echo done
