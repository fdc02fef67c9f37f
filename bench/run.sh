#!/usr/bin/env bash
# Regenerates every figure the README publishes: builds hpcz, runs `hpcz bench` for the fast, ratio and
# lossless modes at the README's settings, compares each output with the baseline it replaces
# (bench/compare_baseline.py) and writes it to bench/results/<device-kind>-<mode>.md. When their builds
# are at hand, also the peers on the same data: nvCOMP and libdeflate on the lossless mode's Deflate
# chunks (bench/compare/, results in <kind>-lossless-peers.md) and public cuSZp on the fast mode's
# tiled fields (bench/compare/build_cuszp.sh, results in <kind>-cuszp.md); nvCOMP's Bitcomp lossy mode
# beside the fast mode, at the requested bound and at equal maximum error (bitcomp_bench, results in
# <kind>-fast-vs-bitcomp.md).
#
# usage (repo root or anywhere in it): bench/run.sh [options]
#   --device gpu|cpu   gpu (the default when nvidia-smi lists one): device kind from nvidia-smi (h100,
#                      h200, ...), --size-mib 512 --reps 10, build dir build-gpu (sm_90, as gpu_check.sh);
#                      cpu: kind cpu-<nproc>core, --size-mib 64 --reps 3, a CPU-only build in build-cpu
#   --modes LIST       any of fast,ratio,interp,lossless,cuszp,bitcomp (default: all six; cuszp and bitcomp run
#                      only on a GPU, cuszp only with a cuSZp checkout or binary, bitcomp only with nvCOMP
#                      under bench/ext/nvcomp; the nvCOMP/libdeflate peers run with lossless when
#                      bench/ext/ holds them)
#   --data DIR         the fields (default: .data if there, else ../shared/data)
#   --size-mib N, --reps N   other settings than the README's (then say so next to the figures)
#   --build-dir DIR    the build folder (default above); --no-build uses the hpcz binary in it as it is
#   --no-write         compare only, leave bench/results/ as it is
#   --no-peers         no nvCOMP, libdeflate, cuSZp
#   --cuszp DIR        a checkout of https://github.com/szcompressor/cuSZp (default bench/ext/cuSZp,
#                      git-ignored; never commit it); built into bench/ext/bin/cuSZp when --no-build is
#                      not given or no binary is there
#   --timeout S        limit of each bench call (default 400 s)
#   --threshold PCT    compare_baseline.py's: rows and means more than PCT % slower are flagged (default 2;
#                      a shared CPU machine needs more)
#   --commit SHA       the commit measured, for the log (default: git rev-parse HEAD, or $COMMIT; the
#                      copy of the tree on a device machine may lack .git: give it there)
#   --out DIR          run.log (settings, comparisons, failures) and a copy of every result written
#                      (default $OUT, else /tmp/hpcz_run); at most 6 files, so a device tool that returns
#                      $OUT (8 files at most) brings them all back
# exit status: 0 every comparison clean, 1 a comparison flagged something, 3 a build or bench failed.
#
# A device call of 10 minutes does not hold them all: build and fast in one call, then --no-build with
# --modes ratio, --modes lossless (with bench/ext carried for the peers), --modes cuszp; carry .data
# (../shared/tools/stage-data fills it). The results come back in $OUT: copy them to bench/results/ and
# commit them with the device and the commit measured named in the message.
set -u -o pipefail
self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
root=$(cd "$(dirname "$self")/.." && pwd)
cd "$root"

