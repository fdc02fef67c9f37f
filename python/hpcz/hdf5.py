"""hpcz for HDF5 through h5py, in the manner of hdf5plugin:

    import h5py, hpcz.hdf5
    with h5py.File("out.h5", "w") as f:
        f.create_dataset("t", data=a, chunks=(16, 721, 1440), **hpcz.hdf5.Hpcz(rel=1e-3))

Importing this module registers the filter (id FILTER_ID) with h5py. Other programs (h5dump, h5ls,
netCDF, h5py without this import) find it with HDF5_PLUGIN_PATH=hpcz.hdf5.PLUGIN_PATH. One HDF5 chunk is
one hpcz archive; a rel bound is relative to each chunk's own range. docs/FORMAT.md lists cd_values.
"""

import ctypes
import os
import struct
from collections.abc import Mapping

import h5py

from ._errors import BackendUnavailableError, InvalidArgumentError

FILTER_ID = 34520
PLUGIN_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugins")
_PLUGIN = os.path.join(PLUGIN_PATH, "libH5Zhpcz.so")
_PARAMS_VERSION = 1


def _register():
    if not os.path.exists(_PLUGIN):
        raise BackendUnavailableError(f"this hpcz was built without the HDF5 filter ({_PLUGIN} is missing)", 4)
    lib = ctypes.CDLL(_PLUGIN)
    # h5py loads its HDF5 privately: the filter's set_local looks HDF5 up through h5py's module.
    if lib.hpcz_h5z_use_library(h5py.h5.__file__.encode()) != 0:
        raise BackendUnavailableError("the HDF5 filter could not find h5py's HDF5 library", 4)
    lib.H5PLget_plugin_info.restype = ctypes.c_void_p
    if not h5py.h5z.filter_avail(FILTER_ID):
        h5py.h5z.register_filter(lib.H5PLget_plugin_info())
    return lib


_lib = _register()


def _words(x):
    lo, hi = struct.unpack("<II", struct.pack("<d", float(x)))
    return [lo, hi]


class Hpcz(Mapping):
    """The keyword arguments of h5py's create_dataset for the hpcz filter (compression,
    compression_opts). abs or rel: the bound (exactly one); mode: "fast" or "ratio"; lossless: the
    lossless stage; fill: a value kept exactly and left out of the range."""

    filter_id = FILTER_ID

    def __init__(self, abs=None, rel=None, mode="fast", lossless=False, fill=None):
        if (abs is None) == (rel is None):
            raise InvalidArgumentError("give exactly one of abs= and rel=", 1)
        if mode not in ("fast", "ratio"):
            raise InvalidArgumentError(f"mode must be 'fast' or 'ratio', not {mode!r}", 1)
        bound = abs if abs is not None else rel
        if not float(bound) >= 0:
            raise InvalidArgumentError(f"the bound must be >= 0, not {bound!r}", 1)
        flags = (1 if fill is not None else 0) | (2 if lossless else 0)
        self.filter_options = tuple([_PARAMS_VERSION, 2 if mode == "ratio" else 1, 1 if abs is not None else 2]
                                    + _words(bound) + [flags] + _words(fill if fill is not None else 0.0))
        self._kwargs = {"compression": FILTER_ID, "compression_opts": self.filter_options}

    def __getitem__(self, key):
        return self._kwargs[key]

    def __iter__(self):
        return iter(self._kwargs)

    def __len__(self):
        return len(self._kwargs)

    def __repr__(self):
        return f"hpcz.hdf5.Hpcz({self._kwargs!r})"
