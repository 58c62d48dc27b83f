#!/bin/sh
# SPDX-License-Identifier: MIT
# second experiment call (e2.txt): static atompeers and atomthreads, one
# directory a variant: old (946d10f, the session's start), n0 (068e6c9),
# and 068e6c9 with knobs-2.patch: c2 (-DATAB_EXP_CACHE=2048), c4
# (-DATAB_EXP_CACHE=4096), nc (-DATAB_EXP_NOCMPW)
d=$(dirname "$0"); f="$d/nodejs-api-docs.atoms"; c="$d/c-headers.tokens"; out=$1
{
for r in 1 2 3; do for v in old n0 c2 c4 nc; do
  echo "== corpus $v round $r"; "$d/$v/atompeers" --reps 5 --backends atomtab,naive "$f" 2>&1 | grep -E "^(hit|stream|hitrel|mix|mixpre) "
done; done
for r in 1 2; do for v in old n0 c2 c4 nc; do
  echo "== cheaders $v round $r"; "$d/$v/atompeers" --reps 3 --backends atomtab,naive "$c" 2>&1 | grep -E "^(hit|stream|hitrel|mix|mixpre) "
done; done
for r in 1 2; do for v in old n0 c4; do
  echo "== threads $v round $r"; "$d/$v/atomthreads" --threads 1,16 --modes hit,mix --ms 300 --reps 3 "$f" 2>&1 | tail -5
done; done
} > "$out/e.txt" 2>&1
