"""hpcz's pointwise-relative bound (fast mode, --bounds pw_rel:R) beside PFPL's REL mode (burtscher/PFPL,
IPDPS'25: every value within R x |value|) on the same device-resident tiles.

usage (GPU machine, repo root): python3 bench/compare/pfpl_rel.py HPCZ_CLI PFPL_SRC OUT.md [R,R,...] [DATA=.data]

PFPL_SRC is a checkout of the public repository (never committed; bench/ext/PFPL). Its four REL programs are
built with the makefile's gpu-target flags (nvcc -O3 -arch=sm_90 -fmad=false ...), in parallel. Each field
(DATA/NAME_DIMS_f32|f64.bin) is tiled along its slowest axis to at least 512 MiB (as `hpcz bench` tiles it,
the same bytes) on /dev/shm. PFPL times its own kernels (cudaEvents around its launches, NUM_RUNS runs; the
median is taken here) on data it copied to the device first; hpcz bench times the whole device API call
(median of 10 after 2 warm-ups). Both are checked here: PFPL's reconstruction value by value (|y - x| <=
R |x| for finite x, the others bit for bit), hpcz's by hpcz bench itself (violations column). GB/s = 1e9
input bytes a second."""
import os
import re
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

TILE_BYTES = 512 << 20
FLAGS = ["-O3", "-arch=sm_90", "-fmad=false", "-Xcompiler", "-O3 -march=native -fopenmp -mno-fma -ffp-contract=off"]


def build(src):
    """The REL programs (f32, f64; compress, decompress) in SRC/bin/hpcz-bench/."""
    out = Path(src) / "bin" / "hpcz-bench"
    out.mkdir(parents=True, exist_ok=True)
    jobs = []
    for t in ("f32", "f64"):
        for what, f in (("compress", "comp"), ("decompress", "decomp")):
            exe = out / f"{t}_rel_{what}_cuda"
            if not exe.exists():
                jobs.append(["nvcc", *FLAGS, f"-I{src}/src/", "-o", str(exe), f"{src}/src/{t}_rel_{f}_gpu.cu"])
    with ThreadPoolExecutor(4) as pool:
        for r in pool.map(lambda c: subprocess.run(c, capture_output=True, text=True), jobs):
            if r.returncode:
                sys.exit("PFPL build failed:\n" + r.stderr[-2000:])
    return out


def tile(field):
    raw = field.read_bytes()
    copies = -(-TILE_BYTES // len(raw))
    dst = Path("/dev/shm") / (field.stem + ".tile")
    with open(dst, "wb") as f:
        for _ in range(copies):
            f.write(raw)
    return dst


def median_time(text, label):
    t = [float(m) for m in re.findall(rf"{label} ecltime,\s*([0-9.eE+-]+)", text)]
    if not t:
        raise RuntimeError(f"no '{label}' times in PFPL's output:\n{text[-1000:]}")
    return statistics.median(t)


def pfpl_row(bindir, dtype, tile_path, r):
    comp, back = str(tile_path) + ".pfpl", str(tile_path) + ".back"
    c = subprocess.run([str(bindir / f"{dtype}_rel_compress_cuda"), str(tile_path), comp, repr(r)], capture_output=True, text=True)
    if c.returncode:
        raise RuntimeError(f"PFPL compress failed ({c.returncode}): {c.stdout[-500:]}{c.stderr[-500:]}")
    d = subprocess.run([str(bindir / f"{dtype}_rel_decompress_cuda"), comp, back], capture_output=True, text=True)
    if d.returncode:
        raise RuntimeError(f"PFPL decompress failed ({d.returncode}): {d.stdout[-500:]}{d.stderr[-500:]}")
    n_in, n_comp = os.path.getsize(tile_path), os.path.getsize(comp)
    np_t = np.float32 if dtype == "f32" else np.float64
    x = np.fromfile(tile_path, np_t)
    y = np.fromfile(back, np_t)
    finite = np.isfinite(x)
    xf, yf = x[finite].astype(np.float64), y[finite].astype(np.float64)
    err = np.abs(yf - xf)
    lim = r * np.abs(xf)
    bits = np.uint32 if dtype == "f32" else np.uint64
    viol = int(np.count_nonzero(err > lim)) + int(np.count_nonzero(x[~finite].view(bits) != y[~finite].view(bits)))
    nz = lim > 0
    worst = float(np.max(err[nz] / lim[nz])) if np.any(nz) else 0.0
    for p in (comp, back):
        os.remove(p)
    return {"comp": n_in / median_time(c.stdout, "comp") / 1e9, "decomp": n_in / median_time(d.stdout, "decomp") / 1e9,
            "cr": n_in / n_comp, "worst": worst, "viol": viol}


def hpcz_rows(cli, data, bounds, fields_re):
    spec = ",".join(f"pw_rel:{r}" for r in bounds)
    out = subprocess.run([cli, "bench", "--mode", "fast", "--bounds", spec, "--data", data, "--fields", fields_re,
                          "--size-mib", "512", "--reps", "10", "--quick"], capture_output=True, text=True)
    if out.returncode:
        sys.exit("hpcz bench failed: " + out.stderr[-1000:])
    rows = {}
    for line in out.stdout.splitlines():
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) >= 10 and c[1].startswith("pw_rel:"):
            rows[(c[0], float(c[1].split(":")[1]))] = {"cr": float(c[3]), "worst": float(c[5]), "viol": int(c[6]),
                                                        "comp": float(c[7].split()[0]), "decomp": float(c[9].split()[0])}
    return rows


