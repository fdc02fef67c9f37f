"""Arrays on the GPU: anything with __cuda_array_interface__ (cupy, torch, numba) is coded in place on
its device and stream, with no copy to the host. Outputs and workspace are cupy arrays on that
device; the archive of a device array stays on the device (a cupy uint8 array)."""

import numpy as np

from . import _hpcz
from ._errors import BackendUnavailableError, CorruptArchiveError, InvalidArgumentError

_STATUS = {1: "chunk checksum mismatch", 2: "malformed chunk or chunk table entry", 4: "chunk table checksum mismatch"}


def is_device_array(x):
    return hasattr(x, "__cuda_array_interface__") and not isinstance(x, np.ndarray)


def _cupy():
    try:
        import cupy
    except ImportError:
        raise BackendUnavailableError("arrays on the GPU need cupy (pip install cupy-cuda12x or -cuda13x)", 4) from None
    _hpcz.require_gpu()  # BackendUnavailableError with the reason (no CUDA build, no GPU, a forked child)
    return cupy


class _View:
    """What __cuda_array_interface__ says of an array: pointer, shape, dtype, stream, device."""

    def __init__(self, obj, what):
        cai = obj.__cuda_array_interface__
        if cai.get("mask") is not None:
            raise InvalidArgumentError(f"{what}: masked device arrays are not supported", 1)
        self.obj = obj
        self.ptr, self.readonly = cai["data"]
        self.shape = tuple(int(x) for x in cai["shape"])
        self.dtype = np.dtype(cai["typestr"])
        self.size = int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1
        strides = cai.get("strides")
        if strides is not None and self.size > 1:
            want, step = [], self.dtype.itemsize
            for n in reversed(self.shape):
                want.append(step)
                step *= n
            if any(n > 1 and s != w for s, w, n in zip(strides, reversed(want), self.shape)):
                raise InvalidArgumentError(f"{what} must be C-contiguous (cupy.ascontiguousarray makes a copy that is)", 1)
        self.stream_handle = cai.get("stream")  # None: ready, nothing to order after


def _batch_view(cupy, obj, what):
    """_View, without the interface's dict for cupy's own C-contiguous arrays (a batch takes thousands)."""
    if isinstance(obj, cupy.ndarray) and obj.flags.c_contiguous:
        v = _View.__new__(_View)
        v.obj, v.ptr, v.readonly = obj, obj.data.ptr, False
        v.shape, v.dtype, v.size = obj.shape, obj.dtype, obj.size
        v.stream_handle = None  # cupy's arrays are ordered on its current stream, the one the batch runs on
        return v
    return _View(obj, what)


def _device_of(cupy, ptr, obj=None):
    if isinstance(obj, cupy.ndarray):
        return obj.device.id  # no driver query for cupy's own arrays
    return cupy.cuda.runtime.pointerGetAttributes(ptr).device


class _RawStream:
    """A cudaStream_t handle through the CUDA stream protocol, for cupy's Stream.from_external."""

    __slots__ = ("handle",)

    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def _stream(cupy, handle):
    if handle is None:
        return cupy.cuda.get_current_stream()
    if handle == 1:
        return cupy.cuda.Stream.null
    if handle == 2:
        return cupy.cuda.Stream.ptds
    if hasattr(cupy.cuda.Stream, "from_external"):  # cupy 14 deprecates ExternalStream
        return cupy.cuda.Stream.from_external(_RawStream(handle))
    return cupy.cuda.ExternalStream(handle)


