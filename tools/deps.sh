#!/bin/sh
# SPDX-License-Identifier: MIT
# deps.sh - installs the Debian packages a build needs, when missing.
# Usage: tools/deps.sh GROUP...   (groups: build test meson bench fuzz valgrind cmake plots firefox abi urcu)
# Uses apt-get, through sudo when not root. Prints what it installs.
set -e

pkgs_for() {
    case "$1" in
    build) echo "libxxhash-dev libjemalloc-dev pkg-config" ;;
    test) echo "libxxhash-dev libjemalloc-dev pkg-config libcmocka-dev libjansson-dev python3 g++" ;;
    meson) echo "meson ninja-build pkg-config" ;;
    bench) echo "libglib2.0-dev libxml2-dev valgrind" ;;
    fuzz) echo "clang libclang-rt-dev" ;;
    valgrind) echo "valgrind" ;;
    cmake) echo "cmake" ;;
    plots) echo "gnuplot-nox python3" ;;   # make bench-plots: JSON read by python3, drawn by gnuplot
    firefox) echo "firefox-esr python3" ;;   # make check-aboutmemory: about:memory in headless Firefox
    abi) echo "abigail-tools binutils" ;;   # make check-abi: abidw, abidiff, nm, readelf
    urcu) echo "liburcu-dev" ;;   # make bench-urcu: userspace RCU, measured against our grace period
    *) echo "deps.sh: unknown group '$1'" >&2; exit 2 ;;
    esac
}

missing=""
for group in "$@"; do
    list=$(pkgs_for "$group") || exit 2   # an unknown group: its exit, not the loop's
    for p in $list; do
        case " $missing " in *" $p "*) continue ;; esac
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
            missing="$missing $p"
        fi
    done
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "deps.sh: missing packages:$missing (no apt-get here: install them by hand)" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "deps.sh: need root or sudo to install:$missing" >&2; exit 1
    fi
fi
echo "deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# Wait for another apt-get (a parallel make, unattended upgrades) rather
# than fail on its lock.
wait_lock="-o DPkg::Lock::Timeout=300"
# An index that fails to download (a mirror mid-sync, a foreign
# architecture's suite that tools/deps-cross.sh added) makes update exit
# non-zero; the install below still fails if it needed that index.
# shellcheck disable=SC2086
$SUDO apt-get $wait_lock update -qq ||
    echo "deps.sh: apt-get update failed for some index; installing from what it has" >&2
# shellcheck disable=SC2086
$SUDO apt-get $wait_lock install -y -qq --no-install-recommends $missing
