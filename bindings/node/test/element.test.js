// SPDX-License-Identifier: MIT
'use strict';
// The benchmark's Element (atomtab/element): ids round-trip in every mode
// (non-ASCII included), ids with lone surrogates are errors, strings'
// finalizers release their atom references, 1M set/read cycles leave the
// table's counts where they were, and `id` refuses any object this copy of
// the addon did not make as a NativeElement. Run with `npm test` here, or
// `node --expose-gc --test bindings/node/test/`.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const atomtab = require('..');
const { createElement, modes } = require('../element.js');

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
    atomtab.gc();
    s = atomtab.stats();
    if (s.atoms === want.atoms && s.handles === want.handles) break;
  }
  return s;
}

for (const mode of modes) {
  test(`${mode}: ids round-trip, read many times`, () => {
    const el = createElement(mode);
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
    const other = createElement(mode);
    other.id = 'ab' + 'c';
    el.id = 'abc';
    assert.strictEqual(el.id, other.id);
  });
}

test('atom mode: one cached string per atom, shared by elements', () => {
  const before = atomtab.stats();
  const els = [];
  for (let i = 0; i < 10; i++) {
    const el = createElement('atom');
    el.id = 'shared-id-\u00e9';
    els.push(el);
    assert.strictEqual(el.id, 'shared-id-\u00e9');
  }
  const after = atomtab.stats();
  assert.strictEqual(after.cached, before.cached + 1);
  // one cached string, and each element's own handle on its id (an element
  // may be finalized after the table's last environment has gone)
  assert.strictEqual(after.handles, before.handles + 1 + els.length);
});

