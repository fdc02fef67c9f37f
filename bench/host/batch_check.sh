#!/usr/bin/env bash
# One device call for the host path and the batches: build this tree (library, tests, CLI, Python
# module) and, when given, an older tree's Python module; the GPU tests; compute-sanitizer on the batch
# and host-path tests; the Python tests on the GPU; bench/python/host_batch.py on both builds, on the
# same bytes, in the same run.
# usage (GPU machine, repo root, fields staged in .data/, wheels for zarr in .whl/ when the image
# lacks it): bench/host/batch_check.sh OUTDIR [OLD_TREE] [SIZE_MIB=1024] [REPS=5] [STAGES] [MODES=fast,ratio]
#   [ROWS=numpy,cupy,zarr,hdf5] (host_batch.py's sets of rows)
#   STAGES: any of build,tests,sanitize,pytest,ab,arch,probe,sizes,profile,f2f,install,bench,modes,pwgpu,types,bitcomp16,pfpl,cpuscale
#   (default all but ab, arch, probe, sizes, profile, f2f, install, modes and types). types: compute-sanitizer
#   on the storage-type tests, and bench/python/storage_types.py (host calls by dtype, 512 MiB). modes: compute-sanitizer on the bound-mode
#   tests, and the fast mode's pw_rel bounds timed beside rel 1e-3 (hpcz bench, 512 MiB tiles). pwgpu: compute-sanitizer
#   on the log transform's tests, and pw_rel in MODES timed on the GPU (hpcz bench, 512 MiB tiles, PW_FIELDS). bitcomp16: the fast mode
#   on float16 arrays beside Bitcomp's FP16 lossy mode (bench/compare/bitcomp_bench.cpp --type f16; nvCOMP carried in
#   bench/ext/nvcomp as bench/compare/README.md says). pfpl: the fast mode's pw_rel beside PFPL's REL mode
#   (bench/compare/pfpl_rel.py; a checkout of burtscher/PFPL in bench/ext/PFPL). cpuscale: pw_rel's interp+stage on the
#   host's cores beside SZ3 (bench/types/pw_rel_vs_sz3.py, 64 MiB tiles; pysz in .whl), OLD_TREE's beside it, and
#   both CLIs' compress and decompress of one 64 MiB field by thread count. ab: OLD_TREE's CLI against this one's (bench/ab.sh,
#   MODES, AB_ROUNDS rounds); arch: this tree's default multi-architecture CLI against its sm_90 one.
set -u
out=${1:?OUTDIR}
old=${2:-}
size=${3:-1024}
reps=${4:-5}
stages=${5:-build,tests,sanitize,pytest,bench}
modes=${6:-fast,ratio}
rows=${7:-numpy,cupy,zarr,hdf5}
has() { [[ ",$stages," == *",$1,"* ]]; }
field=.data/weather-era5_t2m_uk_hourly_744x33x49_f32.bin
mkdir -p "$out"
export HPCZ_SHARED_DATA=$PWD/.data PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
echo "cores: $(nproc)"
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
py=$(command -v python3)
# nvCOMP may travel packed (bench/ext/nvcomp.tar.xz: the device call's size limit).
[ -f bench/ext/nvcomp.tar.xz ] && [ ! -d bench/ext/nvcomp ] && tar -C bench -xJf bench/ext/nvcomp.tar.xz
configure() {  # SRC DIR: Release, sm_90, with the Python module (and the Bitcomp bench where nvCOMP is carried)
  local nvcomp=()
  [ -f "$1/bench/ext/nvcomp/lib/libnvcomp.so.6" ] && nvcomp=(-DHPCZ_NVCOMP_DIR="$(cd "$1" && pwd)/bench/ext/nvcomp")
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DHPCZ_PYTHON=ON \
    -DPython_EXECUTABLE="$py" "${nvcomp[@]}" >"$out/cmake-$(basename "$2").log" 2>&1
}
package() {  # SRC BUILD DEST: the package's Python files and the module built there (and the HDF5 filter
  # built elsewhere from this tree, carried in .plugin/, where the image has no HDF5 headers)
  rm -rf "$3" && mkdir -p "$3/hpcz" && cp -r "$1"/python/hpcz/. "$3/hpcz/" && cp "$2"/python/_hpcz*.so "$3/hpcz/"
  if [ "$1" = . ] && [ -f .plugin/libH5Zhpcz.so ]; then mkdir -p "$3/hpcz/plugins" && cp .plugin/libH5Zhpcz.so "$3/hpcz/plugins/"; fi
  # The entry points an installed wheel declares (pyproject.toml), so that numcodecs and zarr find the
  # codec by id in a package run from PYTHONPATH.
  mkdir -p "$3/hpcz-0.dist-info" && printf 'Metadata-Version: 2.1\nName: hpcz\nVersion: 0\n' >"$3/hpcz-0.dist-info/METADATA"
  printf '[numcodecs.codecs]\nhpcz = hpcz.numcodecs:Hpcz\n\n[zarr.codecs]\nhpcz = hpcz.zarr:Hpcz\n' >"$3/hpcz-0.dist-info/entry_points.txt"
}
# A fresh machine has no build outputs: the later stages build first.
if has build || [ ! -x build-gpu/tests/hpcz_tests ] || { [ -n "$old" ] && [ ! -d build-old/pkg ]; }; then
  if [ -n "$old" ]; then
    old_targets=(_hpcz)
    { has ab || has cpuscale; } && old_targets+=(hpcz_cli)
    (configure "$old" build-old && cmake --build build-old -j 6 --target "${old_targets[@]}" >"$out/build-old.log" 2>&1 &&
      package "$old" build-old build-old/pkg && echo "old module built") &
    old_pid=$!
  fi
  configure . build-gpu && cmake --build build-gpu -j 12 --target hpcz_tests hpcz_cli _hpcz >"$out/build.log" 2>&1 ||
    { grep -E "error" "$out/build.log" | head -30; exit 1; }
  package . build-gpu build-gpu/pkg
  [ -n "$old" ] && wait $old_pid
