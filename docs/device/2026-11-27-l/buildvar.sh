#!/bin/sh
# SPDX-License-Identifier: MIT
# buildvar.sh NAME FLAGS...: static atomthreads, atomlatency and
# atomgracecount of this tree (knobs.patch applied, `make` run once) with
# FLAGS, into build/device/v/NAME; run from the top of the tree
set -e
name=$1; shift
o=/tmp/var/$name; rm -rf $o; mkdir -p $o
CF="-std=c11 -D_GNU_SOURCE -O2 -g -Wall -Iinclude -Ibuild/make/gen -pthread -DATAB_VERSION_STRING=\"0.1.0\" $*"
for f in src/*.c build/make/gen/atomtab_atoms.c; do
  cc $CF -fPIC -fvisibility=hidden -c $f -o $o/$(basename $f .c).o
done
ar rcs $o/lib.a $o/*.o
d=build/device/v/$name; mkdir -p $d
for b in threads latency; do cc $CF -static -s bench/$b.c -o $d/atom$b $o/lib.a -lxxhash -pthread; done
cc $CF -static -s bench/gracecount.c -o $d/atomgracecount -Wl,--wrap=syscall $o/lib.a -lxxhash -pthread
echo built $name
