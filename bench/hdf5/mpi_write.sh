#!/usr/bin/env bash
# Aggregate write throughput of one chunked, filtered HDF5 dataset written collectively under MPI by 1,
# 2 and 4 ranks (tests/mpi_filter_test.cpp: the bundled sample tiled COPIES times along its slowest
# axis, ratio mode, abs 0.05, chunks of CHUNK_ROWS x 64 x 128 floats), each rank with cores/ranks OpenMP
# threads; rank 0 checks the bound. The filter codes chunks of 4 MiB or more on the GPU where it sees one:
# GPUS=n gives rank r the GPU r mod n alone (CUDA_VISIBLE_DEVICES, as job launchers do), GPUS=0 none.
# usage: [GPUS=n] bench/hdf5/mpi_write.sh BUILD_DIR [COPIES=100] [OUT_DIR=/dev/shm] [CHUNK_ROWS=25]
set -euo pipefail
build=$1 copies=${2:-100} dir=${3:-/dev/shm} chunk_rows=${4:-25}
root=$(cd "$(dirname "$0")/../.." && pwd)
cores=$(nproc)
echo "# $(basename "$0") on $(hostname): $cores cores; $(mpirun --version 2>&1 | head -1); GPUS=${GPUS-unset}"
launch=()
if [[ -n ${GPUS-} ]]; then
  if (( GPUS > 0 )); then
    launch=(bash -c 'export CUDA_VISIBLE_DEVICES=$(( OMPI_COMM_WORLD_LOCAL_RANK % '"$GPUS"' )); exec "$@"' rank)
  else
    launch=(env CUDA_VISIBLE_DEVICES=)
  fi
fi
for ranks in 1 2 4; do
  threads=$(( cores / ranks > 0 ? cores / ranks : 1 ))
  HDF5_PLUGIN_PATH=$build OMP_NUM_THREADS=$threads OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun -np $ranks --oversubscribe "${launch[@]}" "$build/tests/mpi_filter_test" \
    "$root/data/climate-ncar_csm_b003_ts_100x64x128_f32.bin" "$dir/hpcz-mpi-bench.h5" "$copies" "$chunk_rows" |
    sed "s/^/$threads threads a rank: /"
done
rm -f "$dir/hpcz-mpi-bench.h5"