fi
if has tests; then
  echo "== C++ tests (GPU present) =="
  timeout 300 build-gpu/tests/hpcz_tests >"$out/tests.log" 2>&1; echo "tests rc=$?"; tail -1 "$out/tests.log"
  grep -E "FAIL|CHECK|REQUIRE" "$out/tests.log" | head -20
  grep -E "identical|items coded|skipped" "$out/tests.log" | sort | uniq -c | head -12
fi
if has sanitize; then
  echo "== compute-sanitizer: batches, host calls into buffers, damaged archives =="
  timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/hpcz_tests roundtrip_batch \
    unit_c_api_batch roundtrip_compress_into_a_buffer corrupt_magic roundtrip_device_batch >"$out/memcheck.log" 2>&1
  echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|passed" "$out/memcheck.log" | tail -2
  timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 build-gpu/tests/hpcz_tests roundtrip_batch_bad \
    roundtrip_batch_empty unit_c_api_batch roundtrip_device_batch >"$out/racecheck.log" 2>&1
  echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|passed" "$out/racecheck.log" | tail -2
fi
if has pytest; then
  echo "== Python tests on the GPU =="
  PYTHONPATH=$PWD/build-gpu/pkg:${PYTHONPATH:-} timeout 300 python3 -m pytest -q python/tests/test_batch.py \
    python/tests/test_gpu.py python/tests/test_api.py python/tests/test_hdf5.py python/tests/test_codecs.py \
    python/tests/test_fork.py python/tests/test_storage_types.py python/tests/test_pw_rel.py \
    python/tests/test_bound_modes.py >"$out/pytest.log" 2>&1
  echo "pytest rc=$?"; tail -3 "$out/pytest.log"
fi
if has ab; then  # the device-resident kernels: the older tree's CLI against this one's (bench/ab.sh)
  if [ -n "$old" ]; then
    cmake --build build-old -j 16 --target hpcz_cli >"$out/build-old-cli.log" 2>&1 || tail -5 "$out/build-old-cli.log"
    bash bench/ab.sh build-old/hpcz build-gpu/hpcz .data "$modes" "${AB_ROUNDS:-2}" "$out/ab" 2>&1 | grep -E "^A/B|identical|differ|FAIL|rc=[1-9]"
  fi
