#!/bin/sh
# SPDX-License-Identifier: MIT
# bp.sh SRCTREE NAME: a static atompeers (bench/peers.c of this tree, the
# library of SRCTREE, whose build/make/gen this tree's `make lib` made) in
# build/var/NAME, gcc -O2, glibc's malloc, as make device-bundle links it.
set -e
here=$(pwd); src=$1; name=$2
o=$here/build/var/$name; rm -rf "$o"; mkdir -p "$o/obj"
CF="-std=c11 -D_GNU_SOURCE -O2 -Wall -I$src/include -I$here/build/make/gen -pthread -DATAB_VERSION_STRING=\"0.1.0\""
for f in "$src"/src/*.c "$here"/build/make/gen/atomtab_atoms.c; do
  cc $CF -fPIC -fvisibility=hidden -c "$f" -o "$o/obj/$(basename "$f" .c).o"
done
ar rcs "$o/lib.a" "$o"/obj/*.o
cc $CF -static -s $(pkg-config --cflags glib-2.0 libxml-2.0) bench/peers.c bench/icu-stubs.c \
   -o "$o/atompeers" "$o/lib.a" $(pkg-config --static --libs glib-2.0 libxml-2.0 | sed 's/-licu[a-z0-9]*//g') \
   -lxxhash -pthread $(for f in cond_destroy cond_init cond_signal cond_wait equal getspecific key_create \
   key_delete mutex_destroy mutex_init mutex_lock mutex_unlock once self setspecific; do printf ' -Wl,-u,pthread_%s' $f; done)
rm -rf "$o/obj" "$o/lib.a"
echo "built $name"
