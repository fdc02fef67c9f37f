#!/usr/bin/env bash
# CLI contract: verbs, flags, exit codes (0 ok, 1 usage, 2 bad input, 3 runtime failure), on the
# bundled sample; every error message starts "hpcz: ".
set -u
hpcz=$1
src=$2
bench_internal=${3:-}  # hpcz_bench_internal (the benchmarks that need the library's internals)
tmp=$(mktemp -d)
mounted=
trap '[ -n "$mounted" ] && umount "$mounted"; rm -rf "$tmp"' EXIT
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
  # the first line but the status lines of hpcz test ("FILE: OK (...)")
  if [ "$want" -ne 0 ] && ! grep -v ': OK (' "$tmp/err" | head -1 | grep -q '^hpcz: '; then
    fails=$((fails + 1))
    echo "FAIL: $what: the error message does not start 'hpcz: ': $(head -1 "$tmp/err")"
  fi
}
ok() { pass=$((pass + 1)); }
bad() { fails=$((fails + 1)); echo "FAIL: $*"; }
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
# hpcz.info()'s names for the same fields, with the same values (README, "Archive info keys")
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); pairs=[("version","format_version"),("shape","dims"),("mode","codec"),("bound_kind","bound_mode"),("lossless","second_stage"),("archive_size","archive_bytes")]; assert all(d[a]==d[b] for a,b in pairs) and d["mode"]=="fast" and d["bound_kind"]=="rel" and d["n_chunks"]==len(d["chunks"]), d' "$tmp/out" \
  && pass=$((pass + 1)) || { echo "FAIL: info --json lacks hpcz.info()'s keys"; fails=$((fails + 1)); }
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
# --abs and --rel together: both hold (abs_and_rel, format 6); --either: one of them; --either needs both.
expect 0 "both bounds" "$hpcz" compress -i "$in" -o "$tmp/c1.hpcz" -t f32 -d 100x64x128 --rel 1e-3 --abs 1 --device cpu
"$hpcz" info --json "$tmp/c1.hpcz" | grep -q '"bound_mode": "abs_and_rel"' && "$hpcz" info "$tmp/c1.hpcz" | grep -q 'format version 6' \
  && pass=$((pass + 1)) || { echo "FAIL: --abs --rel is not an abs_and_rel archive of version 6"; fails=$((fails + 1)); }
expect 0 "both bounds, --either" "$hpcz" compress -i "$in" -o "$tmp/c2.hpcz" -t f32 -d 100x64x128 --rel 1e-3 --abs 1 --either --mode ratio --device cpu
"$hpcz" info --json "$tmp/c2.hpcz" | grep -q '"bound_mode": "abs_or_rel"' && "$hpcz" info --json "$tmp/c2.hpcz" | grep -q '"eb_abs": 1[,}]' \
  && pass=$((pass + 1)) || { echo "FAIL: --either is not an abs_or_rel archive at eb_abs 1"; fails=$((fails + 1)); }
expect 0 "--pw-rel" "$hpcz" compress -i "$in" -o "$tmp/pw.hpcz" -t f32 -d 100x64x128 --pw-rel 1e-3 --device cpu
"$hpcz" info --json "$tmp/pw.hpcz" | grep -q '"bound_mode": "pw_rel"' \
  && pass=$((pass + 1)) || { echo "FAIL: --pw-rel is not a pw_rel archive"; fails=$((fails + 1)); }
expect 1 "--pw-rel with --abs" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64x128 --pw-rel 1e-3 --abs 1
expect 1 "--pw-rel 1" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64x128 --pw-rel 1
expect 0 "--pw-rel --mode interp" "$hpcz" compress -i "$in" -o "$tmp/pwi.hpcz" -t f32 -d 100x64x128 --pw-rel 1e-3 --mode interp --device cpu
"$hpcz" info "$tmp/pwi.hpcz" | grep -q 'log2 |value| within' && "$hpcz" info "$tmp/pwi.hpcz" | grep -q 'format version 8' \
  && pass=$((pass + 1)) || { echo "FAIL: --pw-rel --mode interp: info lacks the logs' bound or version 8"; fails=$((fails + 1)); }
expect 1 "--pw-rel below 1e-6 --mode ratio" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64x128 --pw-rel 1e-7 --mode ratio --device cpu
expect 0 "--psnr" "$hpcz" compress -i "$in" -o "$tmp/q.hpcz" -t f32 -d 100x64x128 --psnr 60 --mode ratio --device cpu
"$hpcz" info "$tmp/q.hpcz" | grep -qE 'PSNR achieved (6[0-9]|[7-9][0-9])\.[0-9]+ dB' \
  && pass=$((pass + 1)) || { echo "FAIL: --psnr 60: no PSNR achieved of 60 dB or more in info"; fails=$((fails + 1)); }
