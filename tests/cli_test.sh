#!/usr/bin/env bash
# CLI contract: verbs, flags, exit codes (0 ok, 1 usage, 2 bad input), on the bundled sample.
set -u
hpcz=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
pass=0
expect() {  # expect CODE description command...
  local want=$1 what=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then pass=$((pass + 1)); else
    fails=$((fails + 1))
    echo "FAIL: $what: exit $got, wanted $want"
    sed 's/^/  | /' "$tmp/err" | head -5
  fi
}
in=$src/data/climate-ncar_csm_b003_ts_100x64x128_f32.bin
expect 0 "compress" "$hpcz" compress -i "$in" -o "$tmp/a.hpcz" -t f32 -d 100x64x128 --rel 1e-3 --device cpu
expect 0 "decompress" "$hpcz" decompress -i "$tmp/a.hpcz" -o "$tmp/a.out" --device cpu
expect 0 "compare" "$hpcz" compare -t f32 -d 100x64x128 "$in" "$tmp/a.out"
grep -q "max rel error" "$tmp/out" || { echo "FAIL: compare prints no max rel error"; fails=$((fails + 1)); }
maxrel=$(awk '/max rel error/ {print $4}' "$tmp/out")
awk -v m="$maxrel" 'BEGIN { exit !(m <= 1e-3) }' || { echo "FAIL: max rel error $maxrel > 1e-3"; fails=$((fails + 1)); }
expect 0 "info" "$hpcz" info "$tmp/a.hpcz"
expect 0 "info --json" "$hpcz" info --json "$tmp/a.hpcz"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["dims"]==[100,64,128] and d["dtype"]=="f32", d' "$tmp/out" \
  && pass=$((pass + 1)) || { echo "FAIL: info --json is not the expected JSON"; fails=$((fails + 1)); }
