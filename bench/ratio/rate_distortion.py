"""Rate-distortion curves: bit rate (bits per value) against PSNR, per field, for hpcz's modes and the
peers at hand (SZ3 from PyPI pysz, ZFP from zfpy; each skipped when absent), over rel bounds 1e-1 to
1e-5 (ZFP: accuracy mode with tolerance rel x range). Every point's max error is checked against its
bound (ZFP's too). Writes OUT_DIR/rd_<field>.png, one figure per field, and OUT_DIR/rd.csv with every
point. A field named ...levitus... is masked (fill -1e10): hpcz gets --fill, PSNR is over the valid
values, and the peers, which have no fill value, are left out there.
(zfpy 1.0.1.post0 stops numcodecs from importing, which parses zfpy's version as integers: give the
peers an environment of their own.)
usage: python bench/ratio/rate_distortion.py [DATA_DIR=../shared/data] [OUT_DIR=docs/rd]"""
import csv
import os
import sys

import numpy as np

import hpcz
from fields import FILL, fields, is_masked, quality, valid_values

try:
    import pysz
except ImportError:
    pysz = None
try:
    import zfpy
except ImportError:
    zfpy = None

RELS = (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5)
HPCZ = (("hpcz fast", "fast", False), ("hpcz fast +lossless", "fast", True), ("hpcz ratio +lossless", "ratio", True),
        ("hpcz interp +lossless", "interp", True))


def measure(a, back, nbytes, eb, valid):
    worst, psnr = quality(a, back, eb, valid)
    assert worst <= 1 + 1e-12, f"max error {worst} x the bound {eb}"
    return 8.0 * nbytes / a.size, psnr


def curves(a, masked):
    valid = valid_values(a, masked)
    rng = float(a[valid].max() - a[valid].min())
    out = {}
    for rel in RELS:
        eb = rel * rng
        for label, mode, lossless in HPCZ:
            blob = hpcz.compress(a, rel=rel, mode=mode, lossless=lossless, fill=FILL if masked else None, device="cpu")
            out.setdefault(label, []).append((rel,) + measure(a, hpcz.decompress(blob), len(blob), eb, valid))
        if masked:
            continue
        if pysz:
            conf = pysz.szConfig()
            conf.errorBoundMode = pysz.szErrorBoundMode.REL
            conf.relErrorBound = rel
            comp, _ = pysz.sz.compress(np.ascontiguousarray(a), conf)
            back, _ = pysz.sz.decompress(comp, a.dtype, a.shape)
            out.setdefault("SZ3", []).append((rel,) + measure(a, back, comp.size, eb, valid))
        if zfpy:
            comp = zfpy.compress_numpy(np.ascontiguousarray(a), tolerance=eb)
            out.setdefault("ZFP", []).append((rel,) + measure(a, zfpy.decompress_numpy(comp), len(comp), eb, valid))
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    directory = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../../../shared/data")
    out_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "../../docs/rd")
    os.makedirs(out_dir, exist_ok=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = []
    for _, name, a in fields(directory):
        masked = is_masked(name)
        c = curves(a, masked)
        fig, ax = plt.subplots(figsize=(5.2, 3.8), dpi=110)
        for label, pts in c.items():
            ax.plot([p[1] for p in pts], [p[2] for p in pts], marker="o", markersize=3, label=label,
                    linestyle="--" if "fast" in label or label == "ZFP" else "-")
            rows += [(name, label, *p) for p in pts]
        ax.set_xlabel("bit rate (bits per value)")
        ax.set_ylabel("PSNR (dB)")
        ax.set_xscale("log", base=2)
        ax.set_title(f"{name} {'x'.join(map(str, a.shape))} {a.dtype}" + (" (fill masked)" if masked else ""), fontsize=8)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, f"rd_{name}.png"))
        plt.close(fig)
        print(f"rd_{name}.png: " + ", ".join(sorted(c)))
    with open(os.path.join(out_dir, "rd.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["field", "codec", "rel", "bits_per_value", "psnr_db"])
        w.writerows((n, l, r, f"{b:.4f}", f"{p:.2f}") for n, l, r, b, p in rows)


if __name__ == "__main__":
    main()
