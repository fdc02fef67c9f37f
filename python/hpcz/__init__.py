"""hpcz: error-bounded lossy compression of float32/float64 (and float16, bfloat16, integer) arrays on NVIDIA GPUs and CPUs.

>>> import numpy as np, hpcz
>>> a = np.linspace(0, 1, 1000, dtype=np.float32).reshape(10, 100)
>>> blob = hpcz.compress(a, rel=1e-3)
>>> b = hpcz.decompress(blob)
>>> bool(abs(b - a).max() <= hpcz.info(blob)["eb_abs"])
True

Every reconstructed value is within the bound (checked exactly); NaN, Inf and the fill value come back
bit for bit; the CPU and the GPU write the same bytes, and either decodes what the other wrote.
"""

import operator as _operator

import numpy as _np

from . import _device, _dtypes, _hpcz
from ._errors import (BackendUnavailableError, CorruptArchiveError, CudaError, Error, HpczIOError,
                      InternalError, InvalidArgumentError, UnsupportedError)

__all__ = ["compress", "decompress", "compress_batch", "decompress_batch", "release_cached_buffers", "info", "gpu_available", "Error", "InvalidArgumentError",
           "CorruptArchiveError", "UnsupportedError", "BackendUnavailableError", "CudaError", "InternalError",
           "HpczIOError", "__version__"]
# The library's release ("hpcz 0.1.0 (writes format ...)"), one number for the C++ and Python sides.
__version__ = _hpcz.version().split()[1]

# The library's vocabulary (hpcz.hpp, "names"): codec names by number ("fast", "ratio", "interp").
_MODES = tuple(_hpcz.codecs())
_DEVICES = ("auto", "cpu", "gpu")


def __getattr__(name):
    # hpcz.numcodecs, hpcz.zarr and hpcz.hdf5 load on first use: they need numcodecs, zarr and h5py.
    if name in ("numcodecs", "zarr", "hdf5"):
        import importlib

        return importlib.import_module(f"hpcz.{name}")
    raise AttributeError(f"module 'hpcz' has no attribute {name!r}")


def gpu_available():
    """Whether this build has CUDA and a GPU is usable (False in a child forked after CUDA was started in
    its parent: CUDA cannot be used there, and device="auto" runs on the CPU)."""
    return _hpcz.gpu_available()


def _check_values(array):
    if not isinstance(array, _np.ndarray):
        array = _np.asarray(array)
    if array.dtype.kind in "fiu" and array.dtype.itemsize in (2, 4, 8) and not array.dtype.isnative:
        # Checked before the dtype: '>f4' is not np.float32, and "not >f4" would not say why.
        native = array.dtype.newbyteorder("=")
        order = {">": "big", "<": "little"}
        raise InvalidArgumentError(
            f"values are {order[array.dtype.str[0]]}-endian {native.name} ({array.dtype.str}); hpcz codes the "
            f"machine's byte order ({order[native.str[0]]}-endian): convert them with .astype('{native.str}')", 1)
    if _dtypes.name_of(array.dtype) is None:
        raise InvalidArgumentError(f"values must be {_dtypes.ACCEPTED}, not {array.dtype}", 1)
    if not 1 <= array.ndim <= 4:
        raise InvalidArgumentError(f"values must have 1 to 4 dimensions, not {array.ndim}", 1)
    if not array.flags.c_contiguous:
        raise InvalidArgumentError("values must be C-contiguous (numpy.ascontiguousarray makes a copy that is)", 1)
    return array


def _check_mode(mode):
    if mode not in _MODES:
        raise InvalidArgumentError(f"mode must be {_hpcz.names_list(list(_MODES))}, not {mode!r}", 1)


def _aliases(abs, rel, absolute, relative):
    """abs and rel, given as such or in hdf5plugin's spelling (absolute=, relative=), but not both ways."""
    if absolute is not None:
        if abs is not None:
            raise InvalidArgumentError("give abs= or absolute= (the same bound), not both", 1)
        abs = absolute
    if relative is not None:
        if rel is not None:
            raise InvalidArgumentError("give rel= or relative= (the same bound), not both", 1)
        rel = relative
    return abs, rel


