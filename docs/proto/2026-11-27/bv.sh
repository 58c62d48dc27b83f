#!/bin/sh
# SPDX-License-Identifier: MIT
# bv.sh SRCTREE NAME FLAGS...: static atomthreads and atomgracecount of
# SRCTREE (`make lib` run there once, for build/make/gen) built with FLAGS
# into /tmp/var/NAME: each tree's objects, gcc -O2, glibc's malloc.
set -e
src=$1; name=$2; shift 2
o=/tmp/var/$name; rm -rf "$o"; mkdir -p "$o/obj"
cd "$src"
CF="-std=c11 -D_GNU_SOURCE -O2 -g -Wall -Iinclude -Ibuild/make/gen -pthread -DATAB_VERSION_STRING=\"0.1.0\" $*"
for f in src/*.c build/make/gen/atomtab_atoms.c; do
  cc $CF -fPIC -fvisibility=hidden -c "$f" -o "$o/obj/$(basename "$f" .c).o"
done
ar rcs "$o/lib.a" "$o"/obj/*.o
cc $CF -static bench/threads.c -o "$o/atomthreads" "$o/lib.a" -lxxhash -pthread
cc $CF -static bench/gracecount.c -o "$o/atomgracecount" -Wl,--wrap=syscall "$o/lib.a" -lxxhash -pthread
echo "built $name"
