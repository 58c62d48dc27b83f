#!/bin/sh
# check-install.sh - installs with meson and with make into scratch
# prefixes, then builds and runs the README example against each through
# pkg-config, as a user of the installed library would.
set -eu
top=$(pwd)
for how in meson make; do
    prefix="$top/build/stage-$how"
    rm -rf "$prefix"
    if [ "$how" = meson ]; then
        meson setup build/install-meson --prefix="$prefix" --wipe >/dev/null 2>&1 ||
            meson setup build/install-meson --prefix="$prefix" >/dev/null
        meson install -C build/install-meson >/dev/null
    else
        make --no-print-directory O=build/install-make PREFIX="$prefix" install >/dev/null
    fi
    pc=$(find "$prefix" -name atomtab.pc | head -1)
    [ -n "$pc" ] || { echo "check-install: no atomtab.pc from $how install" >&2; exit 1; }
    sh tools/readme-example.sh README.md > "$prefix/example.c"
    # shellcheck disable=SC2046
    cc "$prefix/example.c" -o "$prefix/example" \
        $(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs atomtab)
    LD_LIBRARY_PATH=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=libdir atomtab) \
        "$prefix/example" >/dev/null
    # the shared library stays mapped after dlclose (its thread-exit
    # destructor may still run): linked -z nodelete
    libdir=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=libdir atomtab)
    readelf -d "$libdir/libatomtab.so" | grep -q NODELETE ||
        { echo "check-install: $how's libatomtab.so is not linked -z nodelete" >&2; exit 1; }
    # the installed report tool finds the installed corpus on its own
    "$prefix/bin/atomtab-report" --json > "$prefix/report.json" 2>/dev/null ||
        { echo "check-install: atomtab-report from $how install failed" >&2; exit 1; }
    # static atoms: the installed generator makes a host set that compiles
    # with -Werror; ATAB_ATOM and the host set's macro name interned atoms
    printf 'my-widget my_widget\ndiv\n' > "$prefix/my.atoms"
    "$prefix/bin/atomtab-genstatic" --name myset --exclude /dev/null \
        "$prefix/my.atoms" "$prefix/myset.c" "$prefix/myset.h"
    cat > "$prefix/static.c" <<'EOF_C'
#include <atomtab_atoms.h>
#include "myset.h"
int main(void)
{
    const atab_static_set *sets[] = {&myset};
    atab_options o = {0};
    o.static_sets = sets;
    o.n_static_sets = 1;
    atab_table *t = atab_table_new(&o);
    int ok = t && atab_intern_cstr(t, "div") == ATAB_ATOM(div) &&
             atab_intern_cstr(t, "my-widget") == MYSET_ATOM(my_widget);
    atab_table_free(t);
    return !ok;
}
EOF_C
    # shellcheck disable=SC2046
    cc -Wall -Wextra -Werror "$prefix/static.c" "$prefix/myset.c" -o "$prefix/static" \
        $(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs atomtab)
    LD_LIBRARY_PATH=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=libdir atomtab) \
        "$prefix/static" || { echo "check-install: static atoms from $how install" >&2; exit 1; }
    # the C++ wrapper is installed and builds against the installed library
    printf '#include <atomtab.hpp>\nint main() { atab::table t; return !(t.intern("x-y") == t.intern("x-y")); }\n' \
        > "$prefix/wrap.cpp"
    # shellcheck disable=SC2046
    c++ -std=c++17 -Wall -Wextra -pedantic -Werror "$prefix/wrap.cpp" -o "$prefix/wrap" \
        $(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs atomtab)
    LD_LIBRARY_PATH=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=libdir atomtab) \
        "$prefix/wrap" || { echo "check-install: atomtab.hpp from $how install" >&2; exit 1; }
    echo "check-install: $how install works through pkg-config"
done
