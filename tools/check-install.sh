#!/bin/sh
# SPDX-License-Identifier: MIT
# check-install.sh - installs with meson and with make into scratch
# prefixes, then builds and runs the README example against each through
# pkg-config (shared, and fully static with --static), and a scratch CMake
# project through find_package(atomtab), as a user of the installed library
# would. Both installs must give the same atomtab.pc and CMake files.
# Then each build installs again to a staging directory (DESTDIR) for a
# prefix that does not exist, the staged tree is moved elsewhere (as a
# distribution package, a conda or vcpkg port, a Nix store path do), and a
# CMake consumer and a pkg-config consumer build and run from the moved
# tree: atomtab.pc and atomtabConfig.cmake find the prefix from their own
# directory.
set -eu
top=$(pwd)
fail() { echo "check-install: $*" >&2; exit 1; }
sh tools/deps.sh cmake
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
    export PKG_CONFIG_PATH="$(dirname "$pc")"
    [ "$(pkg-config --variable=allocator atomtab)" = system ] ||
        fail "$how: atomtab.pc's allocator is not 'system'"
    for f in share/atomtab/default.atoms share/man/man1/atomtab-genstatic.1 \
             share/doc/atomtab/LICENSE share/doc/atomtab/CHANGELOG.md; do
        [ -f "$prefix/$f" ] || fail "$how did not install $f"
    done
    sh tools/readme-example.sh README.md > "$prefix/example.c"
    # shellcheck disable=SC2046
    cc "$prefix/example.c" -o "$prefix/example" \
        $(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs atomtab)
    LD_LIBRARY_PATH=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=libdir atomtab) \
        "$prefix/example" >/dev/null
    # fully static, with what --static adds (Libs.private, Requires.private)
    # shellcheck disable=SC2046
    cc -static "$prefix/example.c" -o "$prefix/example-static" \
        $(pkg-config --static --cflags --libs atomtab) ||
        fail "$how: cc -static with pkg-config --static failed"
    "$prefix/example-static" >/dev/null || fail "$how: the static example failed"
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
    # (the installed default.atoms: a list that repeats "div" is refused)
    printf 'my-widget\ndiv\n' > "$prefix/bad.atoms"
    if "$prefix/bin/atomtab-genstatic" --name myset "$prefix/bad.atoms" \
        "$prefix/myset.c" "$prefix/myset.h" 2>"$prefix/bad.err"; then
        fail "$how: genstatic accepted a default-set atom"
    fi
    grep -q "bad.atoms:2: 'div' is in the default set" "$prefix/bad.err" ||
        fail "$how: genstatic's message: $(cat "$prefix/bad.err")"
    printf 'my-widget\ndata-role\n' > "$prefix/my.atoms"
    "$prefix/bin/atomtab-genstatic" --name myset \
        "$prefix/my.atoms" "$prefix/myset.c" "$prefix/myset.h"
    cp tools/check-consumer.c "$prefix/static.c"
    # shellcheck disable=SC2046
    cc -Wall -Wextra -Werror "$prefix/static.c" "$prefix/myset.c" -o "$prefix/static" \
        $(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs atomtab)
    LD_LIBRARY_PATH=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=libdir atomtab) \
        "$prefix/static" >/dev/null || { echo "check-install: static atoms from $how install" >&2; exit 1; }
    # CMake: find_package(atomtab), atomtab::atomtab (shared) and
    # atomtab::atomtab_static, atomtab_add_static_set() running the generator
    mkdir -p "$prefix/cmake-app"
    cp "$prefix/static.c" "$prefix/my.atoms" "$prefix/cmake-app/"
    cat > "$prefix/cmake-app/CMakeLists.txt" <<'EOF_CMAKE'
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(atomtab 0.1 REQUIRED)
atomtab_add_static_set(myset my.atoms)
add_executable(app static.c)
target_link_libraries(app PRIVATE myset atomtab::atomtab)
add_executable(app_static static.c)
target_link_libraries(app_static PRIVATE myset atomtab::atomtab_static)
EOF_CMAKE
    cmake -S "$prefix/cmake-app" -B "$prefix/cmake-app/build" \
        -DCMAKE_PREFIX_PATH="$prefix" >"$prefix/cmake.log" 2>&1 &&
        cmake --build "$prefix/cmake-app/build" >>"$prefix/cmake.log" 2>&1 ||
        { cat "$prefix/cmake.log"; fail "$how: the CMake consumer did not build"; }
    "$prefix/cmake-app/build/app" >/dev/null || fail "$how: the CMake consumer (shared) failed"
    "$prefix/cmake-app/build/app_static" >/dev/null ||
        fail "$how: the CMake consumer (static) failed"
    unset PKG_CONFIG_PATH
    # the C++ wrapper is installed and builds against the installed library
    printf '#include <atomtab.hpp>\nint main() { atab::table t; return !(t.intern("x-y") == t.intern("x-y")); }\n' \
        > "$prefix/wrap.cpp"
    # shellcheck disable=SC2046
    c++ -std=c++17 -Wall -Wextra -pedantic -Werror "$prefix/wrap.cpp" -o "$prefix/wrap" \
        $(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs atomtab)
    LD_LIBRARY_PATH=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=libdir atomtab) \
        "$prefix/wrap" || { echo "check-install: atomtab.hpp from $how install" >&2; exit 1; }
    echo "check-install: $how install works through pkg-config, CMake and C++"