# bound_rule= for abs= and rel= given together: the library's bound mode (SZ3's ABS_AND_REL, ABS_OR_REL).
_BOUND_RULES = {"and": "abs_and_rel", "or": "abs_or_rel"}


def _number(value, name, ok, wanted):
    """value as a float where ok(it) (not a bool), else InvalidArgumentError "NAME must be WANTED, not VALUE"
    (the library refuses the same)."""
    try:
        r = float(value)
    except (TypeError, ValueError):
        r = None
    if r is None or isinstance(value, bool) or not ok(r):
        raise InvalidArgumentError(f"{name} must be {wanted}, not {value!r}", 1)
    return r


def _pw_rel(pw_rel):
    """pw_rel= checked: a float above 0 and below 1."""
    return _number(pw_rel, "pw_rel", lambda r: 0 < r < 1,
                   "above 0 and below 1 (every value within pw_rel x its magnitude)")


def _psnr(psnr):
    """psnr= checked: a finite number of dB above 0."""
    return _number(psnr, "psnr", lambda r: 0 < r < float("inf"), "a finite number of dB above 0")


def _nrmse(nrmse):
    """nrmse= checked: a float above 0 and below 1."""
    return _number(nrmse, "nrmse", lambda r: 0 < r < 1, "above 0 and below 1 (the RMS error over the range)")


# The bounds of their own (exclusive with abs=, rel=, bound_rule= and each other): keyword, checker, words.
_OWN_BOUNDS = (("pw_rel", _pw_rel, "pointwise relative"), ("psnr", _psnr, "a quality target"),
               ("nrmse", _nrmse, "a quality target"))
# The quality targets: met over each array coded as a whole (hpcz.compress), never per batch or on the device.
_QUALITY = ("psnr", "nrmse")


def _bound_rule(abs, rel, bound_rule, pw_rel=None, psnr=None, nrmse=None):
    """The bound mode of abs= and rel= (either may be None), bound_rule= (None, "and" or "or"), pw_rel=,
    psnr= and nrmse=: "abs", "rel", "abs_and_rel" (both given; bound_rule "and", the default),
    "abs_or_rel" (bound_rule "or"), or "pw_rel", "psnr" or "nrmse" (given alone: each a bound of its
    own, exclusive with the others)."""
    own = {"pw_rel": pw_rel, "psnr": psnr, "nrmse": nrmse}
    for name, check, what in _OWN_BOUNDS:
        if own[name] is None:
            continue
        given = [f"{k}=" for k, v in (("abs", abs), ("rel", rel), ("bound_rule", bound_rule)) if v is not None]
        given += [f"{k}=" for k, v in own.items() if k != name and v is not None]
        if given:
            raise InvalidArgumentError(
                f"{name}= ({what}) is a bound of its own: give it without {' and '.join(given)}", 1)
        check(own[name])
        return name
    if bound_rule is not None:
        if not isinstance(bound_rule, str) or bound_rule not in _BOUND_RULES:
            raise InvalidArgumentError(f"bound_rule must be 'and' or 'or', not {bound_rule!r}", 1)
        if abs is None or rel is None:
            raise InvalidArgumentError(
                f"bound_rule={bound_rule!r} says how abs= and rel= combine: give both (with one bound, leave it out)", 1)
    if abs is None and rel is None:
        raise InvalidArgumentError("give abs=, rel= or both (both: bound_rule='and', the default, or 'or'), "
                                   "or pw_rel= (pointwise relative), psnr= or nrmse= (quality targets)", 1)
    if abs is not None and rel is not None:
        return _BOUND_RULES[bound_rule or "and"]
    return "abs" if abs is not None else "rel"


_PW_LOG_MIN = 1e-6  # quant::kPwLogMinBound


def _check_pw_rel_mode(kind, mode, bound=None):
    """The codec classes' check, at construction, of what the library refuses when a chunk is coded:
    pw_rel in the ratio and interp modes from 1e-6 (the library's words)."""
    if kind == "pw_rel" and mode != "fast" and bound is not None and 0 < float(bound) < _PW_LOG_MIN:
        raise InvalidArgumentError(f"pw_rel in the {mode} mode takes bounds from 1e-06 (its log2 field's quantization "
                                   "range); the fast mode codes any", 1)


