#!/usr/bin/env bash
# Aggregate write throughput of one chunked, filtered HDF5 dataset written collectively under MPI by 1,
# 2 and 4 ranks (tests/mpi_filter_test.cpp: the bundled sample tiled COPIES times along its slowest
# axis, ratio mode, abs 0.05), each rank with cores/ranks OpenMP threads; rank 0 checks the bound.
# usage: bench/hdf5/mpi_write.sh BUILD_DIR [COPIES=100] [OUT_DIR=/dev/shm]
set -euo pipefail
build=$1 copies=${2:-100} dir=${3:-/dev/shm}
root=$(cd "$(dirname "$0")/../.." && pwd)
cores=$(nproc)
echo "# $(basename "$0") on $(hostname): $cores cores; $(mpirun --version 2>&1 | head -1)"
for ranks in 1 2 4; do
  threads=$(( cores / ranks > 0 ? cores / ranks : 1 ))
  HDF5_PLUGIN_PATH=$build OMP_NUM_THREADS=$threads OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun -np $ranks --oversubscribe "$build/tests/mpi_filter_test" "$root/data/climate-ncar_csm_b003_ts_100x64x128_f32.bin" \
    "$dir/hpcz-mpi-bench.h5" "$copies" | sed "s/^/$threads threads a rank: /"
done
rm -f "$dir/hpcz-mpi-bench.h5"
