"""The HDF5 filter plugin of this build (compiled from hdf5/h5_decls.hpp, not HDF5's headers) through
h5py and h5py's own HDF5, without the hpcz Python package: registered as hpcz.hdf5 does, a float32
dataset written and read back within its bound, the words set_local adds, its refusal of an integer
dataset, and h5py's HDF5 version named. Usage: python h5py_plugin_test.py PLUGIN_FILE"""
import ctypes
import struct
import sys
import tempfile

import h5py
import numpy as np

FILTER_ID = 34520
plugin = sys.argv[1]
lib = ctypes.CDLL(plugin)
# h5py loads its HDF5 privately: set_local's HDF5 calls are looked up through h5py's module.
assert lib.hpcz_h5z_use_library(h5py.h5.__file__.encode()) == 0, "the plugin did not find h5py's HDF5"
lib.H5PLget_plugin_info.restype = ctypes.c_void_p
lib.H5PLget_plugin_type.restype = ctypes.c_int
assert lib.H5PLget_plugin_type() == 0  # H5PL_TYPE_FILTER
h5py.h5z.register_filter(lib.H5PLget_plugin_info())
assert h5py.h5z.filter_avail(FILTER_ID)

bound = 0.01
lo, hi = struct.unpack("<II", struct.pack("<d", bound))
opts = (1, 2, 1, lo, hi, 0, 0, 0)  # params version 1, ratio mode, abs bound, no flags, no fill
rng = np.random.default_rng(7)
a = (np.cumsum(rng.standard_normal((40, 30, 20)), axis=2) * 3).astype(np.float32)
with tempfile.TemporaryDirectory() as d:
    path = f"{d}/t.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=a, chunks=(10, 30, 20), compression=FILTER_ID, compression_opts=opts)
        try:  # set_local refuses what it cannot code, through the declared H5Tget_class
            f.create_dataset("i", data=np.arange(100, dtype=np.int32), chunks=(50,), compression=FILTER_ID,
                             compression_opts=opts)
            raise AssertionError("an int32 dataset was accepted")
        except (ValueError, OSError, RuntimeError) as e:
            assert "hpcz" in str(e), e  # set_local's reason, on HDF5's error stack through H5Epush2
            print("int32 refused:", str(e).splitlines()[0])
    with h5py.File(path, "r") as f:
        x = f["x"]
        flags, values, _ = x.id.get_create_plist().get_filter_by_id(FILTER_ID)
        # set_local (H5Pget_filter_by_id2, H5Tget_size, H5Pget_chunk, H5Pmodify_filter): the user's 8
        # words, then dtype f32, rank 3 and the chunk's dims; and the filter made mandatory.
        assert tuple(values[:8]) == opts and tuple(values[9:]) == (3, 10, 30, 20), values
        assert flags & 1 == 0, flags
        stored = x.id.get_storage_size()
        back = x[...]
    err = float(np.max(np.abs(back.astype(np.float64) - a.astype(np.float64))))
    assert err <= bound, err
    assert stored < a.nbytes, (stored, a.nbytes)
print(f"h5py {h5py.__version__}, HDF5 {h5py.version.hdf5_version}: {a.nbytes} bytes in {stored}, max error {err:g}")