done
# the same atomtab.pc and CMake package from both builds
for f in pkgconfig/atomtab.pc cmake/atomtab/atomtabConfig.cmake \
         cmake/atomtab/atomtabConfigVersion.cmake; do
    a=$(find build/stage-meson -path "*/$f") b=$(find build/stage-make -path "*/$f")
    [ -n "$a" ] && [ -n "$b" ] || fail "$f missing from an install"
    [ "${a#build/stage-meson}" = "${b#build/stage-make}" ] ||
        fail "$f installed to ${a#build/stage-meson} by meson, ${b#build/stage-make} by make"
    sed "s|$top/build/stage-meson|PREFIX|g" "$a" > build/stage-meson.cmp
    sed "s|$top/build/stage-make|PREFIX|g" "$b" > build/stage-make.cmp
    cmp -s build/stage-meson.cmp build/stage-make.cmp ||
        { diff build/stage-meson.cmp build/stage-make.cmp; fail "$f differs between meson and make"; }
done
rm -f build/stage-meson.cmp build/stage-make.cmp
# ALLOCATOR=jemalloc: the .pc says so, and --static links (jemalloc.pc has
# no -lm: atomtab.pc's Libs.private carries -ljemalloc -lm)
prefix="$top/build/stage-make-jemalloc"
rm -rf "$prefix"
make --no-print-directory O=build/install-make-jemalloc ALLOCATOR=jemalloc PREFIX="$prefix" \
    install >/dev/null
export PKG_CONFIG_PATH="$(dirname "$(find "$prefix" -name atomtab.pc | head -1)")"
[ "$(pkg-config --variable=allocator atomtab)" = jemalloc ] || fail "jemalloc .pc: allocator"
sh tools/readme-example.sh README.md > "$prefix/example.c"
# shellcheck disable=SC2046
cc -static "$prefix/example.c" -o "$prefix/example-static" \
    $(pkg-config --static --cflags --libs atomtab) || fail "jemalloc: cc -static failed"
"$prefix/example-static" >/dev/null || fail "jemalloc: the static example failed"
unset PKG_CONFIG_PATH
echo "check-install: ALLOCATOR=jemalloc install: allocator=jemalloc, --static links"
echo "check-install: meson and make install the same atomtab.pc and CMake files"

# Relocation: staged for a prefix that is never there, then moved.
gone=/nonexistent/atomtab-prefix
[ ! -e "$gone" ] || fail "$gone exists"
for how in meson make; do
    stage="$top/build/reloc-$how/stage" moved="$top/build/reloc-$how/moved"
    rm -rf "$top/build/reloc-$how"
    if [ "$how" = meson ]; then
        meson configure build/install-meson -Dprefix="$gone" >/dev/null
        meson install -C build/install-meson --destdir "$stage" >/dev/null
    else
        make --no-print-directory O=build/install-make PREFIX="$gone" DESTDIR="$stage" \
            install >/dev/null
    fi
    mv "$stage$gone" "$moved"
    rm -rf "$stage"
    if grep -rl "$gone" "$moved"/lib*/ 2>/dev/null | grep -E '\.pc$|\.cmake$'; then
        fail "$how: the files above name the install prefix"
    fi
    pcdir=$(dirname "$(find "$moved" -name atomtab.pc | head -1)")
    # pkg-config: cflags, libs and the generator from the moved tree
    inc=$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=includedir atomtab)
    libdir=$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=libdir atomtab)
    gen=$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=genstatic atomtab)
    [ -f "$inc/atomtab.h" ] && [ -f "$libdir/libatomtab.so" ] && [ -x "$gen" ] ||
        fail "$how: pkg-config's includedir, libdir or genstatic is not in the moved tree"
    [ -f "$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=default_atoms atomtab)" ] ||
        fail "$how: pkg-config's default_atoms is not in the moved tree"
    mkdir -p "$moved/pc-app"
    cp tools/check-consumer.c "$moved/pc-app/static.c"
    printf 'my-widget\ndata-role\n' > "$moved/pc-app/my.atoms"
    "$gen" --name myset "$moved/pc-app/my.atoms" "$moved/pc-app/myset.c" "$moved/pc-app/myset.h"
    # shellcheck disable=SC2046
    cc -Wall -Wextra -Werror "$moved/pc-app/static.c" "$moved/pc-app/myset.c" \
        -o "$moved/pc-app/app" $(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs atomtab) ||
        fail "$how: the pkg-config consumer of the moved tree did not build"
    LD_LIBRARY_PATH="$libdir" "$moved/pc-app/app" >/dev/null ||
        fail "$how: the pkg-config consumer of the moved tree failed"
    # CMake: find_package through CMAKE_PREFIX_PATH, the shared and static
    # targets and atomtab_add_static_set() (the moved generator)
    cp -r "$top/build/stage-$how/cmake-app" "$moved/cmake-app"
    rm -rf "$moved/cmake-app/build"
    cmake -S "$moved/cmake-app" -B "$moved/cmake-app/build" \
        -DCMAKE_PREFIX_PATH="$moved" >"$moved/cmake.log" 2>&1 &&
        cmake --build "$moved/cmake-app/build" >>"$moved/cmake.log" 2>&1 ||
        { cat "$moved/cmake.log"; fail "$how: the CMake consumer of the moved tree did not build"; }
    "$moved/cmake-app/build/app" >/dev/null ||
        fail "$how: the CMake consumer of the moved tree (shared) failed"
    "$moved/cmake-app/build/app_static" >/dev/null ||
        fail "$how: the CMake consumer of the moved tree (static) failed"
    echo "check-install: $how install staged, moved: pkg-config and CMake consumers work from it"
done