def _bound(abs, rel, bound_rule=None, pw_rel=None, psnr=None, nrmse=None):
    """(kind, bound, abs_bound) for _hpcz: the mode's name, its bound (the rel factor of the combined
    modes; pw_rel's factor of |x|; the PSNR in dB; the NRMSE) and the combined modes' absolute bound (0
    for the others)."""
    kind = _bound_rule(abs, rel, bound_rule, pw_rel, psnr, nrmse)
    if kind == "pw_rel":
        return kind, _pw_rel(pw_rel), 0.0
    if kind == "psnr":
        return kind, _psnr(psnr), 0.0
    if kind == "nrmse":
        return kind, _nrmse(nrmse), 0.0
    if kind == "abs":
        return kind, float(abs), 0.0
    if kind == "rel":
        return kind, float(rel), 0.0
    return kind, float(rel), float(abs)


def compress(array, *, abs=None, rel=None, mode="fast", lossless=False, fill=None, device="auto", bound_rule=None,
             pw_rel=None, psnr=None, nrmse=None):
    """Compresses a C-contiguous array of 1-4 dimensions into an hpcz archive (bytes): float32 or float64,
    or a storage type (float16, ml_dtypes.bfloat16, int8, uint8, int16, uint16, int32, uint32, int64,
    uint64), widened to float32 (float64 for the 32- and 64-bit integers; those of 64 bits within +-2^53,
    else InvalidArgumentError naming the first value beyond) and coded under a bound that stays strict once decoded
    values are narrowed back; integer bounds are whole numbers (abs=0: lossless); every bound applies
    (pw_rel and two bounds together in format version 8).

    An array on the GPU (cupy, torch, anything with __cuda_array_interface__) is compressed in place on
    its device and stream, and its archive stays there: a cupy uint8 array (bytes(a.get()) on the host).

    abs / rel: the error bound, absolute or relative to the range (max - min of the finite, non-fill
    values). Both: every value within both (bound_rule="and", the default: the smaller of abs and
    rel x range; SZ3's ABS_AND_REL) or within either (bound_rule="or": the larger; ABS_OR_REL).
    bound_rule is for two bounds only. pw_rel: pointwise relative, instead of abs and rel: every value x
    comes back within pw_rel x |x| (0 < pw_rel < 1; zeros and signs kept; no range involved; the ratio
    and interp modes code log2 |x| and take pw_rel >= 1e-6). psnr / nrmse: quality targets, instead of the others (every mode): the array's PSNR,
    20 log10(range / RMSE) over its finite, non-fill values, at least psnr dB (psnr > 0), or its RMSE /
    range at most nrmse (0 < nrmse < 1); hpcz.info(archive)["psnr_achieved"] is the PSNR reached. An
    array on the GPU with psnr or nrmse is copied to the host and coded there (the device calls code
    bounds, not targets over a whole array); its archive comes back to its device as above (lossless
    refused there, as for any device array). mode: "fast" (throughput), "ratio" (Lorenzo + Huffman) or
    "interp" (the predictor per chunk, Lorenzo or interpolation, and masks). lossless: a
    lossless stage after the codec (smaller archives, slower). fill: a value kept exactly and left out
    of the range (masked cells). device: "auto" (the GPU when there is one), "cpu" or "gpu".
    """
    kind, bound, abs_bound = _bound(abs, rel, bound_rule, pw_rel, psnr, nrmse)
    _check_mode(mode)
    if device not in _DEVICES:
        raise InvalidArgumentError(f"device must be 'auto', 'cpu' or 'gpu', not {device!r}", 1)
    fill = None if fill is None else float(fill)
    if _device.is_device_array(array):
        if device == "cpu":
            raise InvalidArgumentError("device='cpu' for an array on the GPU: copy it to the host first", 1)
        # A whole-array target, or int64 and uint64 values (checked on the host: float64 must hold
        # them): coded on the host, the archive put back on the device.
        if kind in _QUALITY or _host_checked(array):
            values, dev = _device.to_host(array, bool(lossless))
            return _device.archive_to_device(_compress_host(values, mode, kind, bound, False, fill, device, abs_bound), dev)
        return _device.compress(array, mode, kind, bound, bool(lossless), fill, abs_bound)
    return _compress_host(_check_values(array), mode, kind, bound, bool(lossless), fill, device, abs_bound)


