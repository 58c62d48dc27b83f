#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench-plots.py - draws the benchmarks' --json output as SVG charts.

usage: tools/bench-plots.py JSONDIR SVGDIR

Reads JSONDIR (what tools/bench-plots.sh writes there); each chart whose
input is missing is skipped with a message, and an SVG already in SVGDIR
for it is left as it is:
  meta.json                      machine, date, commit, commands: each
                                 chart's subtitle and footnote
  idread.json                    bench/idread --json         -> idread-c.svg
  node-idread.json               bench/node-idread.js --json -> idread-node.svg
  suite.json                     atombench --json            -> peers.svg
  peers.json                     atompeers --json            -> peers-current.svg
  threads.atomtab.json           atomthreads --json          -> threads.svg
  threads.string_cache.json      bench/sc --json (drawn beside atomtab's
                                 when present)
  membytes.json, membytes-libc.json   membytes --json        -> memory.svg
Python's standard library turns each into whitespace-separated tables in a
temporary directory; gnuplot draws them with tools/plots/common.gp (size,
fonts, colours, title and subtitle) and the chart's own tools/plots/NAME.gp.
Exits 1 if gnuplot fails on a chart, 0 otherwise (skipped charts included).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

PLOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'plots')


def load(jsondir, name):
    """The parsed JSON file, or None when it is not there."""
    path = os.path.join(jsondir, name)
    if not os.path.exists(path):
        return None
    with open(path, encoding='utf-8') as f:
        return json.load(f)


def quote(s):
    """A gnuplot double-quoted string literal."""
    return '"' + str(s).replace('\\', '\\\\').replace('"', '\\"') + '"'


def subtitle(meta, fallback_machine=None):
    """'CPU, N CPUs, OS; date; commit' from meta.json (or the benchmark's
    own machine record when there is no meta.json)."""
    if not meta:
        m = fallback_machine or {}
        return '%s, %s CPUs; date and commit not recorded' % (
            m.get('cpu', 'unknown machine'), m.get('nproc', '?'))
    commit = meta.get('commit', '?') + (' + local changes' if meta.get('dirty') else '')
    return '%s, %s CPUs, %s; %s; commit %s' % (
        meta.get('cpu', '?'), meta.get('nproc', '?'), meta.get('os', '?'),
        meta.get('date', '?'), commit)


def footnote(meta, *keys):
    """The commands that made a chart's numbers, as meta.json recorded them."""
    cmds = (meta or {}).get('commands', {})
    return '; '.join(cmds[k] for k in keys if k in cmds)


def write_table(path, header, rows):
    """A gnuplot data file: a header line of quoted names, then the rows."""
    with open(path, 'w', encoding='utf-8') as f:
        f.write(' '.join(quote(h) for h in header) + '\n')
        for row in rows:
            f.write(' '.join(quote(v) if isinstance(v, str) else repr(v) for v in row) + '\n')


def gnuplot(tmp, chart, svgdir, variables, script=None):
    """Runs common.gp then SCRIPT.gp (default CHART.gp) with `variables`
    set, drawing SVGDIR/CHART.svg; True if it drew."""
    out = os.path.join(svgdir, chart + '.svg')
    part = os.path.join(tmp, chart + '.svg')   # moved to `out` once drawn
    varfile = os.path.join(tmp, chart + '.vars.gp')
    with open(varfile, 'w', encoding='utf-8') as f:
        for k, v in dict(variables, tmp=tmp).items():
            f.write('%s = %s\n' % (k, v if isinstance(v, (int, float)) else quote(v)))
        f.write('out = %s\n' % quote(part))
    r = subprocess.run(['gnuplot', varfile, os.path.join(PLOTS, 'common.gp'),
                        os.path.join(PLOTS, (script or chart) + '.gp')],
                       capture_output=True, text=True)
    if r.returncode != 0 or r.stderr.strip():
        sys.stderr.write('bench-plots: gnuplot on %s:\n%s' % (chart, r.stderr))
        return False
    os.replace(part, out)
    print('bench-plots: wrote %s' % out, flush=True)
    return True


# ---- one function per chart: its table(s), then gnuplot ----

