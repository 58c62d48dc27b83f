'use strict';
// atomtab for Node.js: one interned string per distinct value, shared by
// every worker thread of the process. See index.d.ts for the API.
const native = require('./native.js');

function report(options = {}) {
  const { json = false, process: name = '' } = options;
  if (typeof name !== 'string') throw new TypeError('atomtab.report: process must be a string');
  return native.report(Boolean(json), name);
}

module.exports = {
  intern: native.intern,
  lookup: native.lookup,
  stats: native.stats,
  gc: native.gc,
  report,
  version: native.version,
};
