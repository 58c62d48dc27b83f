#!/bin/sh
# SPDX-License-Identifier: MIT
# atomics-callgrind.sh - the library's atomic read-modify-writes per
# transient atom, counted exactly: callgrind (--dump-instr=yes) counts how
# often each instruction of atomgracecount's workload ran (each thread
# interns and releases new strings, collected from the threads' start to
# their end), objdump -d -l lists the lock-prefixed instructions and the
# xchg with memory that the library's sources (src/) put in the binary,
# and the two are joined by address (the binary is linked -no-pie, so
# objdump's addresses are the ones that ran). Prints one line per site
# that ran: count per atom, instruction, function, source line; then the
# total per atom. Valgrind runs one thread at a time; --fair-sched=yes
# hands the CPU round the threads, so that they interleave (by default
# the first could run to its end before the second starts, and each
# would be the table's solo thread in turn: src/table.h).
# usage: tools/atomics-callgrind.sh ATOMGRACECOUNT_NOPIE [THREADS [ATOMS]]
set -e
bin=$1 threads=${2:-1} atoms=${3:-100000}
[ -n "$bin" ] || { echo "usage: $0 ATOMGRACECOUNT_NOPIE [THREADS [ATOMS]]" >&2; exit 2; }
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --fair-sched=yes --dump-instr=yes --callgrind-out-file="$out/cg" \
    --collect-atstart=no --toggle-collect=churn \
    "$bin" --threads "$threads" --atoms "$atoms" >/dev/null 2>"$out/vg.log" ||
    { cat "$out/vg.log" >&2; exit 1; }
objdump -d -l --no-show-raw-insn "$bin" > "$out/dis"
top=$(cd "$(dirname "$0")/.." && pwd)   # the checkout: its src/ is the library's
python3 - "$out/cg" "$out/dis" "$atoms" "$threads" "$top" <<'PY'
import re, sys
cg, dis, atoms, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
top = sys.argv[5] + "/"
def lib_src(path):   # src/FILE for the library's own sources, else None
    path = path[len(top):] if path.startswith(top) else path
    path = path[2:] if path.startswith("./") else path
    return path if path.startswith("src/") else None
# the library's atomic sites: lock-prefixed instructions, and xchg with a
# memory operand (locked without the prefix), from src/
sites, fn, src = {}, "?", None
for line in open(dis):
    m = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
    if m:
        fn = m.group(2)
        continue
    m = re.match(r"^(\S.*\.[ch]):(\d+)", line)   # the path may hold spaces
    if m:
        src = lib_src(m.group(1))
        src = src and src + ":" + m.group(2)
        continue
    m = re.match(r"^\s*([0-9a-f]+):\t(.*)$", line)
    if m:
        ins = m.group(2).strip()
        if (ins.startswith("lock ") or (ins.startswith("xchg") and "(" in ins)) and src:
            sites[int(m.group(1), 16)] = (ins, fn, src)
# executions per instruction: callgrind's cost lines (positions "instr
# line", compressed: 0x.. absolute, +n/-n relative, * the same); the line
# after calls= is a call's inclusive cost, not an execution
def num(t):
    return int(t, 16) if t.startswith("0x") else int(t)
ir, addr, skip = {}, 0, False
for line in open(cg):
    if line.startswith("calls="):
        skip = True
        continue
    if not re.match(r"(0x|\+|-|\*)", line):   # names, headers, totals
        continue
    t = line.split()
    if t[0] == "*":
        pass
    elif t[0][0] == "+":
        addr += num(t[0][1:])
    elif t[0][0] == "-":
        addr -= num(t[0][1:])
    else:
        addr = num(t[0])
    if skip:
        skip = False
        continue
    if len(t) > 2:
        ir[addr] = ir.get(addr, 0) + int(t[2])
if not sites:
    sys.exit("atomics-callgrind: objdump -l names no atomic site in " + top + "src/")
total, rows = 0.0, []
for a, (ins, f, s) in sites.items():
    if ir.get(a):
        per = ir[a] / atoms
        total += per
        rows.append((per, ins, f, s))
for per, ins, f, s in sorted(rows, reverse=True):
    print("%8.3f  %-36s %-30s %s" % (per, ins[:36], f[:30], s))
print("%8.3f  atomic RMWs per transient atom in the library (%d thread(s), %d atoms)"
      % (total, threads, atoms))
PY
