"""A shared field (name_DIMS_f32|f64.bin) tiled along its slowest axis to at least size_mib MiB."""

import os
import re

import numpy as np


def tiled(field, size_mib):
    """(array, copies, dtype tag, name stem) of the field repeated along its slowest axis."""
    m = re.match(r"^(.*)_([0-9x]+)_(f32|f64)\.bin$", os.path.basename(field))
    dims = tuple(int(x) for x in m.group(2).split("x"))
    base = np.fromfile(field, dtype=np.float32 if m.group(3) == "f32" else np.float64).reshape(dims)
    copies = -(-size_mib * 2**20 // base.nbytes)
    return np.ascontiguousarray(np.concatenate([base] * copies, axis=0)), copies, m.group(3), m.group(1)
