"""hpcz's pointwise-relative bound (pw_rel: the fast mode, and the interp mode's log2 transform with and
without the lossless stage) against SZ3 (PyPI pysz) reaching it through a log transform, CPU, on the same
arrays: each field at R = 1e-2, 1e-3, 1e-4.

SZ3 has no pointwise-relative mode; the transform its users apply: log2 |x| of the nonzero finite values
coded with SZ3's ABS bound log2(1 + R) (then |x'| / |x| is within [1 / (1 + R), 1 + R], so |x' - x| <= R |x|
up to the rounding of exp2), every other value (zero, NaN, Inf, the fill value) replaced by its
neighbour's log first and restored from a mask, the signs from a bit plane; the mask and the signs packed
and zlib-compressed (level 6), counted in SZ3's size. Values the rounding of exp2 puts beyond R |x| are
counted (`over`): the transform is not strict as it stands. hpcz: hpcz.compress(x, pw_rel=R, mode=...) on
all cores, strict (checked here). The log values are coded in the field's own type. Times: wall time of each side's
compress and decompress calls (SZ3's with the transform, the mask and the signs), median of 3; GB/s of the
array's bytes.
usage: python bench/types/pw_rel_vs_sz3.py [--tile-mib N] [--hpcz-only] [DATA_DIR...] (default: data/ and
../shared/data; --tile-mib: each field repeated along its slowest axis to at least N MiB, so that every core has
work; --hpcz-only: hpcz's interp+stage rows alone, to time another build of hpcz beside a full run)"""
import importlib.metadata
import os
import pathlib
import statistics
import sys
import time
import zlib

import numpy as np

import hpcz
import pysz
from compare_integers import fields

BOUNDS = (1e-2, 1e-3, 1e-4)
FILL = -1e10  # the masked field's fill value (levitus)


def timed(f, reps=3):
    out, t = None, []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = f()
        t.append(time.perf_counter() - t0)
    return out, statistics.median(t)


def over_bound(x, y, r, fill=FILL):
    """Values of y beyond r |x| (finite x but the fill value), or not bit-exact (the others)."""
    x64, y64 = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
    fin = np.isfinite(x64) & ((x64 != fill) if fill is not None else True)
    bad = np.count_nonzero(np.abs(y64[fin] - x64[fin]) > r * np.abs(x64[fin]))
    bits = np.uint32 if x.dtype == np.float32 else np.uint64
    return int(bad + np.count_nonzero(x.ravel()[~fin].view(bits) != y.ravel()[~fin].view(bits)))


def sz3_compress(x, r):
    """The transform and SZ3: (SZ3's stream, the packed mask and signs, the other values), and the size."""
    flat = x.ravel()
    keep = np.isfinite(flat) & (flat != 0) & (flat != FILL)
    logs = np.zeros(flat.size, dtype=x.dtype)
    logs[keep] = np.log2(np.abs(flat[keep]))
    # the others take the previous kept value's log (smooth for the predictor), restored from the mask
    idx = np.where(keep, np.arange(flat.size), 0)
    np.maximum.accumulate(idx, out=idx)
    first = logs[keep][0] if keep.any() else 0
    logs = np.where(keep, logs, np.where(keep[idx], logs[idx], first))
    c = pysz.szConfig()
    c.errorBoundMode = pysz.szErrorBoundMode.ABS
    c.absErrorBound = float(np.log2(1 + r))
    comp, _ = pysz.sz.compress(np.ascontiguousarray(logs.reshape(x.shape)), c)
    side = zlib.compress(np.packbits(keep).tobytes() + np.packbits(np.signbit(flat)).tobytes(), 6)
    others = zlib.compress(flat[~keep].tobytes(), 6)  # zeros, NaN, Inf and fills exactly
    return (comp, side, others), len(comp) + len(side) + len(others)


