#!/bin/sh
# SPDX-License-Identifier: MIT
# abq.sh ROUNDS NAME...: for each round, each build /tmp/var/NAME (bv.sh) in
# turn, `atomthreads --threads 1,2 --modes mix --pin --reps 3` on the corpus
# (CORPUS, default build/make/nodejs-api-docs.atoms): the core-to-core round
# trip it read, mix CPU ns per op at 1 and 2 threads, and their ratio.
R=$1; shift
corpus=${CORPUS:-build/make/nodejs-api-docs.atoms}
for r in $(seq 1 "$R"); do
  for v in "$@"; do
    /tmp/var/$v/atomthreads --threads 1,2 --modes mix --pin --reps 3 "$corpus" 2>&1 |
      awk -v v="$v" '/round trip/ { match($0, /trip [0-9.]+/); rt = substr($0, RSTART+5, RLENGTH-5) }
        $1 == "mix" && $2 == 1 { c1 = $5 } $1 == "mix" && $2 == 2 { c2 = $5 }
        END { printf "%-6s rt %6s  1T %5.1f  2T %5.1f  ratio %.3f\n", v, rt, c1, c2, c2 / c1 }'
  done
done
