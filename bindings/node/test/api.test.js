// SPDX-License-Identifier: MIT
'use strict';
// The package's API: intern, lookup, stats, gc, report, version; exports
// enumerable and typed in index.d.ts; ids with lone surrogates rejected.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const path = require('path');
const atomtab = require('..');

const NAMES = ['gc', 'intern', 'lookup', 'report', 'stats', 'version'];

test('exports are enumerable: printing the module shows the API', () => {
  assert.deepStrictEqual(Object.keys(atomtab).sort(), NAMES);
  for (const k of NAMES) assert.ok(Object.getOwnPropertyDescriptor(atomtab, k).enumerable, k);
  const shown = require('util').inspect(atomtab);
  for (const k of NAMES) assert.ok(shown.includes(k), shown);
});

test('index.d.ts declares every export and nothing else', () => {
  const dts = fs.readFileSync(path.join(__dirname, '..', 'index.d.ts'), 'utf8');
  const declared = [...dts.matchAll(/^export (?:function|const) (\w+)/gm)].map((m) => m[1]);
  assert.deepStrictEqual(declared.sort(), NAMES);
});

// The checkout around this package, or null where it was installed from
// its tarball (which carries VERSION under deps/atomtab/).
const ROOT = path.join(__dirname, '..', '..', '..');
const CHECKOUT = fs.existsSync(path.join(ROOT, 'bindings', 'node', 'binding.gyp')) &&
  fs.realpathSync(path.join(ROOT, 'bindings', 'node')) === fs.realpathSync(path.join(__dirname, '..'));

test('version is the library\'s, the package\'s and the checkout\'s (or the tarball\'s)', () => {
  const pkg = require('../package.json');
  const file = fs.readFileSync(CHECKOUT ? path.join(ROOT, 'VERSION') :
    path.join(__dirname, '..', 'deps', 'atomtab', 'VERSION'), 'utf8').trim();
  assert.match(atomtab.version, /^\d+\.\d+\.\d+$/);
  assert.strictEqual(atomtab.version, file);
  assert.strictEqual(pkg.version, file);
});

test('intern returns one string object for equal strings', () => {
  const parts = ['data', '-', 'value', '-', String(42)];
  const a = atomtab.intern(parts.join(''));
  const b = atomtab.intern(`data-value-${6 * 7}`);
  assert.strictEqual(a, 'data-value-42');
  assert.strictEqual(a, b);
  const before = atomtab.stats();
  for (let i = 0; i < 1000; i++) atomtab.intern('data-value-' + (40 + 2));
  const after = atomtab.stats();
  assert.strictEqual(after.atoms, before.atoms);     // no new atom
  assert.strictEqual(after.cached, before.cached);   // no new string
  assert.strictEqual(after.handles, before.handles);
});

test('intern round-trips every kind of text', () => {
  const ids = ['', 'div', 'x'.repeat(101), 'caf\u00e9', '\u00ff', '\u4e2d\u6587',
               'emoji \u{1f600}', 'nul\u0000inside', '\ufffd', 'x'.repeat(5000) + '\u00e9'];
  for (const s of ids) {
    const a = atomtab.intern(s);
    assert.strictEqual(a, s);
    assert.strictEqual(a.length, s.length);
    assert.strictEqual(atomtab.lookup(s), s);
  }
});

test('lookup finds interned strings only, and never inserts', () => {
  const s = `lookup-only-${process.pid}`;
  const before = atomtab.stats().atoms;
  assert.strictEqual(atomtab.lookup(s), undefined);
  assert.strictEqual(atomtab.stats().atoms, before);
  const kept = atomtab.intern(s);
  assert.strictEqual(atomtab.lookup(s), kept);
  assert.strictEqual(atomtab.lookup('div'), 'div');   // a static atom: always there
});