expect 0 "compress --abs --fill --mode fast" "$hpcz" compress -i "$in" -o "$tmp/b.hpcz" -t f32 -d 100x64x128 --abs 0.01 --fill 0 --mode fast
# ratio and interp modes: round trip within rel 1e-3 on the CPU, the archive smaller than the fast
# mode's (ratio) or no larger than the ratio mode's (interp), the codec and its stage sizes named by info
roundtrip_mode() {  # mode archive than -lt|-le
  local mode=$1 arc=$2 than=$3 cmp=$4
  expect 0 "compress --mode $mode" "$hpcz" compress -i "$in" -o "$arc" -t f32 -d 100x64x128 --rel 1e-3 --mode $mode --device cpu
  expect 0 "decompress $mode" "$hpcz" decompress -i "$arc" -o "$arc.out" --device cpu
  expect 0 "compare $mode" "$hpcz" compare -t f32 -d 100x64x128 "$in" "$arc.out"
  maxrel=$(awk '/max rel error/ {print $4}' "$tmp/out")
  awk -v m="$maxrel" 'BEGIN { exit !(m <= 1e-3) }' || { echo "FAIL: $mode max rel error $maxrel > 1e-3"; fails=$((fails + 1)); }
  [ "$(stat -c %s "$arc")" "$cmp" "$(stat -c %s "$than")" ] && pass=$((pass + 1)) \
    || { echo "FAIL: $mode mode archive not $cmp $than"; fails=$((fails + 1)); }
  expect 0 "info --json $mode" "$hpcz" info --json "$arc"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["codec"]==sys.argv[2] and d["stages"]["codes"] > 0, d' \
    "$tmp/out" "$mode" && pass=$((pass + 1)) || { echo "FAIL: info --json of a $mode archive lacks codec or stages"; fails=$((fails + 1)); }
}
roundtrip_mode ratio "$tmp/r.hpcz" "$tmp/a.hpcz" -lt
roundtrip_mode interp "$tmp/i.hpcz" "$tmp/r.hpcz" -le
expect 0 "compress --mode ratio --radius" "$hpcz" compress -i "$in" -o "$tmp/r2.hpcz" -t f32 -d 100x64x128 --abs 0.01 --mode ratio --radius 2048 --device cpu
expect 0 "help" "$hpcz" --help
# usage errors: 1
expect 1 "no command" "$hpcz"
expect 1 "unknown command" "$hpcz" frobnicate
expect 1 "both bounds" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64x128 --rel 1e-3 --abs 1
expect 1 "no bound" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64x128
expect 1 "bad dims" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64xx128 --rel 1e-3
expect 1 "rank 5" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 1x1x100x64x128 --rel 1e-3
expect 1 "bad type" "$hpcz" compress -i "$in" -o "$tmp/c" -t f16 -d 100x64x128 --rel 1e-3
expect 1 "negative bound" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64x128 --rel -1
expect 1 "unknown option" "$hpcz" decompress -i "$tmp/a.hpcz" -o "$tmp/c" --frob
expect 1 "bad mode" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64x128 --rel 1e-3 --mode turbo
expect 1 "radius out of range" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64x128 --rel 1e-3 --mode ratio --radius 5000
expect 1 "radius without ratio" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64x128 --rel 1e-3 --radius 64
# bad input: 2
expect 2 "dims do not match the file" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64x127 --rel 1e-3
expect 2 "missing input" "$hpcz" decompress -i "$tmp/nope" -o "$tmp/c"
head -c 1000 "$tmp/a.hpcz" >"$tmp/trunc.hpcz"
expect 2 "truncated archive" "$hpcz" decompress -i "$tmp/trunc.hpcz" -o "$tmp/c"
expect 2 "truncated archive info" "$hpcz" info "$tmp/trunc.hpcz"
cp "$tmp/a.hpcz" "$tmp/flip.hpcz"
printf '\x55' | dd of="$tmp/flip.hpcz" bs=1 seek=50000 conv=notrunc status=none
expect 2 "flipped byte" "$hpcz" decompress -i "$tmp/flip.hpcz" -o "$tmp/c" --device cpu
expect 2 "not an archive" "$hpcz" decompress -i "$in" -o "$tmp/c"
head -c 5000 "$tmp/r.hpcz" >"$tmp/rtrunc.hpcz"
expect 2 "truncated ratio archive" "$hpcz" decompress -i "$tmp/rtrunc.hpcz" -o "$tmp/c"
cp "$tmp/r.hpcz" "$tmp/rflip.hpcz"
printf '\x55' | dd of="$tmp/rflip.hpcz" bs=1 seek=20000 conv=notrunc status=none
expect 2 "flipped byte in a ratio archive" "$hpcz" decompress -i "$tmp/rflip.hpcz" -o "$tmp/c" --device cpu
# The lossless second stage (--lossless): a version 2 archive, info says so, it decodes within the bound.
expect 0 "compress --lossless" "$hpcz" compress -i "$in" -o "$tmp/s2.hpcz" -t f32 -d 100x64x128 --rel 1e-2 --mode ratio --lossless
expect 0 "info --json of a staged archive" "$hpcz" info --json "$tmp/s2.hpcz"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["format_version"]==2 and d["second_stage"] and d["stages"]["second_stage_saved"]>0, d' "$tmp/out" \
  && pass=$((pass + 1)) || { echo "FAIL: info --json of a staged archive"; fails=$((fails + 1)); }
expect 0 "decompress a staged archive" "$hpcz" decompress -i "$tmp/s2.hpcz" -o "$tmp/s2.out"
expect 0 "compare a staged archive" "$hpcz" compare -t f32 -d 100x64x128 "$in" "$tmp/s2.out"
grep -q "max abs error" "$tmp/out" && pass=$((pass + 1)) || { echo "FAIL: compare output"; fails=$((fails + 1)); }
# lossless: round trips in each codec, gzip interoperability, bad input
for codec in rle1 rle2 deflate; do
  for elem in 1 4; do
    expect 0 "lossless compress $codec elem $elem" "$hpcz" lossless compress --codec $codec --elem $elem -i "$in" -o "$tmp/l.$codec" -f
    expect 0 "lossless decompress $codec elem $elem" "$hpcz" lossless decompress --codec $codec --elem $elem -i "$tmp/l.$codec" -o "$tmp/l.out" -f
    cmp -s "$in" "$tmp/l.out" && pass=$((pass + 1)) || { echo "FAIL: lossless $codec elem $elem round trip differs"; fails=$((fails + 1)); }
  done
