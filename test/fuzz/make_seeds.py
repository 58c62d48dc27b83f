#!/usr/bin/env python3
"""Writes the seed corpus test/fuzz/corpus/ for fuzz_table.c (see the input
format there): run from the repository root; the files are committed."""
import os

INTERN, INTERN_OLD, U16, U16_OLD, LOOKUP, LOOKUP_U16, REF, RELEASE, \
    RELEASE_ALL, GC, REPORT, BULK = range(12)
THRESHOLD, FAIL, FAIL_AFTER, LIMIT, INITCAP = 1, 2, 4, 8, 16


def key(s):
    """A raw key (odd length byte)."""
    b = s.encode('utf-8')
    assert len(b) < 40
    return bytes([INTERN]) + bytes([len(b) * 2 + 1]) + b


def op(code, *args):
    return bytes([code, *args])


def u16(code, units):
    out = bytes([code, len(units)])
    for u in units:
        out += bytes([u >> 8, u & 255])
    return out


def lookup(s):
    return bytes([LOOKUP]) + key(s)[1:]


SEEDS = {
    'intern-lookup-gc': bytes([0]) + key('div') + key('span') + op(INTERN_OLD, 0)
    + lookup('div') + lookup('nope') + op(RELEASE_ALL, 0) + op(RELEASE, 0) + op(GC)
    + lookup('div') + op(REPORT, 1),
    'utf16-pairs': bytes([0]) + u16(U16, [0x61, 0xe9, 0xd83d, 0xde00])
    + u16(U16, [0xd800, 0x61]) + op(U16_OLD, 0)
    + u16(LOOKUP_U16, [0x61, 0xe9, 0xd83d, 0xde00]) + key('a\u00e9\U0001f600')
    + op(GC) + op(REPORT, 2),
    'utf16-long': bytes([0, U16, 255]) + bytes(range(0x20, 0x7f)) * 7
    + op(U16_OLD, 0) + op(RELEASE, 0) + op(GC),
    'refs-release': bytes([0]) + key('x') + op(REF, 0) + op(REF, 0) + op(RELEASE, 0)
    + op(INTERN_OLD, 0) + op(RELEASE_ALL, 0) + op(GC) + op(INTERN_OLD, 0) + op(REPORT, 0),
    'self-sweep': bytes([THRESHOLD | (3 << 1)])
    + b''.join(key('k%d' % i) for i in range(12))
    + b''.join(op(RELEASE, 0) for i in range(12)) + op(REPORT, 0),
    'oom-once': bytes([FAIL, 5]) + b''.join(key('m%d' % i) for i in range(20))
    + op(GC) + op(REPORT, 1),
    'oom-after': bytes([FAIL | FAIL_AFTER, 9]) + b''.join(key('n%d' % i) for i in range(20))
    + op(RELEASE_ALL, 0) + op(GC) + op(REPORT, 2),
    'limit': bytes([LIMIT, 1]) + b''.join(key('limit-%02d-%s' % (i, 'x' * 20)) for i in range(40))
    + op(GC) + op(REPORT, 0),
    'growth': bytes([INITCAP]) + b''.join(key('g%03d' % i) for i in range(150))
    + op(RELEASE_ALL, 3) + op(GC) + op(REPORT, 2),
    'bulk-sweep': bytes([THRESHOLD | (7 << 1)]) + op(BULK, 50) + op(BULK, 63)
    + b''.join(op(RELEASE_ALL, i) for i in range(40)) + op(REPORT, 1),
    'bulk-oom': bytes([FAIL | FAIL_AFTER | INITCAP, 200]) + op(BULK, 60) + op(GC),
    'long-keys': bytes([0, INTERN, 255, 10]) + bytes(range(256)) + bytes(20)
    + op(INTERN_OLD, 0) + op(RELEASE_ALL, 0) + op(GC),
}

os.makedirs('test/fuzz/corpus', exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join('test/fuzz/corpus', name), 'wb') as f:
        f.write(data)
