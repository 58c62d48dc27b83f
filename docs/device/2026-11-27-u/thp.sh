#!/bin/sh
# SPDX-License-Identifier: MIT
# thp.sh [ROUNDS]: one thread pinned to the last CPU, on the C-header
# tokens: atompeers' atomtab and naive children and bench/sc's ustr, each
# with glibc's malloc as is and with GLIBC_TUNABLES=glibc.malloc.hugetlb=1
# (malloc asks for transparent huge pages with madvise), alternated: does
# the C-header hit wait on page walks?
B=build/device; H=$B/c-headers.tokens
cpu=$(( $(nproc) - 1 )); pin="taskset -c $cpu"; command -v taskset >/dev/null 2>&1 || pin=""
cat /sys/kernel/mm/transparent_hugepage/enabled 2>&1
for r in $(seq "${1:-4}"); do
  for m in plain thp; do
    t=""; [ "$m" = thp ] && t="glibc.malloc.hugetlb=1"
    for b in atomtab naive; do
      echo "$r $m $b $(GLIBC_TUNABLES=$t $pin "$B/atompeers" --child $b "$H" | sed 's/ bytes=[0-9]*//')"
    done
    echo "$r $m ustr $(GLIBC_TUNABLES=$t $pin "$B/atomtab-sc-bench" --peer ustr --limit 100000000 "$H" | sed 's/ bytes=[0-9]*//')"
  done
done
