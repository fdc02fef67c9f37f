"""Where a cupy batch's time goes in the Python layer: cProfile of hpcz.compress_batch and
hpcz.decompress_batch on a field tiled to SIZE MiB and cut into CHUNK MiB cupy arrays (each in its own
buffer), and the cost of the per-chunk operations such a layer is made of (cupy views, interface
dicts, allocations), each timed over many calls. What the per-chunk budget of a target allows: at
300 GB/s, a 1 MiB chunk has 3.5 us in all.

    python bench/python/profile_batch.py FIELD [SIZE_MIB=1024] [CHUNK_MIB=1] [TOP=25]
"""

import cProfile
import pstats
import sys
import time

import cupy
import numpy as np

import hpcz
from hpcz import _hpcz
from tiled import tiled


def per_call_us(fn, n=20000):
    fn()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


def main():
    field = sys.argv[1]
    size_mib = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    chunk_mib = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 25
    a, _, _, _ = tiled(field, size_mib)
    d = cupy.asarray(a)
    rows = max(1, (chunk_mib << 20) // (a.nbytes // a.shape[0]))
    chunks = [d[i:i + rows].copy() for i in range(0, a.shape[0], rows)]
    print(f"# {len(chunks)} cupy chunks of {chunks[0].nbytes} bytes; {_hpcz.version()}; {_hpcz.gpu_name()}")
    blobs = hpcz.compress_batch(chunks, rel=1e-3)
    outs = [cupy.empty_like(c) for c in chunks]
    hpcz.decompress_batch(blobs, out=outs)
    cupy.cuda.get_current_stream().synchronize()
    for name, fn in (("compress_batch", lambda: hpcz.compress_batch(chunks, rel=1e-3)),
                     ("decompress_batch(out=)", lambda: hpcz.decompress_batch(blobs, out=outs)),
                     ("decompress_batch", lambda: hpcz.decompress_batch(blobs))):
        fn()
        t0 = time.perf_counter()
        fn()
        t = time.perf_counter() - t0
        print(f"\n## {name}: {t * 1e3:.2f} ms, {a.nbytes / t / 1e9:.1f} GB/s, {t / len(chunks) * 1e6:.2f} us a chunk")
        prof = cProfile.Profile()
        prof.enable()
        fn()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(top)
    x, buf = chunks[0], cupy.empty(1 << 20, dtype=cupy.uint8)
    hdr = cupy.asnumpy(blobs[0][:_hpcz.header_size()])
    ops = {
        "x.data.ptr": lambda: x.data.ptr,
        "x.shape, x.dtype, x.size": lambda: (x.shape, x.dtype, x.size),
        "x.flags.c_contiguous": lambda: x.flags.c_contiguous,
        "x.device.id": lambda: x.device.id,
        "x.__cuda_array_interface__": lambda: x.__cuda_array_interface__,
        "isinstance(x, cupy.ndarray)": lambda: isinstance(x, cupy.ndarray),
        "buf[a:b] (a view)": lambda: buf[256:4096],
        "cupy.ndarray(shape, dtype, memptr=buf.data + a)": lambda: cupy.ndarray((3840,), cupy.uint8, memptr=buf.data + 256),
        "buf[a:b].view(float32).reshape(shape)": lambda: buf[256:4352].view(cupy.float32).reshape(8, 128),
        "cupy.empty(shape, float32)": lambda: cupy.empty((64, 1024), dtype=cupy.float32),
        "cupy.asarray(x)": lambda: cupy.asarray(x),
        "np.dtype(x.dtype) == np.float32": lambda: np.dtype(x.dtype) == np.float32,
        "_hpcz.info(header)": lambda: _hpcz.info(hdr, False),
        "_hpcz.max_compressed_size": lambda: _hpcz.max_compressed_size(262144, 32),
    }
    print("\n## per-call cost of the pieces (us)")
    for k, fn in ops.items():
        print(f"{k:50} {per_call_us(fn):7.2f}")


if __name__ == "__main__":
    main()