test('finalizers release atom references: counts return to baseline', async () => {
  const base = await settle(atomtab.stats());
  (() => {
    const keep = [];
    for (const mode of modes) {
      for (let i = 0; i < 2000; i++) {
        const el = createElement(mode);
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
  const els = modes.map((m) => createElement(m));
  let n = 0;
  for (let i = 0; i < N; i++) {
    const el = els[i % els.length];
    el.id = `cycle-${i % 50000}`;
    n += el.id.length;
  }
  assert.ok(n > 0);
  for (const el of els) el.id = 'cycle-end';   // not a static atom
  // left: 'cycle-end', held by the elements (a handle each) and at most
  // one cached string
  const held = els.length + 1;
  const s = await settle({ atoms: base.atoms + 1, handles: base.handles + held });
  assert.strictEqual(s.atoms, base.atoms + 1);     // 'cycle-end'
  assert.ok(s.handles <= base.handles + held, `handles ${s.handles}`);
  assert.ok(s.cached <= base.cached + 1, `cached ${s.cached}`);
});

test('the cache trims itself: ids read once do not pile up', () => {
  const el = createElement('atom');
  for (let i = 0; i < 20000; i++) {
    el.id = `once-${i}`;
    if (i % 1000 === 0) assert.ok(atomtab.stats().cached <= 2048, `cached at ${i}`);
  }
  assert.ok(atomtab.stats().cached <= 2048);
});

// A lone surrogate has no UTF-8 form; V8 writes U+FFFD for it, which made
// '\ud800' and '\udc00' (and U+FFFD itself) one atom. Now: a TypeError in
// every mode, and the element keeps its id.
for (const mode of modes) {
  test(`${mode}: an id with a lone surrogate is a TypeError, never merged`, () => {
    const el = createElement(mode);
    el.id = 'before';
    for (const bad of ['\ud800', '\udc00', 'a\ud800b', 'x\udfff', '\ud83d', 'pair \ud83d\ude00 then \ud83d']) {
      assert.throws(() => { el.id = bad; },
                    { name: 'TypeError', code: 'ERR_ATOMTAB_LONE_SURROGATE', message: /lone surrogate/ });
      assert.strictEqual(el.id, 'before');
    }
    el.id = '\ufffd';                      // the replacement character itself is text
    assert.strictEqual(el.id, '\ufffd');
    el.id = 'pair \ud83d\ude00';          // a surrogate pair is text too
    assert.strictEqual(el.id, 'pair \u{1f600}');
    const other = createElement(mode);
    assert.throws(() => { other.id = '\ud800'; }, TypeError);
    assert.strictEqual(other.id, undefined);
  });
}

test('NativeElement: new is required, the mode is checked, and id needs an element', () => {
  const NativeElement = createElement('copy').constructor;
  assert.throws(() => NativeElement('copy'), { name: 'TypeError', code: 'ERR_CONSTRUCT_CALL_REQUIRED' });
  for (const bad of [undefined, 42, 'bogus'])
    assert.throws(() => new NativeElement(bad), { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE' });
  const id = Object.getOwnPropertyDescriptor(NativeElement.prototype, 'id');
  assert.throws(() => id.get.call({}), { name: 'TypeError', code: 'ERR_INVALID_THIS' });
  assert.throws(() => id.set.call({}, 'x'), { name: 'TypeError', code: 'ERR_INVALID_THIS' });
  const el = new NativeElement('external');
  el.id = 'checked';
  assert.strictEqual(el.id, 'checked');
});

test('NativeElement: id refuses objects that only inherit from an element or its prototype', () => {
  const NativeElement = createElement('copy').constructor;
  const { get, set } = Object.getOwnPropertyDescriptor(NativeElement.prototype, 'id');
  const el = new NativeElement('copy');
  el.id = 'real';
  const fakes = [Object.create(NativeElement.prototype), Object.setPrototypeOf({}, NativeElement.prototype),
                 Object.create(el), new Proxy(el, {}), NativeElement.prototype, NativeElement,
                 structuredClone(el), undefined, null, 42, 'real'];
  for (const fake of fakes) {
    assert.throws(() => get.call(fake), { name: 'TypeError', code: 'ERR_INVALID_THIS' });
    assert.throws(() => set.call(fake, 'x'), { name: 'TypeError', code: 'ERR_INVALID_THIS' });
  }
  class Sub extends NativeElement {}
  const sub = new Sub('atom');                 // a subclass's instance is an element
  sub.id = 'sub';
  assert.strictEqual(get.call(sub), 'sub');
  assert.strictEqual(el.id, 'real');
});

// Every addon's napi_wrap uses one private key, so napi_unwrap alone takes
// any wrapped object: another addon's struct would be read as an element.
// A second copy of this addon (the file under another name: its own code,
// its own table) wraps objects too, and without the type tag this copy ran
// its code on that copy's table: a first insert there freed that copy's
// static empty slot array (an invalid free under valgrind).
test('NativeElement: an element made by another copy of the addon is refused', (t) => {
  const native = require('../native.js');
  const file = Object.keys(require.cache)
    .find((f) => f.endsWith('.node') && require.cache[f].exports === native);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atomtab-copy-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const copy = path.join(dir, 'atomtab-copy.node');
  fs.copyFileSync(file, copy);
  const other = require(copy);
  assert.notStrictEqual(other, native);
  const { get, set } = Object.getOwnPropertyDescriptor(native.NativeElement.prototype, 'id');
  for (const mode of modes) {
    const theirs = new other.NativeElement(mode);
    theirs.id = 'theirs';
    assert.throws(() => get.call(theirs), { name: 'TypeError', code: 'ERR_INVALID_THIS' });
    assert.throws(() => set.call(theirs, 'mine'), { name: 'TypeError', code: 'ERR_INVALID_THIS' });
    assert.strictEqual(theirs.id, 'theirs');   // its own copy still reads it
    const ours = new native.NativeElement(mode);
    const theirGet = Object.getOwnPropertyDescriptor(other.NativeElement.prototype, 'id').get;
    assert.throws(() => theirGet.call(ours), { name: 'TypeError', code: 'ERR_INVALID_THIS' });
  }
});