def _host_checked(array):
    """int64 and uint64 arrays: the library checks on the host that float64 holds their values (the
    device calls refuse them), so device arrays go through the host."""
    return str(getattr(array, "dtype", "")).rsplit(".", 1)[-1] in ("int64", "uint64")  # numpy, cupy, torch


def _compress_host(values, mode, kind, bound, lossless, fill, device, abs_bound):
    """The module's compress of a checked host array (float16, bfloat16 and the integers named)."""
    name = _dtypes.name_of(values.dtype)
    return _hpcz.compress(_dtypes.buffer_view(values), mode, kind, bound, lossless, fill, device, abs_bound,
                          "" if _dtypes.is_float(values.dtype) else name)


def _archive_bytes(data):
    try:
        view = memoryview(data)
    except TypeError:
        raise InvalidArgumentError(f"an archive must be bytes-like, not {type(data).__name__}", 1) from None
    if not view.c_contiguous:
        raise InvalidArgumentError("an archive must be contiguous bytes", 1)
    return _np.frombuffer(view.cast("B") if view.ndim != 1 or view.format != "B" else view, dtype=_np.uint8)


def info(data, *, verify=True):
    """What an archive's header says, as a dict (dtype, shape, mode, bound_kind, bound, eb_abs, range,
    fill, step, lossless, n_values, n_chunks, chunk_values, archive_size, version), with the keys of
    `hpcz info --json` too (format_version, dims, codec, bound_mode, second_stage, archive_bytes,
    block_values, compression_ratio; README, "Archive info keys"): the same values under both names.
    dtype is "float32"/"float64" here, "f32"/"f64" in the CLI's JSON. verify=True also checks the chunk
    table and adds "chunks" (offset, size, checksum of each) and, for ratio and interp archives,
    "stages" (bytes by stage, as `hpcz info`); decompress() checks every chunk. Archives of the psnr and
    nrmse targets also have "psnr_achieved": the PSNR (dB) their values achieve, rounded down to 0.01 dB
    (a lower bound; at least the target, as rounded), math.inf where every value is exact (`hpcz info --json` writes null); the
    key is absent for the other bound kinds, as in the CLI's JSON."""
    if _device.is_device_array(data):
        data = _device._cupy().asnumpy(data)
    return _hpcz.info(_archive_bytes(data), bool(verify), bool(verify))


def _max_output(max_output):
    if max_output is None:
        return 0
    try:
        limit = _operator.index(max_output)  # int, numpy integers; not float or bool
    except TypeError:
        limit = None
    if limit is None or isinstance(max_output, bool) or limit <= 0:
        raise InvalidArgumentError(f"max_output must be a positive int (bytes) or None, not {max_output!r}", 1)
    return limit


def _check_output(head, dtype, limit):
    nbytes = head["n_values"] * dtype.itemsize
    if limit and nbytes > limit:
        raise InvalidArgumentError(
            f"the archive's array is {nbytes} bytes, above the max_output limit of {limit}", 1)


def _output_for(head, dtype, out):
    """A new array for the archive whose header is head, or out once checked to take its values."""
    if out is None:
        return _np.empty(head["shape"], dtype=dtype)
    if not isinstance(out, _np.ndarray):
        raise InvalidArgumentError(f"out must be a numpy array, not {type(out).__name__}", 1)
    if out.dtype != dtype or out.size != head["n_values"]:
        raise InvalidArgumentError(
            f"out is {out.dtype} of {out.size} values; the archive holds {dtype} of shape {head['shape']}", 1)
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise InvalidArgumentError("out must be writable and C-contiguous", 1)
    return out


