#!/bin/sh
# SPDX-License-Identifier: MIT
# device-ab.sh A B [ROUNDS] [THREADS] - two scratch atomthreads
# (device-prepare.sh) alternated A B B A each round, on the mix with new
# keys from a ring, on one table and with a table per thread
# (SCRATCH_RING=1, ../2026-11-28c/README.md): CPU ns per mix op by thread
# count, to time one library's new-key path against another's.
here=$(cd "$(dirname "$0")" && pwd)
A=$1 B=$2 R=${3:-2} T=${4:-1,2,4,8,16}
[ -x "$A" ] && [ -x "$B" ] || { echo "usage: $0 A B [ROUNDS] [THREADS]" >&2; exit 2; }
C=$here/nodejs-api-docs.atoms
run() {   # run BIN NAME VARIANT
    case $3 in
        ring) a="" ;;
        ringpriv) a="--private" ;;
    esac
    echo "== $2 $3"
    SCRATCH_RING=1 "$1" --threads "$T" --modes mix --ms 300 --reps 3 $a "$C" 2>&1 | grep -E '^mix'
}
r=1
while [ "$r" -le "$R" ]; do
    echo "== round $r"
    for v in ring ringpriv; do
        run "$A" A "$v"; run "$B" B "$v"; run "$B" B "$v"; run "$A" A "$v"
    done
    r=$((r + 1))
done