done
expect 0 "lossless rle2 signed 2-byte" "$hpcz" lossless compress --codec rle2 --elem 2 --signed -i "$in" -o "$tmp/l.s"
expect 0 "lossless rle2 signed 2-byte back" "$hpcz" lossless decompress --codec rle2 --elem 2 --signed -i "$tmp/l.s" -o "$tmp/l.out" -f
cmp -s "$in" "$tmp/l.out" && pass=$((pass + 1)) || { echo "FAIL: lossless rle2 signed round trip differs"; fails=$((fails + 1)); }
if command -v gzip >/dev/null; then
  gzip -c "$in" >"$tmp/in.gz"
  expect 0 "gzip file decodes" "$hpcz" lossless decompress --codec deflate -i "$tmp/in.gz" -o "$tmp/g.out"
  cmp -s "$in" "$tmp/g.out" && pass=$((pass + 1)) || { echo "FAIL: gzip file decoded wrong"; fails=$((fails + 1)); }
  gzip -dc "$tmp/l.deflate" >"$tmp/g2.out" && cmp -s "$in" "$tmp/g2.out" && pass=$((pass + 1)) \
    || { echo "FAIL: gzip cannot read hpcz deflate output"; fails=$((fails + 1)); }
fi
# Chunked files: small chunks, either backend (the GPU one where there is a GPU), gzip reads every member.
expect 0 "lossless rle1 1 KiB chunks" "$hpcz" lossless compress --codec rle1 --elem 4 --chunk-kib 1 -i "$in" -o "$tmp/l.c1"
expect 0 "lossless rle1 1 KiB chunks back (cpu)" "$hpcz" lossless decompress --codec rle1 --device cpu -i "$tmp/l.c1" -o "$tmp/l.out" -f
cmp -s "$in" "$tmp/l.out" && pass=$((pass + 1)) || { echo "FAIL: lossless 1 KiB chunks round trip differs"; fails=$((fails + 1)); }
expect 0 "lossless deflate 3 KiB chunks" "$hpcz" lossless compress --codec deflate --chunk-kib 3 -i "$in" -o "$tmp/l.d3"
expect 0 "lossless deflate 3 KiB chunks back (auto)" "$hpcz" lossless decompress --codec deflate -i "$tmp/l.d3" -o "$tmp/l.out" -f
cmp -s "$in" "$tmp/l.out" && pass=$((pass + 1)) || { echo "FAIL: lossless deflate 3 KiB chunks round trip differs"; fails=$((fails + 1)); }
if command -v gzip >/dev/null; then
  gzip -dc "$tmp/l.d3" >"$tmp/g3.out" && cmp -s "$in" "$tmp/g3.out" && pass=$((pass + 1)) \
    || { echo "FAIL: gzip cannot read a many-member hpcz deflate file"; fails=$((fails + 1)); }
