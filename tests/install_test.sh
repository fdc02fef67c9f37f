#!/usr/bin/env bash
# cmake --install of a build into a temporary prefix, moved elsewhere (the tree must be relocatable),
# then a consumer project built against it with find_package(hpcz) and run, against the shared library
# (hpcz::hpcz by default) and the static one (HPCZ_USE_STATIC_LIBS, hpcz::hpcz_static); pkg-config's
# flags (where pkg-config exists), the shared library's SONAME and exported symbols (the public API
# only), the installed CLI and man page checked too.
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

for f in bin/hpcz include/hpcz/hpcz.hpp include/hpcz/hpcz.h share/man/man1/hpcz.1; do
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
# The CLI carries the library (it uses internals too): it runs without libhpcz.so.
if grep -q 'NEEDED.*libhpcz' <<<"$(readelf -d "$P/bin/hpcz")"; then fail "bin/hpcz needs libhpcz.so"; fi

# The shared library, where the build made it (HPCZ_SHARED, the default).
shared=0
if grep -q 'libhpcz\.so' "$build/cmake_install.cmake"; then
  shared=1
  so=$P/$libdir/libhpcz.so
  [ -e "$so" ] || fail "$libdir/libhpcz.so is not installed"
  soname=$(readelf -d "$so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
  echo "libhpcz.so: SONAME $soname"
  [[ $soname =~ ^libhpcz\.so\.[0-9]+\.[0-9]+$ ]] && [ -e "$P/$libdir/$soname" ] ||
    fail "libhpcz.so's SONAME '$soname' is not libhpcz.so.MAJOR.MINOR beside it"
  # Exported: the C API's hpcz_* and C++ names of namespace hpcz that the public headers declare; and
  # every function hpcz.hpp declares that is not inline.
  nm -D -C --defined-only "$so" | cut -d' ' -f3- | sort -u >"$tmp/exported"
  words=$(cat "$src"/include/hpcz/hpcz.hpp "$src"/include/hpcz/hpcz.h | grep -oE '[A-Za-z_][A-Za-z_0-9]*' | sort -u)
  while read -r sym; do
    name=$(sed -E -n 's/^(typeinfo name for |typeinfo for |vtable for )?hpcz::([A-Za-z_0-9]+).*/\2/p; s/^(hpcz_[A-Za-z_0-9]+)$/\1/p' <<<"$sym")
    [ -n "$name" ] && grep -qx "$name" <<<"$words" || fail "libhpcz.so exports '$sym', which is not the public API"
  done <"$tmp/exported"
  for f in $(grep -vE '^(inline|template|static|constexpr)' "$src/include/hpcz/hpcz.hpp" | grep -oE '^[A-Za-z].*[ *&][a-z_0-9]+\(' |
             grep -oE '[a-z_0-9]+\($' | tr -d '('); do
    grep -qE "^hpcz::$f(\(|\[)" "$tmp/exported" || fail "libhpcz.so does not export hpcz::$f (cmake/hpcz.map)"
  done
  echo "libhpcz.so exports $(wc -l <"$tmp/exported") symbols, all of the public API"
fi

# (Output is matched captured: under pipefail, grep -q leaving early would fail its writer with SIGPIPE.)
# The consumer with hpcz::hpcz (the shared library where there is one), with HPCZ_USE_STATIC_LIBS=ON
# (the static one) and with hpcz::hpcz_static named.
consumer() {  # NAME WANT_SHARED CMAKE_ARGS...
  local name=$1 want=$2
  shift 2
  cmake -S "$src/tests/install_consumer" -B "$tmp/$name" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$P" \
        -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_EXE_LINKER_FLAGS="$link_flags" "$@" >"$tmp/configure.log" 2>&1 ||
    { cat "$tmp/configure.log"; fail "the consumer's find_package(hpcz) failed ($name)"; }
  cmake --build "$tmp/$name" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "the consumer did not build ($name)"; }
  if grep -q 'NEEDED.*libhpcz\.so' <<<"$(readelf -d "$tmp/$name/app")"; then
    [ "$want" = 1 ] || fail "the consumer ($name) needs libhpcz.so"
    grep -qF "=> $P/$libdir/libhpcz.so" <<<"$(ldd "$tmp/$name/app")" ||
      { ldd "$tmp/$name/app"; fail "the consumer ($name) does not find the installed libhpcz.so"; }
  else
    [ "$want" = 0 ] || fail "the consumer ($name) does not link libhpcz.so"
  fi
  "$tmp/$name/app" || fail "the consumer ($name) failed"
}
consumer consumer "$shared"
consumer consumer_static 0 -DHPCZ_USE_STATIC_LIBS=ON
consumer consumer_static_target 0 -DHPCZ_CONSUMER_TARGET=hpcz::hpcz_static
if [ "$shared" = 1 ]; then
  consumer consumer_shared_target 1 -DHPCZ_CONSUMER_TARGET=hpcz::hpcz_shared
fi

# A Fortran program with hpcz::hpcz_fortran, where the build made the module (its hpcz.mod is installed).
if [ -f "$P/include/hpcz/fortran/hpcz.mod" ]; then
  cmake -S "$src/tests/install_consumer_fortran" -B "$tmp/fortran" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$P" \
        -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_EXE_LINKER_FLAGS="$link_flags" >"$tmp/configure.log" 2>&1 ||
    { cat "$tmp/configure.log"; fail "the Fortran consumer's find_package(hpcz) failed"; }
  cmake --build "$tmp/fortran" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "the Fortran consumer did not build"; }
  "$tmp/fortran/app" || fail "the Fortran consumer failed"
fi

if command -v pkg-config >/dev/null; then
  flags=$(PKG_CONFIG_PATH="$P/$libdir/pkgconfig" pkg-config --cflags --libs hpcz) || fail "pkg-config --cflags --libs hpcz failed"
  echo "pkg-config --cflags --libs hpcz: $flags"
  # shellcheck disable=SC2086  # the flags are words
  # An rpath, as a user of a library outside the loader's paths gives (or LD_LIBRARY_PATH).
  "$cxx" -std=c++17 -O1 "$src/tests/install_consumer/main.cpp" -o "$tmp/app_pc" $flags $link_flags \
    -Wl,-rpath,"$P/$libdir" || fail "the consumer did not build with pkg-config's flags"
  if [ "$shared" = 1 ]; then
    grep -q 'NEEDED.*libhpcz\.so' <<<"$(readelf -d "$tmp/app_pc")" || fail "pkg-config's flags do not link libhpcz.so"
  fi
  "$tmp/app_pc" || fail "the consumer (pkg-config) failed"
else
  echo "install test: no pkg-config, hpcz.pc not checked"
fi
echo "install test: OK"
