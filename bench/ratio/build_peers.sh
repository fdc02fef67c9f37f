#!/usr/bin/env bash
# Builds the CPU ratio peers of issue 46 from their public sources (never committed): SZ3 3.3.2, HPEZ
# (QoZ 2.0, szcompressor/QoZ) and SPERR 0.8.5, into OUT/bin (sz3, qoz, sperr2d, sperr3d).
# usage: bench/ratio/build_peers.sh OUT [SRC]
#   SRC: a folder holding checkouts named SZ3, QoZ, SPERR and CLI11 (git repositories with the tags
#   below); without it they are cloned from GitHub into OUT/src.
# Needs cmake, a C++17 compiler, git and libzstd-dev (SZ3 is built against the system zstd, as
# -DSZ3_USE_BUNDLED_ZSTD=OFF asks).
set -euo pipefail
out=$(mkdir -p "$1" && cd "$1" && pwd)
src=${2:-}
jobs=$(nproc)
mkdir -p "$out/bin" "$out/src"

# checkout NAME URL REV [PATHSPEC...]: a clean tree of REV (those paths only) in OUT/src/NAME.
checkout() {
  local name=$1 url=$2 rev=$3 dst="$out/src/$1"
  shift 3
  rm -rf "$dst" && mkdir -p "$dst"
  if [ -n "$src" ] && [ -d "$src/$name" ]; then
    git -C "$src/$name" archive "$rev" -- "$@" | tar -x -C "$dst"
  else
    git clone -q "$url" "$dst.git" && git -C "$dst.git" archive "$rev" -- "$@" | tar -x -C "$dst" && rm -rf "$dst.git"
  fi
}

# SZ3 3.3.2: its sz3 command-line tool.
checkout SZ3 https://github.com/szcompressor/SZ3 v3.3.2 .
cmake -S "$out/src/SZ3" -B "$out/build/SZ3" -DCMAKE_BUILD_TYPE=Release -DSZ3_USE_BUNDLED_ZSTD=OFF \
  -DBUILD_TESTING=OFF >"$out/build-SZ3.log" 2>&1
cmake --build "$out/build/SZ3" -j"$jobs" --target sz3 >>"$out/build-SZ3.log" 2>&1
cp "$(find "$out/build/SZ3" -name sz3 -type f -perm -u+x | head -1)" "$out/bin/sz3"

# HPEZ (QoZ 2.0, the repository's head): its qoz tool (-q 4 is HPEZ). Two repairs that leave the
# interpolation path as it is: the regression predictor's generated coefficient table (a large file some
# mirrors lack; the interpolation compressor never reads it) as empty tables, and <array> for GCC 12.
checkout QoZ https://github.com/szcompressor/QoZ a506cb0 . ':!include/QoZ/predictor/PolyRegressionCoeffAux.hpp'
aux="$out/src/QoZ/include/QoZ/predictor/PolyRegressionCoeffAux.hpp"
if [ ! -s "$aux" ]; then
  printf '#pragma once\n// Stub (bench/ratio/build_peers.sh): the regression predictor'"'"'s tables, unused by interpolation.\nstatic float COEFF_1D[0];\nstatic float COEFF_2D[0];\nstatic float COEFF_3D[0];\n' >"$aux"
fi
grep -q '#include <array>' "$out/src/QoZ/include/QoZ/utils/Config.hpp" ||
  sed -i '0,/#include/s//#include <array>\n#include/' "$out/src/QoZ/include/QoZ/utils/Config.hpp"
cmake -S "$out/src/QoZ" -B "$out/build/QoZ" -DCMAKE_BUILD_TYPE=Release >"$out/build-QoZ.log" 2>&1
cmake --build "$out/build/QoZ" -j"$jobs" --target qoz >>"$out/build-QoZ.log" 2>&1
cp "$(find "$out/build/QoZ" -name qoz -type f -perm -u+x | head -1)" "$out/bin/qoz"

# SPERR 0.8.5: sperr2d and sperr3d (CLI11 at the commit its CMakeLists names, given to FetchContent).
checkout SPERR https://github.com/NCAR/SPERR v0.8.5 . ':!test_data'  # its test data: large, unused here
checkout CLI11 https://github.com/CLIUtils/CLI11 37bb6edc5317e99af72ef48405e65d9ca5218861 .
cmake -S "$out/src/SPERR" -B "$out/build/SPERR" -DCMAKE_BUILD_TYPE=Release -DBUILD_UNIT_TESTS=OFF \
  -DUSE_OMP=OFF -DFETCHCONTENT_SOURCE_DIR_CLI11="$out/src/CLI11" >"$out/build-SPERR.log" 2>&1
cmake --build "$out/build/SPERR" -j"$jobs" --target sperr2d sperr3d >>"$out/build-SPERR.log" 2>&1
cp "$out/build/SPERR/bin/sperr2d" "$out/build/SPERR/bin/sperr3d" "$out/bin/"

for b in sz3 qoz sperr2d sperr3d; do [ -x "$out/bin/$b" ] && echo "built $out/bin/$b"; done
