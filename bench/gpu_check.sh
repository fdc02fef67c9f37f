#!/usr/bin/env bash
# One device call: build, GPU tests, compute-sanitizer, A/B runs, profiles; the published benchmarks
# through bench/run.sh (compared with bench/results/, nothing written there).
# usage (on the GPU machine, repo root, shared fields staged in .data/):
#   bench/gpu_check.sh [OUTDIR] [STAGES]     STAGES: any of build,tests,sanitize,sanitize-ratio,lossless-check,
#     bench-fast,bench-ratio,lossless-bench,lossless,ab-ratio,ab-fast,ab-lossless,ncu,ncu-fast,ncu-lossless,
#     ncu-deflate-ab,ncu-deflate-source,nsys,kernel-times
# lossless runs the lossless GPU tests and sanitizers, then the bench; lossless-check only the tests and
# sanitizers, lossless-bench only the bench. bench-fast, bench-ratio and lossless-bench run bench/run.sh
# --no-build --no-write on build-gpu (lossless with nvCOMP and libdeflate on the same chunks when bench/ext/
# was carried); its run.log and outputs land in OUTDIR/bench. ab-*: AB_BASE, AB_ROUNDS, AB_EXTRA (see the stage).
# PACK=1: everything written under OUTDIR ends in one all.tgz (the device tool returns at most 8 files).
set -u
out=${1:-${OUT:-/tmp/hpcz_out}}
stages=${2:-build,tests,sanitize,bench-fast,bench-ratio}
has() { [[ ",$stages," == *",$1,"* ]]; }
mkdir -p "$out"
export HPCZ_SHARED_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
if has build; then
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
  cmake --build build-gpu -j 16 >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
  cuobjdump --dump-resource-usage build-gpu/tests/hpcz_tests 2>/dev/null | grep -E "Function|REG|STACK" >"$out/resources.txt"
fi
if has tests; then
  echo "== tests (GPU present) =="
  timeout 200 build-gpu/tests/hpcz_tests >"$out/tests.log" 2>&1; echo "tests rc=$?"; tail -1 "$out/tests.log"
  grep -E "FAIL|CHECK" "$out/tests.log" | head -20
  (cd build-gpu && ctest -R cli --output-on-failure >"$out/ctest_cli.log" 2>&1; echo "cli rc=$?")
fi
if has sanitize; then
  echo "== compute-sanitizer (memcheck) on GPU round trips, adversarial arrays, corrupt archives, goldens =="
  timeout 180 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/hpcz_tests adv_special adv_lengths \
    corrupt_magic corrupt_sealed corrupt_ratio golden_ unit_huffman_gpu >"$out/sanitizer.log" 2>&1
  echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|passed" "$out/sanitizer.log" | tail -3
  timeout 90 compute-sanitizer --tool racecheck --error-exitcode 9 build-gpu/tests/hpcz_tests adv_lengths golden_ >"$out/racecheck.log" 2>&1
  echo "racecheck rc=$?"; grep -E "ERROR SUMMARY|RACE" "$out/racecheck.log" | tail -3
fi
if has sanitize-ratio; then
  echo "== compute-sanitizer on the ratio mode's GPU round trips of the real fields (every kernel, both ways) =="
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/hpcz_tests \
    roundtrip_ratio_real_fields_gpu >"$out/sanitizer-ratio.log" 2>&1
  echo "ratio memcheck rc=$?"; grep -E "ERROR SUMMARY|passed" "$out/sanitizer-ratio.log" | tail -2
  timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 build-gpu/tests/hpcz_tests \
    roundtrip_ratio_real_fields_gpu >"$out/racecheck-ratio.log" 2>&1
  echo "ratio racecheck rc=$?"; grep -E "RACECHECK SUMMARY|passed" "$out/racecheck-ratio.log" | tail -2
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/hpcz_tests \
    roundtrip_ratio_multichunk >"$out/sanitizer-ratio-multichunk.log" 2>&1
  echo "ratio multichunk memcheck rc=$?"; grep -E "ERROR SUMMARY|passed" "$out/sanitizer-ratio-multichunk.log" | tail -2
