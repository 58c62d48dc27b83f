#!/bin/sh
# SPDX-License-Identifier: MIT
# ways.sh [NAMES]: builds of atomthreads (build/device/var/NAME), alternated,
# order rotated each round: hit and mix at 1, 2, 4, 8, 16 threads, 3 x 200
# ms each (base: main; way1: the cache in sets of two ways, way 1 read
# before the probe; way1late: way 1 read only once the probe found the atom)
B=build/device; C=$B/nodejs-api-docs.atoms
[ $# -gt 0 ] || set -- base way1 way1late
for r in ${ROUNDS:-1 2 3 4}; do
  for v in "$@"; do
    echo "== round $r $v"
    "$B/var/$v/atomthreads" --threads 1,2,4,8,16 --modes hit,mix --reps 3 --ms 200 "$C" 2>&1 |
      sed -n '1s/.*round trip \([0-9.]*\) ns.*/rt \1/p;/^hit/p;/^mix/p'
  done
  first=$1; shift; set -- "$@" "$first"
done