def compress(array, mode, kind, bound, lossless, fill):
    cupy = _cupy()
    v = _View(array, "values")
    if v.dtype not in (np.float32, np.float64) or not v.dtype.isnative:
        raise InvalidArgumentError(f"values must be float32 or float64, not {v.dtype}", 1)
    if not 1 <= len(v.shape) <= 4:
        raise InvalidArgumentError(f"values must have 1 to 4 dimensions, not {len(v.shape)}", 1)
    if lossless:
        raise InvalidArgumentError("lossless=True is for host arrays: the GPU path writes plain archives", 1)
    bits = v.dtype.itemsize * 8
    dims = list(v.shape)
    with cupy.cuda.Device(_device_of(cupy, v.ptr, array)) as dev:
        _hpcz.use_device(dev.id)
        stream = _stream(cupy, v.stream_handle)
        with stream:
            ptr, keep = v.ptr, None
            if ptr % 16:  # the kernels load 16 bytes at a time: a view off that alignment is copied once
                keep = cupy.ascontiguousarray(cupy.asarray(array)).copy()
                ptr = keep.data.ptr
            ws_size = _hpcz.compress_device_workspace(bits, dims, mode, kind, bound, fill)
            cap = _hpcz.max_compressed_size(v.size, bits)
            out = cupy.empty(cap, dtype=cupy.uint8)
            ws = cupy.empty(max(ws_size, 1), dtype=cupy.uint8)
            size = cupy.empty(1, dtype=cupy.uint64)
            _hpcz.compress_device(ptr, bits, dims, mode, kind, bound, fill, out.data.ptr, cap, size.data.ptr,
                                  ws.data.ptr, ws_size, stream.ptr)
            n = int(size.get(stream=stream)[0])  # waits for the stream
    return out[:n]


def _device_out(cupy, head, dtype, out, dev):
    """A new array on device dev for the archive whose header is head, or out once checked to take its
    values there; with its _View."""
    if out is None:
        out = cupy.empty(head["shape"], dtype=dtype)
    if not is_device_array(out):
        raise InvalidArgumentError("out must be an array on the GPU for an archive there", 1)
    o = _View(out, "out")
    if _device_of(cupy, o.ptr, out) != dev:
        raise InvalidArgumentError("out is on another GPU than the archive", 1)
    if o.dtype != dtype or o.size != head["n_values"]:
        raise InvalidArgumentError(
            f"out is {o.dtype} of {o.size} values; the archive holds {dtype} of shape {head['shape']}", 1)
    if o.readonly:
        raise InvalidArgumentError("out is read-only", 1)
    return out, o


def _header(cupy, archive):
    n = min(_hpcz.header_size(), archive.size)
    return cupy.asnumpy(archive[:n])


def decompress(data, out, stream_from=None, check=None):
    """data: a device uint8 array, or host bytes (copied to out's device); out: a device array or None.
    check(head, dtype), when given, may refuse the archive from its header before out is allocated."""
    cupy = _cupy()
    if out is not None and not is_device_array(out):
        raise InvalidArgumentError("out must be an array on the GPU for an archive there (or decode its bytes on the host)", 1)
    if is_device_array(data):
        a = _View(data, "an archive")
        if a.dtype.itemsize != 1:
            raise InvalidArgumentError(f"a device archive must be a uint8 array, not {a.dtype}", 1)
        dev = _device_of(cupy, a.ptr, data)
        handle = a.stream_handle
    else:
        o = _View(out, "out")
        dev, handle = _device_of(cupy, o.ptr, out), o.stream_handle
    with cupy.cuda.Device(dev):
        _hpcz.use_device(dev)
        stream = _stream(cupy, handle)
        with stream:
            archive = cupy.asarray(data).reshape(-1).view(cupy.uint8) if is_device_array(data) else \
                cupy.asarray(np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8))
            if archive.data.ptr % 16:
                archive = archive.copy()  # 16-byte loads
            header = _header(cupy, archive)
            head = _hpcz.info(header, False)
            if archive.size != head["archive_size"]:
                raise CorruptArchiveError(f"archive of {archive.size} bytes; its header says {head['archive_size']}", 2)
            if head["lossless"]:
                raise InvalidArgumentError("an archive with the lossless stage decodes on the host (hpcz.decompress of its bytes)", 1)
            if archive.size < head["archive_size"]:
                raise CorruptArchiveError(f"archive truncated: {archive.size} of {head['archive_size']} bytes", 2)
            dtype = np.dtype(head["dtype"])
            if check is not None:
                check(head, dtype)
            out, o = _device_out(cupy, head, dtype, out, dev)
            ws_size = _hpcz.decompress_device_workspace(header)
            ws = cupy.empty(max(ws_size, 1), dtype=cupy.uint8)
            status = cupy.zeros(1, dtype=cupy.uint32)
            # the kernels store 16 bytes at a time: an out off that alignment is decoded beside it, then copied
            tmp = cupy.empty(o.size, dtype=dtype) if o.ptr % 16 else None
            target = o.ptr if tmp is None else tmp.data.ptr
            if head["n_values"]:
                _hpcz.decompress_device(header, archive.data.ptr, target, status.data.ptr, ws.data.ptr, ws_size,
                                        stream.ptr)
            st = int(status.get(stream=stream)[0])
            if not st and tmp is not None:
                cupy.asarray(out).reshape(-1)[...] = tmp
    if st:
        raise CorruptArchiveError("corrupt archive: " + "; ".join(m for b, m in _STATUS.items() if st & b), 2)
    return out


