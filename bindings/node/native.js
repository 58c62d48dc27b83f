'use strict';
// The addon: $ATOMTAB_NODE when set, else the one `npm install` here (or
// `make node-addon` at the top of the checkout) builds.
const path = require('path');

module.exports = require(process.env.ATOMTAB_NODE ? path.resolve(process.env.ATOMTAB_NODE) :
                         path.join(__dirname, '..', '..', 'build', 'make', 'atomtab.node'));
