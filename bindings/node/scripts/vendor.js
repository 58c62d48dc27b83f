// SPDX-License-Identifier: MIT
'use strict';
// Puts what the addon is built from under deps/atomtab/: the library's
// sources (src/*.c, src/*.h, src/sources.txt), include/atomtab.h, VERSION,
// and the default static set (gen/atomtab_atoms.c/.h, which the checkout's
// generator makes from src/default.atoms). binding.gyp builds from there.
// Run by `npm pack` (prepack) and by `npm install` in the checkout
// (preinstall); in an installed package, which has no checkout around it,
// it only checks that deps/atomtab/ is there.
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const pkg = path.resolve(__dirname, '..');
const root = path.resolve(pkg, '..', '..');
const out = path.join(pkg, 'deps', 'atomtab');

// This package is bindings/node of an atomtab checkout.
function inCheckout() {
  return ['src/sources.txt', 'tools/atomtab-genstatic.c', 'bindings/node/binding.gyp']
    .every((f) => fs.existsSync(path.join(root, f))) &&
    fs.realpathSync(path.join(root, 'bindings', 'node')) === fs.realpathSync(pkg);
}

function copy(rel, to = rel) {
  const dst = path.join(out, to);
  fs.mkdirSync(path.dirname(dst), { recursive: true });
  fs.copyFileSync(path.join(root, rel), dst);
}

function vendor() {
  fs.rmSync(out, { recursive: true, force: true });
  for (const f of fs.readdirSync(path.join(root, 'src'))) {
    if (/\.(c|h)$/.test(f) || f === 'sources.txt') copy(path.join('src', f));
  }
  copy('include/atomtab.h');
  copy('VERSION');
  // the default static set, made by the checkout's generator
  const o = path.join('build', 'npm');
  const gen = ['c', 'h'].map((x) => path.join(o, 'gen', `atomtab_atoms.${x}`));
  execFileSync('make', ['-C', root, '--no-print-directory', `O=${o}`, ...gen],
    { stdio: ['ignore', 'ignore', 'inherit'] });
  for (const g of gen) copy(g, path.join('gen', path.basename(g)));
}

if (inCheckout()) {
  vendor();
} else if (!fs.existsSync(path.join(out, 'src', 'sources.txt'))) {
  console.error('atomtab: deps/atomtab/ is missing: this package was not made by npm pack');
  process.exit(1);
}