def _align(n):
    return (n + 255) // 256 * 256


def compress_batch(arrays, mode, kind, bound, lossless, fill):
    """One call for the whole batch (one set of launches in the fast mode) on the first array's device
    and stream, one wait at the end. The archives are views of one device buffer."""
    cupy = _cupy()
    if lossless:
        raise InvalidArgumentError("lossless=True is for host arrays: the GPU path writes plain archives", 1)
    views = [_batch_view(cupy, a, "values") for a in arrays]
    statuses = [(0, "")] * len(arrays)
    dev = _device_of(cupy, views[0].ptr, arrays[0])
    plan, offset = [], 0
    for i, (a, v) in enumerate(zip(arrays, views)):
        try:
            if v.dtype not in (np.float32, np.float64) or not v.dtype.isnative:
                raise InvalidArgumentError(f"values must be float32 or float64, not {v.dtype}", 1)
            if not 1 <= len(v.shape) <= 4:
                raise InvalidArgumentError(f"values must have 1 to 4 dimensions, not {len(v.shape)}", 1)
            if _device_of(cupy, v.ptr, a) != dev:
                raise InvalidArgumentError("a device batch is on one GPU", 1)
            bits = v.dtype.itemsize * 8
            cap = _hpcz.max_compressed_size(v.size, bits)
        except Exception as e:  # noqa: BLE001 - hpcz errors become the item's status
            statuses[i] = (getattr(e, "code", 1), str(e))
            continue
        plan.append((i, v, bits, cap, offset))
        offset += _align(cap)
    results = [None] * len(arrays)
    if not plan:
        return results, statuses
    bits = [p[2] for p in plan]
    dims = [list(p[1].shape) for p in plan]
    with cupy.cuda.Device(dev):
        _hpcz.use_device(dev)
        stream = _stream(cupy, views[0].stream_handle)
        with stream:
            ws_size = _hpcz.compress_device_batch_workspace(bits, dims, mode, kind, bound, fill)
            out = cupy.empty(max(offset, 1), dtype=cupy.uint8)
            ws = cupy.empty(ws_size, dtype=cupy.uint8)
            sizes = cupy.zeros(len(plan), dtype=cupy.uint64)
            keep, ptrs = [], []
            for i, v, _, _, _ in plan:
                ptr = v.ptr
                if ptr % 16:  # the kernels load 16 bytes at a time: a view off that alignment is copied once
                    keep.append(cupy.ascontiguousarray(cupy.asarray(arrays[i])).copy())
                    ptr = keep[-1].data.ptr
                ptrs.append(ptr)
            _hpcz.compress_device_batch(ptrs, bits, dims, mode, kind, bound, fill,
                                        [out.data.ptr + p[4] for p in plan], [p[3] for p in plan], sizes.data.ptr,
                                        ws.data.ptr, ws_size, stream.ptr)
            n = sizes.get(stream=stream)  # the one wait
    for j, (i, v, bits, cap, at) in enumerate(plan):
        results[i] = out[at:at + int(n[j])]
    return results, statuses


