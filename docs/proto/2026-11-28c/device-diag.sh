#!/bin/sh
# SPDX-License-Identifier: MIT
here=$(cd "$(dirname "$0")" && pwd)
C=$here/nodejs-api-docs.atoms
B=${B:-$here/atomthreads-shares}   # the scratch atomthreads to run
for r in 1 2; do
  for v in ring ringsplit1 ringsegsplit1 ringpriv; do
    case $v in
      ring) e="SCRATCH_RING=1" a="";;
      ringpriv) e="SCRATCH_RING=1" a="--private";;
      ringsplit1) e="SCRATCH_RING=1 SCRATCH_SPLIT=1" a="";;
      ringsegsplit1) e="SCRATCH_RING=1 SCRATCH_SEG=1 SCRATCH_SPLIT=1" a="";;
    esac
    echo "== round $r variant $v"
    env $e SCRATCH_TSC=1 "$B" --threads 1,2,4,8,16 --modes mix --ms 300 --reps 3 $a "$C" 2>&1 | grep -E '^mix|^tsc'
  done
done