fi
if has lossless || has lossless-check; then
  echo "== lossless: GPU == CPU on valid and damaged chunks, sanitizers =="
  timeout 150 build-gpu/tests/hpcz_tests unit_lossless roundtrip_lossless unit_orc unit_inflate >"$out/lossless-tests.log" 2>&1
  echo "lossless tests rc=$?"; grep -E "GPU ==|passed|FAIL|mismatch" "$out/lossless-tests.log" | head -12
  HPCZ_LOSSLESS_CORPUS=20000 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/hpcz_tests \
    roundtrip_lossless >"$out/lossless-memcheck.log" 2>&1
  echo "lossless memcheck rc=$?"; grep -E "ERROR SUMMARY|GPU ==" "$out/lossless-memcheck.log" | tail -2
  HPCZ_LOSSLESS_CORPUS=20000 HPCZ_LOSSLESS_BIG=0 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 build-gpu/tests/hpcz_tests \
    roundtrip_lossless >"$out/lossless-racecheck.log" 2>&1
  echo "lossless racecheck rc=$?"; grep -E "ERROR SUMMARY|RACE|GPU ==" "$out/lossless-racecheck.log" | tail -3
fi
for mode in ratio fast lossless; do
  # A/B in one call: AB_BASE (a binary built from the commit before the change) and build-gpu/hpcz
  # alternate, AB_ROUNDS times each, throughput only (--quick; lossless: the Deflate and RLE rows).
  has ab-$mode || continue
  [ -x "${AB_BASE:-}" ] || { echo "ab-$mode: AB_BASE is not an executable"; continue; }
  echo "== A/B $mode (--quick): base $AB_BASE against build-gpu/hpcz, ${AB_ROUNDS:-2} rounds =="
  for r in $(seq 1 ${AB_ROUNDS:-2}); do
    for side in base new ${AB_EXTRA:-}; do  # AB_EXTRA: more binaries (paths), named by their folder
      bin=build-gpu/hpcz; [ $side = base ] && bin=$AB_BASE
      [ -x "$side" ] && { bin=$side; side=$(basename "$(dirname "$side")"); }
      q=--quick; [ $mode = lossless ] && q=--no-second-stage
      timeout 150 $bin bench --mode $mode $q --data .data --size-mib 512 --reps 10 ${AB_FIELDS:+--fields $AB_FIELDS} \
        --out "$out/ab-$mode-$side-$r.md" >"$out/ab-$mode-$side-$r.log" 2>&1
      echo "$side round $r rc=$?: $(grep -iE '^mean|geometric mean' "$out/ab-$mode-$side-$r.md" 2>/dev/null | tr '\n' ' ')"
    done
    # new against base, row by row (bench/compare_baseline.py: slower rows and means, CR changes)
    python3 bench/compare_baseline.py --quiet "$out/ab-$mode-base-$r.md" "$out/ab-$mode-new-$r.md" 2>&1 | tail -1
  done
done
bench_modes=""
has bench-fast && bench_modes+=,fast
has bench-ratio && bench_modes+=,ratio
{ has lossless || has lossless-bench; } && bench_modes+=,lossless
if [ -n "$bench_modes" ]; then
  # The published benchmarks at the README's settings, each compared with its baseline in bench/results/.
  echo "== bench ${bench_modes#,} (bench/run.sh) =="
  bench/run.sh --device gpu --no-build --no-write --build-dir build-gpu --data .data --modes "${bench_modes#,}" --out "$out/bench"
  echo "bench rc=$? (0 clean, 1 flagged, 3 failed)"
fi
if has ncu; then
  echo "== ncu: per-kernel time, ratio mode, era5 rel 1e-3 (first compress + first decompress) =="
  ncu --metrics gpu__time_duration.sum build-gpu/hpcz bench --mode ratio --data .data --fields era5 --bounds rel:1e-3 \
    --reps 1 --size-mib 512 >"$out/ncu-raw.txt" 2>&1
  awk '/^  [^ ].*\(.*Context/ {n=$0; sub(/^  (void )?/, "", n); sub(/\(.*/, "", n)} /gpu__time_duration.sum/ {printf "%-45s %s %s\n", n, $(NF-1), $NF}' \
    "$out/ncu-raw.txt" | sed -E 's/^cub::DeviceScan(Init)?Kernel<[^ ]*/cub::scan/' | awk '!seen[$1]++' | tee "$out/ncu-stages.txt"
