#!/bin/sh
# SPDX-License-Identifier: MIT
# check-dist.sh - what make dist adds to meson dist's own test of the
# tarball (unpacked, built, tested and installed by meson): the tarball
# carries the license, the changelog and the ABI baseline, its checksum
# file matches, and its plain make build (how embedders vendor it) builds
# the libraries.
# usage: tools/check-dist.sh TARBALL.tar.xz
set -eu
[ $# = 1 ] || { echo "usage: $0 TARBALL.tar.xz" >&2; exit 2; }
tarball=$1
fail() { echo "check-dist: $*" >&2; exit 1; }
[ -f "$tarball" ] || fail "no $tarball"
(cd "$(dirname "$tarball")" && sha256sum -c --quiet "$(basename "$tarball").sha256sum") ||
    fail "$tarball does not match its .sha256sum"
name=$(basename "$tarball" .tar.xz)
major=$(echo "${name#atomtab-}" | cut -d. -f1)
tar -tJf "$tarball" > "$tarball.list"
for f in LICENSE CHANGELOG.md README.md VERSION "abi/atomtab-$major.xml" bindings/node/LICENSE; do
    grep -qx "$name/$f" "$tarball.list" || fail "$tarball lacks $f"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xJf "$tarball" -C "$tmp"
(cd "$tmp/$name" && make --no-print-directory -j2 lib > "$tmp/make.log" 2>&1) ||
    { cat "$tmp/make.log"; fail "the tarball's make lib failed"; }
[ -f "$tmp/$name/build/make/libatomtab.so.${name#atomtab-}" ] ||
    fail "the tarball's make lib made no libatomtab.so.${name#atomtab-}"
rm -f "$tarball.list"
echo "check-dist: $tarball carries LICENSE, CHANGELOG.md and its ABI baseline; its make build works"
