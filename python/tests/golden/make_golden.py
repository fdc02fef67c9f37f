"""Writes ts-hpcz-filter-v1.h5: the first 20 years of the bundled sample, through the first version of
the HDF5 filter (cd_values version 1), in three datasets. Kept as written: later versions must read it.

    python python/tests/golden/make_golden.py
"""

import pathlib

import h5py
import numpy as np

import hpcz.hdf5 as hh

here = pathlib.Path(__file__).parent
a = np.fromfile(here.parents[2] / "data" / "climate-ncar_csm_b003_ts_100x64x128_f32.bin", dtype=np.float32)
a = a.reshape(100, 64, 128)[:20]
with h5py.File(here / "ts-hpcz-filter-v1.h5", "w") as f:
    f.create_dataset("fast_abs", data=a, chunks=(10, 64, 128), **hh.Hpcz(abs=0.05))
    f.create_dataset("ratio_rel", data=a, chunks=(20, 64, 128), **hh.Hpcz(rel=1e-3, mode="ratio"))
    f.create_dataset("ratio_lossless", data=a, chunks=(5, 32, 128), **hh.Hpcz(abs=0.05, mode="ratio", lossless=True))