fi
expect 2 "lossless container of another codec" "$hpcz" lossless decompress --codec rle2 -i "$tmp/l.c1" -o "$tmp/c"
expect 1 "lossless bad chunk size" "$hpcz" lossless compress --codec rle1 --chunk-kib 0 -i "$in" -o "$tmp/c"
expect 1 "lossless bad device" "$hpcz" lossless decompress --codec rle1 --device tpu -i "$tmp/l.c1" -o "$tmp/c"
expect 1 "lossless bad codec" "$hpcz" lossless compress --codec lz4 -i "$in" -o "$tmp/c"
expect 1 "lossless bad elem" "$hpcz" lossless compress --codec rle1 --elem 3 -i "$in" -o "$tmp/c"
expect 1 "lossless no verb" "$hpcz" lossless --codec rle1 -i "$in" -o "$tmp/c"
head -c 1001 "$in" >"$tmp/odd.bin"
expect 2 "lossless size not a multiple of elem" "$hpcz" lossless compress --codec rle2 --elem 4 -i "$tmp/odd.bin" -o "$tmp/c"
head -c 100 "$tmp/l.rle2" >"$tmp/l.trunc"
expect 2 "lossless truncated rle2" "$hpcz" lossless decompress --codec rle2 --elem 4 -i "$tmp/l.trunc" -o "$tmp/c"
head -c 1000 "$tmp/l.deflate" >"$tmp/d.trunc"
expect 2 "lossless truncated deflate" "$hpcz" lossless decompress --codec deflate -i "$tmp/d.trunc" -o "$tmp/c"
# Like zstd and gzip: stdin and stdout, no silent overwrite, nothing left behind by a failed run,
# messages on stderr only, a test verb, a verb's own --help, strict dims.
expect 1 "existing output refused" "$hpcz" compress -i "$in" -o "$tmp/a.hpcz" -t f32 -d 100x64x128 --rel 1e-3
expect 0 "existing output with -f" "$hpcz" compress -i "$in" -o "$tmp/a.hpcz" -t f32 -d 100x64x128 --rel 1e-3 --device cpu -f
expect 1 "output is the input" "$hpcz" decompress -i "$tmp/a.hpcz" -o "$tmp/a.hpcz" -f
expect 0 "compress to stdout" "$hpcz" compress -i "$in" -o - -t f32 -d 100x64x128 --rel 1e-3 --device cpu
cmp -s "$tmp/out" "$tmp/a.hpcz" && pass=$((pass + 1)) || { echo "FAIL: stdout holds more or less than the archive"; fails=$((fails + 1)); }
"$hpcz" compress -i - -o - -t f32 -d 100x64x128 --rel 1e-3 --device cpu <"$in" 2>"$tmp/err" \
  | "$hpcz" decompress -i - -o - --device cpu 2>>"$tmp/err" >"$tmp/p.out"
cmp -s "$tmp/p.out" "$tmp/a.out" && pass=$((pass + 1)) || { echo "FAIL: stdin -> compress -> decompress -> stdout"; fails=$((fails + 1)); }
expect 0 "quiet" "$hpcz" decompress -i "$tmp/a.hpcz" -o "$tmp/q.out" -q
[ ! -s "$tmp/err" ] && [ ! -s "$tmp/out" ] && pass=$((pass + 1)) || { echo "FAIL: -q still prints"; fails=$((fails + 1)); }
expect 2 "failed run" "$hpcz" compress -i "$in" -o "$tmp/never.hpcz" -t f32 -d 100x64x127 --rel 1e-3
[ -z "$(ls -A "$tmp" | grep -E 'never|hpcz-')" ] && pass=$((pass + 1)) || { echo "FAIL: a failed run left files: $(ls -A "$tmp")"; fails=$((fails + 1)); }
# A named pipe as the input (read once, from the one open: its writer keeps its reader).
mkfifo "$tmp/pipe"
cat "$in" >"$tmp/pipe" &
expect 0 "compress from a named pipe" "$hpcz" compress -i "$tmp/pipe" -o "$tmp/fifo.hpcz" -t f32 -d 100x64x128 --rel 1e-3 --device cpu
wait
cmp -s "$tmp/fifo.hpcz" "$tmp/a.hpcz" && pass=$((pass + 1)) || { echo "FAIL: a named pipe's archive differs"; fails=$((fails + 1)); }
# Interrupted (here while it waits on an input that never comes): its temporary output is removed too.
mkdir "$tmp/int" && mkfifo "$tmp/int/fifo"
"$hpcz" compress -i "$tmp/int/fifo" -o "$tmp/int/x.hpcz" -t f32 -d 10 --abs 1 2>/dev/null &
pid=$!
for _ in $(seq 50); do [ -n "$(ls -A "$tmp/int" | grep hpcz-)" ] && break; sleep 0.1; done
started=$(ls -A "$tmp/int" | grep -c hpcz-)
kill -INT $pid; wait $pid 2>/dev/null
[ "$started" = 1 ] && [ -z "$(ls -A "$tmp/int" | grep -v fifo)" ] && pass=$((pass + 1)) \
  || { echo "FAIL: an interrupted run left: $(ls -A "$tmp/int")"; fails=$((fails + 1)); }
