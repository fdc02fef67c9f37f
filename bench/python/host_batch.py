"""Host data through the Python package, as front ends meet it: a field tiled to SIZE MiB, then

  * the limits, measured in the same run: pinned host-to-device and device-to-host copies (cupy), a
    memcpy on every core and on one (numpy, threads);
  * hpcz.compress / hpcz.decompress(out=) of the whole array;
  * the array cut into chunks of 1, 4, 16 and 64 MiB along its slowest axis: one call a chunk, and
    (where this hpcz has them) compress_batch / decompress_batch of all chunks in one call;
  * cupy chunks on the device: one call a chunk, and a batch;
  * zarr v3, memory store, 4 MiB chunks: write and read of the array, with the hpcz serializer and with
    no codec work at all (zarr's own ceiling), at zarr's default batch size and at 64;
  * HDF5 through h5py in a file under DIR (/dev/shm): through the filter (64 and 16 MiB chunks) and
    through hpcz.hdf5.write / read (16 MiB chunks), with the file system's own write of the raw array.

Every figure is GB/s of the array (median of REPS after a warm-up), with its fraction of the tightest
limit. Rows this hpcz cannot run (an older one without batches) say so. Archives of the batch are
checked against the one-call archives.

    python bench/python/host_batch.py [FIELD] [SIZE_MIB=1024] [REPS=5] [DEVICE=gpu] [MODES=fast,ratio] [DIR]
                                      [ROWS=numpy,cupy,zarr,hdf5]
"""

import concurrent.futures
import os
import statistics
import sys
import time

import numpy as np

import hpcz
from tiled import tiled


