"""What the ratio benchmarks share: the fields of a data folder and the quality of a reconstruction."""
import math
import os
import re

import numpy as np

FILL = -1e10  # the masked field's fill value (...levitus...)


def fields(directory):
    """(file name, its stem without dims and dtype, the array) for each NAME_DIMS_f32|f64.bin, sorted."""
    for name in sorted(os.listdir(directory)):
        m = re.match(r"^(.*)_([0-9x]+)_(f32|f64)\.bin$", name)
        if m:
            shape = tuple(int(d) for d in m.group(2).split("x"))
            dtype = np.float32 if m.group(3) == "f32" else np.float64
            yield name, m.group(1), np.fromfile(os.path.join(directory, name), dtype=dtype).reshape(shape)


def is_masked(name):
    return "levitus" in name


def valid_values(a, masked):
    return a != a.dtype.type(FILL) if masked else np.isfinite(a)


def quality(a, back, eb, valid):
    """(max error / eb, PSNR in dB) over the valid values; back may be flat."""
    x, y = a[valid].astype(np.float64), np.asarray(back).reshape(a.shape)[valid].astype(np.float64)
    err = np.abs(x - y)
    mse = float(np.mean(err ** 2))
    rng = x.max() - x.min()
    return float(err.max()) / eb, (20 * math.log10(rng) - 10 * math.log10(mse)) if mse > 0 else float("inf")
