#!/usr/bin/env bash
# Short libFuzzer runs of the lossless decoders (hpcz::lossless_decompress: ORC RLE v1, v2, Deflate), of
# the archive reader (inspect, stage_sizes, decompress) and of the encoders (arbitrary arrays must come
# back within the bound), under AddressSanitizer and UBSan. A separate clang build in build-fuzz (the main
# build is untouched; its library accepts any stored checksum); installs clang, libomp-dev and zlib1g-dev
# with apt-get when missing. Fails if any fuzzer finds a crash, a sanitizer report, an uncaught exception
# other than hpcz::Error, a timeout or an out-of-memory; the input that did it is kept in
# build-fuzz/artifacts and printed in hex.
# Environment: FUZZ_TIME (seconds per fuzzer, default 20), CXX_FUZZ (default clang++).
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_TIME=${FUZZ_TIME:-20}
CXX_FUZZ=${CXX_FUZZ:-clang++}
B=build-fuzz

# What the build needs: clang with libFuzzer and the sanitizer runtimes, OpenMP for clang (libomp), zlib.
probe() {  # compiles and links a fuzz target that uses OpenMP
  local d; d=$(mktemp -d)
  printf '#include <omp.h>\n#include <cstdint>\n#include <cstddef>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return omp_get_max_threads() < 0; }\n' >"$d/p.cpp"
  "$CXX_FUZZ" -fopenmp -fsanitize=fuzzer,address,undefined "$d/p.cpp" -o "$d/p" >/dev/null 2>&1
  local rc=$?; rm -rf "$d"; return $rc
}
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v make >/dev/null || need+=(make)
command -v gzip >/dev/null || need+=(gzip)
[ -f /usr/include/zlib.h ] || need+=(zlib1g-dev)
command -v "$CXX_FUZZ" >/dev/null && probe || need+=(clang libomp-dev)
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # Debian 12+ and recent Ubuntu ship libFuzzer and the sanitizer runtimes apart from clang.
  if [[ " ${need[*]} " == *" clang "* ]] && apt-cache show libclang-rt-dev >/dev/null 2>&1; then
    need+=(libclang-rt-dev)
  fi
  apt-get install -y -qq "${need[@]}" >/dev/null
  probe || { echo "fuzz: $CXX_FUZZ cannot build a libFuzzer target with OpenMP" >&2; exit 1; }
fi

# Build: the instrumented library, the three fuzzers (FUZZ_CODEC 0, 1, 2) and the seed writer.
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CXX_FUZZ" -DHPCZ_CUDA=OFF \
  -DHPCZ_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build "$B" -j"$(nproc)" --target fuzz_rle1 fuzz_rle2 fuzz_deflate fuzz_archive fuzz_roundtrip fuzz_make_seeds \
  >/dev/null

# Seeds, written afresh each run: streams from lossless_compress, hand-made ORC streams and gzip files.
S=$B/seeds
rm -rf "$S"
mkdir -p "$S"/rle1 "$S"/rle2 "$S"/deflate "$S"/archive "$S"/roundtrip "$B"/corpus/rle1 "$B"/corpus/rle2 \
  "$B"/corpus/deflate "$B"/corpus/archive "$B"/corpus/roundtrip "$B"/artifacts
