'use strict';
// The addon's Element: ids round-trip in every mode (non-ASCII included),
// strings' finalizers release their atom references, and 1M set/read
// cycles leave the table's counts where they were. Run with
// `node --expose-gc --test bindings/node/test/`.
const path = require('path');
const test = require('node:test');
const { spawnSync } = require('child_process');
const assert = require('node:assert');
const atomtab = require('..');

const IDS = [
  'foo', 'This is a test', 'x'.repeat(15), 'x'.repeat(16), 'x'.repeat(101), '',
  'caf\u00e9', '\u00ff\u00e9', 'na\u00efve r\u00e9sum\u00e9',   // Latin-1, not ASCII
  '\u2713 check', '\u4e2d\u6587', 'emoji \u{1f600}',            // beyond Latin-1
  'nul\u0000inside',
];

// Collects garbage until the table's counts settle at `want` (finalizers
// of external strings and wrapped objects run after a GC, some in an
// immediate), then returns the last counts.
async function settle(want) {
  let s;
  for (let i = 0; i < 100; i++) {
    global.gc();
    await new Promise((r) => setImmediate(r));
    atomtab.trim();
    atomtab.sweep();
    s = atomtab.stats();
    if (s.atoms === want.atoms && s.handles === want.handles) break;
  }
  return s;
}

for (const mode of atomtab.modes) {
  test(`${mode}: ids round-trip, read many times`, () => {
    const el = atomtab.createElement(mode);
    assert.strictEqual(el.id, undefined);
    for (const id of IDS) {
      el.id = id;
      for (let i = 0; i < 3; i++) {
        assert.strictEqual(el.id, id);
        assert.strictEqual(el.id.length, id.length);
      }
    }
    el.id = 42;                       // coerced, as the DOM does
    assert.strictEqual(el.id, '42');
    const other = atomtab.createElement(mode);
    other.id = 'ab' + 'c';
    el.id = 'abc';
    assert.strictEqual(el.id, other.id);
  });
}

test('atom mode: one cached string per atom, shared by elements', () => {
  const before = atomtab.stats();
  const els = [];
  for (let i = 0; i < 10; i++) {
    const el = atomtab.createElement('atom');
    el.id = 'shared-id-\u00e9';
    els.push(el);
    assert.strictEqual(el.id, 'shared-id-\u00e9');
  }
  const after = atomtab.stats();
  assert.strictEqual(after.cached, before.cached + 1);
  assert.strictEqual(after.handles, before.handles + 1);
});

test('finalizers release atom references: counts return to baseline', async () => {
  const base = await settle(atomtab.stats());
  (() => {
    const keep = [];
    for (const mode of atomtab.modes) {
      for (let i = 0; i < 2000; i++) {
        const el = atomtab.createElement(mode);
        el.id = `finalize-${mode}-${i}-${IDS[i % IDS.length]}`;
        keep.push(el.id, el.id, el);
      }
    }
    const mid = atomtab.stats();
    assert.ok(mid.atoms >= base.atoms + 6000, `atoms ${mid.atoms}`);
    assert.ok(mid.handles > base.handles, `handles ${mid.handles}`);
  })();
  const s = await settle(base);
  assert.strictEqual(s.handles, base.handles);
  assert.strictEqual(s.atoms, base.atoms);
});

test('no leak over 1M set/read cycles', async () => {
  const base = await settle(atomtab.stats());
  const N = Number(process.env.ATOMTAB_TEST_CYCLES || 1e6);
  const els = atomtab.modes.map((m) => atomtab.createElement(m));
  let n = 0;
  for (let i = 0; i < N; i++) {
    const el = els[i % els.length];
    el.id = `cycle-${i % 50000}`;
    n += el.id.length;
  }
  assert.ok(n > 0);
  for (const el of els) el.id = 'cycle-end';   // not a static atom
  const s = await settle({ atoms: base.atoms + 1, handles: base.handles + 1 });
  assert.strictEqual(s.atoms, base.atoms + 1);     // 'cycle-end'
  assert.ok(s.handles <= base.handles + 1, `handles ${s.handles}`);
  assert.ok(s.cached <= base.cached + 1, `cached ${s.cached}`);
});

test('the cache trims itself: ids read once do not pile up', () => {
  const el = atomtab.createElement('atom');
  for (let i = 0; i < 20000; i++) {
    el.id = `once-${i}`;
    if (i % 1000 === 0) assert.ok(atomtab.stats().cached <= 2048, `cached at ${i}`);
  }
  assert.ok(atomtab.stats().cached <= 2048);
});

// Workers alone load the addon (in a child process whose main thread does
// not), so node unloads it when they end: the library's thread-exit
// destructor must still be there (the addon is linked -z nodelete).
test('workers: own tables; their exit and the addon unload crash nothing', () => {
  const worker = `
    const atomtab = require(${JSON.stringify(path.join(__dirname, '..'))});
    const keep = [];
    for (const mode of atomtab.modes)
      for (let i = 0; i < 1000; i++) {
        const el = atomtab.createElement(mode);
        el.id = 'w' + i + (i % 3 ? '' : '\\u00e9');
        keep.push(el.id, el);
      }
    require('worker_threads').parentPort.postMessage(atomtab.stats().atoms);`;
  const main = `
    const { Worker } = require('worker_threads');
    let done = 0;
    for (let k = 0; k < 3; k++) {
      const w = new Worker(${JSON.stringify(worker)}, { eval: true });
      w.on('message', (m) => { if (m !== 1000) process.exit(3); });
      w.on('exit', (c) => { if (c !== 0) process.exit(4); if (++done === 3) setTimeout(() => console.log('ok'), 100); });
    }`;
  const r = spawnSync(process.execPath, ['-e', main], { encoding: 'utf8', env: process.env });
  assert.strictEqual(r.signal, null, `child died of ${r.signal}`);
  assert.strictEqual(r.status, 0, r.stderr);
  assert.strictEqual(r.stdout.trim(), 'ok');
});
