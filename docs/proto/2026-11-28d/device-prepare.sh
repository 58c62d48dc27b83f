#!/bin/sh
# SPDX-License-Identifier: MIT
# device-prepare.sh REV... - for each revision, a static scratch atomthreads
# (its bench/threads.c with ../2026-11-28c/mix-split.patch, its library)
# as build/device/shares-SHORTREV, and device-ab.sh beside them; run
# `make device-bundle` after it (the bundle keeps what is in build/device).
set -e
root=$(git rev-parse --show-toplevel)
patch=$root/docs/proto/2026-11-28c/mix-split.patch
out=$root/build/device
mkdir -p "$out"
for rev in "$@"; do
    short=$(git rev-parse --short "$rev")
    wt=$(mktemp -d)
    git worktree add -q --detach "$wt" "$rev"
    (cd "$wt" && git apply "$patch" && make -s build/make/libatomtab.a > /dev/null &&
        cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Ibench -Ibuild/make/gen -pthread \
            -DATAB_VERSION_STRING='"0.1.0"' -static -s bench/threads.c \
            -o "$out/shares-$short" build/make/libatomtab.a -lxxhash -pthread) || {
        git worktree remove --force "$wt"; exit 1; }
    git worktree remove --force "$wt"
    echo "$out/shares-$short"
done
cp "$root/docs/proto/2026-11-28d/device-ab.sh" "$out/"
