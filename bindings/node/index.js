// SPDX-License-Identifier: MIT
'use strict';
// atomtab for Node.js: one interned string per distinct value, shared by
// every worker thread of the process. See index.d.ts for the API.
const native = require('./native.js');

const KINDS = ['heap', 'nonheap', 'other'];
const UNITS = ['bytes', 'count'];
const BAD_VALUE = 'ERR_INVALID_ARG_VALUE';

function typeError(message, code = 'ERR_INVALID_ARG_TYPE') {
  const e = new TypeError(message);
  e.code = code;
  return e;
}

// The library takes C strings: a NUL would end one early, unseen.
function noNul(s, what) {
  if (s.includes('\0')) throw typeError(`${what} must not contain NUL`, BAD_VALUE);
  return s;
}

// One of report()'s extra entries, checked and with its defaults.
function reportEntry(x, i) {
  const where = `atomtab.report: extra[${i}]`;
  if (x === null || typeof x !== 'object') throw typeError(`${where} must be an object`);
  const { path, units = 'bytes', amount, description = '' } = x;
  if (typeof path !== 'string') throw typeError(`${where}.path must be a string`);
  // about:memory takes explicit/ entries of kind heap or nonheap only
  const { kind = path.startsWith('explicit/') ? 'heap' : 'other' } = x;
  if (!KINDS.includes(kind)) throw typeError(`${where}.kind must be ${KINDS.join(', ')}`, BAD_VALUE);
  if (!UNITS.includes(units)) throw typeError(`${where}.units must be ${UNITS.join(', ')}`, BAD_VALUE);
  if (!Number.isSafeInteger(amount)) throw typeError(`${where}.amount must be an integer`);
  if (typeof description !== 'string') throw typeError(`${where}.description must be a string`);
  noNul(path, `${where}.path`);
  noNul(description, `${where}.description`);
  return { path, kind, units, amount, description };
}

function report(options = {}) {
  const { json = false, process: name = '', prefix = '', extra = [] } = options;
  if (typeof name !== 'string') throw typeError('atomtab.report: process must be a string');
  if (typeof prefix !== 'string') throw typeError('atomtab.report: prefix must be a string');
  if (!Array.isArray(extra)) throw typeError('atomtab.report: extra must be an array');
  noNul(name, 'atomtab.report: process');
  noNul(prefix, 'atomtab.report: prefix');
  // Array.prototype.map itself: an array's own `map` is not asked
  return native.report(Boolean(json), name, prefix, Array.prototype.map.call(extra, reportEntry));
}

module.exports = {
  intern: native.intern,
  lookup: native.lookup,
  stats: native.stats,
  gc: native.gc,
  report,
  version: native.version,
};
