#!/usr/bin/env bash
# sm_90 cubins of .cu files with the library's CUDA flags (CMakeLists.txt), for bench/cubin/compare.py:
# build the tree before a change and after it at the same path, then compare file by file.
# usage: bench/cubin/build.sh SRC_TREE OUTDIR FILE.cu...   (e.g. src/codecs/ratio_class/engine_gpu.cu)
set -u
src=$1 out=$2
shift 2
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$src" || exit 1
for f in "$@"; do
  b=$(basename "$f" .cu)
  nvcc -cubin -arch=sm_90 -O3 -DNDEBUG -std=c++17 -fmad=false --expt-relaxed-constexpr -DHPCZ_HAS_CUDA=1 -I include -I src \
    -Xcompiler -fopenmp -o "$out/$b.cubin" "$f" 2>"$out/$b.err"
  echo "$b rc=$?"
done
