#!/bin/sh
# SPDX-License-Identifier: MIT
# check-spdx.sh - tools/spdx.sh's own test, in a scratch git repository:
# --check fails on a source file without the line and on a LICENSE copy
# that differs; spdx.sh adds each comment in its file's syntax (after a #!
# line), leaves data files and files that have one alone, copies LICENSE;
# then --check passes and a second run changes nothing.
# usage: tools/check-spdx.sh   (from the top of the tree)
set -eu
top=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-spdx: $*" >&2; exit 1; }
mkdir "$tmp/r"
cd "$tmp/r"
git init -q .
mkdir -p bindings/node src tools
printf 'MIT License\n' > LICENSE
printf 'an old license\n' > bindings/node/LICENSE
printf 'int f(void);\n' > src/a.h
printf '#!/bin/sh\necho hi\n' > tools/s.sh
chmod 755 tools/s.sh
printf '.TH X 1\n' > tools/x.1
printf "'use strict';\n" > src/b.js
printf 'project(x)\n' > meson.build
printf 'a.c\nb.c\n' > src/sources.txt
printf '/* SPDX-License-Identifier: MIT */\nint g;\n' > src/c.c
git add . && git -c user.name=t -c user.email=t@t commit -qm t
cp src/c.c ../c.before
if sh "$top/tools/spdx.sh" --check > ../check1.log 2>&1; then fail "--check passed on files without the line"; fi
for f in src/a.h tools/s.sh tools/x.1 src/b.js meson.build bindings/node/LICENSE; do
    grep -q "$f" ../check1.log || fail "--check did not name $f"
done
grep -q 'src/c.c\|sources.txt' ../check1.log && fail "--check named a file that needs no line"
sh "$top/tools/spdx.sh" > ../add.log
expect() {   # FILE LINE-NUMBER TEXT
    [ "$(sed -n "$2p" "$1")" = "$3" ] || fail "$1 line $2: '$(sed -n "$2p" "$1")', expected '$3'"
}
expect src/a.h 1 '/* SPDX-License-Identifier: MIT */'
expect tools/s.sh 1 '#!/bin/sh'
expect tools/s.sh 2 '# SPDX-License-Identifier: MIT'
expect tools/x.1 1 '.\" SPDX-License-Identifier: MIT'
expect src/b.js 1 '// SPDX-License-Identifier: MIT'
expect meson.build 1 '# SPDX-License-Identifier: MIT'
expect src/b.js 2 "'use strict';"
[ -x tools/s.sh ] || fail "tools/s.sh lost its mode"
[ "$(cat src/sources.txt)" = "$(printf 'a.c\nb.c')" ] || fail "a data file was changed"
cmp -s src/c.c ../c.before || fail "a file that had the line was changed"
cmp -s LICENSE bindings/node/LICENSE || fail "LICENSE was not copied"
sh "$top/tools/spdx.sh" --check > ../check2.log 2>&1 || { cat ../check2.log; fail "--check failed after spdx.sh"; }
git add -A && git -c user.name=t -c user.email=t@t commit -qm added
sh "$top/tools/spdx.sh" > ../again.log
[ -z "$(git status --porcelain)" ] || fail "a second run changed: $(git status --porcelain)"
echo "check-spdx: spdx.sh adds the line in each file's syntax, --check fails without it"
