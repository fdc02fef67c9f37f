#!/usr/bin/env bash
# One device call: build, GPU tests, compute-sanitizer, CPU/GPU byte identity, benchmark.
# usage (on the GPU machine, repo root, shared fields staged in .data/): bench/gpu_check.sh [OUTDIR]
set -u
out=${1:-${OUT:-/tmp/hpcz_out}}
mkdir -p "$out"
export HPCZ_SHARED_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
cmake --build build-gpu -j 16 >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
cuobjdump --list-elf build-gpu/hpcz >/dev/null 2>&1; cuobjdump --dump-resource-usage build-gpu/tests/hpcz_tests 2>/dev/null | grep -E "Function|REG|STACK" | head -20 >"$out/resources.txt"
echo "== tests (GPU present) =="
build-gpu/tests/hpcz_tests >"$out/tests.log" 2>&1; echo "tests rc=$?"; tail -1 "$out/tests.log"; grep -E "FAIL|CHECK" "$out/tests.log" | head -20
(cd build-gpu && ctest -R cli --output-on-failure >"$out/ctest_cli.log" 2>&1; echo "cli rc=$?")
echo "== compute-sanitizer (memcheck) on the GPU round trips and corrupt archives =="
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/hpcz_tests roundtrip_real_fields_gpu adv_special adv_lengths corrupt_magic corrupt_sealed golden_ >"$out/sanitizer.log" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|passed" "$out/sanitizer.log" | tail -3
timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 build-gpu/tests/hpcz_tests adv_lengths >"$out/racecheck.log" 2>&1
echo "racecheck rc=$?"; grep -E "ERROR SUMMARY|RACE" "$out/racecheck.log" | tail -3
echo "== bench =="
build-gpu/hpcz bench --data .data --size-mib 512 --reps 10 --out "$out/bench.md" >"$out/bench.log" 2>&1; echo "bench rc=$?"
cat "$out/bench.md" 2>/dev/null || tail -20 "$out/bench.log"
