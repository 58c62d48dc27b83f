#!/bin/sh
# SPDX-License-Identifier: MIT
# spdx.sh - every source file git tracks names its license in an
# SPDX-License-Identifier line within its first 5 lines, a comment that
# starts with it.
#   tools/spdx.sh          adds "SPDX-License-Identifier: MIT" to each source
#                          file without one: line 1, or line 2 after a #! line,
#                          in the file's comment syntax
#                          and copies LICENSE where the packages need a copy
#   tools/spdx.sh --check  lists the files without one and fails (CI runs it);
#                          also fails when a copy of LICENSE differs from it
# Source files: C and C++ (.c .h .cpp .hpp), JavaScript and TypeScript (.js
# .ts), Rust (.rs), shell, Python and gnuplot scripts (.sh .py .gp), the
# build files (Makefile, meson.build, meson_options.txt, *.in templates,
# Cargo.toml, the meson wrap), .ci/run and the man page (.1). Data files
# (lists, corpora, JSON, charts, Markdown) are not source files.
# usage: tools/spdx.sh [--check]   (from anywhere inside the checkout)
set -eu
check=no
[ "${1:-}" = --check ] && check=yes
cd "$(git rev-parse --show-toplevel)"
id="SPDX-License-Identifier: MIT"
copies="bindings/node/LICENSE"   # npm packs only its own directory's LICENSE

# The comment line for a file, or nothing when it is not a source file.
comment_for() {
    case "$1" in
    *.c|*.h|*.cpp|*.hpp) echo "/* $id */" ;;
    *.js|*.ts|*.rs) echo "// $id" ;;
    *.sh|*.py|*.gp|*.in|*/Makefile|Makefile|*meson.build|meson_options.txt|*.toml|*.wrap|.ci/run)
        echo "# $id" ;;
    *.1) echo ".\\\" $id" ;;
    esac
}

missing=0
for f in $(git ls-files); do
    [ -f "$f" ] || continue   # deleted in the work tree
    line=$(comment_for "$f")
    [ -n "$line" ] || continue
    head -n 5 "$f" | grep -Eq '^(#|//|/\*|\.\\")[[:space:]]*SPDX-License-Identifier: ' && continue
    if [ $check = yes ]; then
        echo "spdx: $f has no SPDX-License-Identifier line" >&2
        missing=$((missing + 1))
        continue
    fi
    # the line through the environment: awk -v would read its backslashes
    if head -n 1 "$f" | grep -q '^#!'; then
        L=$line awk 'NR == 1 { print; print ENVIRON["L"]; next } { print }' "$f" > "$f.spdx"
    else
        L=$line awk 'NR == 1 { print ENVIRON["L"] } { print }' "$f" > "$f.spdx"
    fi
    chmod "$(stat -c %a "$f")" "$f.spdx"
    mv "$f.spdx" "$f"
    echo "spdx: added to $f"
done
for c in $copies; do
    cmp -s LICENSE "$c" && continue
    if [ $check = yes ]; then
        echo "spdx: $c is not a copy of LICENSE" >&2
        missing=$((missing + 1))
    else
        cp LICENSE "$c"
        echo "spdx: copied LICENSE to $c"
    fi
done
if [ $check = yes ]; then
    [ $missing = 0 ] || { echo "spdx: $missing problems (tools/spdx.sh adds the lines)" >&2; exit 1; }
    echo "spdx: every source file carries its SPDX-License-Identifier; LICENSE's copies match"
fi
[ $missing = 0 ]