expect 0 "test a good archive" "$hpcz" test "$tmp/a.hpcz" "$tmp/r.hpcz" "$tmp/s2.hpcz"
expect 2 "test a damaged archive" "$hpcz" test "$tmp/a.hpcz" "$tmp/flip.hpcz"
grep -q "flip.hpcz" "$tmp/err" && pass=$((pass + 1)) || { echo "FAIL: test does not name the damaged archive"; fails=$((fails + 1)); }
expect 0 "compress --help" "$hpcz" compress --help
grep -q "hpcz compress" "$tmp/out" && ! grep -q "hpcz decompress" "$tmp/out" && pass=$((pass + 1)) \
  || { echo "FAIL: compress --help is not compress's usage"; fails=$((fails + 1)); }
expect 1 "bare compress" "$hpcz" compress
grep -q "missing -i" "$tmp/err" && pass=$((pass + 1)) || { echo "FAIL: bare compress does not ask for the input"; fails=$((fails + 1)); }
expect 2 "directory as input" "$hpcz" compress -i "$tmp" -o "$tmp/c" -t f32 -d 10 --abs 1
expect 1 "dims trailing x" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64x128x --rel 1e-3
expect 1 "dims extent too large" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 99999999999999999999999 --rel 1e-3
expect 1 "dims product overflows" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 4294967296x4294967296 --rel 1e-3
if command -v gzip >/dev/null; then
  expect 0 "lossless decompress finds gzip by its magic" "$hpcz" lossless decompress -i "$tmp/in.gz" -o "$tmp/g4.out"
  cmp -s "$in" "$tmp/g4.out" && pass=$((pass + 1)) || { echo "FAIL: gzip found by magic decoded wrong"; fails=$((fails + 1)); }
fi
expect 0 "lossless decompress finds the HZLC codec" "$hpcz" lossless decompress -i "$tmp/l.c1" -o "$tmp/h.out"
cmp -s "$in" "$tmp/h.out" && pass=$((pass + 1)) || { echo "FAIL: HZLC codec found by its header decoded wrong"; fails=$((fails + 1)); }
# Random bytes do not grow under ORC RLE v1: such chunks are stored as they are.
head -c 400000 /dev/urandom >"$tmp/rand.bin"
expect 0 "lossless rle1 on random bytes" "$hpcz" lossless compress --codec rle1 --elem 1 -i "$tmp/rand.bin" -o "$tmp/rand.rle1"
[ "$(stat -c %s "$tmp/rand.rle1")" -le $((400000 + 48 + 16 * 7)) ] && pass=$((pass + 1)) \
  || { echo "FAIL: rle1 grew random bytes to $(stat -c %s "$tmp/rand.rle1")"; fails=$((fails + 1)); }
expect 0 "lossless rle1 random bytes back" "$hpcz" lossless decompress -i "$tmp/rand.rle1" -o "$tmp/rand.out"
cmp -s "$tmp/rand.bin" "$tmp/rand.out" && pass=$((pass + 1)) || { echo "FAIL: rle1 random round trip"; fails=$((fails + 1)); }
# An array of -0.0 at a denormal bound writes an archive that reads back, and a bound of 0 is bit-exact.
head -c 4000 /dev/zero | python3 -c 'import sys, struct; sys.stdout.buffer.write(struct.pack("<1000f", *([-0.0] * 1000)))' >"$tmp/negz.bin"
for b in 1e-40 0; do
  expect 0 "all -0.0 at abs $b" "$hpcz" compress -i "$tmp/negz.bin" -o "$tmp/negz.$b.hpcz" -t f32 -d 1000 --abs $b --device cpu
  expect 0 "all -0.0 at abs $b back" "$hpcz" decompress -i "$tmp/negz.$b.hpcz" -o "$tmp/negz.$b.out" --device cpu
