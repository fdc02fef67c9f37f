#!/usr/bin/env bash
# cmake --install of a build into a temporary prefix, moved elsewhere (the tree must be relocatable),
# then a consumer project built against it with find_package(hpcz) and run; pkg-config's flags (where
# pkg-config exists) and the installed CLI checked too.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR [CXX_COMPILER] [EXTRA_LINK_FLAGS]
set -euo pipefail
build=$1 src=$2 cxx=${3:-c++} link_flags=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/staged" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install failed"; }
mv "$tmp/staged" "$tmp/prefix"
P=$tmp/prefix
(cd "$P" && find . -type f | sort)

for f in bin/hpcz include/hpcz/hpcz.hpp include/hpcz/hpcz.h; do
  [ -f "$P/$f" ] || fail "$f is not installed"
done
libdir=$(dirname "$(cd "$P" && find . -name libhpcz.a | head -1)")
libdir=${libdir#./}
[ "$libdir" != . ] || fail "libhpcz.a is not installed"
for f in cmake/hpcz/hpczConfig.cmake cmake/hpcz/hpczConfigVersion.cmake cmake/hpcz/hpczTargets.cmake pkgconfig/hpcz.pc; do
  [ -f "$P/$libdir/$f" ] || fail "$libdir/$f is not installed"
done
if grep -q 'H5Zhpcz' "$build/cmake_install.cmake"; then  # the build has the HDF5 filter
  [ -n "$(find "$P" -name 'libH5Zhpcz.so')" ] || fail "the HDF5 filter is not under the prefix"
fi
# Nothing of the source or build tree (src/ above all) in what a consumer is given.
if grep -n -e "$src" -e "$(cd "$build" && pwd)" -e "$tmp/staged" "$P/$libdir"/cmake/hpcz/*.cmake "$P/$libdir/pkgconfig/hpcz.pc"; then
  fail "the CMake package or hpcz.pc names the source, build or staging tree"
fi

"$P/bin/hpcz" --version || fail "$P/bin/hpcz --version failed"

cmake -S "$src/tests/install_consumer" -B "$tmp/consumer" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$P" \
      -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_EXE_LINKER_FLAGS="$link_flags" >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log"; fail "the consumer's find_package(hpcz) failed"; }
cmake --build "$tmp/consumer" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "the consumer did not build"; }
"$tmp/consumer/app" || fail "the consumer (find_package) failed"

if command -v pkg-config >/dev/null; then
  flags=$(PKG_CONFIG_PATH="$P/$libdir/pkgconfig" pkg-config --cflags --libs hpcz) || fail "pkg-config --cflags --libs hpcz failed"
  echo "pkg-config --cflags --libs hpcz: $flags"
  # shellcheck disable=SC2086  # the flags are words
  "$cxx" -std=c++17 -O1 "$src/tests/install_consumer/main.cpp" -o "$tmp/app_pc" $flags $link_flags ||
    fail "the consumer did not build with pkg-config's flags"
  "$tmp/app_pc" || fail "the consumer (pkg-config) failed"
else
  echo "install test: no pkg-config, hpcz.pc not checked"
fi
echo "install test: OK"
