#!/bin/sh
# SPDX-License-Identifier: MIT
# check-plots.sh - tools/bench-plots.py on a fixture of every JSON file it
# reads (test/plots: made-up round numbers, not measurements): each of the
# six charts is drawn, is well-formed SVG and names the fixture's commit in
# its subtitle; then a directory with idread.json alone draws that chart,
# skips the five others with a message and still succeeds.
# usage: tools/check-plots.sh FIXTURE OUTDIR   (seconds; gnuplot and python3)
set -e
fixture=$1 out=$2
[ -d "$fixture" ] && [ -n "$out" ] || { echo "usage: $0 FIXTURE OUTDIR" >&2; exit 2; }
fail() { echo "check-plots: $*" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/partial"
python3 tools/bench-plots.py "$fixture" "$out/all" > "$out/all.log" ||
    { cat "$out/all.log"; fail "bench-plots.py failed on $fixture"; }
for chart in idread-c idread-node peers peers-current threads memory; do
    svg=$out/all/$chart.svg
    [ -s "$svg" ] || fail "$svg not drawn"
    python3 -c 'import sys, xml.etree.ElementTree as E
sys.exit(0 if E.parse(sys.argv[1]).getroot().tag.endswith("svg") else 1)' "$svg" ||
        fail "$svg is not well-formed SVG"
    grep -q "commit fixture0" "$svg" || fail "$svg has no subtitle naming the commit"
done
cp "$fixture/idread.json" "$out/partial/"
python3 tools/bench-plots.py "$out/partial" "$out/one" > "$out/one.log" ||
    fail "bench-plots.py failed with inputs missing"
[ "$(ls "$out/one")" = idread-c.svg ] || fail "with idread.json alone: $(ls "$out/one" | tr '\n' ' ')"
[ "$(grep -c 'skipped' "$out/one.log")" = 5 ] || fail "with idread.json alone, not 5 charts skipped"
echo "check-plots: 6 charts drawn from $fixture into $out/all; missing inputs skipped"