test('a lone surrogate is a TypeError, not a merge with U+FFFD', () => {
  const err = { name: 'TypeError', code: 'ERR_ATOMTAB_LONE_SURROGATE', message: /lone surrogate/ };
  for (const bad of ['\ud800', '\udc00', 'id-\ud800', 'id-\udbff', '\ude00x', '\ud83d\ude00\ud83d']) {
    assert.throws(() => atomtab.intern(bad), err);
    assert.throws(() => atomtab.lookup(bad), err);
  }
  assert.throws(() => atomtab.intern('a\ud800b'), /U\+D800 at index 1/);
  const fffd = atomtab.intern('id-\ufffd');
  assert.strictEqual(fffd, 'id-\ufffd');
  assert.throws(() => atomtab.intern('id-\ud800'), TypeError);
  assert.strictEqual(atomtab.lookup('id-\ufffd'), 'id-\ufffd');
});

test('arguments that are not strings are TypeErrors', () => {
  for (const bad of [undefined, null, 42, {}, Symbol('s')]) {
    assert.throws(() => atomtab.intern(bad), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => atomtab.lookup(bad), TypeError);
  }
  assert.throws(() => atomtab.report({ process: 3 }), TypeError);
});

test('stats counts the table and this isolate\'s cache', () => {
  const s = atomtab.stats();
  for (const k of ['atoms', 'unused', 'handles', 'cached', 'bytes'])
    assert.ok(Number.isInteger(s[k]) && s[k] >= 0, `${k} = ${s[k]}`);
  const n = s.atoms;
  const keep = [];
  for (let i = 0; i < 100; i++) keep.push(atomtab.intern(`stats-${i}`));
  const t = atomtab.stats();
  assert.strictEqual(t.atoms, n + 100);
  assert.strictEqual(t.cached, s.cached + 100);
  assert.ok(t.bytes > s.bytes);
});

test('gc frees atoms whose strings were collected', async () => {
  const base = atomtab.stats().atoms;
  (() => { for (let i = 0; i < 500; i++) atomtab.intern(`gc-me-${i}`); })();
  assert.strictEqual(atomtab.stats().atoms, base + 500);
  let freed = 0;
  for (let i = 0; i < 100 && atomtab.stats().atoms > base; i++) {
    global.gc();                                   // collects the strings
    await new Promise((r) => setImmediate(r));    // their finalizers run
    freed += atomtab.gc();                         // trim, then sweep
  }
  // the finalizers' releases sweep their own queues too: gc() frees the rest
  assert.ok(atomtab.stats().atoms <= base, `atoms ${atomtab.stats().atoms}`);
  assert.ok(freed > 0, `freed ${freed}`);
  for (let i = 0; i < 500; i++) assert.strictEqual(atomtab.lookup(`gc-me-${i}`), undefined);
});

test('report gives the text tree or about:memory JSON', () => {
  const keep = atomtab.intern('reported-by-the-test');
  assert.ok(keep);
  const tree = atomtab.report();
  assert.match(tree, /^Explicit Allocations\n/);
  assert.match(tree, /── table\n/);
  assert.match(tree, /atoms-dynamic\n/);
  const json = atomtab.report({ json: true, process: 'node test' });
  const doc = JSON.parse(json);
  assert.strictEqual(doc.version, 1);
  assert.ok(doc.reports.length >= 5);
  for (const r of doc.reports) assert.strictEqual(r.process, 'node test');
  const handles = doc.reports.find((r) => r.path === 'atoms-external-handles');
  assert.ok(handles.amount >= 1);
  assert.strictEqual(JSON.parse(atomtab.report({ json: true })).reports[0].process, '');
});

// The README's Node example, run from the top of the checkout as it says;
// each console.log prints what its line's comment shows.
test('the README example runs and prints what it says',
  { skip: !CHECKOUT && 'installed from the tarball: no checkout, no README' }, () => {
  const root = ROOT;
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const m = readme.match(/<!-- node-example -->\n```js\n([\s\S]*?)```/);
  assert.ok(m, 'no node-example block in README.md');
  const want = [...m[1].matchAll(/console\.log\(.*\/\/ (.*)$/gm)].map((x) => x[1].trim());
  const r = require('child_process').spawnSync(process.execPath, ['-e', m[1]],
    { cwd: root, encoding: 'utf8', env: process.env });
  assert.strictEqual(r.status, 0, r.stderr);
  assert.deepStrictEqual(r.stdout.trim().split('\n'), want);
});
