#!/bin/bash
# Executed count and stall samples of every SASS instruction of one kernel (ncu's source page as CSV, gzipped
# into $OUT); read it with bench/sass_regions.py. Same setting and variables as bench/ncu_encoder.sh.
export PATH=/usr/local/cuda/bin:$PATH
out=${OUT:-/tmp/hpcz_out}; mkdir -p "$out"
timeout 200 ncu --clock-control none --kernel-name-base function --kernel-name "regex:${KERNEL:-encode_kernel}" --launch-count 1 \
  --section SourceCounters --page source --print-source sass --csv build-gpu/hpcz bench --mode ${MODE:-fast} --quick \
  --data .data --fields ${FIELD:-era5} --bounds rel:1e-3 --reps 1 --size-mib 512 > "$out/sass.csv" 2>&1
echo "rc=$? lines=$(wc -l < "$out/sass.csv")"; gzip -9f "$out/sass.csv"
