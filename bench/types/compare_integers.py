"""Integer fields against zfp (zfpy): each real field quantised to int16 over its range (a digitiser's
counts) and a uint8 mask (above the median: 1), coded by hpcz (every mode, lossless and abs bounds)
and by zfp (reversible on the int32 widening, zfp's integer input; fixed accuracy on the float32
values, its output rounded back to the type). Compression ratios of the array's own bytes; a peer row
whose max error breaks the bound is marked. CPU, all cores.
usage: compare_integers.py [DATA_DIR...] (default: data/ and ../shared/data when there)"""
import pathlib
import re
import sys

import numpy as np

import hpcz

NAME = re.compile(r"^(.*)_([0-9x]+)_(f32|f64)\.bin$")


def fields(dirs):
    seen = set()
    for d in dirs:
        for p in sorted(pathlib.Path(d).glob("*.bin")):
            m = NAME.match(p.name)
            if not m or p.name in seen:
                continue
            dims = tuple(int(x) for x in m.group(2).split("x"))
            a = np.fromfile(p, np.float32 if m.group(3) == "f32" else np.float64)
            if a.size == int(np.prod(dims)):
                seen.add(p.name)
                yield p.name.split("_")[0], a.reshape(dims)


def int16_of(x):
    x = x.astype(np.float64)
    ok = np.isfinite(x)
    lo, hi = x[ok].min(), x[ok].max()
    u = np.where(ok, (x - lo) / (hi - lo) if hi > lo else 0.5, 0.0)
    return np.round(u * 65535 - 32768).astype(np.int16)


def mask_of(x):
    x = np.nan_to_num(x.astype(np.float64))
    return (x > np.median(x)).astype(np.uint8)


def zfp_rows(a, bounds):
    try:
        import zfpy
    except ImportError:
        return {}
    out = {}
    shape3 = a.shape if a.ndim <= 4 else a.reshape(-1).shape
    rev = zfpy.compress_numpy(np.ascontiguousarray(a.astype(np.int32).reshape(shape3)))
    assert np.array_equal(zfpy.decompress_numpy(rev).reshape(a.shape), a.astype(np.int32))
    out[0] = (a.nbytes / len(rev), True)
    for e in bounds:
        if e == 0:
            continue
        f = a.astype(np.float32)
        blob = zfpy.compress_numpy(np.ascontiguousarray(f), tolerance=float(e))
        y = np.round(zfpy.decompress_numpy(blob)).astype(np.float64)
        ok = float(np.max(np.abs(y - a.astype(np.float64)))) <= e
        out[e] = (a.nbytes / len(blob), ok)
    return out


def main():
    root = pathlib.Path(__file__).resolve().parents[2]
    dirs = sys.argv[1:] or [d for d in (root / "data", root.parent / "shared" / "data") if d.is_dir()]
    print("| field | type | bound | hpcz fast | hpcz ratio | hpcz interp | zfp |")
    print("|---|---|---|---|---|---|---|")
    wins = total = 0
    for name, x in fields(dirs):
        for tname, a, bounds in (("int16", int16_of(x), (0, 1, 4, 16)), ("uint8 mask", mask_of(x), (0,))):
            z = zfp_rows(a, bounds)
            for e in bounds:
                crs = []
                for mode in ("fast", "ratio", "interp"):
                    blob = hpcz.compress(a, abs=e, mode=mode, device="cpu")
                    y = hpcz.decompress(blob, device="cpu")
                    assert np.max(np.abs(y.astype(np.int64) - a.astype(np.int64))) <= e
                    crs.append(a.nbytes / len(blob))
                zcr, zok = z.get(e, (None, True))
                zs = "-" if zcr is None else f"{zcr:.2f}" + ("" if zok else " (bound broken)")
                if zcr is not None:
                    total += 1
                    wins += max(crs) >= zcr
                mode_name = "lossless" if e == 0 else f"abs {e}"
                print(f"| {name} | {tname} | {mode_name} | {crs[0]:.2f} | {crs[1]:.2f} | {crs[2]:.2f} | {zs} |")
    print(f"\nhpcz's best mode at or above zfp on {wins} of {total} rows")


if __name__ == "__main__":
    main()
