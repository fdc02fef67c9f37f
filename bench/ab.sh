#!/usr/bin/env bash
# A/B of two hpcz builds on the GPU machine, in one call: archive identity on the GPU (bench/identity.sh),
# then ROUNDS alternating `hpcz bench --quick` runs of each binary per mode (throughput only, 512 MiB
# tiles, median of 10), and the mean of each side's per-round means.
# usage: bench/ab.sh BASE_BIN NEW_BIN [DATA_DIR=.data] [MODES=fast,ratio] [ROUNDS=2] [OUTDIR=$OUT]
set -u
base=$1 new=$2 data=${3:-.data} modes=${4:-fast,ratio} rounds=${5:-2} out=${6:-${OUT:-/tmp/hpcz_ab}}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/bench/identity.sh" "$base" "$new" "$data" gpu | tail -5
for mode in ${modes//,/ }; do
  for r in $(seq 1 "$rounds"); do
    for side in base new; do
      bin=$base; [ $side = new ] && bin=$new
      timeout 200 "$bin" bench --mode "$mode" --quick --data "$data" --size-mib 512 --reps 10 \
        --out "$out/ab-$mode-$side-$r.md" >"$out/ab-$mode-$side-$r.log" 2>&1
      echo "$mode $side round $r rc=$?: $(grep -E '^mean' "$out/ab-$mode-$side-$r.md" 2>/dev/null)"
    done
  done
  python3 - "$out" "$mode" "$rounds" <<'PY'
import re, sys
out, mode, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
def means(side):
    c = d = 0.0
    for r in range(1, rounds + 1):
        t = open(f"{out}/ab-{mode}-{side}-{r}.md").read()
        m = re.search(r"compression ([0-9.]+) GB/s, decompression ([0-9.]+) GB/s", t)
        c += float(m.group(1)); d += float(m.group(2))
    return c / rounds, d / rounds
try:
    (bc, bd), (nc, nd) = means("base"), means("new")
    print(f"A/B {mode}: compression {bc:.1f} -> {nc:.1f} GB/s ({100 * (nc / bc - 1):+.2f}%), "
          f"decompression {bd:.1f} -> {nd:.1f} GB/s ({100 * (nd / bd - 1):+.2f}%)")
except Exception as e:
    print(f"A/B {mode}: no summary ({e})")
PY
done
