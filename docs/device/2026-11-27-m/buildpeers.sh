#!/bin/sh
# SPDX-License-Identifier: MIT
# buildpeers.sh NAME FLAGS...: static atompeers of this tree (knobs.patch
# applied, `make` run once) with FLAGS, into build/device/p/NAME; run from
# the top of the tree
set -e
name=$1; shift
o=/tmp/pvar/$name; rm -rf $o; mkdir -p $o
CF="-std=c11 -D_GNU_SOURCE -O2 -g -Wall -Iinclude -Ibuild/make/gen -pthread -DATAB_VERSION_STRING=\"0.1.0\" $*"
for f in src/*.c build/make/gen/atomtab_atoms.c; do cc $CF -fPIC -fvisibility=hidden -c $f -o $o/$(basename $f .c).o; done
ar rcs $o/lib.a $o/*.o
d=build/device/p/$name; mkdir -p $d
P=""; for f in cond_destroy cond_init cond_signal cond_wait equal getspecific key_create key_delete mutex_destroy mutex_init mutex_lock mutex_unlock once self setspecific; do P="$P -Wl,-u,pthread_$f"; done
cc $CF -static -s $(pkg-config --cflags glib-2.0 libxml-2.0) bench/peers.c bench/icu-stubs.c -o $d/atompeers $o/lib.a $(pkg-config --static --libs glib-2.0 libxml-2.0 | sed 's/-licu[a-z0-9]*//g') -lxxhash -pthread $P 2>/dev/null
echo built $name
