#!/bin/sh
# SPDX-License-Identifier: MIT
# buildvar.sh NAME FLAGS... : static atomthreads/atomlatency/atomgracecount of this tree with FLAGS, into /work/main/build/device/v/NAME
set -e
name=$1; shift
src=$(pwd); o=/tmp/var/$name; rm -rf $o; mkdir -p $o
CF="-std=c11 -D_GNU_SOURCE -O2 -g -Wall -Iinclude -I/work/main/build/make/gen -pthread -DATAB_VERSION_STRING=\"0.1.0\" $*"
for f in src/*.c /work/main/build/make/gen/atomtab_atoms.c; do
  cc $CF -fPIC -fvisibility=hidden -c $f -o $o/$(basename $f .c).o
done
ar rcs $o/lib.a $o/*.o
d=/work/main/build/device/v/$name; mkdir -p $d
for b in threads latency; do cc $CF -static -s bench/$b.c -o $d/atom$b $o/lib.a -lxxhash -pthread; done
cc $CF -static -s bench/gracecount.c -o $d/atomgracecount -Wl,--wrap=syscall $o/lib.a -lxxhash -pthread
echo built $name
