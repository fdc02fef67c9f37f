#!/usr/bin/env bash
# Every test: the C++ build and its tests (ctest: unit, round trips, streaming, CLI), then the Python
# package built by pip into a virtual environment with what its tests need from PyPI, and pytest
# (numpy, numcodecs, Zarr, xarray with Dask, the HDF5 filter through h5py, h5dump and h5ls).
# Without a GPU the Python package is built CPU-only (its tests could not use CUDA; the C++ build
# above already compiles the CUDA code where nvcc is found).
set -euo pipefail
cd "$(dirname "$0")/.."
# The HDF5 filter builds against HDF5's headers; its tests run h5dump, h5ls, netCDF-C, ncdump and
# parallel HDF5 under MPI (Debian packages).
debs=(libhdf5-dev hdf5-tools libnetcdf-dev netcdf-bin libhdf5-openmpi-dev openmpi-bin)
if ! ls /usr/include/hdf5/serial/H5PLextern.h /usr/include/netcdf_filter.h /usr/include/hdf5/openmpi/H5FDmpio.h \
       >/dev/null 2>&1 || ! command -v h5dump >/dev/null || ! command -v ncdump >/dev/null ||
   ! command -v mpirun >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "${debs[@]}" >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get install -y -qq "${debs[@]}" >/dev/null; }
  else
    echo "test-all: ${debs[*]} are missing: the HDF5 filter and its tests are left out" >&2
  fi
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
(cd build && ctest --output-on-failure)

venv=build/venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" 2>/dev/null || {
    rm -rf "$venv"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then  # Debian's python3 lacks venv
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    fi
    python3 -m venv "$venv"
  }
fi
"$venv/bin/python" -m pip install -q --upgrade pip
pyargs=(-C build-dir=build/python)
nvidia-smi -L >/dev/null 2>&1 || pyargs+=(-C cmake.define.HPCZ_CUDA=OFF)
"$venv/bin/python" -m pip install -q "${pyargs[@]}" ".[test]"
"$venv/bin/python" -m pytest -q python/tests
