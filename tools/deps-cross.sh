#!/bin/sh
# SPDX-License-Identifier: MIT
# deps-cross.sh - installs what building and testing for another
# architecture needs, from Debian (multiarch), when missing.
# Usage: tools/deps-cross.sh ARCH...   (i386, arm64: the cross compiler,
# i686-linux-gnu-gcc or aarch64-linux-gnu-gcc, and the architecture's
# libxxhash, cmocka and jansson (test_report); arm64 also qemu-user).
# i386 uses the cross compiler rather than gcc -m32 (the same i686 code):
# Debian's gcc-multilib cannot
# be installed beside its cross compilers, and without it gcc -m32 finds
# no <asm/unistd.h> (gcc-multilib's /usr/include/asm link provides it).
# The C library is the cross compilers' own (libc6-dev-*-cross):
# libc6-dev:ARCH needs linux-libc-dev:ARCH at exactly the host's version,
# which a mirror may not have. Adds the architecture to dpkg first. Uses
# apt-get, through sudo when not root; prints what it installs.
#
# tools/deps-cross.sh --remove ARCH... purges the architecture's packages
# and takes it off dpkg's list again (the cross compilers and qemu stay):
# with a foreign architecture added, every `apt-get update` also fetches
# its indexes, and fails where a mirror lacks one.
set -e

pkgs_for() {
    case "$1" in
    i386) echo "gcc-i686-linux-gnu libc6-dev-i386-cross libxxhash-dev:i386 libcmocka-dev:i386 libjansson-dev:i386" ;;
    arm64) echo "gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user libxxhash-dev:arm64 libcmocka-dev:arm64 libjansson-dev:arm64" ;;
    *) echo "deps-cross.sh: unknown architecture '$1' (i386 or arm64)" >&2; exit 2 ;;
    esac
}

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else SUDO="none"; fi
fi
export DEBIAN_FRONTEND=noninteractive
wait_lock="-o DPkg::Lock::Timeout=300"   # another apt-get may hold the lock

if [ "${1:-}" = --remove ]; then
    shift
    for arch in "$@"; do
        pkgs_for "$arch" >/dev/null
        dpkg --print-foreign-architectures | grep -qx "$arch" || continue
        [ "$SUDO" != none ] || { echo "deps-cross.sh: need root or sudo" >&2; exit 1; }
        # only ARCH's own packages (libc6:ARCH is Essential for ARCH alone)
        pkgs=$(dpkg-query -W -f='${Package}:${Architecture}\n' | grep ":$arch\$" || true)
        echo "deps-cross.sh: removing architecture $arch and its packages"
        # shellcheck disable=SC2086
        [ -z "$pkgs" ] || $SUDO apt-get $wait_lock purge -y -qq --allow-remove-essential \
            $pkgs >/dev/null
        $SUDO dpkg --remove-architecture "$arch"
    done
    exit 0
fi
missing="" new_arch=""
for arch in "$@"; do
    for p in $(pkgs_for "$arch"); do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
            missing="$missing $p"
        fi
    done
    dpkg --print-foreign-architectures | grep -qx "$arch" || new_arch="$new_arch $arch"
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1 || [ "$SUDO" = none ]; then
    echo "deps-cross.sh: missing packages:$missing (need apt-get and root or sudo)" >&2
    exit 1
fi
echo "deps-cross.sh: installing$missing"
for arch in $new_arch; do
    $SUDO dpkg --add-architecture "$arch"
done
# shellcheck disable=SC2086
$SUDO apt-get $wait_lock update -qq ||
    echo "deps-cross.sh: apt-get update failed for some index; installing from what it has" >&2
# shellcheck disable=SC2086
$SUDO apt-get $wait_lock install -y -qq --no-install-recommends $missing
