#!/usr/bin/env bash
# Every test: the C++ build and its tests (ctest: unit, round trips, streaming, CLI), then the Python
# package built by pip into a virtual environment with what its tests need from PyPI, and pytest
# (numpy, numcodecs, Zarr, xarray with Dask, the HDF5 filter through h5py, h5dump and h5ls).
# Without a GPU the Python package is built CPU-only (its tests could not use CUDA; the C++ build
# above already compiles the CUDA code where nvcc is found).
set -euo pipefail
cd "$(dirname "$0")/.."
# The HDF5 filter's tests build against HDF5's and netCDF's headers and libraries and run h5dump, h5ls,
# ncdump and parallel HDF5 under MPI (Debian packages; README, "Tests" under Install).
# gfortran builds the Fortran module and its test.
debs=(libhdf5-dev hdf5-tools libnetcdf-dev netcdf-bin libhdf5-openmpi-dev openmpi-bin gfortran)
if ! ls /usr/include/hdf5/serial/H5PLextern.h /usr/include/netcdf_filter.h /usr/include/hdf5/openmpi/H5FDmpio.h \
       >/dev/null 2>&1 || ! command -v h5dump >/dev/null || ! command -v ncdump >/dev/null ||
   ! command -v mpirun >/dev/null || ! command -v gfortran >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "test-all: apt-get install ${debs[*]} (HDF5 and netCDF headers and tools, parallel HDF5, MPI: the HDF5 filter's tests; gfortran: the Fortran module's)" >&2
    export DEBIAN_FRONTEND=noninteractive
    # apt's progress is dropped, its errors are shown; a failed install is retried after an update.
    apt-get install -y -qq "${debs[@]}" >/dev/null ||
      { apt-get update -qq >/dev/null && apt-get install -y -qq "${debs[@]}" >/dev/null; }
  else
    echo "test-all: some of ${debs[*]} are missing: the HDF5 filter's C, netCDF and MPI tests or the Fortran test are left out" >&2
  fi
fi
# The CUDA kernels for this machine's GPUs only, or without one (CI) for sm_90 only: a build for every
# supported GPU (the default, HPCZ_CUDA_ARCHS in CMakeLists.txt) compiles each kernel six times.
archs=90
nvidia-smi -L >/dev/null 2>&1 && archs=native
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DHPCZ_CUDA_ARCHS=$archs
cmake --build build -j"$(nproc)"
(cd build && ctest --output-on-failure)

venv=build/venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" 2>/dev/null || {
    rm -rf "$venv"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then  # Debian's python3 lacks venv
      echo "test-all: apt-get install python3-venv (the virtual environment for the Python tests)" >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    fi
    python3 -m venv "$venv"
  }
fi
"$venv/bin/python" -m pip install -q --upgrade pip
pyargs=(-C build-dir=build/python)
nvidia-smi -L >/dev/null 2>&1 && pyargs+=(-C cmake.define.HPCZ_CUDA_ARCHS=native) || pyargs+=(-C cmake.define.HPCZ_CUDA=OFF)
echo "test-all: pip install .[test] into $venv (the test extra of pyproject.toml, from PyPI)" >&2
"$venv/bin/python" -m pip install -q "${pyargs[@]}" ".[test]"
"$venv/bin/python" -m pytest -q python/tests
