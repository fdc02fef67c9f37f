#!/usr/bin/env bash
# Builds the comparison benchmarks into bench/ext/bin/ (git-ignored).
#   nvcomp_deflate_bench  needs nvcc and the carried nvCOMP under bench/ext/nvcomp/{include,lib}
#   libdeflate_bench      needs g++ and libdeflate under bench/ext/libdeflate/{include,lib}
#                         (or a system libdeflate-dev); a prebuilt static binary may already be there,
#                         and it is kept if the rebuild fails.
# Usage (from anywhere): bash bench/compare/build.sh [nvcomp|libdeflate|all]   (default: all)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
ext="$root/bench/ext"
bin="$ext/bin"
what="${1:-all}"
mkdir -p "$bin"

NVCC="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
CXX="${CXX:-g++}"

build_nvcomp() {
  local inc="$ext/nvcomp/include" lib="$ext/nvcomp/lib/libnvcomp.so.6"
  [[ -f "$inc/nvcomp/deflate.h" && -f "$lib" ]] || { echo "build.sh: nvCOMP not found under $ext/nvcomp" >&2; return 1; }
  # The .cu holds no kernels; the arch list only matters for nvcc's checks.
  # cudart is linked statically (nvcc's default, made explicit) so no libcudart.so is needed at run time;
  # libnvcomp.so.6 is found through the rpath $ORIGIN/../nvcomp/lib.
  "$NVCC" -O2 -std=c++17 -arch=sm_90 -cudart static \
    -I"$here" -I"$inc" "$here/nvcomp_deflate_bench.cu" \
    -L"$(dirname "$lib")" -Xlinker -l:libnvcomp.so.6 \
    -Xlinker -rpath -Xlinker '$ORIGIN/../nvcomp/lib' \
    -o "$bin/nvcomp_deflate_bench"
  echo "built $bin/nvcomp_deflate_bench"
}

build_libdeflate() {
  local inc=() lib=""
  if [[ -f "$ext/libdeflate/include/libdeflate.h" && -f "$ext/libdeflate/lib/libdeflate.a" ]]; then
    inc=(-I"$ext/libdeflate/include"); lib="$ext/libdeflate/lib/libdeflate.a"
  elif [[ -f /usr/include/libdeflate.h ]]; then
    lib="-ldeflate"
  else
    echo "build.sh: no libdeflate headers; keeping $bin/libdeflate_bench if present" >&2
    [[ -x "$bin/libdeflate_bench" ]]; return
  fi
  local tmp="$bin/.libdeflate_bench.tmp"
  # Fully static first (runs on any x86-64 Linux); else static libstdc++/libgcc only.
  if "$CXX" -O2 -std=c++17 -march=x86-64 -static -pthread -I"$here" "${inc[@]}" \
       "$here/libdeflate_bench.cpp" $lib -o "$tmp" 2>/dev/null ||
     "$CXX" -O2 -std=c++17 -march=x86-64 -static-libstdc++ -static-libgcc -pthread -I"$here" "${inc[@]}" \
       "$here/libdeflate_bench.cpp" $lib -o "$tmp"; then
    mv -f "$tmp" "$bin/libdeflate_bench"
    echo "built $bin/libdeflate_bench"
  else
    rm -f "$tmp"
    echo "build.sh: libdeflate_bench rebuild failed; keeping the prebuilt one if present" >&2
    [[ -x "$bin/libdeflate_bench" ]]
  fi
}

case "$what" in
  nvcomp) build_nvcomp ;;
  libdeflate) build_libdeflate ;;
  all) build_libdeflate; build_nvcomp ;;
  *) echo "usage: $0 [nvcomp|libdeflate|all]" >&2; exit 2 ;;
esac