fi
if has ncu-fast; then
  # NCU_MODE, NCU_KERNELS, NCU_FIELD, NCU_BOUND pick another kernel (default: the fast mode's two).
  nm=${NCU_MODE:-fast} nf=${NCU_FIELD:-era5} nb=${NCU_BOUND:-rel:1e-3}
  echo "== ncu: $nm-mode kernels ${NCU_KERNELS:-encode_kernel decode_kernel} ($nf $nb, first call of each) =="
  for k in ${NCU_KERNELS:-encode_kernel decode_kernel}; do
    timeout 120 ncu --kernel-name-base function --kernel-name "regex:$k" --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
      --section InstructionStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section SourceCounters \
      build-gpu/hpcz bench --mode $nm --quick --data .data --fields $nf --bounds $nb --reps 1 --size-mib 512 >"$out/ncu-$nm-$k.txt" 2>&1
    grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Warp Cycles Per Issued|Executed Ipc A|No Eligible|Executed Instructions  |DRAM Throughput|Local" "$out/ncu-$nm-$k.txt" | head -24
    # executed count of every SASS instruction, to see where the instructions go
    timeout 120 ncu --kernel-name-base function --kernel-name "regex:$k" --launch-count 1 --section SourceCounters \
      --page source --print-source sass --csv build-gpu/hpcz bench --mode $nm --quick --data .data --fields $nf --bounds $nb \
      --reps 1 --size-mib 512 >"$out/ncu-$nm-$k-sass.csv" 2>&1
    echo "sass page rc=$? lines=$(wc -l <"$out/ncu-$nm-$k-sass.csv")"
  done
fi
if has ncu-lossless; then
  echo "== ncu: the Deflate and RLE v1 batch kernels (era5 bytes / q1e-5) =="
  for k in 2 0; do
    timeout 120 ncu --kernel-name-base demangled --kernel-name "regex:batch_kernel<\\(int\\)$k" --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
      --section InstructionStats build-gpu/hpcz_bench_internal --mode lossless --data .data --fields era5 --reps 1 --size-mib 512 \
      --no-second-stage >"$out/ncu-lossless-$k.txt" 2>&1
    grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Warp Cycles Per Issued|Executed Ipc A|No Eligible|Stall|Executed Instructions  " "$out/ncu-lossless-$k.txt" | head -24
  done
fi
if has ncu-deflate-ab; then
  # The Deflate kernel's totals (instructions, occupancy, stalls) on NCU_FIELD for AB_BASE and build-gpu/hpcz.
  f=${NCU_FIELD:-wrf}
  for bin in ${AB_BASE:-} build-gpu/hpcz; do
    echo "== $bin ($f) =="
    # The lossless bench is hpcz_bench_internal's beside hpcz; a base built before it moved has it in hpcz.
    lb="$(dirname $bin)/hpcz_bench_internal"; [ -x "$lb" ] || lb="$bin bench"
    timeout 200 ncu --kernel-name-base demangled --kernel-name "regex:batch_kernel<\\(int\\)2" --launch-count 1 \
      --section WarpStateStats --section InstructionStats --section Occupancy --section SchedulerStats --section LaunchStats \
      --section SpeedOfLight --section MemoryWorkloadAnalysis \
      $lb --mode lossless --data .data --fields $f --reps 1 --size-mib 512 --no-second-stage \
      >"$out/ncu-deflate-ab-$(basename $(dirname $bin))-$f.txt" 2>&1
    grep -E "Duration|Executed Instructions  |Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Achieved Active Warps|Grid Size|Registers Per|Stall|L2 Hit|Mem Busy|Max Bandwidth" \
      "$out/ncu-deflate-ab-$(basename $(dirname $bin))-$f.txt" | head -24
  done