done
cmp -s "$tmp/negz.bin" "$tmp/negz.0.out" && pass=$((pass + 1)) || { echo "FAIL: --abs 0 is not bit-exact on -0.0"; fails=$((fails + 1)); }
# The benchmarks run (on the CPU where there is no GPU) and find every decode right and every value
# within its bound: a broken chunk split once made the lossless bench's Deflate rows decode garbage.
expect 0 "bench lossless" "$hpcz" bench --mode lossless --data "$src/data" --size-mib 1 --reps 1 --no-second-stage
grep -q "/bytes/deflate | deflate" "$tmp/out" && ! grep -qE "WRONG|\| NO \|" "$tmp/out" && pass=$((pass + 1)) \
  || { echo "FAIL: bench --mode lossless reports a wrong decode"; grep -E "WRONG|NO" "$tmp/out" | head -3; fails=$((fails + 1)); }
for mode in ratio fast interp; do
  device=(); [ $mode = interp ] && device=(--device cpu)  # no GPU implementation yet
  expect 0 "bench $mode" "$hpcz" bench --mode $mode --data "$src/data" --size-mib 1 --reps 1 "${device[@]}"
  awk -F'|' '$2 ~ /climate/ { rows++; if ($8 + 0 != 0 || $7 + 0 > 1) bad = 1 } END { exit bad || rows < 3 }' "$tmp/out" \
    && pass=$((pass + 1)) || { echo "FAIL: bench --mode $mode: violations or too few rows"; fails=$((fails + 1)); }
done
# --fields takes comma-separated parts; a filter that matches no field is bad input, not an empty table.
expect 2 "bench --fields matching nothing" "$hpcz" bench --mode fast --device cpu --data "$src/data" --fields no-such-field --size-mib 1 --reps 1
expect 0 "bench --fields a,b" "$hpcz" bench --mode fast --device cpu --data "$src/data" --fields no-such-field,ncar_csm --bounds rel:1e-2 --size-mib 1 --reps 1
[ "$(grep -c '^| climate-ncar_csm' "$tmp/out")" = 1 ] && pass=$((pass + 1)) \
  || { echo "FAIL: bench --fields a,b: not the one row of the field that matches"; fails=$((fails + 1)); }
# The codebook bench: a row per histogram and size (dense + the bundled field, 3 sizes), and where a GPU
# is present its books equal the CPU's (exit 3 otherwise).
# The streaming options: GPU lists and memory budgets parsed strictly; a stdin spool leaves nothing in TMPDIR.
expect 1 "--gpus not a list" "$hpcz" compress -i "$in" -o "$tmp/g.hpcz" -t f32 -d 100x64x128 --rel 1e-3 --gpus 0,x
expect 1 "--gpus with --device cpu" "$hpcz" compress -i "$in" -o "$tmp/g.hpcz" -t f32 -d 100x64x128 --rel 1e-3 --device cpu --gpus 0
expect 1 "--gpu-memory not a size" "$hpcz" decompress -i "$tmp/a.hpcz" -o "$tmp/g.out" --gpu-memory 12Q
mkdir "$tmp/spool"
TMPDIR="$tmp/spool" "$hpcz" compress -i - -o "$tmp/s.hpcz" -t f32 -d 100x64x128 --rel 1e-3 --device cpu <"$in" 2>"$tmp/err"
cmp -s "$tmp/s.hpcz" "$tmp/a.hpcz" && [ -z "$(ls -A "$tmp/spool")" ] && pass=$((pass + 1)) \
  || { echo "FAIL: compress from stdin: other bytes than from the file, or a spool file left"; fails=$((fails + 1)); }
expect 0 "test verb on a good archive" "$hpcz" test "$tmp/s.hpcz" --device cpu
if "$hpcz" info "$tmp/a.hpcz" >/dev/null && [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -ge 1 ]; then
  # With a GPU: the streamed GPU archive is the CPU one, byte for byte, on each GPU and on all of them.
  for g in all 0 "$(($(nvidia-smi -L | wc -l) - 1))"; do
    sel=(--device gpu); [ "$g" = all ] || sel=(--gpus "$g")
    expect 0 "compress on GPUs $g" "$hpcz" compress -i "$in" -o "$tmp/gpu$g.hpcz" -f -t f32 -d 100x64x128 --rel 1e-3 "${sel[@]}" --gpu-memory 256M
    cmp -s "$tmp/gpu$g.hpcz" "$tmp/a.hpcz" && pass=$((pass + 1)) || { echo "FAIL: GPUs $g wrote other bytes"; fails=$((fails + 1)); }
  done
