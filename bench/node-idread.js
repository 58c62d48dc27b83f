// SPDX-License-Identifier: MIT
'use strict';
// The id-read microbenchmark in V8: `for (i < N) n += el.id.length` for ids
// of lengths 3, 14, 15, 16, 63, 64, 100, 101 ("foo", "This is a test",
// then one letter repeated), with el.id a plain JS property and the
// addon's modes copy, external and atom. Each run is a fresh process;
// the figure is the median of 5 runs. Each run also counts the GCs during
// the loop and the heap growth across it (per-read garbage shows in both).
//
// Usage: node bench/node-idread.js [--json]
//   ATOMTAB_BENCH_ITERS  reads per run (default 20e6; smaller for quick runs)
//   ATOMTAB_BENCH_SLOW_ITERS  reads per run for copy and external, which
//                        enter C on every read (default: ATOMTAB_BENCH_ITERS)
//   ATOMTAB_BENCH_RUNS   runs per cell (default 5)
//   ATOMTAB_NODE         the addon (default: build/make/atomtab.node)
const { execFileSync } = require('child_process');
const path = require('path');

const LENGTHS = [3, 14, 15, 16, 63, 64, 100, 101];
const MODES = ['plain', 'copy', 'external', 'atom'];

function makeId(len) {
  if (len === 3) return 'foo';
  if (len === 14) return 'This is a test';
  return 'x'.repeat(len);
}

function loop(el, n) {
  let x = 0;
  for (let i = 0; i < n; i++) x += el.id.length;
  return x;
}

// One run, in this (fresh) process: prints {ns, gcs, heapDelta}.
function child(mode, len, iters) {
  const { PerformanceObserver, performance } = require('perf_hooks');
  const atomtab = require(path.join(__dirname, '..', 'bindings', 'node', 'element.js'));
  const el = atomtab.createElement(mode);
  el.id = makeId(len);
  const gcTimes = [];
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcTimes.push(e.startTime);
  });
  obs.observe({ entryTypes: ['gc'] });
  loop(el, 1000);   // let V8 see the shape before the timed loop
  global.gc();
  const h0 = process.memoryUsage().heapUsed;
  const p0 = performance.now();
  const t0 = process.hrtime.bigint();
  const x = loop(el, iters);
  const t1 = process.hrtime.bigint();
  const p1 = performance.now();
  const h1 = process.memoryUsage().heapUsed;
  if (x !== iters * len) throw new Error(`bad sum ${x}`);
  setTimeout(() => {   // the observer reports asynchronously
    obs.disconnect();
    process.stdout.write(JSON.stringify({
      ns: Number(t1 - t0) / iters,
      gcs: gcTimes.filter((t) => t >= p0 && t <= p1).length,
      heapDelta: h1 - h0,
    }));
  }, 50);
}

function median(v) {
  const s = [...v].sort((a, b) => a - b);
  return s[s.length >> 1];
}

// An environment setting: a whole number in [lo, hi], else the default
// when unset; anything else stops the benchmark with a one-line error.
function setting(name, dflt, lo, hi) {
  const s = process.env[name];
  if (s === undefined || s === '') return dflt;
  const v = Number(s);
  if (!Number.isSafeInteger(v) || v < lo || v > hi) {
    process.stderr.write(`node-idread: ${name} must be a whole number from ${lo} to ${hi}\n`);
    process.exit(2);
  }
  return v;
}

function main() {
  const json = process.argv.includes('--json');
  const iters = setting('ATOMTAB_BENCH_ITERS', 20e6, 1, 1e12);
  const slowIters = setting('ATOMTAB_BENCH_SLOW_ITERS', iters, 1, 1e12);
  const runs = setting('ATOMTAB_BENCH_RUNS', 5, 1, 99);
  const itersOf = (mode) => (mode === 'copy' || mode === 'external' ? slowIters : iters);
  const res = {};
  // Runs interleaved (every cell once per round) so noise hits all alike.
  for (let r = 0; r < runs; r++) {
    for (const len of LENGTHS) {
      for (const mode of MODES) {
        const out = execFileSync(process.execPath,
          ['--expose-gc', __filename, '--child', mode, String(len), String(itersOf(mode))],
          { encoding: 'utf8' });
        const key = `${mode}/${len}`;
        (res[key] = res[key] || []).push(JSON.parse(out));
      }
    }
  }
  const cell = (mode, len) => {
    const v = res[`${mode}/${len}`];
    return { ns: median(v.map((x) => x.ns)), gcs: median(v.map((x) => x.gcs)),
             heap: median(v.map((x) => x.heapDelta)) };
  };
  if (json) {
    const out = [];
    for (const mode of MODES)
      for (const len of LENGTHS) {
        const c = cell(mode, len);
        out.push({ mode, length: len, ns_per_read: +c.ns.toFixed(3), gcs: c.gcs,
                   heap_delta: c.heap });
      }
    console.log(JSON.stringify(out));
    return;
  }
  console.log(`ns per read (median of ${runs} runs, fresh process each; ${iters} reads ` +
              `per run, ${slowIters} for copy and external)`);
  console.log(['length', ...MODES, 'atom/plain'].map((s) => s.padStart(11)).join(''));
  let worst = 0;
  for (const len of LENGTHS) {
    const row = MODES.map((m) => cell(m, len).ns);
    const ratio = cell('atom', len).ns / cell('plain', len).ns;
    worst = Math.max(worst, ratio);
    console.log([String(len), ...row.map((x) => x.toFixed(2)), ratio.toFixed(2)]
      .map((s) => s.padStart(11)).join(''));
  }
  console.log(`atom/plain worst over lengths: ${worst.toFixed(2)} (goal <= 2)`);
  console.log(`copy/atom at 101: ${(cell('copy', 101).ns / cell('atom', 101).ns).toFixed(1)}x ` +
              '(goal >= 5)');
  console.log('GCs during the loop / heap growth in bytes across it (median), by length:');
  for (const mode of MODES) {
    const g = LENGTHS.map((l) => { const c = cell(mode, l); return `${c.gcs}/${c.heap}`; });
    console.log(`  ${mode.padEnd(9)} ${g.join('  ')}`);
  }
}

if (process.argv[2] === '--child')
  child(process.argv[3], Number(process.argv[4]), Number(process.argv[5]));
else
  main();
