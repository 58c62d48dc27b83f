#!/bin/sh
# SPDX-License-Identifier: MIT
# check-cross.sh ARCH [portable] - builds the library and its test suite
# for another architecture with the plain Makefile and runs every test:
#   i386   i686-linux-gnu-gcc; the tests run natively (the x86-64 kernel
#          runs 32-bit programs)
#   arm64  aarch64-linux-gnu-gcc; the tests run under qemu-user
# "portable" builds with -DATAB_NO_MEMBARRIER -DATAB_NO_SIMD: readers take
# full fences instead of leaning on membarrier, and group probes use the
# portable code (as they do on aarch64 anyway). qemu-user on an x86 host
# keeps x86's stronger memory order, so the arm64 runs check the code,
# the types and the ABI, not aarch64's reordering (docs/reliability.md).
# tools/deps-cross.sh installs the compilers, qemu and the libraries.
set -eu
arch=${1:?usage: check-cross.sh i386|arm64 [portable]}
flavour=${2:-}
fail() { echo "check-cross: $*" >&2; exit 1; }
sh tools/deps-cross.sh "$arch"
case "$arch" in
i386) cc=i686-linux-gnu-gcc run="" ;;
arm64) cc=aarch64-linux-gnu-gcc run="qemu-aarch64" ;;
*) fail "unknown architecture '$arch' (i386 or arm64)" ;;
esac
o=build/$arch cflags=""
if [ "$flavour" = portable ]; then
    o=build/$arch-portable cflags="-DATAB_NO_MEMBARRIER -DATAB_NO_SIMD"
elif [ -n "$flavour" ]; then
    fail "unknown flavour '$flavour' (portable)"
fi
bins=$(sed "s|^|$o/test/|" test/tests.txt test/hook_tests.txt | tr '\n' ' ')
bins="$bins $o/test/readme_example $o/test/fuzz_replay"
jobs=$(nproc 2>/dev/null || echo 2)
mkdir -p "$o"   # its log, $o.log, is written before make makes the directory
# shellcheck disable=SC2086
make -j"$jobs" --no-print-directory O="$o" CC="$cc" BUILD_CC=cc CFLAGS="$cflags" \
    $bins >"$o.log" 2>&1 || { tail -40 "$o.log"; fail "$arch: the build failed"; }
! command -v file >/dev/null || file "$o/test/test_intern" | cut -d, -f1-2 | sed "s|^|check-cross: |"
failed=""
for t in $bins; do
    echo "== $t${run:+ (under $run)}"
    args=""
    case "$t" in */fuzz_replay) args=test/fuzz/corpus ;; esac
    # shellcheck disable=SC2086
    $run "$t" $args || failed="$failed ${t##*/}"
done
[ -z "$failed" ] || fail "$arch${flavour:+ $flavour}: failed:$failed"
echo "check-cross: $arch${flavour:+ $flavour}: every test passed"