fi
expect 0 "bench codebook" "$hpcz" bench --mode codebook --data "$src/data" --reps 2
[ "$(grep -cE '^\| (dense geometric|climate)' "$tmp/out")" -eq 6 ] && ! grep -q "| NO |" "$tmp/out" && pass=$((pass + 1)) \
  || { echo "FAIL: bench --mode codebook: rows missing or GPU books differ"; fails=$((fails + 1)); }
# Hostile archives (issue 51; tests/hostile/, written from docs/FORMAT.md by make_hostile.py, which the
# committed files must match): each verb refuses them (exit 2) within 64 MB of what it takes on a small
# genuine archive. They declare 1 GiB of values and up to 1 GiB of plain chunks; info took 2.1 GB and
# 2.8 s on stage_bomb_ratio, test and decompress 1.8 and 2.0 GB, before their sizes were checked.
python3 "$src/tests/hostile/make_hostile.py" "$tmp/hostile" >/dev/null
for f in "$src"/tests/hostile/*.hpcz; do
  cmp -s "$f" "$tmp/hostile/$(basename "$f")" && pass=$((pass + 1)) \
    || { echo "FAIL: $(basename "$f") is not what make_hostile.py writes"; fails=$((fails + 1)); }
done
maxrss() {  # EXIT-CODE KIB of a command: its exit status and the largest resident set it had
  python3 -c 'import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
print(r, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
read -r _ base < <(maxrss "$hpcz" test --device cpu "$tmp/s2.hpcz")
for f in "$src"/tests/hostile/*.hpcz; do
  name=$(basename "$f")
  for verb in info test decompress; do
    case $verb in
      decompress) cmd=("$hpcz" decompress -i "$f" -o "$tmp/hostile.out" -f --device cpu) ;;
      test) cmd=("$hpcz" test --device cpu "$f") ;;
      info) cmd=("$hpcz" info "$f") ;;
    esac
    read -r rc kib < <(maxrss "${cmd[@]}")
    if [ "$verb" = info ] && [ "$name" = stage_bomb_fast.hpcz ]; then want=0; else want=2; fi  # info reads no fast chunk
    [ "$rc" = "$want" ] && [ $((kib - base)) -lt 65536 ] && pass=$((pass + 1)) \
      || { echo "FAIL: $verb $name: exit $rc (wanted $want), $((kib / 1024)) MiB resident (a genuine archive: $((base / 1024)))"; fails=$((fails + 1)); }
  done
done
# --max-output: an archive whose array is larger is refused as bad input, before anything is decoded.
expect 2 "test --max-output below the array" "$hpcz" test --max-output 1M "$tmp/a.hpcz"
grep -q "max-output" "$tmp/err" && pass=$((pass + 1)) || { echo "FAIL: test --max-output says nothing of the limit"; fails=$((fails + 1)); }
expect 0 "test --max-output above the array" "$hpcz" test --max-output 4M "$tmp/a.hpcz"
expect 2 "decompress --max-output below the array" "$hpcz" decompress --max-output 3276799 -i "$tmp/a.hpcz" -o "$tmp/lim.out"
[ ! -e "$tmp/lim.out" ] && pass=$((pass + 1)) || { echo "FAIL: a refused decompress left its output"; fails=$((fails + 1)); }
expect 0 "decompress --max-output at the array" "$hpcz" decompress --max-output 3276800 -i "$tmp/a.hpcz" -o "$tmp/lim.out"
expect 2 "decompress --max-output of the zeros archive" "$hpcz" decompress --max-output 64M -i "$src/tests/hostile/stage_zeros_ratio.hpcz" -o "$tmp/lim2.out"
expect 1 "bad --max-output" "$hpcz" test --max-output lots "$tmp/a.hpcz"
echo "cli: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
