#!/bin/sh
# SPDX-License-Identifier: MIT
# first experiment call (e1.txt): static atompeers and atomthreads built at
# 946d10f with knobs-1.patch applied, one directory a variant:
#   v0 (no knob), noseq (-DATAB_EXP_NOSEQ), notake (-DATAB_EXP_NOTAKE),
#   nostore (both), noasm (-DATAB_EXP_NOASM), nocmpw (-DATAB_EXP_NOCMPW),
#   nograce (-DATAB_EXP_NOGRACE), align (-DATAB_EXP_ALIGN); measurements
#   only: noseq, notake, nostore and nograce are unsafe builds
d=$(dirname "$0"); f="$d/nodejs-api-docs.atoms"; out=$1
{
for r in 1 2; do for v in v0 noseq notake nostore noasm nocmpw; do
  echo "== peers $v round $r"; "$d/$v/atompeers" --reps 5 --backends atomtab,naive "$f" 2>&1 | grep -E "^(hit|stream|hitrel|mix|mixpre) "
done; done
for r in 1 2; do for v in v0 noseq nostore; do
  echo "== cheaders $v round $r"; "$d/$v/atompeers" --reps 3 --backends atomtab,naive "$d/c-headers.tokens" 2>&1 | grep -E "^(hit|stream|hitrel|mix|mixpre) "
done; done
for r in 1 2; do for v in v0 nograce align; do
  echo "== mix $v round $r"; "$d/$v/atomthreads" --threads 1,2,4,8,16 --modes mix --ms 300 --reps 3 "$f" 2>&1 | tail -6
done; done
} > "$out/e.txt" 2>&1