# What each id-read mode does, for the key, and its colour (linetype in
# common.gp): a copy per read blue, an external string per read orange, the
# atom's one cached string green, in C and in Node alike.
IDREAD_MODES = {
    'copy': ('copy: a new string per read', 1),
    'external': ('external: a new external string per read', 2),
    'external+cache': ("external+cache: the atom's one string (host cache)", 3),
    'handle-alloc': ('handle-alloc: external + a 16-byte handle object', 4),
    'plain': ('plain: a JS string property', 7),
    'atom': ("atom: the atom's one external string, cached", 3),
}


def lengths_table(tmp, name, rows, modes):
    """ns per read by length, one column per mode, in the file's mode order;
    returns the modes' linetypes and the number of lengths."""
    lengths = sorted({r['length'] for r in rows})
    ns = {(r['mode'], r['length']): r['ns_per_read'] for r in rows}
    write_table(os.path.join(tmp, name + '.dat'),
                ['length'] + [IDREAD_MODES.get(m, (m, 0))[0] for m in modes],
                [[l] + [ns.get((m, l), float('nan')) for m in modes] for l in lengths])
    lts = ' '.join(str(IDREAD_MODES.get(m, (m, i + 1))[1] or i + 1) for i, m in enumerate(modes))
    return lts, len(lengths)


def modes_of(rows):
    return list(dict.fromkeys(r['mode'] for r in rows))


def chart_idread_c(jsondir, tmp, svgdir, meta):
    rows = load(jsondir, 'idread.json')
    if rows is None:
        return skip('idread-c', 'no idread.json')
    modes = modes_of(rows)
    lts, nlengths = lengths_table(tmp, 'idread-c', rows, modes)
    return gnuplot(tmp, 'idread-c', svgdir, {
        'title': 'Reading el.id in a C model host (bench/idread.c): ns per read',
        'subtitle': subtitle(meta), 'footnote': footnote(meta, 'idread'),
        'data': os.path.join(tmp, 'idread-c.dat'), 'ncols': len(modes) + 1, 'lts': lts,
        'nlengths': nlengths, 'height': 580},
        'idread')


def chart_idread_node(jsondir, tmp, svgdir, meta):
    rows = load(jsondir, 'node-idread.json')
    if rows is None:
        return skip('idread-node', 'no node-idread.json (no node, or make bench-plots skipped it)')
    modes = modes_of(rows)
    lts, nlengths = lengths_table(tmp, 'idread-node', rows, modes)
    node = (meta or {}).get('node', '')
    return gnuplot(tmp, 'idread-node', svgdir, {
        'title': 'Reading el.id in Node.js%s (bench/node-idread.js): ns per read'
                 % (' ' + node if node else ''),
        'subtitle': subtitle(meta), 'footnote': footnote(meta, 'node-idread'),
        'data': os.path.join(tmp, 'idread-node.dat'), 'ncols': len(modes) + 1, 'lts': lts,
        'nlengths': nlengths, 'height': 580},
        'idread')


PEER_NAMES = {'atomtab': 'atomtab', 'glib': 'GLib quarks', 'libxml2': 'libxml2 dict',
              'naive': 'naive chained table', 'string_cache': 'string_cache', 'ustr': 'ustr',
              'lasso': 'lasso', 'lasso-ahash': 'lasso (ahash)'}
WORKLOADS = [('stream', 'stream'), ('hit', 'hit'), ('miss', 'miss'), ('rep3', 'rep 3 B'),
             ('rep16', 'rep 16 B'), ('rep64', 'rep 64 B'), ('rep101', 'rep 101 B')]


def file_label(f):
    """What a token file is, for a panel's title."""
    base = os.path.basename(f['file'])
    what = {'nodejs-api-docs.atoms': 'the bundled corpus (Node.js API docs)',
            'c-headers.tokens': 'identifiers from the C headers in /usr/include'}.get(base, base)
    return '%s: %s tokens, %s distinct' % (what, format(f['tokens'], ','),
                                          format(f['distinct'], ','))


def chart_peers(jsondir, tmp, svgdir, meta):
    suite = load(jsondir, 'suite.json')
    if suite is None:
        return skip('peers', 'no suite.json')
    files = suite['files'][:2]
    labels = []
    for i, f in enumerate(files):
        backends = list(f['results'])
        write_table(os.path.join(tmp, 'peers%d.dat' % i),
                    ['workload'] + [PEER_NAMES.get(b, b) for b in backends],
                    [[label] + [f['results'][b][w]['median'] for b in backends]
                     for w, label in WORKLOADS])
        labels.append(file_label(f))
    return gnuplot(tmp, 'peers', svgdir, {
        'title': 'atomtab and its peers, per workload (bench/suite.c): median ns per op',
        'subtitle': subtitle(meta, suite.get('machine')),
        'footnote': footnote(meta, 'suite'), 'npanels': len(files),
        'nbackends': len(files[0]['results']), 'panel1': labels[0], 'height': 780,
        'panel2': labels[-1], 'dataset': 'peers',
        'xlabel': 'workload (rep N B: one string of N bytes interned again and again)'})


