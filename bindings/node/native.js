// SPDX-License-Identifier: MIT
'use strict';
// The addon: $ATOMTAB_NODE when set, else the one `npm install` built here
// (node-gyp: build/Release), else the checkout's `make node-addon` build.
const fs = require('fs');
const path = require('path');

const gyp = path.join(__dirname, 'build', 'Release', 'atomtab.node');
module.exports = require(process.env.ATOMTAB_NODE ? path.resolve(process.env.ATOMTAB_NODE) :
                         fs.existsSync(gyp) ? gyp :
                         path.join(__dirname, '..', '..', 'build', 'make', 'atomtab.node'));