def decompress(data, *, out=None, device="auto", max_output=None):
    """Decodes an hpcz archive (bytes-like) into a new numpy array of its shape and dtype, or into
    `out` (a writable C-contiguous numpy array of that dtype and size), which it returns.

    An archive on the GPU, or an `out` on the GPU (cupy, torch, ...), decodes on that device and
    stream into a new cupy array or into `out`.

    max_output (bytes): an archive whose array is larger is refused with InvalidArgumentError before
    anything is allocated or decoded: for archives from untrusted sources (docs/SECURITY.md). None: no
    limit."""
    if device not in _DEVICES:
        raise InvalidArgumentError(f"device must be 'auto', 'cpu' or 'gpu', not {device!r}", 1)
    limit = _max_output(max_output)
    if _device.is_device_array(data) or _device.is_device_array(out):
        if device == "cpu":
            raise InvalidArgumentError("device='cpu' with an archive or out on the GPU", 1)
        return _device.decompress(data, out, check=lambda head, dtype: _check_output(head, dtype, limit))
    archive = _archive_bytes(data)
    head = _hpcz.info(archive, True)  # header and chunk table checked before the output is sized
    dtype = _dtypes.numpy_dtype(head["dtype"])
    _check_output(head, dtype, limit)
    out = _output_for(head, dtype, out)
    if out.size:
        _hpcz.decompress_into(archive, _dtypes.buffer_view(out.reshape(-1)), device, limit)
    return out


_ERRORS = ("raise", "return")


def _finish(results, statuses, errors):
    """Items that failed: raise the first one's error (errors="raise"), or leave its exception in its place."""
    from ._errors import error_class

    if statuses is None:  # every item coded (the cupy batches' word for it)
        return results
    first = None
    for i, (code, message) in enumerate(statuses):
        if code:
            exc = error_class(code)(f"item {i}: {message}", code)
            results[i] = exc
            first = first or exc
    if first is not None and errors == "raise":
        raise first
    return results


def compress_batch(arrays, *, abs=None, rel=None, mode="fast", lossless=False, fill=None, device="auto",
                   errors="raise", bound_rule=None, pw_rel=None, psnr=None, nrmse=None):
    """Compresses many arrays in one call: a list of archives, archive i the bytes hpcz.compress(arrays[i])
    writes. On the GPU the arrays move through buffers kept between calls, several at a time, with the
    copies overlapped with coding; on the CPU they are coded on every core. Arrays on the GPU (cupy,
    torch) are coded on their device, one launch sequence each on one stream, and their archives stay
    there (cupy uint8 arrays that share one buffer).

    errors="raise" raises the first failed item's error once every item has been coded; "return"
    puts each failed item's exception in its place in the list. abs, rel, bound_rule, pw_rel: as in
    compress. psnr / nrmse: a target for each array (each array's own PSNR, over its own range): the
    arrays are coded one by one, each as hpcz.compress codes it (the same bytes; arrays on the GPU
    copied to the host, their archives put back there), with the errors as above."""
    kind, bound, abs_bound = _bound(abs, rel, bound_rule, pw_rel, psnr, nrmse)
    _check_mode(mode)
    if device not in _DEVICES:
        raise InvalidArgumentError(f"device must be 'auto', 'cpu' or 'gpu', not {device!r}", 1)
    if errors not in _ERRORS:
        raise InvalidArgumentError(f"errors must be 'raise' or 'return', not {errors!r}", 1)
    arrays = list(arrays)
    fill = None if fill is None else float(fill)
    if kind in _QUALITY:  # the library codes targets over whole arrays only, not in batches
        return _compress_each(arrays, mode, kind, bound, bool(lossless), fill, device, errors)
    if any(_device.is_device_array(a) and _host_checked(a) for a in arrays):  # as compress
        return _compress_each(arrays, mode, kind, bound, bool(lossless), fill, device, errors)
    if device != "cpu" and not lossless:
        got = _device.compress_batch_cupy(arrays, mode, kind, bound, fill, abs_bound)
        if got is not None:
            return _finish(got[0], got[1], errors)
    if arrays and all(_device.is_device_array(a) for a in arrays):
        if device == "cpu":
            raise InvalidArgumentError("device='cpu' for arrays on the GPU: copy them to the host first", 1)
        results, statuses = _device.compress_batch(arrays, mode, kind, bound, bool(lossless), fill, abs_bound)
        return _finish(results, statuses, errors)
    if any(_device.is_device_array(a) for a in arrays):
        raise InvalidArgumentError("a batch is all host arrays or all device arrays", 1)
    results, statuses, todo, values = [None] * len(arrays), [(0, "")] * len(arrays), [], []
    for i, a in enumerate(arrays):
        try:
            values.append(_check_values(a))
            todo.append(i)
        except Error as e:
            statuses[i] = (e.code, str(e))
    if values:
        names = ["" if _dtypes.is_float(v.dtype) else _dtypes.name_of(v.dtype) for v in values]
        blobs, coded = _hpcz.compress_batch([_dtypes.buffer_view(v) for v in values], mode, kind, bound, bool(lossless),
                                            fill, device, abs_bound, names)
        for i, b, st in zip(todo, blobs, coded):
            results[i], statuses[i] = b, st
    return _finish(results, statuses, errors)


