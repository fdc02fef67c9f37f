#!/usr/bin/env bash
# Nsight Compute summary of the fast-mode kernels on one tiled field (era5 t2m, rel 1e-3, 512 MiB).
# usage (GPU machine, repo root, fields staged in .data/): bench/profile.sh [OUTDIR]
set -u
out=${1:-${OUT:-/tmp/hpcz_out}}
mkdir -p "$out"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null 2>&1
cmake --build build-gpu -j 16 --target hpcz_cli >/dev/null 2>&1 || exit 1
timeout 400 ncu --clock-control none -k "regex:encode_kernel|decode_kernel|range_kernel" -c 6 \
  --section SpeedOfLight --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis \
  build-gpu/hpcz bench --data .data --fields era5 --bounds rel:1e-3 --size-mib 512 --reps 1 >"$out/ncu.txt" 2>&1
echo "ncu rc=$?"
grep -E "encode_kernel|decode_kernel|range_kernel|Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Executed Ipc Active|Stall|No Eligible|Block Limit" "$out/ncu.txt" | head -90
