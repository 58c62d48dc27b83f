#!/bin/sh
# SPDX-License-Identifier: MIT
# check-npm.sh [DIR] - the Node package as an npm user gets it: `npm pack`
# in bindings/node, the tarball installed offline into an empty scratch
# project in DIR (node-gyp builds the addon from the sources the tarball
# carries, against the installed Node's headers: --nodedir=NODEDIR, /usr
# by default), then the package's own tests run from node_modules/atomtab
# and the scratch project requires it by name. Skipped, with a message,
# without node, npm or Node's headers.
set -eu
dir=${1:-build/npm-check}
nodedir=${NODEDIR:-/usr}
fail() { echo "check-npm: $*" >&2; exit 1; }
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1 ||
   [ ! -f "$nodedir/include/node/node_api.h" ]; then
    echo "check-npm: SKIPPED (no node, no npm, or no $nodedir/include/node/node_api.h)"
    exit 0
fi
sh tools/deps.sh test   # python3 (gyp), g++ (node-gyp links with it), libxxhash-dev
top=$(pwd)
rm -rf "$dir"
mkdir -p "$dir/app"
dir=$(cd "$dir" && pwd)
export npm_config_cache="$dir/npm-cache" npm_config_update_notifier=false \
    npm_config_audit=false npm_config_fund=false
version=$(cat VERSION)
tgz="$dir/atomtab-$version.tgz"
(cd bindings/node && npm pack --silent --pack-destination "$dir" >/dev/null) ||
    fail "npm pack failed"
[ -f "$tgz" ] || fail "npm pack made no $tgz"
# the tarball carries what the addon is built from
list=$(tar -tzf "$tgz")
for f in binding.gyp atomtab_node.c deps/atomtab/include/atomtab.h \
         deps/atomtab/src/sources.txt deps/atomtab/gen/atomtab_atoms.c \
         deps/atomtab/gen/atomtab_atoms.h deps/atomtab/VERSION test/api.test.js; do
    echo "$list" | grep -qx "package/$f" || fail "the tarball has no $f"
done
for f in $(cat src/sources.txt); do
    echo "$list" | grep -qx "package/deps/atomtab/src/$f" || fail "the tarball has no src/$f"
done
echo "$list" | grep -q '^package/build/' && fail "the tarball carries a build"
# an empty project installs it offline (an empty cache: nothing is fetched)
printf '{ "name": "scratch", "version": "1.0.0", "private": true }\n' > "$dir/app/package.json"
(cd "$dir/app" && npm install --offline --foreground-scripts --nodedir="$nodedir" \
    "$tgz" >"$dir/install.log" 2>&1) || { tail -40 "$dir/install.log"; fail "npm install failed"; }
pkg="$dir/app/node_modules/atomtab"
[ -f "$pkg/build/Release/atomtab.node" ] || fail "no build/Release/atomtab.node after install"
# the package's own tests, from where it was installed (not this checkout's build)
(cd "$pkg" && env -u ATOMTAB_NODE npm test >"$dir/test.log" 2>&1) ||
    { tail -60 "$dir/test.log"; fail "the package's tests failed in $pkg"; }
grep -E '^# (pass|fail|skipped)' "$dir/test.log" | sed 's/^# /check-npm: package tests: /'
grep -q '^# fail 0$' "$dir/test.log" || fail "the package's tests reported failures"
# and the project uses it by name
out=$(cd "$dir/app" && env -u ATOMTAB_NODE node -e "
const a = require('atomtab');
const s = a.intern(['data', 'id'].join('-'));
console.log(s === a.intern('data-id'), a.version,
            require.resolve('atomtab').startsWith(process.cwd()));")
[ "$out" = "true $version true" ] || fail "require('atomtab') from the project: $out"
cd "$top"
echo "check-npm: atomtab-$version.tgz installs offline in an empty project and passes its tests"
