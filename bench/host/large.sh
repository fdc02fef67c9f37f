#!/usr/bin/env bash
# An array larger than the GPU's memory, file to file: a real field tiled along its slowest axis to GB
# gigabytes in DIR, compressed on every GPU within a memory budget, the input removed, decompressed,
# and every value checked against the field (check_tiled.cpp, so the tiled original need not stay on
# disk). Reports wall times and the peak host memory of each run. CHECK_BIN: g++ -O2 -fopenmp -std=c++17
# -o check_tiled bench/host/check_tiled.cpp
# usage: bench/host/large.sh HPCZ_BIN CHECK_BIN [GB=100] [DIR=/dev/shm] [FIELD=.data/weather-era5_t2m_uk_hourly_744x33x49_f32.bin]
#                            [BOUND=--rel 1e-3] [GPU_MEMORY=4G]
set -u
hpcz=$1 checker=$2 gb=${3:-100} dir=${4:-/dev/shm} field=${5:-.data/weather-era5_t2m_uk_hourly_744x33x49_f32.bin}
bound=${6:---rel 1e-3} budget=${7:-4G}
in=$dir/hpcz-large.bin arc=$dir/hpcz-large.hpcz back=$dir/hpcz-large.out
trap 'rm -f "$in" "$arc" "$back"' EXIT
. "$(dirname "$0")/tile.sh"
tile_field "$field" $((gb * 1000000000)) "$in"
bytes=$(stat -c %s "$in")
echo "# large: $name tiled ${copies}x to $tiled_dims ($bytes bytes) in $dir, $bound, GPU memory budget $budget"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/# GPU: /'
t0=$(date +%s.%N)
"$hpcz" compress -i "$in" -o "$arc" -t "$dtype" -d "$tiled_dims" $bound --device gpu --gpu-memory "$budget" -f --verbose 2>&1 | sed 's/^/compress: /'
t1=$(date +%s.%N)
rm -f "$in"
"$hpcz" decompress -i "$arc" -o "$back" --device gpu --gpu-memory "$budget" -f --verbose 2>&1 | sed 's/^/decompress: /'
t2=$(date +%s.%N)
eb=$("$hpcz" info --json "$arc" | python3 -c 'import json,sys; print(repr(json.load(sys.stdin)["eb_abs"]))')
echo "archive $(stat -c %s "$arc") bytes, eb_abs $eb"
"$checker" "$field" "$dtype" "$back" "$eb" | sed 's/^/check: /'
echo "check exit ${PIPESTATUS[0]}"
python3 -c "print(f'compress {$t1-$t0:.1f} s = {$bytes/($t1-$t0)/1e9:.2f} GB/s; decompress {$t2-$t1:.1f} s = {$bytes/($t2-$t1)/1e9:.2f} GB/s')"
