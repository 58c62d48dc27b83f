// SPDX-License-Identifier: MIT
'use strict';
// Element-like objects whose `id` is an atom, for the id-read benchmark
// (bench/node-idread.js) and the tests: require('atomtab/element').
//
// Modes:
//   copy      el.id makes a new string from the atom's chars on every read
//             (napi_create_string_latin1, or _utf8 for non-ASCII)
//   external  el.id makes a new external string on every read: no copy, an
//             external handle that the string's finalizer releases
//   atom      the atom's one string in this isolate (the host cache), kept
//             on the element as a private field, so a read is a plain
//             property load that never enters C
//   plain     a plain JS property (the baseline)
const native = require('./native.js');

class AtomElement {
  #native = new native.NativeElement('atom');
  #id = undefined;
  get id() { return this.#id; }
  set id(v) {
    const n = this.#native;
    n.id = v;            // interns (C); throws and keeps the old id on bad text
    this.#id = n.id;     // the cached string for that atom (C)
  }
}

class PlainElement {
  constructor() { this.id = undefined; }
}

function createElement(mode) {
  if (mode === 'atom') return new AtomElement();
  if (mode === 'plain') return new PlainElement();
  if (mode === 'copy' || mode === 'external') return new native.NativeElement(mode);
  throw new TypeError(`unknown mode ${mode}`);
}

module.exports = { createElement, modes: ['copy', 'external', 'atom'] };