def decompress_batch(blobs, outs):
    """Device archives: their headers read in one wait, then every archive decoded on the first one's
    stream, one wait for all statuses. Host archives with device outs: one at a time."""
    cupy = _cupy()
    n = len(blobs)
    results, statuses = [None] * n, [(0, "")] * n
    if not all(is_device_array(b) for b in blobs):
        for i, data in enumerate(blobs):
            try:
                results[i] = decompress(data, None if outs is None else outs[i])
            except Exception as e:  # noqa: BLE001
                statuses[i] = (getattr(e, "code", 1), str(e))
        return results, statuses
    views = [_View(b, "an archive") for b in blobs]
    dev = _device_of(cupy, views[0].ptr, blobs[0])
    hsize = _hpcz.header_size()
    with cupy.cuda.Device(dev):
        _hpcz.use_device(dev)
        stream = _stream(cupy, views[0].stream_handle)
        with stream:
            archives = []
            for i, (b, v) in enumerate(zip(blobs, views)):
                try:
                    if v.dtype.itemsize != 1:
                        raise InvalidArgumentError(f"a device archive must be a uint8 array, not {v.dtype}", 1)
                    if _device_of(cupy, v.ptr, b) != dev:
                        raise InvalidArgumentError("a device batch is on one GPU", 1)
                    a = cupy.asarray(b).reshape(-1).view(cupy.uint8)
                    archives.append(a if a.data.ptr % 16 == 0 else a.copy())  # 16-byte loads
                except Exception as e:  # noqa: BLE001
                    statuses[i] = (getattr(e, "code", 1), str(e))
                    archives.append(None)
            live = [i for i in range(n) if archives[i] is not None]
            heads = _hpcz.device_headers([archives[i].data.ptr for i in live], [archives[i].size for i in live],
                                         stream.ptr)
            plan = []
            for k, i in enumerate(live):
                try:
                    header = np.frombuffer(heads, dtype=np.uint8, count=min(hsize, archives[i].size), offset=k * hsize)
                    head = _hpcz.info(header, False)
                    if archives[i].size != head["archive_size"]:
                        raise CorruptArchiveError(
                            f"archive of {archives[i].size} bytes; its header says {head['archive_size']}", 2)
                    if head["lossless"]:
                        raise InvalidArgumentError(
                            "an archive with the lossless stage decodes on the host (hpcz.decompress of its bytes)", 1)
                    dtype = np.dtype(head["dtype"])
                    out, o = _device_out(cupy, head, dtype, None if outs is None else outs[i], dev)
                    if o.ptr % 16:  # the kernels store 16 bytes at a time: decoded beside it, then copied
                        plan.append((i, header, out, cupy.empty(o.size, dtype=dtype)))
                    elif head["n_values"]:
                        plan.append((i, header, out, None))
                    else:
                        results[i] = out
                except Exception as e:  # noqa: BLE001
                    statuses[i] = (getattr(e, "code", 1), str(e))
            if plan:
                headers = [p[1] for p in plan]
                ws_size = _hpcz.decompress_device_batch_workspace(headers)
                ws = cupy.empty(ws_size, dtype=cupy.uint8)
                status = cupy.zeros(len(plan), dtype=cupy.uint32)
                _hpcz.decompress_device_batch(headers, [archives[p[0]].data.ptr for p in plan],
                                              [_View(p[2] if p[3] is None else p[3], "out").ptr for p in plan],
                                              status.data.ptr, ws.data.ptr, ws_size, stream.ptr)
                st = status.get(stream=stream)  # the one wait
                for j, (i, _, out, tmp) in enumerate(plan):
                    if st[j]:
                        statuses[i] = (2, "corrupt archive: " + "; ".join(m for b, m in _STATUS.items() if st[j] & b))
                        continue
                    if tmp is not None:
                        cupy.asarray(out).reshape(-1)[...] = tmp
                    results[i] = out
    return results, statuses