CURRENT_WORKLOADS = [('hit', 'hit'), ('stream', 'stream'), ('hitrel', 'hit + release*'),
                     ('mix', 'mix*'), ('mixpre', 'mix, names pre-made*')]


def versions_note(v):
    """'string_cache 0.11.0, ustr 1.1.0, ...' from atompeers' versions."""
    names = [('atomtab', 'atomtab'), ('string_cache', 'string_cache'), ('ustr', 'ustr'),
             ('lasso', 'lasso'), ('glib', 'GLib'), ('libxml2', 'libxml2')]
    return ', '.join('%s %s' % (label, v[k]) for k, label in names if k in v)


def chart_peers_current(jsondir, tmp, svgdir, meta):
    doc = load(jsondir, 'peers.json')
    if doc is None:
        return skip('peers-current', 'no peers.json')
    files = doc['files'][:2]
    labels = []
    for i, f in enumerate(files):
        backends = list(f['results'])
        rows = [(w, label) for w, label in CURRENT_WORKLOADS   # older files lack mixpre
                if all(w in f['results'][b] for b in backends)]
        write_table(os.path.join(tmp, 'current%d.dat' % i),
                    ['workload'] + [PEER_NAMES.get(b, b) for b in backends],
                    [[label] + [f['results'][b][w]['median'] for b in backends]
                     for w, label in rows])
        labels.append(file_label(f))
    m = doc.get('machine', {})
    return gnuplot(tmp, 'peers-current', svgdir, {
        'title': 'One thread, every peer on glibc malloc (bench/peers.c): median ns per op',
        'subtitle': subtitle(meta, m),
        'footnote': '; '.join(x for x in (footnote(meta, 'peers'), '%s; %s, %s' % (
            versions_note(doc.get('versions', {})), m.get('cc', '?'), m.get('rustc', '?'))) if x),
        'npanels': len(files), 'nbackends': len(files[0]['results']), 'panel1': labels[0],
        'panel2': labels[-1], 'height': 780, 'dataset': 'current',
        'xlabel': 'workload (*: ustr, lasso, GLib, libxml2 and naive have no release: '
                  'the intern alone)'},
        'peers')


# Each threads mode's colour (linetype in common.gp) and what it does.
THREAD_MODES = {'hit': (1, 'hit: corpus tokens'),
                'same': (2, 'same: 4 static atoms, every thread'),
                'samedyn': (3, 'samedyn: 4 dynamic atoms, every thread'),
                'mix': (4, 'mix: 1 op in 8 a new string, so sweeps run')}


def sc_label(doc):
    """', bench/sc: string_cache VERSION' (older JSON has no version)."""
    v = doc.get('version')
    return ', bench/sc: string_cache %s' % v if v else ', bench/sc'


def chart_threads(jsondir, tmp, svgdir, meta):
    runs = [(impl, load(jsondir, 'threads.%s.json' % impl))
            for impl in ('atomtab', 'string_cache')]
    runs = [(impl, d) for impl, d in runs if d is not None]
    if not runs or runs[0][0] != 'atomtab':
        return skip('threads', 'no threads.atomtab.json')
    modes = modes_of(runs[0][1]['results'])
    for impl, d in runs:
        for m in modes:
            write_table(os.path.join(tmp, 'threads.%s.%s.dat' % (impl, m)),
                        ['threads', 'mops', 'cpu_ns_per_op'],
                        [[r['threads'], r['mops'], r['cpu_ns_per_op']]
                         for r in d['results'] if r['mode'] == m])
    d = runs[0][1]
    return gnuplot(tmp, 'threads', svgdir, {
        'title': 'Threads on one shared table (op = intern + release; bench/threads.c%s)'
                 % (sc_label(runs[1][1]) if len(runs) > 1 else ''),
        'subtitle': subtitle(meta, d.get('machine')),
        'footnote': footnote(meta, 'threads', 'threads-sc'),
        'modes': ' '.join(modes), 'impls': ' '.join(i for i, _ in runs),
        'lts': ' '.join(str(THREAD_MODES.get(m, (i + 1,))[0]) for i, m in enumerate(modes)),
        'note': '; '.join(THREAD_MODES[m][1] for m in modes if m in THREAD_MODES),
        'nproc': d.get('machine', {}).get('nproc', 0),
        'maxthreads': max(r['threads'] for r in d['results']), 'height': 640,
        'scversion': ' ' + runs[1][1]['version']
                     if len(runs) > 1 and runs[1][1].get('version') else ''})


