#!/bin/sh
# SPDX-License-Identifier: MIT
# check-aboutmemory.sh - atomtab-report's JSON in a real about:memory.
# Usage: tools/check-aboutmemory.sh BUILD-DIR [SCREENSHOT.png]
#
# Writes BUILD-DIR/report.json with BUILD-DIR/atomtab-report --json and
# checks the process entries about:memory reads (resident, and
# resident-unique, which its process list sizes a process by: 0 < unique
# <= resident). Then loads the file in headless Firefox ESR, installing
# firefox-esr where missing (tools/deps.sh firefox), driven over Marionette
# by tools/aboutmemory.py, which asserts on the rendered page's text and
# saves a screenshot (BUILD-DIR/about-memory.png unless named). Where no
# browser can be installed or started, it says "skipped: why" and exits 0.
set -eu
O=${1:?usage: check-aboutmemory.sh BUILD-DIR [SCREENSHOT.png]}
shot=${2:-$O/about-memory.png}
json=$O/report.json

"$O/atomtab-report" --json > "$json" 2>/dev/null
python3 - "$json" <<'PY'
import json, sys
reports = json.load(open(sys.argv[1]))['reports']
amount = {r['path']: r['amount'] for r in reports}
for path in ('resident', 'resident-unique', 'heap-allocated'):
    assert path in amount, 'no %s entry' % path
    assert [r['kind'] for r in reports if r['path'] == path] == [2], path
assert 0 < amount['resident-unique'] <= amount['resident'], amount
print('check-aboutmemory: resident %d B, resident-unique %d B'
      % (amount['resident'], amount['resident-unique']))
PY

skip() {
    echo "check-aboutmemory: skipped: $*"
    exit 0
}
firefox=$(command -v firefox-esr || command -v firefox || true)
if [ -z "$firefox" ]; then
    sh "$(dirname "$0")/deps.sh" firefox >/dev/null 2>&1 ||
        skip "firefox-esr is not installed and cannot be installed here (tools/deps.sh firefox failed)"
    firefox=$(command -v firefox-esr || command -v firefox || true)
    [ -n "$firefox" ] || skip "no firefox-esr after installing it"
fi
rc=0
python3 "$(dirname "$0")/aboutmemory.py" "$firefox" "$json" "$shot" || rc=$?
case $rc in
0) echo "check-aboutmemory: screenshot in $shot" ;;
3) skip "$firefox could not be started or driven over Marionette (see above)" ;;
*) echo "check-aboutmemory: FAILED" >&2; exit 1 ;;
esac