"$B"/fuzz/fuzz_make_seeds "$S"
cp tests/hostile/*.hpcz "$S"/archive/  # archives declaring more than their bytes hold (issue 51)
# The fuzz targets read the element type from the first byte for RLE: bits 0-1 log2(bytes), bit 2 signed.
printf '\x00\x61\x00\x07' >"$S"/rle1/run100x7          # u8: 100 copies of 7
printf '\x04\xfb\x02\x03\x04\x07\x0b' >"$S"/rle1/lit5   # i8: literals 1, -2, 2, -4, -6 (zigzag)
printf '\x03\x7f\x05\x80\x01' >"$S"/rle1/delta130      # u64: 130 values from 128, step 5
printf '\x01\x0a\x27\x10' >"$S"/rle2/short5x10000      # u16: short repeat, five copies of 10000
printf '\x01\x5e\x03\x5c\xa1\xab\x1e\xde\xad\xbe\xef' >"$S"/rle2/direct4         # u16: direct, 4 values
printf '\x00\xc6\x09\x02\x02\x22\x42\x42\x46' >"$S"/rle2/delta10                  # u8: delta, primes
printf '\x02\x8e\x13\x2b\x21\x07\xd0\x1e\x00\x14\x70\x28\x32\x3c\x46\x50\x5a\x64\x6e\x78\x82\x8c\x96\xa0\xaa\xb4\xbe\xfc\xe8' \
  >"$S"/rle2/patched20                                                           # u32: patched base (ORC spec)
text() { for i in $(seq 1 "$1"); do echo "line $i of hpcz fuzz seed, $((i * i % 97)) abcabcabc"; done; }
printf 'hi' | gzip -9 >"$S"/deflate/fixed.gz                     # fixed Huffman
text 60 | gzip -1 >"$S"/deflate/dynamic.gz                        # dynamic Huffman
head -c 700 /dev/urandom | gzip -n >"$S"/deflate/stored.gz        # stored block
{ printf 'a' | gzip; printf 'bb' | gzip; } >"$S"/deflate/two_members.gz
: | gzip >"$S"/deflate/empty.gz
if command -v python3 >/dev/null; then  # zlib and raw Deflate framings
  python3 -c 'import sys,zlib; d=b"".join(b"row %d %d\n" % (i, i*i%31) for i in range(200)); open(sys.argv[1],"wb").write(zlib.compress(d,9)); c=zlib.compressobj(6,zlib.DEFLATED,-15); open(sys.argv[2],"wb").write(c.compress(d)+c.flush())' \
    "$S"/deflate/zlib.z "$S"/deflate/raw.deflate
fi

# Round trips (fuzz_roundtrip.cpp): 5 option bytes, then values from the bundled field, both codecs.
python3 - "$S"/roundtrip data/*.bin <<'PY'
import sys
out, files = sys.argv[1], sys.argv[2:]
k = 0
for f in files:
    b = open(f, "rb").read()
    f64 = f.endswith("_f64.bin")
    for mode in (0x00, 0x02, 0x04, 0x06, 0x0a, 0x22, 0x42, 0x62, 0x12):
        for off in (0, len(b) // 3):
            open(f"{out}/s{k}", "wb").write(bytes([mode | f64, 6, 9, 33, 49]) + b[off:off + 3000])
            k += 1
PY

# Fuzz: -max_len keeps inputs small (decoders may legitimately expand ~1000x); -rss_limit_mb and
# -malloc_limit_mb cap memory at 512 MB: a decoder must size nothing from what an input declares before
# checking that its bytes can hold it (issue 51: a 584-byte archive once took 2 GB), so any input that
# needs more is a finding. (libFuzzer's default, 2 GB and no malloc limit, hid that.)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for c in rle1 rle2 deflate archive roundtrip; do
  echo "fuzz: $c for ${FUZZ_TIME}s ($(ls "$S/$c" | wc -l) seeds)"
  log=$B/fuzz_$c.log
  if "$B"/fuzz/fuzz_$c -max_total_time="$FUZZ_TIME" -max_len=4096 -rss_limit_mb=512 -malloc_limit_mb=512 -timeout=20 \
       -print_final_stats=1 -artifact_prefix="$B/artifacts/$c-" "$B/corpus/$c" "$S/$c" >"$log" 2>&1; then
    grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" | sed 's/^/  /' || true
  else
    failed+=("$c")
    echo "fuzz: $c FAILED; the end of $log:"
    tail -n 60 "$log"
    for f in $(grep -oE "Test unit written to [^ ]+" "$log" | awk '{print $5}'); do
      echo "  input $f ($(stat -c %s "$f") bytes):"; od -An -tx1 -v "$f" | head -n 40
    done
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in: ${failed[*]} (inputs in $B/artifacts; rerun one with: $B/fuzz/fuzz_CODEC FILE)" >&2
  exit 1
fi
echo "fuzz: no findings"
