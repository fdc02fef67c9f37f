#!/usr/bin/env bash
# The host path, file to file, against the limits of the machine it runs on: a real field tiled along its
# slowest axis to GIB GiB in DIR (page cache or /dev/shm), compressed and decompressed by the hpcz CLI on
# the GPU and on the CPU backend (wall time of the whole command), zstd -T0 -1 on the same file when
# present; the limits (bench/host/limits.cu: pinned copies each way, multi-threaded memcpy, write into
# DIR) measured in the same run; every figure (the median of REPS=3 runs) as GB/s of the array and as a
# fraction of the tightest.
# usage: bench/host/file_to_file.sh HPCZ_BIN [GIB=8] [DIR=/dev/shm] [FIELD=.data/weather-era5_t2m_uk_hourly_744x33x49_f32.bin]
#                                   [BOUND=--rel 1e-3] [LIMITS_BIN=bench/ext/bin/limits, built with nvcc when missing]
set -u
hpcz=$1 gib=${2:-8} dir=${3:-/dev/shm} field=${4:-.data/weather-era5_t2m_uk_hourly_744x33x49_f32.bin}
bound=${5:---rel 1e-3} limits=${6:-bench/ext/bin/limits}
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ ! -x "$limits" ]; then
  mkdir -p "$(dirname "$limits")"
  nvcc -O2 -std=c++17 -o "$limits" "$root/bench/host/limits.cu" || { echo "cannot build $limits"; exit 3; }
fi
in=$dir/hpcz-f2f.bin arc=$dir/hpcz-f2f.hpcz back=$dir/hpcz-f2f.out
trap 'rm -f "$in" "$arc" "$back" "$in.zst" "$dir/hpcz-f2f.err"' EXIT
. "$(dirname "$0")/tile.sh"
tile_field "$field" $((gib * 1073741824)) "$in"
bytes=$(stat -c %s "$in")
echo "# file to file: $name tiled ${copies}x to $tiled_dims ($bytes bytes) in $dir, $bound; $(nproc) CPU cores"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/# GPU: /'
declare -A lim
while read -r k v; do lim[$k]=$v; echo "limit $k $v GB/s"; done < <("$limits" 4 "$dir")
tight=$(printf '%s\n' "${lim[@]}" | sort -g | head -1)
reps=${REPS:-3}
run() {  # run NAME OUTPUT command...: OUTPUT (or -) removed before each of $reps runs; the median wall time
  # of the whole command (a first run pays for the file system's first page allocations), GB/s of the
  # array, fraction of the tightest limit, and every run's time
  local what=$1 out=$2; shift 2
  local times=()
  for ((r = 0; r < reps; ++r)); do
    [ "$out" != - ] && rm -f "$out"
    local t0=$(date +%s.%N)
    "$@" >/dev/null 2>"$dir/hpcz-f2f.err" || { echo "$what FAILED: $(tail -1 "$dir/hpcz-f2f.err")"; return 1; }
    local t1=$(date +%s.%N)
    times+=("$(python3 -c "print($t1 - $t0)")")
  done
  python3 -c "import sys, statistics; ts=[float(x) for x in sys.argv[2:]]; t=statistics.median(ts); g=$bytes/t/1e9; print(f'{sys.argv[1]:<28} {t:7.3f} s {g:7.2f} GB/s  {g/$tight:5.2f} of the tightest limit ($tight GB/s); runs', ' '.join(f'{x:.3f}' for x in ts))" "$what" "${times[@]}"
}
# Every GPU, the first alone (when there are several), the CPU backend.
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
devs=(gpu); [ "$gpus" -gt 1 ] && devs+=(gpu0); devs+=(cpu)
for dev in "${devs[@]}"; do
  case $dev in gpu) sel=(--device gpu); label="gpu x$gpus";; gpu0) sel=(--gpus 0); label="gpu x1";; *) sel=(--device cpu); label=cpu;; esac
  for mode in fast ratio; do
    run "compress $mode $label" "$arc" "$hpcz" compress -i "$in" -o "$arc" -t "$dtype" -d "$tiled_dims" $bound --mode $mode "${sel[@]}" -f -q || continue
    echo "  CR $(python3 -c "print(round($bytes / $(stat -c %s "$arc"), 3))")"
    run "decompress $mode $label" "$back" "$hpcz" decompress -i "$arc" -o "$back" "${sel[@]}" -f -q
    run "  decode only (test) $mode $label" - "$hpcz" test "$arc" "${sel[@]}" -q
  done
done
# Where a run's time goes and what it holds: verbose runs of each direction on every GPU and on one.
for sel in "--device gpu" "--gpus 0"; do
  echo "# $sel:"
  "$hpcz" compress -i "$in" -o "$arc" -t "$dtype" -d "$tiled_dims" $bound $sel -f --verbose 2>&1 | sed 's/^/#   /'
  "$hpcz" decompress -i "$arc" -o "$back" $sel -f --verbose 2>&1 | sed 's/^/#   /'
done
# The CPU backend in memory (hpcz bench: the same field tiled to 512 MiB), for the file-to-file ratio.
"$hpcz" bench --mode fast --device cpu --data "$(dirname "$field")" --fields "$(basename "$field" .bin | cut -d_ -f1-2)" \
  --bounds "rel:1e-3" --size-mib 512 --reps 3 2>&1 | grep -E "^\|" | sed 's/^/# cpu in memory (fast): /'
"$hpcz" bench --mode ratio --device cpu --data "$(dirname "$field")" --fields "$(basename "$field" .bin | cut -d_ -f1-2)" \
  --bounds "rel:1e-3" --size-mib 512 --reps 3 2>&1 | grep -E "^\|" | sed 's/^/# cpu in memory (ratio): /'
if command -v zstd >/dev/null; then
  reps=1  # zstd's decompression is single-threaded: one run each
  run "zstd -T0 -1" "$in.zst" zstd -T0 -1 -q -f "$in" -o "$in.zst"
  run "zstd -d -T0" "$back" zstd -d -T0 -q -f "$in.zst" -o "$back"
fi
