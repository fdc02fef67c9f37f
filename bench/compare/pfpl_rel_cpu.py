"""hpcz's pointwise-relative bound on the CPU (the fast mode, and the interp mode's log2 transform with the
lossless stage) beside PFPL's REL mode (burtscher/PFPL, IPDPS'25: every value within R x |value|) built for
the CPU with OpenMP, on the same untiled fields, each at R = 1e-2, 1e-3, 1e-4.

usage (repo root): python3 bench/compare/pfpl_rel_cpu.py PFPL_SRC [DATA_DIR...]   (defaults: data/, ../shared/data)

PFPL_SRC is a checkout of the public repository (never committed; bench/ext/PFPL): its two REL programs of
each type are built here with its makefile's OpenMP flags. PFPL times its own encode and decode (its
NUM_RUNS runs; the median is taken here); hpcz's times are the wall time of hpcz.compress / decompress
(median of 3), all cores. Every reconstruction is checked here: values beyond R |x| (in float64; the
others bit for bit) are counted in `viol`; PFPL has no fill value, so the masked field's fill values
count for it as values under R |x|, and for hpcz (given fill=) as values kept bit for bit. GB/s = 1e9
input bytes a second."""
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

import hpcz

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "types"))
from compare_integers import fields  # noqa: E402
from pw_rel_vs_sz3 import BOUNDS, FILL, over_bound, timed  # noqa: E402

from pfpl_rel import median_time  # noqa: E402  (PFPL's own timer lines, as the GPU comparison reads them)

FLAGS = ["-O3", "-march=native", "-fopenmp", "-mno-fma", "-ffp-contract=off", "-std=c++17"]


def build(src, out):
    bins = {}
    for t in ("f32", "f64"):
        for what, f in (("compress", "comp"), ("decompress", "decomp")):
            exe = out / f"{t}_rel_{what}_omp"
            r = subprocess.run(["g++", *FLAGS, f"-I{src}/src/", "-o", str(exe), f"{src}/src/{t}_rel_{f}_cpu.cpp"],
                               capture_output=True, text=True)
            if r.returncode:
                sys.exit("PFPL build failed:\n" + r.stderr[-2000:])
            bins[(t, what)] = exe
    return bins


def pfpl(bins, x, r, tmp):
    t = "f32" if x.dtype == np.float32 else "f64"
    src, comp, back = tmp / "in.bin", tmp / "in.pfpl", tmp / "back.bin"
    x.tofile(src)
    c = subprocess.run([str(bins[(t, "compress")]), str(src), str(comp), repr(r)], capture_output=True, text=True)
    d = subprocess.run([str(bins[(t, "decompress")]), str(comp), str(back)], capture_output=True, text=True)
    if c.returncode or d.returncode:
        raise RuntimeError(f"PFPL failed: {c.stdout[-300:]}{c.stderr[-300:]}{d.stdout[-300:]}{d.stderr[-300:]}")
    y = np.fromfile(back, x.dtype).reshape(x.shape)
    return {"cr": x.nbytes / os.path.getsize(comp), "comp": x.nbytes / median_time(c.stdout, "comp") / 1e9,
            "decomp": x.nbytes / median_time(d.stdout, "decomp") / 1e9, "viol": over_bound(x, y, r, fill=None)}


def main():
    root = pathlib.Path(__file__).resolve().parents[2]
    src = pathlib.Path(sys.argv[1])
    dirs = sys.argv[2:] or [d for d in (root / "data", root.parent / "shared" / "data") if d.is_dir()]
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        bins = build(src, tmp)
        print(f"# hpcz pw_rel against PFPL's REL on the CPU ({os.cpu_count()} cores, OpenMP), the same untiled fields\n")
        print("| field | R | PFPL CR | comp GB/s | decomp GB/s | viol | hpcz fast CR | interp+stage CR | comp GB/s | "
              "decomp GB/s | viol |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        rows = ahead = 0
        cr_ratio = []
        for name, x in fields(dirs):
            fill = FILL if (x == FILL).any() else None
            for r in BOUNDS:
                p = pfpl(bins, x, r, tmp)
                fast = hpcz.compress(x, pw_rel=r, fill=fill, device="cpu")
                blob, tc = timed(lambda: hpcz.compress(x, pw_rel=r, fill=fill, mode="interp", lossless=True, device="cpu"))
                back, td = timed(lambda: hpcz.decompress(blob, device="cpu"))
                viol = over_bound(x, back, r) + over_bound(x, hpcz.decompress(fast, device="cpu"), r)
                cr = x.nbytes / len(blob)
                rows += 1
                ahead += cr >= p["cr"]
                cr_ratio.append(cr / p["cr"])
                print(f"| {name} | {r:g} | {p['cr']:.2f} | {p['comp']:.3f} | {p['decomp']:.3f} | {p['viol']} | "
                      f"{x.nbytes / len(fast):.2f} | {cr:.2f} | {x.nbytes / tc / 1e9:.3f} | {x.nbytes / td / 1e9:.3f} | {viol} |")
        g = float(np.exp(np.mean(np.log(cr_ratio))))
        print(f"\nhpcz interp+stage at or above PFPL's CR on {ahead} of {rows} rows; geometric mean CR hpcz / PFPL {g:.2f}x")


if __name__ == "__main__":
    main()
