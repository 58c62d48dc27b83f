'use strict';
// atomtab's Node-API addon, and Element-like objects whose `id` is an atom.
//
// Modes:
//   copy      el.id makes a new string from the atom's chars on every read
//             (napi_create_string_latin1, or _utf8 for non-ASCII)
//   external  el.id makes a new external string on every read: no copy, an
//             external handle that the string's finalizer releases
//   atom      the external string is made once per atom (atomtab's host
//             cache) and kept on the element as a private field, so a read
//             is a plain property load that never enters C
//
// The addon is found at $ATOMTAB_NODE, else in the make build's output.
const path = require('path');

const native = require(process.env.ATOMTAB_NODE ? path.resolve(process.env.ATOMTAB_NODE) :
                       path.join(__dirname, '..', '..', 'build', 'make', 'atomtab.node'));

class AtomElement {
  #native = new native.NativeElement('atom');
  #id = undefined;
  get id() { return this.#id; }
  set id(v) {
    const n = this.#native;
    n.id = v;            // interns (C)
    this.#id = n.id;     // the cached external string for that atom (C)
  }
}

// The baseline: a plain JS property.
class PlainElement {
  constructor() { this.id = undefined; }
}

function createElement(mode) {
  if (mode === 'atom') return new AtomElement();
  if (mode === 'plain') return new PlainElement();
  if (mode === 'copy' || mode === 'external') return new native.NativeElement(mode);
  throw new TypeError(`unknown mode ${mode}`);
}

module.exports = {
  createElement,
  modes: ['copy', 'external', 'atom'],
  stats: native.stats,   // {atoms, unused, handles, cached}, exact
  trim: native.trim,     // drop cache entries of otherwise unused atoms
  sweep: native.sweep,   // atab_gc: free unused atoms
};