expect 0 "--nrmse -c" "$hpcz" compress -i "$in" -c -t f32 -d 100x64x128 --nrmse 1e-3 --device cpu
expect 1 "--psnr with --rel" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64x128 --psnr 60 --rel 1e-3
expect 1 "--nrmse 1" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64x128 --nrmse 1 --device cpu
expect 1 "--either with one bound" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64x128 --rel 1e-3 --either
expect 1 "no bound" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64x128
expect 1 "bad dims" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 100x64xx128 --rel 1e-3
expect 1 "rank 5" "$hpcz" compress -i "$in" -o "$tmp/c" -t f32 -d 1x1x100x64x128 --rel 1e-3
expect 1 "bad type" "$hpcz" compress -i "$in" -o "$tmp/c" -t i128 -d 100x64x128 --rel 1e-3
expect 2 "f16 of the wrong size" "$hpcz" compress -i "$in" -o "$tmp/c" -t f16 -d 100x64x128 --rel 1e-3
expect 0 "--pw-rel on int16" "$hpcz" compress -i "$in" -o "$tmp/pwi16.hpcz" -t i16 -d 200x64x128 --pw-rel 1e-2 --device cpu
"$hpcz" info "$tmp/pwi16.hpcz" | grep -q 'format version 8' \
  && "$hpcz" info "$tmp/pwi16.hpcz" | grep -q 'every int16 value within that x |value|; their float32 code values within 0.005 x' \
  && pass=$((pass + 1)) || { echo "FAIL: --pw-rel on int16: not a version-8 archive, or info lacks the code factor"; fails=$((fails + 1)); }
# Storage types: the sample's bytes as uint8 values (any bytes are), lossless in each mode; as int16 within 3.
for codec in fast ratio interp; do
  expect 0 "u8 $codec --abs 0" "$hpcz" compress -i "$in" -o "$tmp/u8.hpcz" -t u8 -d 400x64x128 --abs 0 --mode $codec -f -q
  expect 0 "u8 $codec decompress" "$hpcz" decompress -i "$tmp/u8.hpcz" -o "$tmp/u8.out" -f -q
  cmp -s "$in" "$tmp/u8.out" && pass=$((pass + 1)) || { echo "FAIL: u8 $codec --abs 0 round trip differs"; fails=$((fails + 1)); }
done
expect 0 "i16 --abs 3" "$hpcz" compress -i "$in" -o "$tmp/i16.hpcz" -t i16 -d 200x64x128 --abs 3 -f -q
expect 0 "i16 decompress" "$hpcz" decompress -i "$tmp/i16.hpcz" -o "$tmp/i16.out" -f -q
"$hpcz" info --json "$tmp/i16.hpcz" | grep -q '"dtype": "i16"' && pass=$((pass + 1)) || { echo "FAIL: i16 info dtype"; fails=$((fails + 1)); }
# info prints the bound the int16 values keep (3) and, apart, the code bound on their float32 code values.
"$hpcz" info "$tmp/i16.hpcz" | grep -q 'abs 3 -> absolute 3 on the int16 values (code bound 3.5' && pass=$((pass + 1)) ||
  { echo "FAIL: i16 info: the values' bound and the code bound"; fails=$((fails + 1)); }
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
# lossless takes IN as an argument and -c too (no default name: its suffix would depend on the codec)
expect 0 "lossless compress IN -o" "$hpcz" lossless compress --codec deflate "$in" -o "$tmp/lp.gz" -f
"$hpcz" lossless decompress "$tmp/lp.gz" -c 2>/dev/null | cmp -s - "$in" && ok || { echo "FAIL: lossless decompress IN -c"; fails=$((fails + 1)); }
"$hpcz" lossless compress --codec rle2 --elem 4 - <"$in" 2>/dev/null | "$hpcz" lossless decompress - 2>/dev/null | cmp -s - "$in" && ok ||
  { echo "FAIL: lossless through a pipe"; fails=$((fails + 1)); }
