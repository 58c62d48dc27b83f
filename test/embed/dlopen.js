// SPDX-License-Identifier: MIT
// dlopen.js - loads libatomtab.so with Node's process.dlopen, as Node
// loads addons (tools/check-embed.sh). The library is no addon, so Node
// then says it "did not self-register": that message means dlopen itself
// worked; any other error (a TLS failure, a missing symbol) is a failure.
'use strict';
const path = process.argv[2];
try {
  process.dlopen({ exports: {} }, path);
  console.log('node: loaded (registered as a module?)');
} catch (e) {
  if (!/did not self-register/.test(e.message)) {
    console.error('node: dlopen failed: ' + e.message);
    process.exit(1);
  }
  console.log('node: process.dlopen loaded libatomtab (no addon, as expected)');
}