def median_time(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def limits(nbytes, reps):
    """GB/s of: pinned H2D, pinned D2H, memcpy on every core, memcpy on one core."""
    out = {}
    src = np.random.default_rng(1).random(nbytes // 8)  # never zeros
    dst = np.empty_like(src)
    cores = os.cpu_count() or 1
    parts = np.array_split(np.arange(src.size), cores)
    with concurrent.futures.ThreadPoolExecutor(cores) as pool:
        def par_copy():
            list(pool.map(lambda p: np.copyto(dst[p[0]:p[-1] + 1], src[p[0]:p[-1] + 1]), parts))
        out["memcpy, every core"] = nbytes / median_time(par_copy, reps) / 1e9
    out["memcpy, one core"] = nbytes / median_time(lambda: np.copyto(dst, src), reps) / 1e9
    # What an output in new memory costs (a bytes object, an array HDF5 or zarr allocates): first-touch
    # page faults, one core.
    out["new memory written, one core"] = nbytes / median_time(lambda: np.ones(nbytes // 8), reps) / 1e9
    try:
        import cupy
        n = min(nbytes, 1 << 30)
        pinned = cupy.cuda.alloc_pinned_memory(n)
        host = np.frombuffer(pinned, dtype=np.uint8, count=n)
        host[:] = np.frombuffer(src.tobytes()[:n], dtype=np.uint8)
        dev = cupy.empty(n, dtype=cupy.uint8)
        s = cupy.cuda.Stream(non_blocking=True)

        def h2d():
            dev.data.copy_from_host_async(host.ctypes.data, n, stream=s)
            s.synchronize()

        def d2h():
            dev.data.copy_to_host_async(host.ctypes.data, n, stream=s)
            s.synchronize()
        out["pinned host to device"] = n / median_time(h2d, reps) / 1e9
        out["pinned device to host"] = n / median_time(d2h, reps) / 1e9
    except Exception as e:  # noqa: BLE001 - no cupy or no GPU: host limits only
        print(f"# no pinned-copy limits: {type(e).__name__}: {e}")
    return out


def row(label, nbytes, t, limit):
    g = nbytes / t / 1e9
    print(f"{label:58} {g:8.2f} GB/s  {g / limit:6.1%} of the limit" if limit else f"{label:58} {g:8.2f} GB/s")


def main():
    field = sys.argv[1] if len(sys.argv) > 1 else "data/climate-ncar_csm_b003_ts_100x64x128_f32.bin"
    size_mib = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    device = sys.argv[4] if len(sys.argv) > 4 else "gpu"
    modes = (sys.argv[5] if len(sys.argv) > 5 else "fast,ratio").split(",")
    where = sys.argv[6] if len(sys.argv) > 6 else "/dev/shm"
    parts = (sys.argv[7] if len(sys.argv) > 7 else "numpy,cupy,zarr,hdf5").split(",")
    a, copies, _, _ = tiled(field, size_mib)
    a = a[: max(1, (size_mib << 20) // (a.nbytes // a.shape[0]))].copy()  # exactly about SIZE MiB
    has_batch = hasattr(hpcz, "compress_batch")
    print(f"# {os.path.basename(field)} tiled to {a.shape} ({a.nbytes} bytes), rel 1e-3, device {device}, "
          f"median of {reps}; {hpcz._hpcz.version()}; GPU: {hpcz._hpcz.gpu_name() or '-'}; "
          f"batches: {'yes' if has_batch else 'no (older hpcz)'}")
    lim = limits(a.nbytes, reps)
    raw = os.path.join(where, "hpcz_host_batch_raw.bin")
    lim[f"file write ({where})"] = a.nbytes / median_time(lambda: a.tofile(raw), reps) / 1e9
    os.remove(raw)
    for k, v in lim.items():
        print(f"limit: {k:51} {v:8.2f} GB/s")
    bus = min([v for k, v in lim.items() if k.startswith("pinned")] or [0]) or None
    print(f"# fractions below are of the tightest pinned copy ({bus and round(bus, 2)} GB/s)")
    plane = a.nbytes // a.shape[0]
    for mode in modes:
        kw = dict(rel=1e-3, mode=mode, device=device)
        if "numpy" in parts:
            blob = hpcz.compress(a, **kw)
            out = np.empty_like(a)
            row(f"{mode} compress, one call", a.nbytes, median_time(lambda: hpcz.compress(a, **kw), reps), bus)
            row(f"{mode} decompress(out=), one call", a.nbytes,
                median_time(lambda: hpcz.decompress(blob, out=out, device=device), reps), bus)
            for mib in (1, 4, 16, 64):
                rows = max(1, (mib << 20) // plane)
                chunks = [a[i:i + rows] for i in range(0, a.shape[0], rows)]
                blobs = [hpcz.compress(c, **kw) for c in chunks]
                outs = [np.empty_like(c) for c in chunks]
                label = f"{mode} {mib:2} MiB chunks ({len(chunks)})"
                row(f"{label}: compress, a call each", a.nbytes,
                    median_time(lambda: [hpcz.compress(c, **kw) for c in chunks], reps), bus)
                row(f"{label}: decompress(out=), a call each", a.nbytes,
                    median_time(lambda: [hpcz.decompress(b, out=o, device=device) for b, o in zip(blobs, outs)], reps), bus)
                if has_batch:
                    got = hpcz.compress_batch(chunks, **kw)
                    assert got == blobs, "a batch archive differs from the one-call archive"
                    row(f"{label}: compress_batch", a.nbytes, median_time(lambda: hpcz.compress_batch(chunks, **kw), reps), bus)
                    row(f"{label}: decompress_batch(out=)", a.nbytes,
                        median_time(lambda: hpcz.decompress_batch(blobs, out=outs, device=device), reps), bus)
        if device != "cpu" and "cupy" in parts:
            cupy_rows(a, mode, reps, has_batch)
        if "zarr" in parts:
            zarr_rows(a, mode, reps, bus, device)
        if "hdf5" in parts:
            hdf5_rows(a, mode, reps, bus, device, where)


def cupy_rows(a, mode, reps, has_batch):
    try:
        import cupy
    except ImportError:
        return
    d = cupy.asarray(a)
    plane = a.nbytes // a.shape[0]
    for mib in (1, 4, 16, 64):
        rows = max(1, (mib << 20) // plane)
        chunks = [d[i:i + rows] for i in range(0, a.shape[0], rows)]

        def per_call():
            for c in chunks:
                hpcz.compress(c, rel=1e-3, mode=mode)
            cupy.cuda.get_current_stream().synchronize()
        row(f"{mode} cupy {mib:2} MiB chunks: compress, a call each", a.nbytes, median_time(per_call, reps), None)
        if has_batch:
            got = hpcz.compress_batch(chunks, rel=1e-3, mode=mode)
            assert all(cupy.array_equal(x, hpcz.compress(c, rel=1e-3, mode=mode)) for x, c in zip(got, chunks)), \
                "a device batch archive differs from the one-call archive"
            outs = [cupy.empty_like(c) for c in chunks]

            def batch():
                hpcz.compress_batch(chunks, rel=1e-3, mode=mode)
            row(f"{mode} cupy {mib:2} MiB chunks: compress_batch", a.nbytes, median_time(batch, reps), None)

            def per_call_back():
                for b, o in zip(got, outs):
                    hpcz.decompress(b, out=o)
            row(f"{mode} cupy {mib:2} MiB chunks: decompress(out=), a call each", a.nbytes,
                median_time(per_call_back, reps), None)

            def batch_back():
                hpcz.decompress_batch(got, out=outs)
            row(f"{mode} cupy {mib:2} MiB chunks: decompress_batch(out=)", a.nbytes, median_time(batch_back, reps), None)
            # Chunks cut from one array are off 16-byte alignment where a chunk's bytes are not a multiple
            # of 16 (each such chunk is copied first); the same chunks in buffers of their own, then the
            # library call alone (its lists prepared): what the Python layer costs.
            own = [c.copy() for c in chunks]

            def batch_own():
                hpcz.compress_batch(own, rel=1e-3, mode=mode)
            row(f"{mode} cupy {mib:2} MiB chunks, own buffers: compress_batch", a.nbytes, median_time(batch_own, reps), None)
            from hpcz import _hpcz
            caps = [_hpcz.max_compressed_size(c.size, 32) for c in own]
            at = np.cumsum([0] + [(x + 255) // 256 * 256 for x in caps])
            buf = cupy.empty(int(at[-1]), dtype=cupy.uint8)
            args = ([c.data.ptr for c in own], [32] * len(own), [list(c.shape) for c in own], mode, "rel", 1e-3, None,
                    [buf.data.ptr + int(x) for x in at[:-1]], caps)
            ws_size = _hpcz.compress_device_batch_workspace(args[1], args[2], mode, "rel", 1e-3, None)
            ws = cupy.empty(ws_size, dtype=cupy.uint8)
            sizes = cupy.empty(len(own), dtype=cupy.uint64)
            stream = cupy.cuda.get_current_stream()

            def library():
                _hpcz.compress_device_batch(*args, sizes.data.ptr, ws.data.ptr, ws_size, stream.ptr)
                stream.synchronize()
            row(f"{mode} cupy {mib:2} MiB chunks, own buffers: the library call alone", a.nbytes,
                median_time(library, reps), None)
            if hasattr(_hpcz, "decompress_device_batch_packed"):  # decoding, its headers read and lists prepared
                blobs = hpcz.compress_batch(own, rel=1e-3, mode=mode)
                backs = [cupy.empty_like(c) for c in own]
                heads = b"".join(cupy.asnumpy(b[:_hpcz.header_size()]).tobytes() for b in blobs)
                which = list(range(len(blobs)))
                dws_size = _hpcz.decompress_device_batch_workspace_packed(heads, which)
                dws = cupy.empty(max(dws_size, 1), dtype=cupy.uint8)
                status = cupy.zeros(len(own), dtype=cupy.uint32)
                dargs = (heads, which, [b.data.ptr for b in blobs], [o.data.ptr for o in backs], status.data.ptr,
                         dws.data.ptr, dws_size, stream.ptr)

                def library_back():
                    _hpcz.decompress_device_batch_packed(*dargs)
                    stream.synchronize()
                row(f"{mode} cupy {mib:2} MiB chunks, own buffers: decoding, the library call alone", a.nbytes,
                    median_time(library_back, reps), None)
                assert not status.get().any() and all(cupy.array_equal(x, y) for x, y in zip(
                    backs, hpcz.decompress_batch(blobs))), "the library call's values differ from decompress_batch's"


def zarr_rows(a, mode, reps, bus, device):
    try:
        import zarr
        import hpcz.zarr as hz
    except Exception as e:  # noqa: BLE001
        print(f"# no zarr rows: {type(e).__name__}: {e}")
        return
    plane = a.nbytes // a.shape[0]
    rows = max(1, (4 << 20) // plane)
    store = {}

    def write():
        store.clear()
        z = zarr.create_array(zarr.storage.MemoryStore(store), shape=a.shape, chunks=(rows,) + a.shape[1:],
                              dtype=a.dtype, serializer=hz.Hpcz(rel=1e-3, mode=mode), compressors=None,
                              overwrite=True)
        z[...] = a
        return z
    def write_plain():
        store.clear()
        z = zarr.create_array(zarr.storage.MemoryStore(store), shape=a.shape, chunks=(rows,) + a.shape[1:],
                              dtype=a.dtype, compressors=None, overwrite=True)
        z[...] = a
        return z
    # zarr's default hands codecs a chunk at a time and compares every chunk with the fill value
    # before it writes it; the second setting lets zarr batch and write as it goes.
    settings = ({"codec_pipeline.batch_size": 1},
                {"codec_pipeline.batch_size": 64, "array.write_empty_chunks": True})
    for name, writer in (("zarr v3 alone (no codec work), 4 MiB chunks", write_plain),
                         (f"{mode} zarr v3, 4 MiB chunks, memory store", write)):
        for cfg in settings:
            with zarr.config.set(cfg):
                z = writer()
                label = f"{name}, {cfg}"
                row(f"{label}: write", a.nbytes, median_time(writer, reps), bus)
                row(f"{label}: read", a.nbytes, median_time(lambda: z[...], reps), bus)


def hdf5_rows(a, mode, reps, bus, device, where):
    try:
        import h5py
        import hpcz.hdf5 as hh
    except Exception as e:  # noqa: BLE001
        print(f"# no HDF5 rows: {type(e).__name__}: {e}")
        return
    path = os.path.join(where, "hpcz_host_batch.h5")
    plane = a.nbytes // a.shape[0]
    # HDF5 alone (chunked, no filter): the limit of the library's own chunk path (its chunk buffers,
    # the copies into and out of them, the file) on this host, for the rows with hpcz.
    for mib, how in ((64, "no filter (HDF5 alone)"), (64, "filter"), (16, "no filter (HDF5 alone)"), (16, "filter"),
                     (16, "hpcz.hdf5.write/read")):
        rows = max(1, (mib << 20) // plane)
        chunks = (rows,) + a.shape[1:]

        def write():
            with h5py.File(path, "w") as f:
                if how == "filter":
                    f.create_dataset("x", data=a, chunks=chunks, **hh.Hpcz(rel=1e-3, mode=mode))
                elif how.startswith("no filter"):
                    f.create_dataset("x", data=a, chunks=chunks)
                else:
                    hh.write(f.create_dataset("x", shape=a.shape, dtype=a.dtype, chunks=chunks,
                                              **hh.Hpcz(rel=1e-3, mode=mode)), a, device=device)

        def read():
            with h5py.File(path, "r") as f:
                return hh.read(f["x"], device=device) if how.startswith("hpcz.hdf5") else f["x"][...]
        label = f"{mode} HDF5 {mib} MiB chunks, {how}"
        row(f"{label}: write", a.nbytes, median_time(write, reps), bus)
        row(f"{label}: read", a.nbytes, median_time(read, reps), bus)
    os.remove(path)


if __name__ == "__main__":
    main()