def sz3_decompress(parts, x):
    comp, side, others = parts
    n = x.size
    bits = np.unpackbits(np.frombuffer(zlib.decompress(side), np.uint8))
    keep, sign = bits[:n].astype(bool), bits[(n + 7) // 8 * 8:][:n].astype(bool)
    logs, _ = pysz.sz.decompress(comp, x.dtype, x.shape)
    y = np.exp2(logs.ravel())
    y = np.where(sign, -y, y).astype(x.dtype)
    y[~keep] = np.frombuffer(zlib.decompress(others), x.dtype)
    return y.reshape(x.shape)


def main():
    root = pathlib.Path(__file__).resolve().parents[2]
    args = sys.argv[1:]
    tile_mib, hpcz_only = 0, False
    while args[:1] in (["--tile-mib"], ["--hpcz-only"]):
        if args[0] == "--hpcz-only":
            hpcz_only, args = True, args[1:]
        else:
            tile_mib, args = int(args[1]), args[2:]
    dirs = args or [d for d in (root / "data", root.parent / "shared" / "data") if d.is_dir()]
    print(f"# hpcz pw_rel (CPU, {os.cpu_count()} cores, hpcz from {pathlib.Path(hpcz.__file__).parent}) against SZ3 (pysz "
          f"{importlib.metadata.version('pysz')}) through a log transform\n")
    if tile_mib:
        print(f"Each field repeated along its slowest axis to at least {tile_mib} MiB.\n")
    print("interp: `mode=\"interp\"` (log2 |x| interpolated, format version 8); +stage: with `lossless=True`.\n")
    print("| field | R | fast CR | interp CR | interp+stage CR | comp GB/s | decomp GB/s | SZ3+log CR | comp GB/s | "
          "decomp GB/s | SZ3 over R\\|x\\| |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rows = 0
    ahead = {"fast": 0, "interp+stage": 0}
    cr_ratio = {"fast": [], "interp+stage": []}
    speed_c, speed_d = [], []
    for name, x in fields(dirs):
        if tile_mib:
            x = np.concatenate([x] * -(-(tile_mib << 20) // x.nbytes), axis=0)
        fill = FILL if (x == FILL).any() else None
        for r in BOUNDS:
            if hpcz_only:
                blob, tc = timed(lambda: hpcz.compress(x, pw_rel=r, fill=fill, mode="interp", lossless=True, device="cpu"))
                back, td = timed(lambda: hpcz.decompress(blob, device="cpu"))
                assert over_bound(x, back, r) == 0, (name, r, "interp+stage")
                print(f"| {name} | {r:g} | - | - | {x.nbytes / len(blob):.2f} | {x.nbytes / tc / 1e9:.3f} | "
                      f"{x.nbytes / td / 1e9:.3f} | - | - | - | - |")
                continue
            fast = hpcz.compress(x, pw_rel=r, fill=fill, device="cpu")
            assert over_bound(x, hpcz.decompress(fast, device="cpu"), r) == 0, (name, r, "fast")
            interp = hpcz.compress(x, pw_rel=r, fill=fill, mode="interp", device="cpu")
            assert over_bound(x, hpcz.decompress(interp, device="cpu"), r) == 0, (name, r, "interp")
            blob, tc = timed(lambda: hpcz.compress(x, pw_rel=r, fill=fill, mode="interp", lossless=True, device="cpu"))
            back, td = timed(lambda: hpcz.decompress(blob, device="cpu"))
            assert over_bound(x, back, r) == 0, (name, r, "interp+stage")
            (parts, size), sc = timed(lambda: sz3_compress(x, r))
            y, sd = timed(lambda: sz3_decompress(parts, x))
            gb = lambda s: x.nbytes / s / 1e9
            s_cr = x.nbytes / size
            crs = {"fast": x.nbytes / len(fast), "interp+stage": x.nbytes / len(blob)}
            rows += 1
            for k, v in crs.items():
                ahead[k] += v >= s_cr
                cr_ratio[k].append(v / s_cr)
            speed_c.append(sc / tc)
            speed_d.append(sd / td)
            print(f"| {name} | {r:g} | {crs['fast']:.2f} | {x.nbytes / len(interp):.2f} | {crs['interp+stage']:.2f} | "
                  f"{gb(tc):.3f} | {gb(td):.3f} | {s_cr:.2f} | {gb(sc):.3f} | {gb(sd):.3f} | {over_bound(x, y, r)} |")
    if hpcz_only:
        return
    g = lambda v: float(np.exp(np.mean(np.log(v))))
    for k in ("fast", "interp+stage"):
        print(f"\nhpcz {k} at or above SZ3's CR on {ahead[k]} of {rows} rows; geometric mean CR hpcz / SZ3 "
              f"{g(cr_ratio[k]):.2f}x")
    print(f"\ninterp+stage speed over SZ3 (geometric mean, SZ3's with the transform, mask and signs): "
          f"{g(speed_c):.1f}x compressing, {g(speed_d):.1f}x decompressing")


if __name__ == "__main__":
    main()