fi
if has modes; then
  echo "== bound modes: memcheck of their tests; pw_rel beside rel (hpcz bench --mode fast, 512 MiB tiles) =="
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/hpcz_tests adv_pw_rel_every_value \
    corrupt_pw_rel_refusals unit_combined_bound_settles corrupt_combined_mode_below_version_6 >"$out/memcheck-modes.log" 2>&1
  echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|passed" "$out/memcheck-modes.log" | tail -2
  timeout 240 build-gpu/hpcz bench --mode fast --bounds rel:1e-3,pw_rel:1e-2,pw_rel:1e-3,pw_rel:1e-4 --data .data \
    --fields era5,ncar,levitus,vorticity \
    --size-mib 512 --reps 10 --out "$out/bench-pw_rel.md" >"$out/bench-pw_rel.log" 2>&1
  echo "bench rc=$?"; grep -E "^\| |^mean" "$out/bench-pw_rel.md"
fi
if has pwgpu; then
  echo "== pw_rel's log transform on the GPU: memcheck of its tests; hpcz bench by mode (512 MiB tiles) =="
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/hpcz_tests adv_pw_rel_every_value \
    corrupt_pw_rel_refusals >"$out/memcheck-pw.log" 2>&1
  echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|passed" "$out/memcheck-pw.log" | tail -2
  for m in ${modes//,/ }; do
    timeout 240 build-gpu/hpcz bench --mode "$m" --bounds pw_rel:1e-2,pw_rel:1e-3,pw_rel:1e-4 --data .data \
      --fields "${PW_FIELDS:-era5,ncar,fnoc,levitus}" --size-mib 512 --reps 10 --out "$out/bench-pw-$m.md" >"$out/bench-pw-$m.log" 2>&1
    echo "bench $m rc=$?"; grep -E "^\| |^mean" "$out/bench-pw-$m.md"
  done
fi
if has types; then
  echo "== storage types: memcheck of their tests (GPU and CPU bytes alike); host calls by type =="
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/hpcz_tests adv_storage_types_extremes \
    corrupt_storage_type_refusals roundtrip_storage_types_paths roundtrip_storage_types_device_batch >"$out/memcheck-types.log" 2>&1
  echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|passed" "$out/memcheck-types.log" | tail -2
  (root=$PWD; cd bench/python && PYTHONPATH=$root/build-gpu/pkg:${PYTHONPATH:-} timeout 200 python3 storage_types.py \
    "../../$field" 512 5 gpu "$modes") >"$out/storage_types.md" 2>&1
  echo "rc=$?"; cat "$out/storage_types.md"
fi
if has bitcomp16; then
  echo "== float16: the fast mode beside Bitcomp FP16 lossy (bitcomp_bench --type f16, 512 MiB tiles) =="
  cmake --build build-gpu -j 12 --target hpcz_bitcomp_bench >"$out/build-bitcomp.log" 2>&1 || tail -5 "$out/build-bitcomp.log"
  timeout 240 build-gpu/hpcz_bitcomp_bench --data .data --type f16 --size-mib 512 --reps 10 \
    --out "$out/bitcomp-f16.md" >"$out/bitcomp-f16.log" 2>&1
  echo "bitcomp rc=$?"; tail -30 "$out/bitcomp-f16.log"
fi
if has pfpl; then
  echo "== pw_rel beside PFPL's REL (bench/compare/pfpl_rel.py; PFPL carried in bench/ext/PFPL) =="
  timeout 300 python3 bench/compare/pfpl_rel.py build-gpu/hpcz bench/ext/PFPL "$out/pfpl-rel.md" >"$out/pfpl-rel.log" 2>&1
  echo "pfpl rc=$?"; tail -40 "$out/pfpl-rel.log"
fi
if has cpuscale; then
  echo "== pw_rel on the host's cores: interp+stage beside SZ3 through a log transform (64 MiB tiles) =="
  for which in gpu old; do
    [ -d build-$which/pkg ] || continue
    only=(); [ $which = old ] && only=(--hpcz-only)
    (root=$PWD; cd bench/types && PYTHONPATH=$root/build-$which/pkg:${PYTHONPATH:-} timeout $([ $which = old ] && echo 120 || echo 200) python3 pw_rel_vs_sz3.py \
      --tile-mib 64 "${only[@]}" "$root/.data") >"$out/pw_rel_sz3-$which.md" 2>&1
    echo "$which rc=$?"; cat "$out/pw_rel_sz3-$which.md"
  done
  echo "== compress and decompress of era5 tiled to 64 MiB, pw_rel 1e-3 interp+stage, by OMP_NUM_THREADS (ms, median of 3) =="
  t=/dev/shm/era5x64.bin; rm -f $t; for i in $(seq 14); do cat "$field" >>$t; done
  med() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
  for cli in build-gpu/hpcz build-old/hpcz; do
    [ -x $cli ] || continue
    for n in 1 4 16; do
      c=(); d=()
      for r in 1 2 3; do
        s0=$(date +%s%N); OMP_NUM_THREADS=$n $cli compress -q --device cpu -i $t -o $t.hpcz -t f32 -d 10416x33x49 --pw-rel 1e-3 \
          --mode interp --lossless -f; s1=$(date +%s%N)
        OMP_NUM_THREADS=$n $cli decompress -q --device cpu -i $t.hpcz -o $t.out -f; s2=$(date +%s%N)
        c+=($(( (s1 - s0) / 1000000 ))); d+=($(( (s2 - s1) / 1000000 )))
      done
      echo "$cli threads=$n compress $(med "${c[@]}") ms decompress $(med "${d[@]}") ms size $(stat -c %s $t.hpcz)"
    done
  done | tee "$out/cpu_threads.txt"
fi
if has arch; then  # the default multi-architecture build (HPCZ_CUDA_ARCHS) against this sm_90 one
  cmake -S . -B build-multi -DCMAKE_BUILD_TYPE=Release >"$out/cmake-multi.log" 2>&1 &&
    cmake --build build-multi -j 16 --target hpcz_cli >"$out/build-multi.log" 2>&1 || tail -5 "$out/build-multi.log"
  grep -E "CUDA kernels for" "$out/cmake-multi.log"
  bash bench/ab.sh build-gpu/hpcz build-multi/hpcz .data "$modes" "${AB_ROUNDS:-2}" "$out/arch" 2>&1 | grep -E "^A/B|identical|differ|FAIL|rc=[1-9]"
fi
if has probe; then
  echo "== host_path_probe: where the one-shot host path's time goes =="
  cmake --build build-gpu -j 12 --target hpcz_host_path_probe >"$out/build-probe.log" 2>&1 || tail -5 "$out/build-probe.log"
  timeout 200 build-gpu/hpcz_host_path_probe .data/weather-era5_t2m_uk_hourly_744x33x49_f32.bin 1 5 | tee "$out/probe.txt"
fi
if has sizes; then
  echo "== host batches by item size, the library alone (bench/host/batch_sizes.cpp) =="
  cmake --build build-gpu -j 12 --target hpcz_batch_sizes >"$out/build-sizes.log" 2>&1 || tail -5 "$out/build-sizes.log"
  timeout 200 build-gpu/hpcz_batch_sizes "$field" "$size" "$reps" | tee "$out/batch_sizes.txt"
fi
if has profile; then
  echo "== the Python layer of cupy batches (bench/python/profile_batch.py) =="
  (root=$PWD; cd bench/python && PYTHONPATH=$root/build-gpu/pkg:${PYTHONPATH:-} timeout 200 python3 profile_batch.py \
    "../../$field" "$size" 1 22) >"$out/profile.txt" 2>&1
  echo "rc=$?"; grep -E "^## |us a chunk|^[a-z_.(]" "$out/profile.txt" | head -60
fi
if has f2f; then
  echo "== file to file, 8 GiB (bench/host/file_to_file.sh) =="
  cmake --build build-gpu -j 12 --target hpcz_cli >"$out/build-cli.log" 2>&1 || tail -5 "$out/build-cli.log"
  REPS=2 timeout 400 bash bench/host/file_to_file.sh build-gpu/hpcz 8 /dev/shm "$field" 2>&1 | tee "$out/file_to_file.txt"
fi
if has install; then
  echo "== cmake --install and a find_package consumer, CUDA build =="
  cmake --build build-gpu -j 12 >"$out/build-all.log" 2>&1 || tail -5 "$out/build-all.log"
  (cd build-gpu && timeout 300 ctest -R install --output-on-failure) >"$out/install.log" 2>&1
  echo "install rc=$?"; tail -3 "$out/install.log"
fi
if has bench; then
  for which in gpu old; do
    [ -d build-$which/pkg ] || continue
    echo "== host_batch.py, $which build =="
    (root=$PWD; cd bench/python && PYTHONPATH=$root/build-$which/pkg:${PYTHONPATH:-} timeout 280 python3 host_batch.py "../../$field" "$size" \
      "$reps" gpu "$modes" /dev/shm "$rows") >"$out/host_batch-$which.txt" 2>&1
    echo "rc=$?"; cat "$out/host_batch-$which.txt"
  done
fi
