// SPDX-License-Identifier: MIT
'use strict';
// One table per process, shared by every worker thread (equal strings are
// one atom in every isolate), one host cache per isolate, the table freed
// with the last environment that loaded the addon and made again by the
// next.
const test = require('node:test');
const assert = require('node:assert');
const path = require('path');
const { spawnSync } = require('child_process');
const { Worker } = require('worker_threads');
const atomtab = require('..');

const PKG = JSON.stringify(path.join(__dirname, '..'));

// Interns the shared ids and its own, reports, and keeps them until told.
const WORKER = `
  const { parentPort, workerData } = require('worker_threads');
  const atomtab = require(${PKG});
  const keep = [atomtab.intern('from-worker-' + workerData.k)];
  for (let i = 0; i < 1000; i++) keep.push(atomtab.intern('shared-' + i));
  parentPort.postMessage({
    sawMain: atomtab.lookup('from-main'),
    cached: atomtab.stats().cached,
  });
  parentPort.once('message', () => { keep.length = 0; parentPort.close(); });`;

function start(k) {
  const w = new Worker(WORKER, { eval: true, workerData: { k } });
  const ready = new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
  const exited = new Promise((resolve) => w.once('exit', resolve));
  return { w, ready, exited };
}

async function settle(done) {
  for (let i = 0; i < 200 && !done(); i++) {
    global.gc();
    await new Promise((r) => setTimeout(r, 5));
    atomtab.gc();
  }
}

test('workers share the table: equal strings are one atom across threads', async () => {
  const mine = atomtab.intern('from-main');
  const base = atomtab.stats();
  const ws = [start(0), start(1), start(2)];
  const msgs = await Promise.all(ws.map((x) => x.ready));
  for (const m of msgs) {
    assert.strictEqual(m.sawMain, 'from-main');    // found, not inserted
    assert.ok(m.cached >= 1002, `worker cached ${m.cached}`);   // its own cache
  }
  const mid = atomtab.stats();
  // three workers, 1000 equal ids each: 1000 atoms, plus one id per worker
  assert.strictEqual(mid.atoms, base.atoms + 1000 + 3);
  assert.strictEqual(mid.cached, base.cached);     // main's cache untouched
  for (let k = 0; k < 3; k++) assert.strictEqual(atomtab.lookup(`from-worker-${k}`), `from-worker-${k}`);
  assert.strictEqual(atomtab.lookup('shared-999'), 'shared-999');
  for (const x of ws) x.w.postMessage('done');
  assert.deepStrictEqual(await Promise.all(ws.map((x) => x.exited)), [0, 0, 0]);
  // the workers' strings are finalized with their isolates (main's copies
  // from the lookups above go with the next GCs); main's own id stays
  await settle(() => atomtab.stats().atoms <= base.atoms);
  assert.strictEqual(atomtab.stats().atoms, base.atoms);
  assert.strictEqual(atomtab.lookup('shared-5'), undefined);
  assert.strictEqual(atomtab.lookup('from-worker-0'), undefined);
  assert.strictEqual(atomtab.lookup('from-main'), mine);
  assert.strictEqual(atomtab.intern('after-the-workers'), 'after-the-workers');
});

// In a child whose main thread never loads the addon: each wave of workers
// is the table's only user, so its last exit frees the table and the next
// wave finds a new, empty one. Exits run the cleanup hooks and the strings'
// finalizers after the table was freed (the library waits for them).
test('the last environment frees the table; the next load makes a new one', () => {
  const worker = `
    const { parentPort, workerData } = require('worker_threads');
    const atomtab = require(${PKG});
    const seen = atomtab.lookup('wave-' + (workerData.wave - 1));
    const keep = [];
    for (let i = 0; i < 2000; i++) keep.push(atomtab.intern('wave-' + workerData.wave + '-' + i));
    keep.push(atomtab.intern('wave-' + workerData.wave));
    parentPort.postMessage({ seen: seen === undefined ? null : seen, atoms: atomtab.stats().atoms });`;
  const main = `
    const { Worker } = require('worker_threads');
    async function wave(n) {
      const res = await Promise.all([0, 1, 2, 3].map(() => new Promise((resolve, reject) => {
        const w = new Worker(${JSON.stringify(worker)}, { eval: true, workerData: { wave: n } });
        let msg;
        w.on('message', (m) => { msg = m; });
        w.on('error', reject);
        w.on('exit', (c) => (c === 0 ? resolve(msg) : reject(new Error('exit ' + c))));
      })));
      for (const m of res) if (m.seen !== null) throw new Error('wave ' + n + ' saw the last table');
      return res;
    }
    (async () => {
      for (let n = 1; n <= 4; n++) await wave(n);
      console.log('ok');
    })().catch((e) => { console.error(e); process.exit(3); });`;
  const r = spawnSync(process.execPath, ['-e', main], { encoding: 'utf8', env: process.env });
  assert.strictEqual(r.signal, null, `child died of ${r.signal}`);
  assert.strictEqual(r.status, 0, r.stderr);
  assert.strictEqual(r.stdout.trim(), 'ok');
});
