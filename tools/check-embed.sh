#!/bin/sh
# SPDX-License-Identifier: MIT
# check-embed.sh - the library embeds without taking over its host (make
# test runs it):
#  1. libatomtab.so is dlopen'ed and used by Python's ctypes
#     (test/embed/dlopen.py) and loaded by Node's process.dlopen
#     (test/embed/dlopen.js; when node is present);
#  2. a program linked against libatomtab.a with the static link line
#     (test/embed/host.c) calls the C library's malloc for its own
#     allocations (LD_DEBUG=bindings) and needs no libjemalloc.
# With ALLOCATOR=jemalloc, an explicit choice, 2 checks the opposite (the
# program's malloc is jemalloc's, as docs/design.md says) and 1 is skipped:
# jemalloc's initial-exec TLS does not fit most hosts' dlopen.
# usage: tools/check-embed.sh BUILD-DIR ALLOCATOR CC "LDLIBS"
set -eu
O=$1 ALLOCATOR=$2 CC=$3 LDLIBS=$4
so="$O/libatomtab.so"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-embed: $*" >&2; exit 1; }

if [ "$ALLOCATOR" = system ]; then
    if command -v python3 >/dev/null 2>&1; then
        python3 test/embed/dlopen.py "$so" || fail "ctypes could not load or use $so"
    else
        fail "python3 missing (tools/deps.sh test installs it)"
    fi
    if command -v node >/dev/null 2>&1; then
        node test/embed/dlopen.js "$(cd "$(dirname "$so")" && pwd)/$(basename "$so")" ||
            fail "node could not dlopen $so"
    else
        echo "check-embed: node dlopen skipped (no node)"
    fi
else
    echo "check-embed: dlopen checks skipped (ALLOCATOR=$ALLOCATOR: not dlopen-able by choice)"
fi

# shellcheck disable=SC2086
$CC -std=c11 -O2 -Iinclude test/embed/host.c -o "$tmp/host" "$O/libatomtab.a" $LDLIBS
"$tmp/host" >/dev/null || fail "the host program failed"
bind=$(LD_DEBUG=bindings "$tmp/host" 2>&1 >/dev/null |
       grep "binding file $tmp/host \[0\] to .*normal symbol \`malloc'" | head -n 1)
[ -n "$bind" ] || fail "LD_DEBUG shows no binding of the program's malloc"
needs_je=$(readelf -d "$tmp/host" | grep -c 'NEEDED.*libjemalloc' || true)
if [ "$ALLOCATOR" = system ]; then
    case "$bind" in *libc.so*) ;; *) fail "the host's malloc binds elsewhere: $bind" ;; esac
    [ "$needs_je" = 0 ] || fail "a program linked with libatomtab.a needs libjemalloc"
    echo "check-embed: a program linked with libatomtab.a keeps the C library's malloc"
else
    case "$bind" in *libjemalloc*) ;; *) fail "expected jemalloc's malloc: $bind" ;; esac
    echo "check-embed: ALLOCATOR=jemalloc: the program's malloc is jemalloc's, as documented"
fi
