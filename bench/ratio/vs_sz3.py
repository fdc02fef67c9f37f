"""Compression ratio of hpcz's ratio-class modes against SZ3 (PyPI pysz) on the same untiled fields, rel
bounds 1e-2, 1e-3, 1e-4, in one run: CR, max error / bound (checked: must be <= 1) and PSNR for each, and
the geometric mean of CR over the fields without a fill value. hpcz on the CPU backend (its archives are
the GPU's bytes). A field named ...levitus... is masked (fill -1e10): hpcz codes it with --fill, against
its own fast mode; SZ3 has no fill value and is left out there.
usage: python bench/ratio/vs_sz3.py [DATA_DIR=../shared/data]"""
import importlib.metadata
import math
import os
import sys

import numpy as np

import hpcz
from fields import FILL, fields, is_masked, quality, valid_values

try:
    import pysz
except ImportError:  # pip install pysz
    pysz = None

RELS = (1e-2, 1e-3, 1e-4)
MODES = (("ratio", False), ("ratio", True), ("interp", False), ("interp", True))


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../../shared/data")
    print(f"# bench/ratio/vs_sz3.py {directory}: hpcz {_version('hpcz')} CPU backend; "
          f"SZ3 from pysz {_version('pysz') if pysz else 'absent'} (REL, default config)")
    print("| field | rel | " + " | ".join(f"hpcz {m}{' +lossless' if l else ''}" for m, l in MODES) + " | SZ3 | fast +lossless |")
    print("|---|---|" + "---|" * (len(MODES) + 2))
    cr = {}
    for name, _, a in fields(directory):
        masked = is_masked(name)
        fill = FILL if masked else None
        valid = valid_values(a, masked)
        rng = float(a[valid].max() - a[valid].min())
        for rel in RELS:
            eb = rel * rng
            row = []
            for mode, lossless in MODES + (("fast", True),) if masked else MODES:
                blob = hpcz.compress(a, rel=rel, mode=mode, lossless=lossless, fill=fill, device="cpu")
                back = hpcz.decompress(blob)
                worst, psnr = quality(a, back, eb, valid)
                assert worst <= 1.0 + 1e-12, (name, rel, mode, worst)
                if masked:
                    assert np.array_equal(back[~valid], a[~valid])
                c = a.nbytes / len(blob)
                cr.setdefault((mode, lossless, rel), {})[name] = c
                row.append(f"{c:.2f} ({psnr:.1f} dB)")
            if pysz and not masked:
                conf = pysz.szConfig()
                conf.errorBoundMode = pysz.szErrorBoundMode.REL
                conf.relErrorBound = rel
                comp, _ = pysz.sz.compress(np.ascontiguousarray(a), conf)
                back, _ = pysz.sz.decompress(comp, a.dtype, a.shape)
                worst, psnr = quality(a, back.reshape(a.shape), eb, valid)
                c = a.nbytes / comp.size
                cr.setdefault(("sz3", False, rel), {})[name] = c
                row.append(f"{c:.2f} ({psnr:.1f} dB){' OVER' if worst > 1 + 1e-9 else ''}")
            elif not masked:
                row.append("-")
            if not masked:
                row.append("")
            print(f"| {name} | {rel:g} | " + " | ".join(row) + " |")
    print()
    print("Geometric mean CR over the fields without a fill value:")
    for key in [(m, l) for m, l in MODES] + [("sz3", False)]:
        line = []
        for rel in RELS:
            vals = [v for n, v in cr.get((key[0], key[1], rel), {}).items() if "levitus" not in n]
            line.append(f"{math.exp(sum(map(math.log, vals)) / len(vals)):.2f}" if vals else "-")
        print(f"- {key[0]}{' +lossless' if key[1] else ''}: " + " / ".join(line) + "  (rel 1e-2 / 1e-3 / 1e-4)")


if __name__ == "__main__":
    main()