def _compress_each(arrays, mode, kind, bound, lossless, fill, device, errors):
    """compress_batch of a quality target: each array coded by compress() (the whole array at once), its
    failure its item's status; a batch is all host arrays or all device arrays, as any batch."""
    on_device = [_device.is_device_array(a) for a in arrays]
    if any(on_device) and not all(on_device):
        raise InvalidArgumentError("a batch is all host arrays or all device arrays", 1)
    if any(on_device) and device == "cpu":
        raise InvalidArgumentError("device='cpu' for arrays on the GPU: copy them to the host first", 1)
    if any(on_device) and lossless:
        raise InvalidArgumentError("lossless=True is for host arrays: the GPU path writes plain archives", 1)
    results, statuses = [None] * len(arrays), [(0, "")] * len(arrays)
    for i, a in enumerate(arrays):
        try:
            results[i] = compress(a, mode=mode, lossless=lossless, fill=fill, device=device, **{kind: bound})
        except Error as e:
            statuses[i] = (e.code, str(e))
    return _finish(results, statuses, errors)


def decompress_batch(blobs, *, out=None, device="auto", errors="raise"):
    """Decodes many archives in one call: a list of arrays (new ones of each archive's shape and dtype,
    or the arrays of `out`, a list of writable C-contiguous arrays, filled in place). Archives on the
    GPU (or outs there) decode on the GPU into cupy arrays. errors as in compress_batch."""
    if device not in _DEVICES:
        raise InvalidArgumentError(f"device must be 'auto', 'cpu' or 'gpu', not {device!r}", 1)
    if errors not in _ERRORS:
        raise InvalidArgumentError(f"errors must be 'raise' or 'return', not {errors!r}", 1)
    blobs = list(blobs)
    if out is not None:
        out = list(out)
        if len(out) != len(blobs):
            raise InvalidArgumentError(f"{len(out)} outs for {len(blobs)} archives", 1)
    if device != "cpu":
        got = _device.decompress_batch_cupy(blobs, out)
        if got is not None:
            return _finish(got[0], got[1], errors)
    on_device = [_device.is_device_array(b) or (out is not None and _device.is_device_array(out[i]))
                 for i, b in enumerate(blobs)]
    if any(on_device):
        if not all(on_device):
            raise InvalidArgumentError("a batch is all host archives or all device archives", 1)
        if device == "cpu":
            raise InvalidArgumentError("device='cpu' with archives or outs on the GPU", 1)
        results, statuses = _device.decompress_batch(blobs, out)
        return _finish(results, statuses, errors)
    results = [None] * len(blobs)
    statuses = [(0, "")] * len(blobs)
    todo, archives, flat = [], [], []
    for i, data in enumerate(blobs):
        try:
            archive = _archive_bytes(data)
            head = _hpcz.info(archive, False)  # the header sizes the output; the batch checks the rest
            dtype = _dtypes.numpy_dtype(head["dtype"])
            o = _output_for(head, dtype, None if out is None else out[i])
        except Error as e:
            statuses[i] = (e.code, str(e))
            continue
        results[i] = o
        todo.append(i)
        archives.append(archive)
        flat.append(_dtypes.buffer_view(o.reshape(-1)))
    if todo:
        for i, st in zip(todo, _hpcz.decompress_batch_into(archives, flat, device)):
            statuses[i] = st
    return _finish(results, statuses, errors)


def release_cached_buffers():
    """Frees the pinned and device buffers that host calls keep between calls (they are made again when
    needed)."""
    _hpcz.release_cached_buffers()