expect 1 "lossless without -o or -c" "$hpcz" lossless compress --codec deflate "$in"
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
# held PID DIR: the /proc/PID/fd entry of a file in DIR (a canonical path) that PID holds open, once
# it does (5 s at most); its link reads "DIR/#INODE (deleted)" for an unnamed O_TMPFILE output.
held() {
  local f
  for _ in $(seq 250); do
    for f in /proc/$1/fd/*; do
      case "$(readlink "$f" 2>/dev/null)" in "$2"/*) echo "$f"; return 0 ;; esac
    done
    kill -0 "$1" 2>/dev/null || return 1
    sleep 0.02
  done
  return 1
}
stop() {  # PID SIGNAL: sends it and waits 5 s at most (then SIGKILL: a failure)
  kill -"$2" "$1" 2>/dev/null
  for _ in $(seq 250); do kill -0 "$1" 2>/dev/null || break; sleep 0.02; done
  kill -0 "$1" 2>/dev/null && { kill -KILL "$1"; bad "process $1 outlived SIG$2"; }
  wait "$1" 2>/dev/null
}
# Interrupted (here while it waits on an input that never comes; SIGTERM, as a background job of a
# script ignores SIGINT): its output in the making is removed (named or not), with and without an
# older output to replace; a signal ignored (nohup) stays ignored, as in gzip.
mkdir "$tmp/int" && mkfifo "$tmp/int/fifo" && int=$(cd "$tmp/int" && pwd -P)
for f in "" -f; do
  [ -n "$f" ] && echo old >"$int/x.hpcz"
  (trap '' HUP && exec "$hpcz" compress -i "$int/fifo" -o "$int/x.hpcz" $f -t f32 -d 10 --abs 1 2>/dev/null) &
  pid=$!
  started=$(held $pid "$int")
  kill -HUP $pid && sleep 0.1
  kill -0 $pid 2>/dev/null && ok || bad "a hang-up ended a run that ignores SIGHUP (nohup)"
  stop $pid TERM
  left=$(ls -A "$int" | grep -v fifo)
  [ -n "$started" ] && [ "$left" = "${f:+x.hpcz}" ] && ok || bad "an interrupted run ($f) left: $left"
  [ -z "$f" ] || [ "$(cat "$int/x.hpcz")" = old ] && ok || bad "an interrupted run replaced the older output"
  rm -f "$int/x.hpcz"
done
# Outputs, careful with users' files (as gzip): a character device or FIFO is written into and never
# replaced; a directory, socket or block device is refused (exit 2); the output takes the input's
# permission bits and times; a failure to write is exit 3; a closed pipe ends hpcz by SIGPIPE, silently.
for f in "" -f; do
  expect 0 "decompress -o /dev/null $f" "$hpcz" decompress -i "$tmp/a.hpcz" -o /dev/null $f -q
  expect 0 "compress -o /dev/null $f" "$hpcz" compress -i "$in" -o /dev/null $f -t f32 -d 100x64x128 --rel 1e-3 --device cpu -q
  [ -c /dev/null ] && ok || bad "-o /dev/null $f: /dev/null is no longer a character device"
done
mkfifo "$tmp/ofifo"
for verb in decompress compress; do  # compress: the archive assembled in a spool, then copied in
  timeout 10 cat "$tmp/ofifo" >"$tmp/ofifo.out" &
  reader=$!
  if [ $verb = decompress ]; then
    expect 0 "decompress -o FIFO -f" timeout 10 "$hpcz" decompress -i "$tmp/a.hpcz" -o "$tmp/ofifo" -f --device cpu
    want="$tmp/a.out"
  else
    expect 0 "compress -o FIFO" timeout 10 "$hpcz" compress -i "$in" -o "$tmp/ofifo" -t f32 -d 100x64x128 --rel 1e-3 --device cpu
    want="$tmp/a.hpcz"
  fi
  wait $reader
  cmp -s "$tmp/ofifo.out" "$want" && [ -p "$tmp/ofifo" ] && ok || bad "$verb -o FIFO: data lost or the FIFO replaced"
done
t0=$(date -d '2001-02-03 04:05:06' +%s)
for m in 600 640; do  # the times as the input had them before it was read (its atime moves then)
  cp "$in" "$tmp/m$m.bin" && chmod $m "$tmp/m$m.bin" && touch -d @$t0 "$tmp/m$m.bin"
  echo older >"$tmp/m$m.hpcz" && chmod 666 "$tmp/m$m.hpcz"
  expect 0 "compress a $m input over a 666 file" "$hpcz" compress -i "$tmp/m$m.bin" -o "$tmp/m$m.hpcz" -f -t f32 -d 100x64x128 --rel 1e-3 --device cpu
  got=$(stat -c '%a %X %Y' "$tmp/m$m.hpcz")
  touch -d @$((t0 + 10)) "$tmp/m$m.hpcz"
  expect 0 "decompress a $m archive" "$hpcz" decompress -i "$tmp/m$m.hpcz" -o "$tmp/m$m.out" --device cpu
  got="$got, $(stat -c '%a %X %Y' "$tmp/m$m.out")"
  [ "$got" = "$m $t0 $t0, $m $((t0 + 10)) $((t0 + 10))" ] && cmp -s "$tmp/m$m.out" "$tmp/a.out" && ok \
    || bad "mode $m, times $t0: archive, output: $got"
done
(umask 027 && "$hpcz" compress -i - -o "$tmp/um.hpcz" -t f32 -d 100x64x128 --rel 1e-3 --device cpu -q <"$in")
[ "$(stat -c %a "$tmp/um.hpcz")" = 640 ] && ok || bad "from stdin under umask 027: mode $(stat -c %a "$tmp/um.hpcz"), not 640"
one_line() {  # description: the last command's stderr is one line, "hpcz: " and the reason
  [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "^hpcz: $2" "$tmp/err" && ok || bad "$1: not one line '$2': $(cat "$tmp/err")"
}
expect 3 "decompress -o - > /dev/full" sh -c '"$1" decompress -i "$2" -o - --device cpu >/dev/full' sh "$hpcz" "$tmp/a.hpcz"
one_line "decompress -o - > /dev/full" "standard output: No space left on device"
expect 3 "compress -o - > /dev/full" sh -c '"$1" compress -i "$2" -o - -t f32 -d 100x64x128 --rel 1e-3 --device cpu -q >/dev/full' sh "$hpcz" "$in"
one_line "compress -o - > /dev/full" "standard output: No space left on device"
expect 3 "decompress -o /dev/full" "$hpcz" decompress -i "$tmp/a.hpcz" -o /dev/full -q
one_line "decompress -o /dev/full" "/dev/full: No space left on device"
expect 3 "info > /dev/full" sh -c '"$1" info "$2" >/dev/full' sh "$hpcz" "$tmp/a.hpcz"
expect 3 "output in a missing directory" "$hpcz" decompress -i "$tmp/a.hpcz" -o "$tmp/no/such/x" -q
one_line "output in a missing directory" "$tmp/no/such/x: No such file or directory"
mkdir "$tmp/odir"
expect 2 "directory as -o" "$hpcz" decompress -i "$tmp/a.hpcz" -o "$tmp/odir" -f
one_line "directory as -o" "$tmp/odir: is a directory"
if python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$tmp/sock" 2>/dev/null; then
  expect 2 "socket as -o" "$hpcz" decompress -i "$tmp/a.hpcz" -o "$tmp/sock" -f
  [ -S "$tmp/sock" ] && ok || bad "a socket as -o was replaced"
fi
ln -s a.out.copy "$tmp/olink" && cp "$tmp/a.out" "$tmp/a.out.copy"
expect 0 "-o a link to a file -f" "$hpcz" compress -i "$in" -o "$tmp/olink" -f -t f32 -d 100x64x128 --rel 1e-3 --device cpu
[ -L "$tmp/olink" ] && cmp -s "$tmp/a.out.copy" "$tmp/a.hpcz" && ok || bad "-o a symbolic link: the link replaced, or its file not written"
if [ -L /dev/stdout ]; then  # /dev/stdout on a file is standard output: appended to after >>, not replaced
  echo head >"$tmp/log"
  "$hpcz" decompress -i "$tmp/a.hpcz" -o /dev/stdout --device cpu -q >>"$tmp/log"
  { echo head; cat "$tmp/a.out"; } | cmp -s - "$tmp/log" && ok || bad "-o /dev/stdout >> FILE: not appended"
fi
ln -s nowhere "$tmp/dangling"
expect 2 "-o a dangling link" "$hpcz" decompress -i "$tmp/a.hpcz" -o "$tmp/dangling" -f
[ -L "$tmp/dangling" ] && [ ! -e "$tmp/nowhere" ] && ok || bad "-o a dangling link: the link replaced or followed"
# A closed pipe: killed by SIGPIPE (141), nothing said; where SIGPIPE is ignored, exit 3 and the reason.
"$hpcz" decompress -i "$tmp/a.hpcz" -o - --device cpu 2>"$tmp/err" | head -c 1 >/dev/null
st=${PIPESTATUS[0]}
[ "$st" = 141 ] && [ ! -s "$tmp/err" ] && ok || bad "a closed pipe: exit $st, $(cat "$tmp/err")"
(trap '' PIPE && "$hpcz" decompress -i "$tmp/a.hpcz" -o - --device cpu 2>"$tmp/err" | head -c 1 >/dev/null; exit "${PIPESTATUS[0]}")
st=$?
[ "$st" = 3 ] && ok || bad "a closed pipe, SIGPIPE ignored: exit $st"
one_line "a closed pipe, SIGPIPE ignored" "standard output: Broken pipe"
# A full file system (a small tmpfs where one can be mounted): exit 3 naming the file, nothing left.
mkdir "$tmp/small"
if mount -t tmpfs -o size=256k tmpfs "$tmp/small" 2>/dev/null; then
  mounted="$tmp/small"
  expect 3 "compress onto a full file system" "$hpcz" compress -i "$in" -o "$tmp/small/x.hpcz" -t f32 -d 100x64x128 --rel 1e-3 --device cpu
  one_line "compress onto a full file system" "$tmp/small/x.hpcz: No space left on device"
  expect 3 "decompress onto a full file system" "$hpcz" decompress -i "$tmp/a.hpcz" -o "$tmp/small/x" --device cpu
  one_line "decompress onto a full file system" "$tmp/small/x: No space left on device"
  [ -z "$(ls -A "$tmp/small")" ] && ok || bad "a full file system kept: $(ls -A "$tmp/small")"
  umount "$tmp/small" && mounted=
else
  echo "note: no tmpfs could be mounted here; the full file system checks are skipped"
fi
# Killed (SIGKILL) while it writes a large-ish archive: an unnamed O_TMPFILE output leaves nothing.
mkdir "$tmp/kill" && kill_dir=$(cd "$tmp/kill" && pwd -P)
truncate -s 256M "$tmp/big.bin"
"$hpcz" compress -i "$tmp/big.bin" -o "$kill_dir/k.hpcz" -t f32 -d 67108864 --abs 1e-3 --device cpu -q &
pid=$!
fd=$(held $pid "$kill_dir")
for _ in $(seq 250); do [ -n "$fd" ] && [ "$(stat -L -c %s "$fd" 2>/dev/null || echo 0)" -gt 0 ] && break; sleep 0.02; done
link=$(readlink "$fd" 2>/dev/null)
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
st=$?
if [ "$st" != 137 ]; then
  echo "note: the compression ended (exit $st) before it could be killed; the SIGKILL check is skipped"
elif [ "${link% (deleted)}" = "$link" ]; then
  echo "note: no O_TMPFILE on $kill_dir (the output was $link); the SIGKILL check is skipped"
else
  [ -z "$(ls -A "$kill_dir")" ] && ok || bad "a killed compression left: $(ls -A "$kill_dir")"
fi
rm -f "$tmp/big.bin"
# Where the file system has no O_TMPFILE (here faked by an LD_PRELOAD shim, where a C compiler is at
# hand): a hidden temporary beside the output, with the input's mode, removed on SIGINT.
cat >"$tmp/shim.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#define SHIM(name) int name(const char* p, int fl, ...) { \
  va_list ap; va_start(ap, fl); mode_t m = va_arg(ap, mode_t); va_end(ap); \
  if ((fl & O_TMPFILE) == O_TMPFILE) { errno = EOPNOTSUPP; return -1; } \
  return ((int (*)(const char*, int, ...))dlsym(RTLD_NEXT, #name))(p, fl, m); }
SHIM(open)
SHIM(open64)
EOF
if cc -shared -fPIC -o "$tmp/shim.so" "$tmp/shim.c" -ldl 2>/dev/null; then
  mkdir "$tmp/named" && named=$(cd "$tmp/named" && pwd -P)
  LD_PRELOAD="$tmp/shim.so" "$hpcz" compress -i "$tmp/m640.bin" -o "$named/n.hpcz" -t f32 -d 100x64x128 --rel 1e-3 --device cpu -q
  cmp -s "$named/n.hpcz" "$tmp/m640.hpcz" && [ "$(stat -c '%a %Y' "$named/n.hpcz")" = "$(stat -c '%a %Y' "$tmp/m640.bin")" ] \
    && [ "$(ls -A "$named")" = n.hpcz ] && ok || bad "without O_TMPFILE: $(ls -lA "$named")"
  mkfifo "$tmp/never"
  LD_PRELOAD="$tmp/shim.so" "$hpcz" compress -i "$tmp/never" -o "$named/n.hpcz" -f -t f32 -d 10 --abs 1 2>/dev/null &
  pid=$!
  fd=$(held $pid "$named")
  link=$(readlink "$fd")
  stop $pid TERM
  case "$link" in "$named"/.n.hpcz.hpcz-*) ok ;; *) bad "without O_TMPFILE, the output was made as '$link'" ;; esac
  [ "$(ls -A "$named")" = n.hpcz ] && ok || bad "without O_TMPFILE, an interrupted run left: $(ls -A "$named")"
else
  echo "note: no C compiler for the LD_PRELOAD shim; the checks without O_TMPFILE are skipped"
fi
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
# The two that need the library's internals are hpcz_bench_internal's: hpcz bench says so in one line.
for m in lossless codebook; do
  expect 1 "bench --mode $m moved" "$hpcz" bench --mode $m --data "$src/data" --reps 1
  [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "hpcz_bench_internal --mode $m" "$tmp/err" && pass=$((pass + 1)) \
    || { echo "FAIL: hpcz bench --mode $m does not say in one line where it went"; fails=$((fails + 1)); }
done
if [ -n "$bench_internal" ]; then
  "$bench_internal" --mode lossless --data "$src/data" --size-mib 1 --reps 1 --no-second-stage >"$tmp/out" 2>"$tmp/err"
  [ $? = 0 ] && grep -q "/bytes/deflate | deflate" "$tmp/out" && ! grep -qE "WRONG|\| NO \|" "$tmp/out" && pass=$((pass + 1)) \
    || { echo "FAIL: hpcz_bench_internal --mode lossless fails or reports a wrong decode"; grep -E "WRONG|NO" "$tmp/out" | head -3; fails=$((fails + 1)); }
fi
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
# The codebook bench: a row per histogram and size (dense + the bundled field, 3 sizes), and where a GPU
# is present its books equal the CPU's (exit 3 otherwise).
if [ -n "$bench_internal" ]; then
  "$bench_internal" --mode codebook --data "$src/data" --reps 2 >"$tmp/out" 2>"$tmp/err"
  [ $? = 0 ] && [ "$(grep -cE '^\| (dense geometric|climate)' "$tmp/out")" -eq 6 ] && ! grep -q "| NO |" "$tmp/out" \
    && pass=$((pass + 1)) || { echo "FAIL: hpcz_bench_internal --mode codebook: fails, rows missing or GPU books differ"; fails=$((fails + 1)); }
fi
# Hostile archives (issue 51; tests/hostile/, written from docs/FORMAT.md by make_hostile.py, which the
# committed files must match): each verb refuses them (exit 2) within 64 MB of what it takes on a small
# genuine archive and within 1 s, with one message "hpcz: FILE: ..." and (info) nothing half-printed.
# They declare 1 GiB of values and up to 1 GiB of plain chunks; info took 2.1 GB and 2.8 s on
# stage_bomb_ratio, test and decompress 1.8 and 2.0 GB, before their sizes were checked.
python3 "$src/tests/hostile/make_hostile.py" "$tmp/hostile" >/dev/null
for f in "$src"/tests/hostile/*.hpcz; do
  cmp -s "$f" "$tmp/hostile/$(basename "$f")" && pass=$((pass + 1)) \
    || { echo "FAIL: $(basename "$f") is not what make_hostile.py writes"; fails=$((fails + 1)); }
done
maxrss() {  # EXIT-CODE KIB SECONDS of a command (stdout in $tmp/out, stderr in $tmp/err): its exit
  # status, the largest resident set it had and its wall time
  python3 -c 'import resource, subprocess, sys, time
t = time.monotonic()
with open(sys.argv[1], "wb") as o, open(sys.argv[2], "wb") as e:
    r = subprocess.run(sys.argv[3:], stdout=o, stderr=e).returncode
print(r, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "%.3f" % (time.monotonic() - t))' "$tmp/out" "$tmp/err" "$@"
}
read -r _ base _ < <(maxrss "$hpcz" test --device cpu "$tmp/s2.hpcz")
for f in "$src"/tests/hostile/*.hpcz; do
  name=$(basename "$f")
  for verb in info test decompress; do
    case $verb in
      decompress) cmd=("$hpcz" decompress -i "$f" -o "$tmp/hostile.out" -f --device cpu) ;;
      test) cmd=("$hpcz" test --device cpu "$f") ;;
      info) cmd=("$hpcz" info "$f") ;;
    esac
    read -r rc kib secs < <(maxrss "${cmd[@]}")
    if [ "$verb" = info ] && [ "$name" = stage_bomb_fast.hpcz ]; then want=0; else want=2; fi  # info reads no fast chunk
    [ "$rc" = "$want" ] && [ $((kib - base)) -lt 65536 ] && awk -v s="$secs" 'BEGIN { exit !(s < 1) }' && pass=$((pass + 1)) \
      || { echo "FAIL: $verb $name: exit $rc (wanted $want), $((kib / 1024)) MiB resident (a genuine archive: $((base / 1024))), $secs s"; fails=$((fails + 1)); }
    [ "$want" = 0 ] && continue
    [ "$(wc -l <"$tmp/err")" = 1 ] && [[ "$(cat "$tmp/err")" == "hpcz: $f: corrupt archive: "* ]] && pass=$((pass + 1)) \
      || { echo "FAIL: $verb $name: not one line 'hpcz: $f: corrupt archive: ...': $(cat "$tmp/err")"; fails=$((fails + 1)); }
    [ "$verb" != info ] || [ ! -s "$tmp/out" ] && pass=$((pass + 1)) \
      || { echo "FAIL: info $name refused after printing: $(head -3 "$tmp/out")"; fails=$((fails + 1)); }
  done
done
# --max-output: an archive whose array is larger is refused as bad input, before anything is decoded.
expect 2 "test --max-output below the array" "$hpcz" test --max-output 1M "$tmp/a.hpcz"
grep -q "max-output" "$tmp/err" && pass=$((pass + 1)) || { echo "FAIL: test --max-output says nothing of the limit"; fails=$((fails + 1)); }
grep -q "^hpcz: $tmp/a.hpcz: the archive's array" "$tmp/err" && pass=$((pass + 1)) \
  || { echo "FAIL: test --max-output does not name the archive: $(cat "$tmp/err")"; fails=$((fails + 1)); }
head -c 50 "$tmp/a.hpcz" >"$tmp/short.hpcz"
expect 2 "decompress --max-output of a truncated header" "$hpcz" decompress --max-output 1M -i "$tmp/short.hpcz" -o "$tmp/lim.out"
one_line "decompress --max-output of a truncated header" "$tmp/short.hpcz: corrupt archive: truncated header"
expect 0 "test --max-output above the array" "$hpcz" test --max-output 4M "$tmp/a.hpcz"
expect 2 "decompress --max-output below the array" "$hpcz" decompress --max-output 3276799 -i "$tmp/a.hpcz" -o "$tmp/lim.out"
[ ! -e "$tmp/lim.out" ] && pass=$((pass + 1)) || { echo "FAIL: a refused decompress left its output"; fails=$((fails + 1)); }
expect 0 "decompress --max-output at the array" "$hpcz" decompress --max-output 3276800 -i "$tmp/a.hpcz" -o "$tmp/lim.out"
expect 2 "decompress --max-output of the zeros archive" "$hpcz" decompress --max-output 64M -i "$src/tests/hostile/stage_zeros_ratio.hpcz" -o "$tmp/lim2.out"
expect 1 "bad --max-output" "$hpcz" test --max-output lots "$tmp/a.hpcz"
# zstd and gzip habits (issue 44): IN as an argument, options in any order, --opt=V, -c and the
# default names IN.hpcz / IN less .hpcz, '-' in a pipe, short usage errors, no binary on a terminal.
lines() {  # description N: the last command's stderr has at most N lines
  [ "$(wc -l <"$tmp/err")" -le "$2" ] && ok || bad "$1: more than $2 lines on stderr: $(head -5 "$tmp/err")"
}
expect 0 "compress IN -o OUT" "$hpcz" compress "$in" -o "$tmp/pos.hpcz" -t f32 -d 100x64x128 --rel 1e-3 --device cpu
cmp -s "$tmp/pos.hpcz" "$tmp/a.hpcz" && ok || bad "compress IN -o OUT: other bytes than -i IN"
expect 0 "options after and around IN" "$hpcz" compress -t f32 "$in" --rel 1e-3 -o "$tmp/pos2.hpcz" --device cpu -d 100x64x128
cmp -s "$tmp/pos2.hpcz" "$tmp/a.hpcz" && ok || bad "options around IN: other bytes"
expect 0 "decompress IN -o OUT" "$hpcz" decompress "$tmp/pos.hpcz" -o "$tmp/pos.out" --device cpu
cmp -s "$tmp/pos.out" "$tmp/a.out" && ok || bad "decompress IN -o OUT: other bytes than -i IN"
expect 0 "--opt=value" "$hpcz" compress "$in" -o "$tmp/eq.hpcz" -t f32 -d 100x64x128 --rel=1e-3 --device=cpu
cmp -s "$tmp/eq.hpcz" "$tmp/a.hpcz" && ok || bad "--rel=1e-3 --device=cpu: other bytes than --rel 1e-3 --device cpu"
expect 0 "--mode=ratio" "$hpcz" compress "$in" -o "$tmp/eqr.hpcz" -t f32 -d 100x64x128 --rel=1e-3 --mode=ratio --device=cpu
cmp -s "$tmp/eqr.hpcz" "$tmp/r.hpcz" && ok || bad "--mode=ratio: other bytes than --mode ratio"
expect 0 "--max-output=SIZE" "$hpcz" test --max-output=4M --device=cpu "$tmp/a.hpcz"
expect 2 "--max-output=SIZE below the array" "$hpcz" test --max-output=1M "$tmp/a.hpcz"
expect 1 "--rel= (empty)" "$hpcz" compress "$in" -o "$tmp/c" -t f32 -d 100x64x128 --rel=
expect 1 "--force=1 (a flag with a value)" "$hpcz" compress "$in" -o "$tmp/c" -t f32 -d 100x64x128 --rel 1e-3 --force=1
grep -q "takes no value" "$tmp/err" && ok || bad "--force=1: $(cat "$tmp/err")"
expect 1 "two inputs" "$hpcz" compress "$in" "$in" -o "$tmp/c" -t f32 -d 100x64x128 --rel 1e-3
expect 1 "-i and IN" "$hpcz" decompress -i "$tmp/a.hpcz" "$tmp/r.hpcz" -o "$tmp/c"
expect 1 "-c with -o FILE" "$hpcz" decompress "$tmp/a.hpcz" -c -o "$tmp/c"
[ ! -e "$tmp/c" ] && ok || bad "a refused command line wrote $tmp/c"
# Pipes: '-' in, and without -o the output is standard output (as zstd in a pipe); within the bound.
cat "$in" | "$hpcz" compress - -t f32 -d 100x64x128 --rel 1e-3 --device cpu 2>"$tmp/err" \
  | "$hpcz" decompress - --device cpu 2>>"$tmp/err" >"$tmp/p2.out"
st="${PIPESTATUS[*]}"
[ "$st" = "0 0 0" ] && cmp -s "$tmp/p2.out" "$tmp/a.out" && ok || bad "cat | compress - | decompress -: exit $st, $(cat "$tmp/err")"
expect 0 "compare the piped round trip" "$hpcz" compare -t f32 -d 100x64x128 "$in" "$tmp/p2.out"
awk '/max rel error/ { exit !($4 <= 1e-3) }' "$tmp/out" && ok || bad "piped round trip: $(grep 'max rel' "$tmp/out")"
expect 0 "-c" "$hpcz" decompress "$tmp/a.hpcz" -c --device cpu
cmp -s "$tmp/out" "$tmp/a.out" && ok || bad "decompress -c: stdout is not the array"
expect 0 "--stdout" "$hpcz" compress "$in" --stdout -t f32 -d 100x64x128 --rel 1e-3 --device cpu
cmp -s "$tmp/out" "$tmp/a.hpcz" && ok || bad "compress --stdout: stdout is not the archive"
# Default names: x.bin -> x.bin.hpcz -> x.bin, which exists: refused (one line) until -f.
mkdir "$tmp/names" && cp "$in" "$tmp/names/x.bin"
expect 0 "compress IN (named IN.hpcz)" "$hpcz" compress "$tmp/names/x.bin" -t f32 -d 100x64x128 --rel 1e-3 --device cpu
cmp -s "$tmp/names/x.bin.hpcz" "$tmp/a.hpcz" && cmp -s "$tmp/names/x.bin" "$in" && [ ! -s "$tmp/out" ] && ok \
  || bad "compress x.bin: no x.bin.hpcz, or x.bin changed, or stdout written: $(ls "$tmp/names")"
expect 1 "compress IN again (IN.hpcz exists)" "$hpcz" compress "$tmp/names/x.bin" -t f32 -d 100x64x128 --rel 1e-3
one_line "compress IN again" "$tmp/names/x.bin.hpcz: exists (-f to overwrite it)"
expect 1 "decompress IN.hpcz (IN exists)" "$hpcz" decompress "$tmp/names/x.bin.hpcz" --device cpu
one_line "decompress IN.hpcz (IN exists)" "$tmp/names/x.bin: exists (-f to overwrite it)"
cmp -s "$tmp/names/x.bin" "$in" && [ "$(ls -A "$tmp/names" | tr '\n' ' ')" = "x.bin x.bin.hpcz " ] && ok \
  || bad "a refused decompress touched x.bin or left: $(ls -A "$tmp/names")"
expect 0 "decompress IN.hpcz -f" "$hpcz" decompress "$tmp/names/x.bin.hpcz" -f --device cpu
cmp -s "$tmp/names/x.bin" "$tmp/a.out" && ok || bad "decompress x.bin.hpcz -f: x.bin is not the decompressed array"
rm "$tmp/names/x.bin"
expect 0 "decompress IN.hpcz (named IN)" "$hpcz" decompress "$tmp/names/x.bin.hpcz" --device cpu
cmp -s "$tmp/names/x.bin" "$tmp/a.out" && ok || bad "decompress x.bin.hpcz: x.bin is not the decompressed array"
expect 1 "decompress without .hpcz and without -o" "$hpcz" decompress "$tmp/names/x.bin"
one_line "decompress without .hpcz" "$tmp/names/x.bin: no .hpcz suffix to take off for the output's name: give -o OUT (or -c)"
cp "$tmp/a.hpcz" "$tmp/names/.hpcz"
expect 1 "decompress a file named .hpcz" "$hpcz" decompress "$tmp/names/.hpcz"
[ "$(ls -A "$tmp/names" | tr '\n' ' ')" = ".hpcz x.bin x.bin.hpcz " ] && ok || bad "decompress .hpcz left: $(ls -A "$tmp/names")"
cp "$tmp/a.hpcz" "$tmp/-dash.hpcz"
(cd "$tmp" && "$hpcz" decompress -c --device cpu -- -dash.hpcz >"$tmp/dash.out" 2>"$tmp/err")
cmp -s "$tmp/dash.out" "$tmp/a.out" && ok || bad "-- then a name starting with '-': $(cat "$tmp/err")"
# Usage errors: one line and where the help is, exit 1; --help still prints the whole usage (stdout, 0).
expect 1 "unknown option" "$hpcz" compress "$in" -t f32 -d 100x64x128 --rel 1e-3 --foo
[ "$(cat "$tmp/err")" = "hpcz: unknown option '--foo'
Try 'hpcz compress --help'." ] && ok || bad "unknown option: not the two lines: $(cat "$tmp/err")"
for cmdline in "" "frobnicate" "compress" "decompress -i" "compress $tmp/names/x.bin -t f32 -d 100x64x128" "info" \
               "lossless compress --codec lz4 -i $in -o $tmp/c" "bench --frob" "compress $tmp/names/x.bin -t f16 -d 10 --abs 1"; do
  expect 1 "usage error: hpcz $cmdline" "$hpcz" $cmdline
  lines "usage error: hpcz $cmdline" 2
done
expect 0 "compress -h" "$hpcz" compress -h
[ "$(wc -l <"$tmp/out")" -gt 5 ] && grep -q "hpcz compress IN" "$tmp/out" && [ ! -s "$tmp/err" ] && ok || bad "compress -h: not the usage on stdout"
# --fill nan: refused, saying why (NaN needs none); and indeed NaN (payloads, sign) and Inf come back
# bit for bit without a fill value, in each mode.
expect 1 "--fill nan" "$hpcz" compress "$in" -o "$tmp/c" -t f32 -d 100x64x128 --rel 1e-3 --fill nan
one_line "--fill nan" "--fill nan: NaN and Inf need no fill value; they come back bit for bit without one"
expect 1 "--fill=inf" "$hpcz" compress "$in" -o "$tmp/c" -t f32 -d 100x64x128 --rel 1e-3 --fill=-inf
python3 -c 'import struct, sys
v = [i * 0.37 for i in range(4096)]
bits = [0x7fc00000, 0xffc00000, 0x7fc00001, 0x7f800001, 0xff812345, 0x7f800000, 0xff800000]
out = bytearray(struct.pack("<4096f", *v))
for k, b in enumerate(bits * 40):
    struct.pack_into("<I", out, 4 * (k * 13 % 4096), b)
open(sys.argv[1], "wb").write(out)' "$tmp/nonfinite.bin"
for mode in fast ratio interp; do
  "$hpcz" compress "$tmp/nonfinite.bin" -o "$tmp/nf.$mode.hpcz" -t f32 -d 4096 --rel 1e-3 --mode $mode --device cpu -q \
    && "$hpcz" decompress "$tmp/nf.$mode.hpcz" -o "$tmp/nf.$mode.out" --device cpu -q \
    && python3 -c 'import struct, sys
a, b = (struct.unpack("<4096I", open(p, "rb").read()) for p in sys.argv[1:3])
nf = [i for i in range(4096) if a[i] & 0x7f800000 == 0x7f800000]
sys.exit(not (len(nf) > 200 and all(a[i] == b[i] for i in nf)))' "$tmp/nonfinite.bin" "$tmp/nf.$mode.out" \
    && ok || bad "$mode: NaN or Inf not back bit for bit without --fill"
done
# Reversed dims cannot be told from the size (the product is the same): info shows the dims as -d
# took them, slowest to fastest, for the user to check.
expect 0 "compress with reversed dims" "$hpcz" compress "$in" -o "$tmp/rev.hpcz" -t f32 -d 128x64x100 --rel 1e-3 --device cpu
expect 0 "info of reversed dims" "$hpcz" info "$tmp/rev.hpcz"
grep -q "array  *f32 128x64x100 (dims slowest to fastest" "$tmp/out" && ok || bad "info does not show the dims: $(grep array "$tmp/out")"
expect 0 "info" "$hpcz" info "$tmp/a.hpcz"
grep -q "array  *f32 100x64x128 (dims slowest to fastest" "$tmp/out" && ok || bad "info does not show the dims: $(grep array "$tmp/out")"
# A terminal as standard output (a pseudo-terminal, where python3 has pty): no binary data written to it
# (one line, exit 1) unless -f; so too when IN '-' sends the output there by default.
tty_run() {  # command...: prints "EXIT BYTES-ON-THE-TERMINAL STDERR-LINES"
  python3 -c 'import os, pty, select, subprocess, sys
m, s = pty.openpty()
p = subprocess.Popen(sys.argv[2:], stdin=open(sys.argv[1], "rb"), stdout=s, stderr=subprocess.PIPE)
os.close(s)
got = 0
while True:
    if select.select([m], [], [], 0.1)[0]:
        try:
            k = len(os.read(m, 1 << 16))
        except OSError:
            break
        if not k:
            break
        got += k
    elif p.poll() is not None:
        break
err = p.stderr.read().decode()
print(p.wait(), got, len(err.splitlines()))' "$@"
}
if python3 -c 'import pty; pty.openpty()' 2>/dev/null; then
  cp "$tmp/nf.fast.hpcz" "$tmp/small.hpcz"
  [ "$(tty_run /dev/null "$hpcz" decompress "$tmp/small.hpcz" -c)" = "1 0 1" ] && ok || bad "decompress -c to a terminal: $(tty_run /dev/null "$hpcz" decompress "$tmp/small.hpcz" -c)"
  [ "$(tty_run "$tmp/small.hpcz" "$hpcz" decompress -)" = "1 0 1" ] && ok || bad "decompress - to a terminal: not refused"
  [ "$(tty_run "$tmp/nonfinite.bin" "$hpcz" compress - -t f32 -d 4096 --abs 1)" = "1 0 1" ] && ok || bad "compress - to a terminal: not refused"
  read -r st got _ < <(tty_run /dev/null "$hpcz" decompress "$tmp/small.hpcz" -c -f -q)
  [ "$st" = 0 ] && [ "$got" -ge 16384 ] && ok || bad "decompress -c -f to a terminal: exit $st, $got bytes"
else
  echo "note: no pseudo-terminal here; the terminal checks are skipped"
fi
echo "cli: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
