#!/bin/sh
# SPDX-License-Identifier: MIT
# Instructions per read for each idread cell, counted by callgrind (exact,
# unlike ns on a shared machine): loop_<mode>'s inclusive count / reads.
# Usage: sh tools/idread-callgrind.sh BUILD/bench/idread
set -eu
bin=${1:-build/make/bench/idread}
iters=20000
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%6s %15s %15s %15s %15s\n' length copy external external+cache handle-alloc
for len in 3 14 15 16 63 64 100 101; do
    valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$bin" --iters $iters \
        --repeats 1 --length $len >/dev/null 2>"$out/vg.log" ||
        { echo "idread-callgrind: $bin failed under valgrind:" >&2; cat "$out/vg.log" >&2; exit 1; }
    # reads per loop: iters timed + iters/10+1 warm-up
    callgrind_annotate --inclusive=yes "$out/cg" 2>/dev/null | awk -v len=$len \
        -v reads=$((iters + iters / 10 + 1)) '
        /loop_copy \[/ { c = $1 } /loop_external \[/ { e = $1 }
        /loop_cache \[/ { k = $1 } /loop_handle_alloc \[/ { h = $1 }
        END { gsub(",", "", c); gsub(",", "", e); gsub(",", "", k); gsub(",", "", h);
              printf "%6d %15.1f %15.1f %15.1f %15.1f\n", len, c / reads, e / reads,
                     k / reads, h / reads }'
done
