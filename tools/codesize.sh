#!/bin/sh
# SPDX-License-Identifier: MIT
# codesize.sh - stripped sizes of libatomtab.so and of a minimal program
# using it (the README's example), linked statically against libatomtab.a
# and dynamically against libatomtab.so. The C library, xxhash and jemalloc
# stay shared in both programs (they are not part of atomtab).
# usage: tools/codesize.sh BUILD-DIR   (a make build dir, e.g. build/make)
set -e
O=${1:-build/make}
CC=${CC:-cc}
so=$(ls "$O"/libatomtab.so.*.*.* 2>/dev/null | head -n 1)
ex="$O/test/readme_example.c"
[ -f "$so" ] && [ -f "$O/libatomtab.a" ] && [ -f "$ex" ] || {
    echo "codesize.sh: build first (make tests O=$O)" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
libs="-lxxhash -pthread"
nm "$O/libatomtab.a" 2>/dev/null | grep -q mallocx && libs="$libs -ljemalloc"

strip --strip-all -o "$tmp/libatomtab.so" "$so"
$CC -O2 -Iinclude "$ex" -o "$tmp/example-static" "$O/libatomtab.a" $libs
$CC -O2 -Iinclude "$ex" -o "$tmp/example-dynamic" -L"$O" -latomtab $libs
strip --strip-all "$tmp/example-static" "$tmp/example-dynamic"

kib() { awk -v b="$1" 'BEGIN { printf "%.1f KiB", b / 1024 }'; }
row() {
    b=$(wc -c < "$2")
    printf '%-44s %8d B  %10s\n' "$1" "$b" "$(kib "$b")"
}
echo "stripped sizes ($(uname -m), $($CC --version | head -n 1)):"
row "libatomtab.so (strip --strip-all)" "$tmp/libatomtab.so"
row "README example, libatomtab.a linked in" "$tmp/example-static"
row "README example, libatomtab.so" "$tmp/example-dynamic"
echo "sections of the stripped libatomtab.so (size, Berkeley format):"
size "$tmp/libatomtab.so" | tail -n 1 | awk '{ printf "  text %d  data %d  bss %d\n", $1, $2, $3 }'
# The default static set (~2,800 atoms and their index) is data,
# not code: shown apart, from the symbols' sizes in the unstripped library.
st=0
for hex in $(nm -S --defined-only "$so" | awk '$4 ~ /^atab_static_default/ { print $2 }'); do
    st=$((st + 0x$hex))
done
b=$(wc -c < "$tmp/libatomtab.so")
printf '  of which the default static set (atoms, index, filter): %d B (%s)\n' "$st" "$(kib "$st")"
printf '  libatomtab.so without that data: %d B (%s)\n' $((b - st)) "$(kib $((b - st)))"
for what in "libatomtab.so:$b" "libatomtab.so without the static set's data:$((b - st))"; do
    n=${what##*:}
    if [ "$n" -le 65536 ]; then r=met; else r=MISSED; fi
    echo "goal: ${what%:*} <= 64 KiB: $r"
done