device="" modes="fast,ratio,interp,lossless,cuszp,bitcomp" data="" size="" reps="" bdir="" build=1 write=1 peers=1
cuszp_src=bench/ext/cuSZp out=${OUT:-/tmp/hpcz_run} timeout_s=400 commit=${COMMIT:-} threshold=2
while [ $# -gt 0 ]; do
  case $1 in
    --device|--modes|--data|--size-mib|--reps|--build-dir|--cuszp|--timeout|--commit|--out|--threshold)
      [ $# -ge 2 ] || { echo "run.sh: $1 needs a value" >&2; exit 2; }
      case $1 in
        --device) device=$2 ;; --modes) modes=$2 ;; --data) data=$2 ;; --size-mib) size=$2 ;;
        --reps) reps=$2 ;; --build-dir) bdir=$2 ;; --cuszp) cuszp_src=$2 ;; --timeout) timeout_s=$2 ;;
        --commit) commit=$2 ;; --out) out=$2 ;; --threshold) threshold=$2 ;;
      esac
      shift ;;
    --no-build) build=0 ;;
    --no-write) write=0 ;;
    --no-peers) peers=0 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$self"; exit 0 ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
has_mode() { [[ ",$modes," == *",$1,"* ]]; }
for m in ${modes//,/ }; do
  case $m in fast|ratio|interp|lossless|cuszp|bitcomp) ;; *) echo "run.sh: unknown mode $m" >&2; exit 2 ;; esac
done

if [ -z "$device" ]; then
  device=cpu
  nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && device=gpu
fi
gpu_name="" driver=""
case $device in
  gpu)
    gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -1)
    driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 2>/dev/null | head -1)
    [ -n "$gpu_name" ] || { echo "run.sh: --device gpu, but nvidia-smi lists no GPU" >&2; exit 3; }
    lower=$(echo "$gpu_name" | tr 'A-Z' 'a-z')
    # "NVIDIA H200" -> h200, "NVIDIA H100 80GB HBM3" -> h100, "NVIDIA A100-SXM4-80GB" -> a100
    kind=$(echo "$lower" | grep -oE '\b[a-z]{1,2}[0-9]{2,4}[a-z]?\b' | head -1)
    [ -n "$kind" ] || kind=$(echo "$lower" | sed -E 's/^nvidia //; s/[^a-z0-9]+/-/g; s/^-|-$//g')
    size=${size:-512} reps=${reps:-10} bdir=${bdir:-build-gpu} ;;
  cpu)
    kind=cpu-$(nproc)core
    size=${size:-64} reps=${reps:-3} bdir=${bdir:-build-cpu} ;;
  *) echo "run.sh: --device must be gpu or cpu" >&2; exit 2 ;;
