// SPDX-License-Identifier: MIT
'use strict';
// The memory intern() saves: a million strings built from 1,000 distinct
// values, kept in an array, plain and then interned. Measured as the
// growth of V8's heap, of external memory and of the table's own bytes
// across building the array (after full GCs), the array itself included
// on both sides. The figures are printed; the assertion is generous.
const test = require('node:test');
const assert = require('node:assert');
const atomtab = require('..');

const N = 1e6;
const K = 1000;
const make = (i) => ['item', i % K, 'of-the-set'].join('-');   // a new flat string each time

async function fullGc() {
  for (let i = 0; i < 3; i++) {
    global.gc();
    await new Promise((r) => setImmediate(r));
  }
}

async function measure(fill) {
  await fullGc();
  const m0 = process.memoryUsage();
  const b0 = atomtab.stats().bytes;
  const arr = new Array(N);
  fill(arr);
  await fullGc();
  const m1 = process.memoryUsage();
  const b1 = atomtab.stats().bytes;
  const r = { heap: m1.heapUsed - m0.heapUsed, external: m1.external - m0.external,
              table: b1 - b0, arr };
  r.total = r.heap + r.external + r.table;
  return r;
}

const MB = (x) => `${(x / 1048576).toFixed(1)} MB`;

test('a million strings from 1,000 values: interned, one copy of each value', async (t) => {
  const plain = await measure((arr) => { for (let i = 0; i < N; i++) arr[i] = make(i); });
  const interned = await measure((arr) => { for (let i = 0; i < N; i++) arr[i] = atomtab.intern(make(i)); });
  for (let i = 0; i < N; i += 997) assert.strictEqual(interned.arr[i], plain.arr[i]);
  const line = (name, r) => `${name}: heap ${MB(r.heap)}, external ${MB(r.external)}, ` +
                            `table ${MB(r.table)}, total ${MB(r.total)} (${(r.total / N).toFixed(1)} B/string)`;
  t.diagnostic(line('plain', plain));
  t.diagnostic(line('interned', interned));
  t.diagnostic(`saved ${MB(plain.total - interned.total)}, ratio ${(interned.total / plain.total).toFixed(3)}`);
  // The array is 8 MB on both sides; a plain string of 19 chars is at least
  // 24 bytes of heap, an interned one is a pointer to one of 1,000 strings.
  assert.ok(plain.heap > N * 24, `plain heap ${plain.heap}`);
  assert.ok(interned.total < plain.total / 2, `interned ${interned.total} vs plain ${plain.total}`);
  assert.ok(plain.total - interned.total > N * 16, `saved ${plain.total - interned.total}`);
});

test('past the cache\'s trim, a value JS still holds gets at most a second string object', async () => {
  // The cache trims itself once it holds twice what its last trim kept
  // (1,024 at least): it lets go of strings whose atom nothing else holds,
  // and cannot tell that JS still holds them; interned again, such a value
  // gets a new string, and the next trim keeps that one (its atom is held
  // by the first string too). Equal by value throughout.
  const KK = 5000;
  await fullGc();
  const s0 = atomtab.stats();
  const keep = [];
  for (let r = 0; r < 3; r++) {
    for (let i = 0; i < KK; i++) keep.push(atomtab.intern(['held', i, 'value'].join('-')));
    await fullGc();
    const s = atomtab.stats();
    assert.strictEqual(s.atoms - s0.atoms, KK);
    assert.ok(s.handles - s0.handles <= 2 * KK, `round ${r}: ${s.handles - s0.handles} strings`);
  }
  for (let i = 0; i < KK; i++) assert.strictEqual(keep[2 * KK + i], keep[i]);
});
