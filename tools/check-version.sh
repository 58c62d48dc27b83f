#!/bin/sh
# SPDX-License-Identifier: MIT
# check-version.sh - the header's ATAB_VERSION_MAJOR/MINOR/PATCH must say
# what the VERSION file says (both builds run it before compiling).
# usage: tools/check-version.sh VERSION include/atomtab.h
set -eu
v=$(cat "$1")
h=$(awk '/^#define ATAB_VERSION_(MAJOR|MINOR|PATCH) / { printf "%s%s", s, $3; s = "." }' "$2")
[ "$v" = "$h" ] || {
    echo "check-version: $1 says $v, $2's ATAB_VERSION_* say ${h:-nothing}" >&2; exit 1; }