SHORT_NAMES = {'atomtab': 'atomtab', 'glib': 'GLib', 'libxml2': 'libxml2'}
MEM_PARTS = ['chars+NUL', 'atom header', 'slop', 'table',
             'chunk headers (glibc)', 'overhead (not split)']


def memory_rows(doc, alloc):
    """One stacked bar per interner: bytes per distinct token, atomtab's
    split scaled from per dynamic atom (static atoms have no heap bytes)."""
    rows, n = [], doc['distinct']
    for it in doc['interners']:
        s = it.get('split')
        if s:
            k = s['atoms'] / n
            chunk = s.get('heap_overhead', 0) * k   # the report's chunk headers (glibc)
            rest = (it['bytes'] - s['report_bytes']) / n   # 0 when the report adds up
            parts = [s['chars'] * k, s['header'] * k, s['slop'] * k, s['table'] * k, chunk, rest]
        else:
            parts = [doc['chars_per_token'], 0, 0, 0, 0, it['overhead']]
        rows.append([SHORT_NAMES.get(it['name'], it['name'])] + [round(p, 3) for p in parts] +
                    [it['per_token'], alloc])
    return rows


def chart_memory(jsondir, tmp, svgdir, meta):
    docs = [(alloc, load(jsondir, name)) for alloc, name in
            (('jemalloc', 'membytes.json'), ('glibc', 'membytes-libc.json'))]
    docs = [(a, d) for a, d in docs if d is not None]
    if not docs:
        return skip('memory', 'no membytes.json or membytes-libc.json')
    rows = []
    for alloc, d in docs:
        rows += memory_rows(d, alloc) + [[''] + [0] * (len(MEM_PARTS) + 1) + ['']]
    write_table(os.path.join(tmp, 'memory.dat'), ['interner'] + MEM_PARTS + ['total', 'allocator'],
                rows[:-1])
    d = docs[0][1]
    s = next(it['split'] for it in d['interners'] if 'split' in it)
    note = ('atomtab per dynamic atom (%s of the %s distinct tokens; the rest are static '
            'atoms), %s: header %.2f + slop %.2f + table %.2f = %.2f bytes of overhead'
            % (format(s['atoms'], ','), format(d['distinct'], ','), docs[0][0], s['header'],
               s['slop'], s['table'], s['header'] + s['slop'] + s['table']))
    return gnuplot(tmp, 'memory', svgdir, {
        'title': 'Memory: bytes per distinct token, by what they pay for (bench/membytes.c)',
        'corpus': file_label({'file': d['file'], 'tokens': d['tokens'], 'distinct': d['distinct']}),
        'subtitle': subtitle(meta), 'note': note, 'nparts': len(MEM_PARTS),
        'footnote': footnote(meta, 'membytes', 'membytes-libc')})


def skip(chart, why):
    print('bench-plots: %s skipped: %s' % (chart, why), flush=True)
    return True


def main(argv):
    if len(argv) != 3:
        sys.stderr.write('usage: bench-plots.py JSONDIR SVGDIR\n')
        return 2
    jsondir, svgdir = argv[1], argv[2]
    if not shutil.which('gnuplot'):
        sys.stderr.write('bench-plots: no gnuplot (sh tools/deps.sh plots installs it)\n')
        return 1
    os.makedirs(svgdir, exist_ok=True)
    meta = load(jsondir, 'meta.json')
    ok = True
    with tempfile.TemporaryDirectory(prefix='bench-plots.') as tmp:
        for chart in (chart_idread_c, chart_idread_node, chart_peers, chart_peers_current,
                      chart_threads, chart_memory):
            ok = chart(jsondir, tmp, svgdir, meta) and ok
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