esac
if [ -z "$data" ]; then data=.data; [ -d "$data" ] || data=../shared/data; fi
ls "$data"/*_f32.bin >/dev/null 2>&1 || { echo "run.sh: no fields (*_f32.bin) in $data (stage them: ../shared/tools/stage-data)" >&2; exit 3; }
if [ -z "$commit" ]; then
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  [ -n "$(git status --porcelain --untracked-files=no -- src include cli CMakeLists.txt 2>/dev/null)" ] && commit="$commit (with uncommitted changes)"
fi

mkdir -p "$out"
log=$out/run.log
: >"$log"
tmp=$(mktemp -d /tmp/hpcz_run.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
say() { echo "$*" | tee -a "$log"; }
failed=0 flagged=0
fail() { say "FAILED: $*"; failed=1; }
show_tail() { [ -f "$1" ] && tail -"${2:-20}" "$1" | sed 's/^/  | /' | tee -a "$log"; }

say "bench/run.sh: kind $kind, device ${gpu_name:-CPU}${driver:+ (driver $driver)}, $(nproc) CPU cores, hpcz $commit"
say "settings: --data $data --size-mib $size --reps $reps; modes $modes; build dir $bdir; results $( [ $write = 1 ] && echo "written to bench/results/" || echo "not written (--no-write)"), copies in $out"

# --- build ---
if [ $build = 1 ]; then
  if [ $device = gpu ]; then cfg=(-DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}"); else cfg=(-DHPCZ_CUDA=OFF); fi
  # The Bitcomp comparison (bench/compare/bitcomp_bench.cpp) builds where nvCOMP is carried.
  if [ $device = gpu ] && has_mode bitcomp && [ -f bench/ext/nvcomp/lib/libnvcomp.so.6 ]; then
    cfg+=(-DHPCZ_NVCOMP_DIR="$root/bench/ext/nvcomp")
  fi
  say "== build: cmake -S . -B $bdir -DCMAKE_BUILD_TYPE=Release ${cfg[*]} =="
  if ! cmake -S . -B "$bdir" -DCMAKE_BUILD_TYPE=Release "${cfg[@]}" >"$tmp/cmake.log" 2>&1; then
    show_tail "$tmp/cmake.log" 30; fail "cmake"; exit 3
  fi
  if ! cmake --build "$bdir" -j "$(nproc)" --target hpcz_cli hpcz_bench_internal >"$tmp/build.log" 2>&1 &&
     ! cmake --build "$bdir" -j "$(nproc)" >>"$tmp/build.log" 2>&1; then  # all targets if hpcz_cli was renamed
    grep -E "error" "$tmp/build.log" | head -30 | tee -a "$log"; fail "build"; exit 3
  fi
  if [[ " ${cfg[*]} " == *HPCZ_NVCOMP_DIR* ]] &&
     ! cmake --build "$bdir" -j "$(nproc)" --target hpcz_bitcomp_bench >>"$tmp/build.log" 2>&1; then
    grep -E "error" "$tmp/build.log" | head -30 | tee -a "$log"; fail "build of hpcz_bitcomp_bench"
  fi
fi
bin=$bdir/hpcz
[ -x "$bin" ] || bin=$(find "$bdir" -maxdepth 3 -type f -name hpcz -perm -u+x 2>/dev/null | head -1)
[ -n "$bin" ] && [ -x "$bin" ] || { fail "no hpcz binary in $bdir (build it, or leave out --no-build)"; exit 3; }
ibin=$(dirname "$bin")/hpcz_bench_internal  # --modes lossless

# --- compare with the baseline, then write ---
publish() {  # NAME [compare]: $tmp/NAME.md -> $out/NAME.md and bench/results/NAME.md
  local name=$1 new=$tmp/$1.md base=bench/results/$1.md rc=0
  cp "$new" "$out/$name.md"
  if [ "${2:-}" = compare ]; then
    if [ -f "$base" ]; then
      say "-- $name against the baseline bench/results/$name.md (full table in $log):"
      python3 bench/compare_baseline.py --threshold "$threshold" "$base" "$new" >>"$log"
      python3 bench/compare_baseline.py --threshold "$threshold" --quiet "$base" "$new" | sed -n '/^WARNING/p; /^table:/,$p'
      rc=${PIPESTATUS[0]}
      case $rc in
        0) ;;
        1) flagged=1; say "-- $name: FLAGGED (see above)" ;;
        *) fail "$name: compare_baseline.py could not compare (rc $rc)" ;;
      esac
    else
      say "-- $name: no baseline bench/results/$name.md yet, nothing to compare"
    fi
  fi
  if [ $write = 1 ]; then cp "$new" "$base" && say "-- wrote $base"; fi
  return 0
}

run_bench() {  # MODE
  local m=$1 prog=("$bin" bench) args=(--mode "$1" --data "$data" --size-mib "$size" --reps "$reps")
  case $m in
    fast|ratio|interp) args+=(--device "$device") ;;
    lossless)  # lossless takes no --device: GPU if any; it needs the library's internals (bench/internal/)
      prog=("$ibin")
      [ $device = gpu ] && args+=(--dump "$tmp/dump") ;;
  esac
  say "== $kind-$m: $(basename "${prog[0]}") ${prog[*]:1} ${args[*]} =="
  rm -rf "$tmp/dump"
  timeout "$timeout_s" "${prog[@]}" "${args[@]}" --out "$tmp/$kind-$m.md" >"$tmp/bench-$m.log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ] || [ ! -s "$tmp/$kind-$m.md" ]; then
    show_tail "$tmp/bench-$m.log"; fail "${prog[*]##*/} --mode $m (rc $rc)"; return 1
  fi
  if [ $m = lossless ] && [ $device = cpu ] && ! grep -q '^device: none' "$tmp/$kind-$m.md"; then
    fail "the lossless bench used a GPU ($bin is a CUDA build): not a $kind result"; return 1
  fi
  grep -E '^(mean throughput|geometric mean GPU decode)' "$tmp/$kind-$m.md" | tee -a "$log"
  publish "$kind-$m" compare
}

