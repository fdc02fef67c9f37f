"""Storage types through hpcz.compress / hpcz.decompress on host arrays: a field tiled to N MiB of float32,
then as float16, bfloat16, int16 (a quarter of its range) and uint8 (a quarter of its range), each the
same number of values; wall time of the whole call (median of REPS after a warm-up), GB/s of the array's
own bytes, the compression ratio, the max error against the bound asked for, and the host's memcpy rate
in the same run (the storage types are widened and narrowed on the host).
usage: storage_types.py FIELD.bin SIZE_MIB REPS DEVICE [MODES=fast,ratio]"""
import statistics
import sys
import time

import numpy as np

import hpcz


def tiled(path, mib):
    base = np.fromfile(path, np.float32)
    n = mib * (1 << 20) // 4
    return np.resize(base, n)


def as_type(x, name):
    if name == "float32":
        return x
    if name == "float16":
        return x.astype(np.float16)
    if name == "bfloat16":
        import ml_dtypes

        return x.astype(ml_dtypes.bfloat16)
    info = np.iinfo(name)
    u = (x.astype(np.float64) - x.min()) / (x.max() - x.min())
    span = min(float(info.max) - float(info.min), 2.0 ** 20) * 0.25
    return np.round(0.5 * (float(info.min) + float(info.max)) + (u - 0.5) * span).astype(name)


def timed(f, reps):
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), out


def main():
    path, mib, reps, device = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    modes = (sys.argv[5] if len(sys.argv) > 5 else "fast,ratio").split(",")
    x = tiled(path, mib)
    dst = np.empty_like(x)
    t, _ = timed(lambda: np.copyto(dst, x), reps)
    print(f"host memcpy (numpy, one thread): {x.nbytes / t / 1e9:.1f} GB/s")
    print("| mode | dtype | bound | CR | compress GB/s | decompress GB/s | max err / bound |")
    print("|---|---|---|---|---|---|---|")
    for mode in modes:
        for name in ("float32", "float16", "bfloat16", "int16", "uint8"):
            a = as_type(x, name)
            kw = dict(rel=1e-3) if name in ("float32", "float16", "bfloat16") else dict(abs=1)
            tc, blob = timed(lambda: hpcz.compress(a, mode=mode, device=device, **kw), reps)
            td, y = timed(lambda: hpcz.decompress(blob, device=device), reps)
            w = a.astype(np.float64)
            bound = kw.get("abs") or kw["rel"] * float(w.max() - w.min())
            err = float(np.max(np.abs(y.astype(np.float64) - w)))
            print(f"| {mode} | {name} | {'abs 1' if 'abs' in kw else 'rel 1e-3'} | {a.nbytes / len(blob):.2f} | "
                  f"{a.nbytes / tc / 1e9:.1f} | {a.nbytes / td / 1e9:.1f} | {err / bound:.3f} |")


if __name__ == "__main__":
    main()