def main():
    cli, src, out_md = sys.argv[1], sys.argv[2], sys.argv[3]
    bounds = [float(b) for b in (sys.argv[4] if len(sys.argv) > 4 else "1e-2,1e-3,1e-4").split(",")]
    data = sys.argv[5] if len(sys.argv) > 5 else ".data"
    bindir = build(src)
    fields = sorted(p for p in Path(data).glob("*.bin") if re.search(r"_(f32|f64)\.bin$", p.name))
    hz = hpcz_rows(cli, data, bounds, ".")
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    lines = [f"# hpcz fast pw_rel vs PFPL REL ({gpu}; 512 MiB tiles; device-resident)", "",
             "| field | R | PFPL comp GB/s | decomp GB/s | CR | max err/(R\\|x\\|) | viol | hpcz comp GB/s | decomp GB/s | CR | "
             "max err/(R\\|x\\|) | viol | speed x (comp/decomp) | CR x |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    ratios = {"comp": [], "decomp": [], "cr": []}
    behind = []
    for f in fields:
        name = re.sub(r"_\d+(x\d+)*_(f32|f64)$", "", f.stem)
        dtype = f.stem[-3:]
        t = tile(f)
        for r in bounds:
            p = pfpl_row(bindir, dtype, t, r)
            h = hz.get((name, r))
            if h is None:
                lines.append(f"| {name} | {r:g} | hpcz bench gave no row |")
                continue
            for k in ratios:
                ratios[k].append(h[k] / p[k])
            if h["cr"] < p["cr"]:
                behind.append(f"{name} {r:g} ({h['cr']:.2f} vs {p['cr']:.2f})")
            lines.append(f"| {name} | {r:g} | {p['comp']:.1f} | {p['decomp']:.1f} | {p['cr']:.2f} | {p['worst']:.4f} | {p['viol']} | "
                         f"{h['comp']:.1f} | {h['decomp']:.1f} | {h['cr']:.2f} | {h['worst']:.4f} | {h['viol']} | "
                         f"{h['comp'] / p['comp']:.2f} / {h['decomp'] / p['decomp']:.2f} | {h['cr'] / p['cr']:.2f} |")
        os.remove(t)
    g = lambda v: float(np.exp(np.mean(np.log(v)))) if v else 0.0
    lines += ["", f"geometric means of hpcz / PFPL over {len(ratios['cr'])} rows: compression {g(ratios['comp']):.2f}x, "
              f"decompression {g(ratios['decomp']):.2f}x, CR {g(ratios['cr']):.2f}x",
              f"rows where hpcz's CR is below PFPL's: {len(behind)}"] + [f"- {b}" for b in behind]
    Path(out_md).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