peers_deflate() {  # nvCOMP and libdeflate on the chunks the lossless bench dumped
  if [ ! -d bench/ext ]; then
    say "-- peers: no bench/ext/ (nvCOMP, libdeflate: see bench/compare/README.md; carry bench/ext): skipped"; return
  fi
  [ -f bench/ext/nvcomp/lib/libnvcomp.so.6.xz ] && xz -d -f bench/ext/nvcomp/lib/libnvcomp.so.6.xz  # carried compressed
  if [ $build = 1 ] || [ ! -x bench/ext/bin/nvcomp_deflate_bench ]; then
    bash bench/compare/build.sh >"$tmp/compare-build.log" 2>&1 ||
      say "-- bench/compare/build.sh: $(tail -1 "$tmp/compare-build.log") (what bench/ext/bin/ holds is used)"
  fi
  local progs=() p d n k f=$tmp/$kind-lossless-peers.md
  for p in nvcomp_deflate_bench libdeflate_bench; do [ -x bench/ext/bin/$p ] && progs+=("$p"); done
  if [ ${#progs[@]} -eq 0 ]; then say "-- peers: neither nvcomp_deflate_bench nor libdeflate_bench: skipped"; return; fi
  say "== $kind-lossless-peers: ${progs[*]} on the same Deflate chunks =="
  for d in "$tmp"/dump/*/; do
    n=$(stat -c %s "$d/expected.bin")
    k=$(( (size * 1048576 + n - 1) / n ))
    echo "# $(basename "$d") (replicated ${k}x)"
    for p in "${progs[@]}"; do
      timeout 120 "bench/ext/bin/$p" "$d" --replicate "$k" 2>>"$tmp/peers.err" | grep -E '^(nvcomp_deflate|libdeflate) ' ||
        echo "# $p failed on $(basename "$d"): $(tail -1 "$tmp/peers.err" 2>/dev/null)"
    done
  done >"$tmp/peers.body"
  local gm
  gm=$(awk '/^(nvcomp_deflate|libdeflate) / { for (i = 2; i <= NF; i++) if ($i ~ /^out_GBps=/) { s[$1] += log(substr($i, 10)); c[$1]++ } }
            END { for (p in s) printf "%s%s %.1f GB/s (%d sets)", (n++ ? ", " : ""), p, exp(s[p] / c[p]), c[p] }' "$tmp/peers.body")
  {
    cat "$tmp/$kind-lossless.md"
    printf '\n## nvCOMP and libdeflate on the same Deflate chunks\n\n'
    echo "# Same run as the hpcz bench output above ($gpu_name, driver $driver, hpcz $commit): the Deflate chunk sets hpcz bench dumped (--dump), each replicated to >= $size MiB decoded, decoded by bench/compare/'s programs (nvCOMP batched low-level API, device-resident; libdeflate on all $(nproc) cores); GB/s of decoded output, median of 10"
    echo "# geometric mean: ${gm:-none}"
    cat "$tmp/peers.body"
  } >"$f"
  say "-- geometric mean: ${gm:-none} (hpcz: $(grep '^geometric mean GPU decode, deflate' "$tmp/$kind-lossless.md" | sed 's/.*: //'))"
  publish "$kind-lossless-peers"
}

run_cuszp() {  # public cuSZp (plain and outlier modes) on the tiled bytes the fast bench compresses
  local exe=bench/ext/bin/cuSZp
  if [ -f "$cuszp_src/CMakeLists.txt" ] && { [ $build = 1 ] || [ ! -x $exe ]; }; then
    say "== cuSZp: bash bench/compare/build_cuszp.sh $cuszp_src =="
    bash bench/compare/build_cuszp.sh "$cuszp_src" >"$tmp/cuszp-build.log" 2>&1 || { show_tail "$tmp/cuszp-build.log"; say "-- cuSZp build failed"; }
  fi
  if [ ! -x $exe ]; then
    say "-- cuSZp: no checkout at $cuszp_src and no $exe: skipped (git clone https://github.com/szcompressor/cuSZp $cuszp_src; carry it)"
    return
  fi
  local fast=$tmp/$kind-fast.md
  [ -s "$fast" ] || fast=bench/results/$kind-fast.md
  say "== $kind-cuszp: $exe (cuSZp $(cat bench/ext/bin/cuSZp.version 2>/dev/null || echo '?')), hpcz CR from $fast =="
  python3 - "$exe" "$data" "$size" "$tmp" "$fast" "$gpu_name" "$driver" "$commit" \
    "$(cat bench/ext/bin/cuSZp.version 2>/dev/null || echo unknown)" >"$tmp/$kind-cuszp.md" 2>"$tmp/cuszp.err" <<'PY'
import glob, math, os, re, subprocess, sys
exe, data, size_mib, tmp, fast_md, gpu, driver, commit, rev = sys.argv[1:10]
bounds = ["1e-2", "1e-3", "1e-4"]
hpcz_cr = {}
if os.path.exists(fast_md):
    for line in open(fast_md):
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) > 3 and c[1].startswith("rel:"):
            hpcz_cr[(c[0], c[1])] = c[3]
rows, below = [], {"plain": [], "outlier": []}
for path in sorted(glob.glob(os.path.join(data, "*.bin"))):
    m = re.match(r"^(.*)_([0-9x]+)_(f32|f64)\.bin$", os.path.basename(path))
    if not m:
        continue
    name, dtype = m.group(1), m.group(3)
    raw = open(path, "rb").read()
    tiles = max(1, math.ceil(float(size_mib) * (1 << 20) / len(raw)))
    tiled = os.path.join(tmp, "cuszp_in.bin")
    with open(tiled, "wb") as f:  # along the slowest axis: the file repeated, as hpcz bench tiles it
        for _ in range(tiles):
            f.write(raw)
    for b in bounds:
        label = "rel:" + b
        res = {}
        for mode in ("plain", "outlier"):
            try:
                p = subprocess.run([exe, "-i", tiled, "-t", dtype, "-m", mode, "-d", "1", "-eb", "rel", b],
                                   capture_output=True, text=True, timeout=300)
                o, rc = p.stdout, p.returncode
            except subprocess.TimeoutExpired:
                o, rc = "", "timeout"
            get = lambda pat: (re.search(pat, o) or [None, None])[1]
            cr, c, d = get(r"compression ratio: ([0-9.]+)"), get(r"compression\s+end-to-end speed: ([0-9.]+)"), \
                get(r"decompression end-to-end speed: ([0-9.]+)")
            check = "pass" if "Pass error check" in o else ("fail " + (get(r"Exceeding data count: ([0-9]+)") or "?")
                                                            if "Fail error check" in o else f"rc {rc}")
            # The CLI prints MiB per millisecond as "GB/s": x 1.048576 gives 1e9 bytes a second.
            res[mode] = (float(cr) if cr else None, float(c) * 1.048576 if c else None,
                         float(d) * 1.048576 if d else None, check)
        h = hpcz_cr.get((name, label))
        for mode in ("plain", "outlier"):
            if h and res[mode][0] and float(h) < round(res[mode][0], 2):
                below[mode].append(f"{name} {label} ({h} vs {res[mode][0]:.2f})")
        f2 = lambda v, p=2: "-" if v is None else f"{v:.{p}f}"
        checks = "/".join(sorted({res[mm][3] for mm in res}))
        rows.append(f"| {name} | {label} | {h or '-'} | {f2(res['plain'][0])} | {f2(res['outlier'][0])} | "
                    f"{f2(res['plain'][1], 1)} | {f2(res['plain'][2], 1)} | {f2(res['outlier'][1], 1)} | "
                    f"{f2(res['outlier'][2], 1)} | {checks} |")
        print(f"{name} {label}: hpcz {h}, cuSZp-P {f2(res['plain'][0])}, cuSZp-O {f2(res['outlier'][0])} ({checks})",
              file=sys.stderr)
    os.remove(tiled)
print("# cuSZp on the fast mode's tiled fields\n")
print(f"cuSZp {rev} (https://github.com/szcompressor/cuSZp, built by bench/compare/build_cuszp.sh for sm_90) on {gpu}"
      f" (driver {driver}); hpcz {commit}. Each field tiled along its slowest axis to >= {size_mib} MiB, as `hpcz bench`"
      f" tiles it (the same bytes), given to cuSZp's example CLI: `cuSZp -i FILE -t f32|f64 -m plain|outlier -d 1 -eb rel E`."
      " CR of the whole tiled field; throughput as the CLI measures it (one timed call after 10 warm-ups, not a median),"
      " its MiB/ms converted to GB/s; its error check allows 1.1 x the bound."
      f" hpcz fast CR: {fast_md} (the same tiled fields).\n")
print("| field | bound | hpcz fast CR | cuSZp-P CR | cuSZp-O CR | cuSZp-P comp GB/s | cuSZp-P decomp GB/s | "
      "cuSZp-O comp GB/s | cuSZp-O decomp GB/s | cuSZp error check |")
print("|---|---|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
print()
compared = sum(1 for r in rows if r.split("|")[3].strip() != "-")
for mode, short in (("outlier", "cuSZp-O"), ("plain", "cuSZp-P")):
    print(f"hpcz fast CR below {short} on {len(below[mode])} of {compared} rows: "
          + ("; ".join(below[mode]) if below[mode] else "none"))
PY
  local rc=$?
  cat "$tmp/cuszp.err" >>"$log"
  if [ $rc -ne 0 ]; then show_tail "$tmp/cuszp.err"; fail "cuSZp run (rc $rc)"; return; fi
  grep -E '^hpcz fast CR below' "$tmp/$kind-cuszp.md" | tee -a "$log"
  publish "$kind-cuszp"
}

for m in fast ratio interp lossless; do
  has_mode $m || continue
  run_bench $m || continue
  if [ $m = lossless ] && [ $device = gpu ] && [ $peers = 1 ]; then peers_deflate; fi
done
if has_mode cuszp && [ $peers = 1 ]; then
  if [ $device = gpu ]; then run_cuszp; else say "-- cuSZp: GPU only, skipped on $kind"; fi
fi

run_bitcomp() {  # nvCOMP Bitcomp lossy beside the fast mode, one process, the same device-resident tiles
  local exe=$bdir/hpcz_bitcomp_bench
  if [ ! -x "$exe" ]; then
    say "-- Bitcomp: no $exe (needs nvCOMP under bench/ext/nvcomp, see bench/compare/README.md): skipped"; return
  fi
  say "== $kind-fast-vs-bitcomp: $exe =="
  LD_LIBRARY_PATH="$root/bench/ext/nvcomp/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout "$timeout_s" \
    "$exe" --data "$data" --size-mib "$size" --reps "$reps" --out "$tmp/$kind-fast-vs-bitcomp.md" >"$tmp/bitcomp.log" 2>&1
  local rc=$?
  cat "$tmp/bitcomp.log" >>"$log"
  if [ $rc -ne 0 ]; then show_tail "$tmp/bitcomp.log"; fail "Bitcomp comparison (rc $rc)"; return; fi
  grep -E '^(\| (Bitcomp|hpcz)|hpcz fast at equal|rows where)' "$tmp/$kind-fast-vs-bitcomp.md" | tee -a "$log"
  publish "$kind-fast-vs-bitcomp"
}
if has_mode bitcomp && [ $peers = 1 ]; then
  if [ $device = gpu ]; then run_bitcomp; else say "-- Bitcomp: GPU only, skipped on $kind"; fi
fi

if [ $failed = 1 ]; then say "run.sh: something failed (see above and $log)"; exit 3; fi
if [ $flagged = 1 ]; then say "run.sh: a comparison flagged a regression, a CR change or an identity failure"; exit 1; fi
say "run.sh: done, every comparison clean"