fi
if has ncu-deflate-source; then
  # Per-SASS-instruction counts and stall samples of the Deflate kernel on one field (NCU_FIELD, default
  # levitus): where the instructions go, mapped to the source by the addresses of cuobjdump -sass.
  f=${NCU_FIELD:-levitus}
  timeout 300 ncu --kernel-name-base demangled --kernel-name "regex:batch_kernel<\\(int\\)2" --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section InstructionStats --section SchedulerStats \
    build-gpu/hpcz_bench_internal --mode lossless --data .data --fields $f --reps 1 --size-mib 512 --no-second-stage \
    >"$out/ncu-deflate-$f.txt" 2>&1
  echo "ncu rc=$?"; grep -E "Duration|Executed Instructions  |Issue Slots Busy|No Eligible|Warp Cycles Per Issued" "$out/ncu-deflate-$f.txt" | head
  timeout 300 ncu --kernel-name-base demangled --kernel-name "regex:batch_kernel<\\(int\\)2" --launch-count 1 \
    --section SourceCounters --page source --print-source sass --csv \
    build-gpu/hpcz_bench_internal --mode lossless --data .data --fields $f --reps 1 --size-mib 512 --no-second-stage \
    2>/dev/null | gzip >"$out/ncu-deflate-$f-sass.csv.gz"
  echo "ncu source rc=$?"
fi
if has nsys && command -v nsys >/dev/null; then
  echo "== nsys: per-kernel time, ratio mode, era5 rel 1e-3 =="
  nsys profile -o "$out/ratio" --force-overwrite true build-gpu/hpcz bench --mode ratio --data .data --fields era5 \
    --bounds rel:1e-3 --reps 3 >/dev/null 2>&1
  nsys stats -r cuda_gpu_kern_sum "$out/ratio.nsys-rep" 2>/dev/null | head -40 | tee "$out/nsys-ratio.txt"
  rm -f "$out/ratio.nsys-rep" "$out/ratio.sqlite"
fi
if has kernel-times; then
  # Per-kernel GPU time at the application's clocks (ncu without clock control), median per kernel
  # over 5 calls: where a compression or decompression call's time goes.
  echo "== kernel times, rel 1e-3 (ncu --clock-control none, median of 5 calls) =="
  for mf in ${KERNEL_TIMES:-fast:era5 fast:pressure ratio:era5 ratio:pressure}; do
    m=${mf%%:*} f=${mf#*:}
    timeout 120 ncu --clock-control none --csv --metrics gpu__time_duration.sum build-gpu/hpcz bench --mode $m --quick \
      --data .data --fields $f --bounds rel:1e-3 --reps 3 --size-mib 512 >"$out/kt-$m-$f.csv" 2>/dev/null
    python3 - "$out/kt-$m-$f.csv" "$m $f" <<'PY' | tee -a "$out/kernel-times.txt"
import csv, sys, statistics, collections
t = collections.defaultdict(list)
rows = list(csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')))
if rows:
    col = {name: i for i, name in enumerate(rows[0])}
    for r in rows[1:]:
        if len(r) != len(rows[0]) or r[col["Metric Name"]] != "gpu__time_duration.sum": continue
        scale = {"ns": 1e-3, "usecond": 1, "us": 1, "nsecond": 1e-3, "ms": 1e3, "msecond": 1e3}.get(r[col["Metric Unit"]], 1)
        t[r[col["Kernel Name"]].split("(")[0]].append(float(r[col["Metric Value"]].replace(",", "")) * scale)
for k, v in t.items():
    print(f"{sys.argv[2]}: {k[:56]:56s} calls {len(v):3d}  median {statistics.median(v):9.1f} us")
PY
  done
fi
if [ -n "${PACK:-}" ]; then
  # The device tool returns at most 8 files: everything in one archive.
  (cd "$out" && tar czf /tmp/gpu_check_all.tgz --exclude='*.csv' . && find . -type f -delete && mv /tmp/gpu_check_all.tgz all.tgz)
fi
