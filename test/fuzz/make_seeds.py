#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpus test/fuzz/corpus/ for fuzz_table.c (see the input
format there): run from the repository root; the files are committed."""
import os

INTERN, INTERN_OLD, U16, U16_OLD, LOOKUP, LOOKUP_U16, REF, RELEASE, \
    RELEASE_ALL, GC, REPORT, BULK, EXTERNAL, STATIC, LOWER, LOWER_U16, \
    RELEASE_LIST, FOREACH, HASH, HOST_CACHE, REPORT_EX, HOST_STATIC, \
    OVER_RELEASE = range(23)
THRESHOLD, FAIL, FAIL_AFTER, LIMIT, INITCAP, STATICS, KEEP_HANDLES = 1, 2, 4, 8, 16, 32, 64
# With THRESHOLD, bits 1-3 (FAIL, FAIL_AFTER, LIMIT) also set the sweep
# threshold, 1 + (cfg >> 1) % 8: THRESHOLD alone sweeps at 1.
ONE_SHARD = 128   # BULK: keys of shard 0 only
WALK_ALL, WALK_STOP, WALK_REF, WALK_RELEASE = range(4)
# Byte 0 with low bits 100 (EXT) takes two more bytes: ext(...) below.
EXT = 4
CHECKED = 1
SETS_HOST, SETS_HOST_HOST2, SETS_HOST2_HOST = 1 << 1, 2 << 1, 3 << 1
CAP_1, CAP_63, CAP_64, CAP_1000, CAP_5000, CAP_20000, CAP_HUGE = [i << 3 for i in range(1, 8)]
USABLE_EXACT, USABLE_ROUND16, USABLE_NONE, USABLE_SHORT = [i << 6 for i in range(4)]
LEAVE_CACHES = 8   # second byte: the caches are left to atab_table_free
# HOST_CACHE sub-operations (cache << 3 | sub) and a new cache's options
HC_NEW, HC_GET, HC_GET2, HC_TRIM, HC_CLEAR, HC_FREE, HC_COLLECT, HC_GET_ALL = range(8)
HC_HOLD, HC_EXTERNAL, HC_FAILING, HC_COLLECT_NOW = 1, 2, 4, 8


def ext(cfg, first, second=0):
    """Byte 0 with the extended configuration: cfg's low 3 bits come from
    second (sweeps, failures)."""
    return bytes([(cfg & ~7) | EXT, first, second])


def hc(sub, cache=0, *args):
    return op(HOST_CACHE, cache << 3 | sub, *args)


def report_ex(form, prefix, *extras, null_extra=False):
    """form 0 atab_report_ex, 1 tree, 2 JSON; prefix and extras index the
    fuzzer's lists (rx_prefix, rx_pool; an extra's bits 2-4 its amount)."""
    n = len(extras) | (128 if null_extra else 0)
    return op(REPORT_EX, prefix * 3 + form, n, *extras)


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


def lower(s, mask):
    """atab_intern_lower of a raw key, its letters uppercased by mask."""
    return bytes([LOWER]) + key(s)[1:] + bytes([mask])


def long_key(code, x, fill, *mask):
    """A long raw key: 256 + 2 * x bytes of fill."""
    return bytes([code, 255, x]) + fill * (256 + 2 * x) + bytes(mask)


def foreach(mode, stop_at=1):
    return op(FOREACH, mode | (stop_at - 1) << 2)


def release_list(*picks):
    """atab_release_all: 0 NULL, 1 a static atom, 2 (first) an unused atom,
    others a held one."""
    return op(RELEASE_LIST, len(picks), *picks)


LONG_U16 = (bytes(range(0x20, 0x7f)) * 7)[:600]   # 300 units (length byte 255)

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
    'handles-outlive-table': bytes([KEEP_HANDLES | THRESHOLD]) + op(BULK, 3)
    + op(EXTERNAL, 0) + op(EXTERNAL, 2) + op(EXTERNAL, 6) + op(RELEASE, 0)
    + op(RELEASE_ALL, 0) + op(GC) + op(STATIC, 5, 0) + op(EXTERNAL, 0),
    'statics-external': bytes([STATICS]) + op(BULK, 5) + op(STATIC, 7, 0)
    + op(STATIC, 7, 1) + op(STATIC, 7, 2) + op(STATIC, 0x63, 0) + op(EXTERNAL, 0)
    + op(EXTERNAL, 4) + op(EXTERNAL, 1) + op(GC) + op(EXTERNAL, 3) + op(STATIC, 0x10, 2),
    'statics-handles-outlive': bytes([STATICS | KEEP_HANDLES]) + op(BULK, 4)
    + op(STATIC, 1, 0) + op(EXTERNAL, 0) + op(EXTERNAL, 8) + op(STATIC, 2, 2) + op(GC),
    'lower': bytes([STATICS]) + key('div') + lower('DIV', 0) + lower('Span-x', 0)
    + lower('span-x', 0xff) + lower('data-ID', 0x0f) + lower('DIV', 0xff)
    + long_key(LOWER, 10, b'A', 0) + long_key(INTERN, 10, b'a')
    + long_key(LOWER, 10, b'a', 0x55)
    + u16(LOWER_U16, [0x61, 0x62, 0x63]) + bytes([0xff])
    + bytes([LOWER_U16, 255]) + LONG_U16 + bytes([0x81]) + op(GC) + op(REPORT, 1),
    'lower-oom': bytes([FAIL | FAIL_AFTER, 3]) + long_key(INTERN, 10, b'q')
    + long_key(LOWER, 10, b'Q', 0) + long_key(LOWER, 10, b'q', 0xff)
    + bytes([LOWER_U16, 255]) + LONG_U16 + bytes([0xff]) + op(GC),
    'release-list': bytes([0]) + key('ra') + key('rb') + key('rc') + key('rz')
    + op(REF, 0) + op(REF, 1) + op(RELEASE, 3)
    + release_list(2, 0, 1, 3, 3, 4, 5, 6) + release_list() + release_list(7, 9)
    + op(GC) + op(REPORT, 2),
    'release-list-sweep': bytes([THRESHOLD])
    + b''.join(key('r%d' % i) for i in range(12)) + op(REF, 3) + op(REF, 4)
    + release_list(3, 4, 5, 6, 7, 11, 12, 13) + release_list(2, 3, 5, 7, 11, 13, 17, 19)
    + op(GC) + op(REPORT, 0),
    'foreach': bytes([0]) + key('w1') + key('w2') + key('w3') + op(REF, 0) + op(RELEASE, 2)
    + foreach(WALK_ALL) + foreach(WALK_STOP, 2) + foreach(WALK_REF) + foreach(WALK_RELEASE)
    + op(EXTERNAL, 0) + foreach(WALK_ALL) + op(EXTERNAL, 1) + op(GC) + foreach(WALK_ALL),
    'foreach-sweep': bytes([THRESHOLD])
    + b''.join(key('s%d' % i) for i in range(10)) + op(RELEASE, 0) + op(RELEASE, 1)
    + foreach(WALK_RELEASE) + foreach(WALK_ALL) + op(GC),
    'foreach-big-shard': bytes([0]) + op(BULK, ONE_SHARD | 15) * 3 + foreach(WALK_ALL)
    + foreach(WALK_STOP, 64) + foreach(WALK_REF) + foreach(WALK_RELEASE) + op(GC),
    'foreach-oom': bytes([FAIL, 190]) + op(BULK, ONE_SHARD | 15) * 3 + foreach(WALK_ALL)
    + foreach(WALK_ALL) + op(GC),
    'hash': bytes([STATICS]) + key('div') + key('hashed') + key('a-longer-key-than-sixteen')
    + op(HASH, 0, 0) + op(HASH, 1, 1) + op(HASH, 2, 2) + op(HASH, 3, 7)
    + op(RELEASE_ALL, 1) + op(GC) + op(HASH, 1, 0x33),
    'host-cache': ext(STATICS, SETS_HOST) + key('hc-a') + key('hc-b') + key('div')
    + hc(HC_NEW, 0, HC_HOLD | HC_EXTERNAL) + hc(HC_NEW, 1, 0)
    + hc(HC_GET, 0, 0) + hc(HC_GET, 0, 0) + hc(HC_GET, 0, 2) + hc(HC_GET, 1, 2)
    + hc(HC_GET, 0, 1) + hc(HC_GET, 0, 1) + hc(HC_GET, 1, 3) + hc(HC_GET, 0, 5)
    + op(RELEASE_ALL, 0) + op(RELEASE_ALL, 1) + hc(HC_TRIM, 0) + hc(HC_TRIM, 1)
    + hc(HC_TRIM, 0) + hc(HC_COLLECT) + op(GC) + hc(HC_GET, 0, 4) + hc(HC_CLEAR, 0)
    + hc(HC_COLLECT) + op(REPORT, 2) + hc(HC_FREE, 1) + op(GC),
    'host-cache-sweep': ext(0, 0, THRESHOLD) + b''.join(key('hs%d' % i) for i in range(8))
    + hc(HC_NEW, 0, HC_EXTERNAL | HC_FAILING | HC_COLLECT_NOW) + hc(HC_NEW, 1, HC_HOLD)
    + hc(HC_GET_ALL, 0) + hc(HC_GET_ALL, 1) + hc(HC_GET_ALL, 0)
    + b''.join(op(RELEASE, i) for i in range(8)) + hc(HC_TRIM, 1) + hc(HC_TRIM, 0)
    + hc(HC_TRIM, 1) + op(OVER_RELEASE, 0) + hc(HC_FREE, 0) + hc(HC_COLLECT),
    'host-cache-auto-trim': ext(0, 0) + op(BULK, 15) * 17 + op(BULK, 1) + hc(HC_NEW, 0, HC_HOLD)
    + hc(HC_GET_ALL, 0) + foreach(WALK_RELEASE) + key('hc-new') + hc(HC_GET_ALL, 0)
    + op(GC),
    'host-cache-oom': ext(0, 0, FAIL | FAIL_AFTER) + bytes([40])
    + b''.join(key('ho%d' % i) for i in range(12)) + hc(HC_NEW, 0, HC_EXTERNAL)
    + hc(HC_GET_ALL, 0) + hc(HC_NEW, 1, 0) + hc(HC_GET_ALL, 1) + op(RELEASE_ALL, 0)
    + hc(HC_TRIM, 0) + hc(HC_COLLECT) + op(GC),
    'caches-left-to-free': ext(KEEP_HANDLES, SETS_HOST, LEAVE_CACHES) + key('lf-a')
    + key('lf-b') + hc(HC_NEW, 0, HC_EXTERNAL) + hc(HC_NEW, 1, HC_EXTERNAL | HC_HOLD)
    + hc(HC_GET, 0, 0) + hc(HC_GET, 1, 0) + hc(HC_GET, 1, 2) + hc(HC_GET, 0, 1)
    + op(EXTERNAL, 2) + hc(HC_CLEAR, 1) + op(RELEASE_ALL, 0),
    'report-ex': ext(0, USABLE_ROUND16) + key('rx') + op(BULK, 3)
    + report_ex(0, 0) + report_ex(0, 2, 0, 4 | 2 << 2, 3) + report_ex(2, 4, 8, 0)
    + report_ex(1, 3, 0, 2, 6) + report_ex(1, 14) + report_ex(0, 8, 9)
    + report_ex(0, 2, 9) + report_ex(0, 0, 6, 7) + report_ex(2, 5, 12)
    + report_ex(0, 1, 0, null_extra=True) + report_ex(2, 7, 16, 17, 5, 1)
    + report_ex(0, 15, 0) + report_ex(1, 6, 0, 1, 2, 3, 4, 5, 6, 16, 17),
    'report-ex-unusable': ext(STATICS, USABLE_NONE) + key('rx') + report_ex(0, 2, 3)
    + report_ex(2, 0, 0) + report_ex(1, 2, 0),
    'report-ex-short': ext(0, USABLE_SHORT) + key('rx') + report_ex(0, 11, 3)
    + report_ex(2, 3, 1),
    'checked-refs': ext(0, CHECKED | CAP_64) + key('cr-a') + key('cr-b') + op(REF, 0)
    + op(RELEASE, 0) + op(INTERN_OLD, 0) + op(OVER_RELEASE, 0) + op(OVER_RELEASE, 1)
    + key('cr-c') + op(OVER_RELEASE, 2) + op(RELEASE_ALL, 0) + op(OVER_RELEASE, 0)
    + op(EXTERNAL, 0) + op(OVER_RELEASE, 1) + op(GC),
    'checked-refs-sweep': ext(0, CHECKED | CAP_1000, THRESHOLD)
    + b''.join(key('cs%d' % i) for i in range(6)) + b''.join(op(OVER_RELEASE, 2 * i)
                                                           for i in range(6)),
    'host-static': ext(0, SETS_HOST_HOST2 | CAP_1)
    + b''.join(op(HOST_STATIC, b, how) for b in range(0, 40, 3) for how in (0, 2, 4, 59))
    + op(HOST_STATIC, 1, 1) + op(HOST_STATIC, 1, 3) + op(GC),
    'host-static-default': ext(STATICS, SETS_HOST2_HOST | CAP_20000)
    + b''.join(op(HOST_STATIC, b, how) for b in range(0, 40, 2) for how in (1, 3, 4))
    + key('div') + key('for') + op(INTERN, 0) + hc(HC_NEW, 0, HC_EXTERNAL)
    + hc(HC_GET, 0, 1) + hc(HC_GET, 0, 3) + hc(HC_GET, 0, 1) + op(GC),
    'initcap-huge': ext(0, CAP_HUGE | SETS_HOST | USABLE_NONE) + op(BULK, 20)
    + report_ex(0, 0) + op(GC),
    'initcap-oom': ext(0, CAP_5000 | SETS_HOST, FAIL) + bytes([0]) + key('a'),
}

os.makedirs('test/fuzz/corpus', exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join('test/fuzz/corpus', name), 'wb') as f:
        f.write(data)
