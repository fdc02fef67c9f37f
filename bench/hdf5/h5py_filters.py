"""h5py writing and reading one chunked f32 dataset (a real field tiled along its slowest axis) through
HDF5 filters at one relative bound, in one run on the same bytes: hpcz (fast and ratio; on the GPU where
there is one, and on the CPU backend), hdf5plugin's SZ3, SZ and Zfp. Wall time of the write (create,
write, close) and of the read, GB/s of the array, CR of the file, max error against the bound.

    python bench/hdf5/h5py_filters.py FIELD [GIB=4] [CHUNK_MIB=64] [DIR=/dev/shm] [REL=1e-3]

The CPU-backend rows run in a child process with CUDA_VISIBLE_DEVICES="" (the filter then finds no GPU).
"""

import os
import re
import subprocess
import sys
import time

import h5py
import numpy as np


def tiled(field, gib, chunk_mib):
    """The field tiled along its slowest axis to about gib GiB, cut to whole chunks of about chunk_mib
    (an edge chunk's padding would widen a rel bound's range: every filter here pads with 0)."""
    m = re.match(r"^(.*)_([0-9x]+)_(f32|f64)\.bin$", os.path.basename(field))
    dims = tuple(int(x) for x in m.group(2).split("x"))
    base = np.fromfile(field, dtype=np.float32 if m.group(3) == "f32" else np.float64).reshape(dims)
    row = base.nbytes // dims[0]
    chunk_rows = max(1, int(chunk_mib * 2**20 // row))
    rows = -(-int(gib * 2**30) // (row * chunk_rows)) * chunk_rows
    return np.concatenate([base] * -(-rows // dims[0]), axis=0)[:rows], chunk_rows


def filters(rel, span):
    import hdf5plugin

    import hpcz.hdf5

    return {
        "hpcz fast": lambda: hpcz.hdf5.Hpcz(rel=rel),
        "hpcz ratio": lambda: hpcz.hdf5.Hpcz(rel=rel, mode="ratio"),
        "SZ3": lambda: hdf5plugin.SZ3(relative=rel),
        "SZ": lambda: hdf5plugin.SZ(relative=rel),
        "Zfp": lambda: hdf5plugin.Zfp(accuracy=rel * span),  # zfp's bound is absolute: the same one
    }


def run(name, a, chunk_rows, path, rel):
    span = float(a.max() - a.min())
    kw = filters(rel, span)[name]()
    t0 = time.perf_counter()
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=a, chunks=(chunk_rows,) + a.shape[1:], **kw)
    tw = time.perf_counter() - t0
    size = os.path.getsize(path)
    t0 = time.perf_counter()
    with h5py.File(path, "r") as f:
        b = f["x"][...]
    tr = time.perf_counter() - t0
    err = float(np.abs(b.astype(np.float64) - a).max())
    os.remove(path)
    g = a.nbytes / 1e9
    return f"{name:<16} write {g / tw:7.3f} GB/s  read {g / tr:7.3f} GB/s  CR {a.nbytes / size:7.2f}  max err / (rel x range) {err / (rel * span):.4f}"


def main():
    args = sys.argv[1:]
    only = None
    if args and args[0].startswith("--only="):
        only, args = args[0][7:], args[1:]
    field = args[0]
    gib = float(args[1]) if len(args) > 1 else 4
    chunk_mib = float(args[2]) if len(args) > 2 else 64
    out_dir = args[3] if len(args) > 3 else "/dev/shm"
    rel = float(args[4]) if len(args) > 4 else 1e-3
    a, chunk_rows = tiled(field, gib, chunk_mib)
    path = os.path.join(out_dir, f"hpcz-h5bench-{os.getpid()}.h5")
    if only:
        print(run(only, a, chunk_rows, path, rel) + "  (CPU backend)", flush=True)
        return
    import hpcz

    print(f"# {os.path.basename(field)} tiled to {a.shape} ({a.nbytes} bytes), chunks of {chunk_rows} rows "
          f"({chunk_rows * a.nbytes // a.shape[0] / 2**20:.0f} MiB), rel {rel}, {out_dir}; {os.cpu_count()} cores; "
          f"GPU: {hpcz._hpcz.gpu_name() or '-'}; h5py {h5py.__version__}, HDF5 {h5py.version.hdf5_version}", flush=True)
    for name in ("hpcz fast", "hpcz ratio", "SZ3", "SZ", "Zfp"):
        print(run(name, a, chunk_rows, path, rel) + ("  (GPU)" if name.startswith("hpcz") and hpcz.gpu_available() else ""), flush=True)
    if hpcz.gpu_available():
        for name in ("hpcz fast", "hpcz ratio"):
            env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
            subprocess.run([sys.executable, __file__, f"--only={name}"] + args, env=env, check=True)


if __name__ == "__main__":
    main()
