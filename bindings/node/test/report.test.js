// SPDX-License-Identifier: MIT
'use strict';
// report()'s options: a prefix that keeps the table's paths apart from
// other reporters', and the host's own entries after the table's, as
// atab_report_tree_ex / atab_report_json_ex take them.
const test = require('node:test');
const assert = require('node:assert');
const atomtab = require('..');

const TABLE_PATHS = ['explicit/atoms/table', 'atoms-dynamic', 'atoms-dynamic-unused',
                     'atoms-static', 'atoms-external-handles'];
const jsonReport = (options) => JSON.parse(atomtab.report({ json: true, ...options })).reports;

test('a prefix goes after explicit/, and into single names with "/" as "-"', () => {
  const keep = atomtab.intern('reported-with-a-prefix');
  assert.ok(keep);
  const plain = jsonReport({}).map((r) => r.path);
  for (const p of TABLE_PATHS) assert.ok(plain.includes(p), p);
  const reports = jsonReport({ prefix: 'atomtab-worker/1', process: 'p' });
  const paths = reports.map((r) => r.path);
  const overhead = 'explicit/heap-overhead/';   // the allocator's costs stay there
  assert.deepStrictEqual(paths, plain.map((p) => (p.startsWith(overhead)
    ? `${overhead}atomtab-worker/1/${p.slice(overhead.length)}`
    : p.startsWith('explicit/') ? `explicit/atomtab-worker/1/${p.slice(9)}`
      : `atomtab-worker-1-${p}`)));
  for (const r of reports) assert.strictEqual(r.process, 'p');
  const long = 'a-process-name-'.repeat(20);   // 300 bytes, whole
  assert.ok(jsonReport({ process: long }).every((r) => r.process === long));
  const tree = atomtab.report({ prefix: 'atomtab-worker/1' });
  assert.match(tree, /-- atomtab-worker\/1\/atoms\n/);
  assert.match(tree, /── atomtab-worker-1-atoms-dynamic\n/);
  assert.doesNotMatch(tree, /── atoms-dynamic\n/);
  assert.deepStrictEqual(jsonReport({ prefix: '' }).map((r) => r.path), plain);
});

test('extra entries follow the table\'s as given, kind "other" and bytes by default', () => {
  const extra = [
    { path: 'heap-allocated', amount: 64 << 20, description: 'the allocator\'s total' },
    { path: 'resident', amount: process.memoryUsage().rss },
    { path: 'explicit/host/cache', kind: 'heap', amount: 4096 },
    { path: 'host-items', units: 'count', amount: 7 },
  ];
  const reports = jsonReport({ prefix: 'html', extra });
  const tail = reports.slice(-extra.length);
  assert.deepStrictEqual(tail.map((r) => [r.path, r.kind, r.units, r.amount, r.description]), [
    ['heap-allocated', 2, 0, 64 << 20, 'the allocator\'s total'],
    ['resident', 2, 0, extra[1].amount, ''],
    ['explicit/host/cache', 1, 0, 4096, ''],
    ['host-items', 2, 1, 7, ''],
  ]);
  assert.ok(reports.slice(0, -extra.length).every((r) => r.path.includes('html')));
  // heap-allocated gives about:memory's heap-unclassified in the tree
  const tree = atomtab.report({ extra: [extra[0]] });
  assert.match(tree, /── heap-unclassified\n/);
  assert.match(tree, /^67,108,864 B \(100\.0%\) -- explicit$/m);
});

test('an explicit/ extra entry is a heap one by default: about:memory takes no other kind there', () => {
  // about:memory refuses an explicit/ report of kind "other" ("bad explicit kind")
  const reports = jsonReport({ extra: [{ path: 'explicit/host/cache', amount: 4096 },
                                       { path: 'explicit/host/mapped', kind: 'nonheap', amount: 8 }] });
  assert.deepStrictEqual(reports.slice(-2).map((r) => [r.path, r.kind]),
                         [['explicit/host/cache', 1], ['explicit/host/mapped', 0]]);
  assert.throws(() => atomtab.report({ extra: [{ path: 'explicit/n', kind: 'other', amount: 1 }] }),
                { name: 'RangeError', code: 'ERR_INVALID_ARG_VALUE' });
});

test('prefixes and entries the library refuses are RangeErrors', () => {
  const refused = { name: 'RangeError', code: 'ERR_INVALID_ARG_VALUE' };
  for (const prefix of ['/a', 'a/', 'a//b', 'explicit/atomtab-worker/', 'x'.repeat(129),
                        '\u00e9'.repeat(65)])   // 130 bytes of UTF-8
    assert.throws(() => atomtab.report({ prefix }), refused, JSON.stringify(prefix));
  for (const prefix of ['x'.repeat(128), '\u00e9'.repeat(64), 'a/b/c'])
    assert.doesNotThrow(() => atomtab.report({ json: true, prefix }), prefix);
  const entry = { path: 'resident', amount: 1 };
  assert.throws(() => atomtab.report({ extra: Array(9).fill(entry) }), refused);
  assert.doesNotThrow(() => atomtab.report({ extra: Array(8).fill(entry) }));
  assert.throws(() => atomtab.report({ extra: [{ path: '', amount: 1 }] }), refused);
  assert.throws(() => atomtab.report({ extra: [{ path: 'explicit/n', units: 'count', amount: 1 }] }),
                refused);
});

test('options of the wrong type are TypeErrors', () => {
  const wrongType = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' };
  const badValue = { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE' };
  assert.throws(() => atomtab.report({ prefix: 7 }), wrongType);
  assert.throws(() => atomtab.report({ extra: {} }), wrongType);
  for (const bad of [null, 'resident', { amount: 1 }, { path: 'r', amount: 1.5 },
                     { path: 'r', amount: '1' }, { path: 'r', amount: 1, description: 3 }])
    assert.throws(() => atomtab.report({ extra: [bad] }), wrongType, JSON.stringify(bad));
  assert.throws(() => atomtab.report({ extra: [{ path: 'r', kind: 'stack', amount: 1 }] }), badValue);
  assert.throws(() => atomtab.report({ extra: [{ path: 'r', units: 'percent', amount: 1 }] }), badValue);
  // a NUL would end the C string early: 'a\0b' must not be reported as 'a'
  assert.throws(() => atomtab.report({ prefix: 'a\0b' }), badValue);
  assert.throws(() => atomtab.report({ json: true, process: 'p\0q' }), badValue);
  assert.throws(() => atomtab.report({ extra: [{ path: 'resident\0x', amount: 1 }] }), badValue);
  assert.throws(() => atomtab.report({ extra: [{ path: 'r', amount: 1, description: 'd\0' }] }),
                badValue);
});

test('extra entries are read one by one: an array\'s own map is not asked, and an entry that is no object is an error, not a crash', () => {
  const extra = Object.assign([{ path: 'host-own-map', units: 'count', amount: 5 }],
                              { map: () => [null] });
  const reports = jsonReport({ extra });
  assert.ok(reports.some((r) => r.path === 'host-own-map' && r.amount === 5));
  const native = require('../native.js');   // past index.js's checks
  assert.throws(() => native.report(false, '', '', [null]), { name: 'TypeError' });
  assert.throws(() => native.report(false, '', '', [{ get path() { throw new Error('getter'); } }]),
                { message: 'getter' });
});
