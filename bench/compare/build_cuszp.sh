#!/usr/bin/env bash
# Builds public cuSZp (https://github.com/szcompressor/cuSZp) from a checkout for sm_90 (H100, H200):
# its static and shared libraries and its example programs, the `cuSZp` CLI copied to bench/ext/bin/.
# The checkout is never committed; keep it under bench/ext/ (git-ignored), e.g.
#   git clone https://github.com/szcompressor/cuSZp bench/ext/cuSZp && git -C bench/ext/cuSZp checkout 6ab90a5
# and carry bench/ext/cuSZp to the GPU machine.
#
# usage: bash bench/compare/build_cuszp.sh CUSZP_SRC [BUILD_DIR]     (BUILD_DIR default: bench/ext/cuszp-build)
# env: CUDA_ARCH (default 90), NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc), JOBS (default nproc)
#
# cuSZp's CMakeLists.txt sets CMAKE_CUDA_ARCHITECTURES to 60..86 itself, which a -D cannot override
# (and CUDA 13 no longer compiles for sm_60/70). So it is built as a subdirectory of a two-line wrapper
# project that sets every cuSZp target's CUDA_ARCHITECTURES afterwards; the checkout is left untouched.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
src="${1:-}"
[[ -n "$src" && -f "$src/CMakeLists.txt" && -f "$src/include/cuSZp.h" ]] || {
  echo "usage: $0 CUSZP_SRC [BUILD_DIR]  (CUSZP_SRC: a checkout of https://github.com/szcompressor/cuSZp)" >&2; exit 2; }
src="$(cd "$src" && pwd)"
build="${2:-$root/bench/ext/cuszp-build}"
arch="${CUDA_ARCH:-90}"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
[[ -x "$nvcc" ]] || { echo "build_cuszp.sh: no nvcc (set NVCC)" >&2; exit 1; }
mkdir -p "$build/wrapper" "$root/bench/ext/bin"
build="$(cd "$build" && pwd)"

cat >"$build/wrapper/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.21)
project(cuszp_for_hpcz_bench LANGUAGES CXX CUDA)
add_subdirectory("$src" cuSZp)
foreach(t cuSZp_static cuSZp_shared cuSZp cuSZp_test_f32_1D cuSZp_test_f32_2D cuSZp_test_f32_3D
          cuSZp_test_f64_1D cuSZp_test_f64_2D cuSZp_test_f64_3D)
  if(TARGET \${t})
    set_target_properties(\${t} PROPERTIES CUDA_ARCHITECTURES "$arch")
  endif()
endforeach()
EOF

rev="$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "cuSZp $rev from $src, sm_$arch, into $build"
cmake -S "$build/wrapper" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$nvcc" \
  -DCMAKE_INSTALL_PREFIX="$build/install" -DcuSZp_BUILD_EXAMPLES=ON
cmake --build "$build" -j "${JOBS:-$(nproc)}"
bin="$build/cuSZp/examples/bin/cuSZp"
[[ -x "$bin" ]] || { echo "build_cuszp.sh: $bin was not built" >&2; exit 1; }
cp -f "$bin" "$root/bench/ext/bin/cuSZp"
echo "$rev" >"$root/bench/ext/bin/cuSZp.version"
echo "built $root/bench/ext/bin/cuSZp (cuSZp $rev, sm_$arch); libraries in $build/cuSZp"
