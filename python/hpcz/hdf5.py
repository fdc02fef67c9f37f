"""hpcz for HDF5 through h5py, in the manner of hdf5plugin:

    import h5py, hpcz.hdf5
    with h5py.File("out.h5", "w") as f:
        f.create_dataset("t", data=a, chunks=(16, 721, 1440), **hpcz.hdf5.Hpcz(rel=1e-3))

Importing this module registers the filter (id FILTER_ID) with h5py. hpcz.hdf5.write(dset, array) and
hpcz.hdf5.read(dset) move a whole dataset through the batch calls with direct chunk writes and reads,
the same stored bytes as the filter's at the batch calls' speed. Other programs (h5dump, h5ls,
netCDF, h5py without this import) find it with HDF5_PLUGIN_PATH=hpcz.hdf5.PLUGIN_PATH. One HDF5 chunk is
one hpcz archive; a rel bound is relative to each chunk's own range, the padding of edge chunks left
out, so never looser than rel x the range of the values written; Hpcz(rel=..., data=a) makes it rel x a's range for every chunk. docs/FORMAT.md lists cd_values.
abs and rel together (bound_rule "and", the default, or "or") are the bound kinds abs_and_rel and
abs_or_rel, written as parameters version 2 (the absolute bound in words 8 and 9); their rel part leaves
the padding out the same way. pw_rel (pointwise relative: every value x within pw_rel x |x|; from
1e-6 in the ratio and interp modes) is bound kind 3, version 1's words: it needs no range, so the padding changes nothing.
psnr and nrmse (quality targets; every mode) are bound kinds 4 and 5, version 1's words (the target in
words 3 and 4): each chunk is coded as a whole array, so the target holds per chunk, over the chunk's own
range and values, the padding of edge chunks included.
"""

import ctypes
import math
import os
import struct
from collections.abc import Mapping

import h5py

from . import _aliases, _bound_rule, _check_mode, _check_pw_rel_mode, _hpcz
from ._bounds import abs_of_bounds
from ._errors import BackendUnavailableError, InvalidArgumentError

FILTER_ID = 34520
PLUGIN_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugins")
_PLUGIN = os.path.join(PLUGIN_PATH, "libH5Zhpcz.so")
_PARAMS_VERSION = 1  # the abs, rel, pw_rel, psnr and nrmse bound kinds: 8 user words
_PARAMS_VERSION_2 = 2  # abs_and_rel, abs_or_rel: the absolute bound appended (words 8, 9)
_USER_WORDS = {_PARAMS_VERSION: 8, _PARAMS_VERSION_2: 10}
_RULES = {"abs_and_rel": "and", "abs_or_rel": "or"}


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


def _check_dtype(data):
    """The filter's type check (set_local), made where the array is given, in Python's words."""
    import numpy as np

    from ._dtypes import ACCEPTED, name_of

    dtype = np.asarray(data).dtype
    if dtype.byteorder == ">" and name_of(dtype.newbyteorder("=")) is not None:
        native = dtype.newbyteorder("=")
        raise InvalidArgumentError(f"data is big-endian {native.name} ({dtype.str}): the hpcz filter codes "
                                   f"little-endian values: convert it with .astype('{native.newbyteorder('<').str}')", 1)
    if name_of(dtype) is None:
        raise InvalidArgumentError(f"the hpcz filter codes datasets of {ACCEPTED}, not {dtype}", 1)


def _words(x):
    lo, hi = struct.unpack("<II", struct.pack("<d", float(x)))
    return [lo, hi]


class Hpcz(Mapping):
    """The keyword arguments of h5py's create_dataset for the hpcz filter (compression,
    compression_opts). Keywords, in the order of hpcz.compress and of the three codec classes
    (hpcz.numcodecs.Hpcz, hpcz.zarr.Hpcz, hpcz.hdf5.Hpcz), and by position in the same order: abs or rel:
    the bound (hdf5plugin's absolute= and relative= are the same), or both: within both
    (bound_rule="and", the default) or within either (bound_rule="or"); mode: "fast", "ratio" or
    "interp"; lossless: the lossless stage; fill: a value kept exactly and left out of the range; data=
    (below).

    rel is relative to each chunk's range, the chunk's padding left out: where the value HDF5 pads edge
    chunks with (the dataset's fill value, 0 by default) is an end of a chunk's range, the filter codes
    that chunk with abs = rel x the range of its other values (with abs= too: the smaller, or the larger,
    of the two). data=: the array to be written (numpy), with rel: the bound becomes abs = rel x the
    range of data's finite values (those equal to fill left out; with abs= too, the smaller or the larger
    of the two, by bound_rule), the same for every chunk, and data's dtype is checked here.

    pw_rel (keyword only, instead of abs and rel): pointwise relative, every value x within pw_rel x |x|
    (0 < pw_rel < 1; from 1e-6 in the ratio and interp modes): bound kind 3; no range and no padding rule (data= only has its
    dtype checked).

    psnr or nrmse (keyword only, instead of the others; every mode): a quality target for each chunk, its
    PSNR at least psnr dB (psnr > 0) or its RMSE / range at most nrmse (0 < nrmse < 1), over the chunk's
    own range and values (the padding of edge chunks included), not the dataset's: bound kinds 4 and 5;
    no padding rule (data= only has its dtype checked)."""

    filter_id = FILTER_ID

    def __init__(self, abs=None, rel=None, mode="fast", lossless=False, fill=None, *, absolute=None, relative=None,
                 data=None, bound_rule=None, pw_rel=None, psnr=None, nrmse=None):
        # The filter's set_local refuses the same (docs/FORMAT.md, "HDF5 filter"), with the same words;
        # checked here too so that the mistake is named where it is made.
        abs, rel = _aliases(abs, rel, absolute, relative)
        kind = _bound_rule(abs, rel, bound_rule, pw_rel, psnr, nrmse)
        _check_mode(mode)
        _check_pw_rel_mode(kind, mode, pw_rel)
        for b in (abs, rel):
            if b is not None and not (float(b) >= 0 and math.isfinite(float(b))):
                raise InvalidArgumentError(f"the error bound must be a finite number >= 0, not {float(b)!r}", 1)
        if fill is not None and not math.isfinite(float(fill)):
            raise InvalidArgumentError(f"the fill value must be finite, not {fill!r}", 1)
        if data is not None and kind in ("pw_rel", "psnr", "nrmse"):
            _check_dtype(data)  # no range needed, or a target per chunk: the bound stays as it is
        elif data is not None:
            if rel is None:
                raise InvalidArgumentError("data= turns a rel bound into the array's abs bound: give rel=, not abs=", 1)
            _check_dtype(data)
            abs, rel, kind = abs_of_bounds(abs, rel, data, fill, bound_rule), None, "abs"
        flags = (1 if fill is not None else 0) | (2 if lossless else 0)
        # The words' numbers are the library's (its codec and bound mode numbers). abs, rel, pw_rel, psnr
        # or nrmse alone: version 1's 8 words, as before; combined: version 2, the rel factor in words 3 and 4 and
        # the absolute bound in words 8 and 9.
        bound = float({"abs": abs, "pw_rel": pw_rel, "psnr": psnr, "nrmse": nrmse}.get(kind, rel))
        words = [_hpcz.codecs()[mode], _hpcz.bound_modes()[kind]] + _words(bound) + [flags] \
            + _words(fill if fill is not None else 0.0)
        if kind in _RULES:
            words = [_PARAMS_VERSION_2] + words + _words(abs)
        else:
            words = [_PARAMS_VERSION] + words
        self.filter_options = tuple(words)
        self._kwargs = {"compression": FILTER_ID, "compression_opts": self.filter_options}

    def __getitem__(self, key):
        return self._kwargs[key]

    def __iter__(self):
        return iter(self._kwargs)

    def __len__(self):
        return len(self._kwargs)

    def __repr__(self):
        return f"hpcz.hdf5.Hpcz({self._kwargs!r})"


def _options(dset):
    """The hpcz options of a dataset created with the filter, from its cd_values."""
    try:
        _, values, _ = dset.id.get_create_plist().get_filter_by_id(FILTER_ID)
    except Exception:
        raise InvalidArgumentError(f"dataset {dset.name} does not use the hpcz filter", 1) from None
    values = list(values)
    if not values or values[0] not in _USER_WORDS or len(values) < _USER_WORDS[values[0]]:
        raise InvalidArgumentError(f"dataset {dset.name}: hpcz filter parameters of an unknown version", 1)
    dbl = lambda lo, hi: struct.unpack("<d", struct.pack("<II", lo, hi))[0]
    bound = dbl(values[3], values[4])
    codecs = {n: name for name, n in _hpcz.codecs().items()}
    kinds = {n: name for name, n in _hpcz.bound_modes().items()}
    if values[1] not in codecs:
        raise InvalidArgumentError(f"dataset {dset.name}: unknown hpcz mode {values[1]} (word 1)", 1)
    if values[2] not in kinds:
        raise InvalidArgumentError(f"dataset {dset.name}: unknown hpcz bound kind {values[2]} (word 2)", 1)
    kind = kinds[values[2]]
    if kind in _RULES:  # the rel factor in words 3, 4; the absolute bound in words 8, 9 (version 2)
        if values[0] != _PARAMS_VERSION_2:
            raise InvalidArgumentError(f"dataset {dset.name}: hpcz bound kind {kind} without its absolute bound", 1)
        bounds = {"abs": dbl(values[8], values[9]), "rel": bound, "bound_rule": _RULES[kind]}
    else:
        bounds = {kind: bound}
    return {"mode": codecs[values[1]], **bounds,
            "lossless": bool(values[5] & 2), "fill": dbl(values[6], values[7]) if values[5] & 1 else None}


def _stored_padding(dset):
    """The padding value set_local stored after the chunk's dims for a bound relative to the range (rel,
    abs_and_rel, abs_or_rel; docs/FORMAT.md), or None."""
    values = list(dset.id.get_create_plist().get_filter_by_id(FILTER_ID)[1])
    user = _USER_WORDS.get(values[0] if values else _PARAMS_VERSION, 8)  # set_local's words follow the user's
    at = user + 2 + (values[user + 1] if len(values) > user + 1 else 0)
    if len(values) >= at + 3 and values[at] == 1:
        return struct.unpack("<d", struct.pack("<II", values[at + 1], values[at + 2]))[0]
    return None


def _coded_padded(opts, pad, chunks, code):
    """Archives of chunks coded with opts by code(chunks, **opts), as the filter codes them: a rel bound
    (alone or with abs) leaves the padding out of a chunk's range where it is an end of it (the filter's
    rule, the same bytes); abs, pw_rel, psnr and nrmse are coded as they are."""
    from ._bounds import recode_padded

    blobs = code(chunks, **opts)
    base = {k: v for k, v in opts.items() if k not in ("abs", "rel", "bound_rule", "pw_rel", "psnr", "nrmse")}
    return recode_padded(blobs, chunks, opts.get("rel"), opts.get("fill"), pad,
                         lambda redo, bound: code(redo, abs=bound, **base),
                         abs=opts.get("abs"), bound_rule=opts.get("bound_rule"))


def write_chunk(dset, offset, chunk):
    """Writes one chunk of `dset` (created with the hpcz filter) directly, skipping HDF5's filter
    pipeline (H5Dwrite_chunk): compressed by hpcz.compress with the dataset's own options, on the GPU
    when `chunk` is there (cupy, torch, ...), so a GPU simulation writes at the speed of its GPU.
    offset: the chunk's first element (a multiple of the chunk shape); chunk: the chunk's values, of the
    dataset's dtype, of the chunk shape or smaller at the dataset's edges (padded as HDF5 pads: with the
    dataset's fill value).
    Readers decode it through the filter like any other chunk."""
    from . import _device, compress

    shape = dset.chunks
    if shape is None:
        raise InvalidArgumentError(f"dataset {dset.name} is not chunked", 1)
    offset = tuple(int(o) for o in offset)
    if len(offset) != len(shape) or any(o % c for o, c in zip(offset, shape)):
        raise InvalidArgumentError(f"offset {offset} is not the start of a chunk of shape {shape}", 1)
    opts = _options(dset)
    if dset.id.get_create_plist().get_nfilters() != 1:
        # filter_mask 0 tells HDF5 every filter of the pipeline ran: only hpcz does here
        raise InvalidArgumentError(f"dataset {dset.name} has filters besides hpcz: write it through h5py", 1)
    opts["lossless"] = opts["lossless"] and not _device.is_device_array(chunk)  # the GPU writes plain archives
    if tuple(chunk.shape) != tuple(shape):
        if any(n > c for n, c in zip(chunk.shape, shape)) or len(chunk.shape) != len(shape):
            raise InvalidArgumentError(f"chunk of shape {tuple(chunk.shape)} for chunks of {shape}", 1)
        xp = _device._cupy() if _device.is_device_array(chunk) else __import__("numpy")
        full = xp.full(shape, _padding(dset), dtype=chunk.dtype)
        full[tuple(slice(0, n) for n in chunk.shape)] = xp.asarray(chunk)
        chunk = full
    if str(chunk.dtype) != str(dset.dtype):
        raise InvalidArgumentError(f"chunk of {chunk.dtype} for a dataset of {dset.dtype}", 1)
    from ._shapes import coded_shape

    arc = _coded_padded(opts, _stored_padding(dset), [chunk.reshape(coded_shape(chunk.shape))],
                        lambda chunks, **o: [compress(c, **o) for c in chunks])[0]
    data = arc.get().tobytes() if _device.is_device_array(arc) else arc
    dset.id.write_direct_chunk(offset, data, filter_mask=0)


def _padding(dset):
    """What HDF5 pads a dataset's edge chunks with (the filter's set_local reads the same): its fill value,
    or 0 where the fill time is "never" or no fill value was set."""
    plist = dset.id.get_create_plist()
    if plist.get_fill_time() == h5py.h5d.FILL_TIME_NEVER or plist.fill_value_defined() != h5py.h5d.FILL_VALUE_USER_DEFINED:
        return 0
    return dset.fillvalue


# Chunks a write() or read() codes a call: about this many bytes of values (memory for the batch,
# its archives and, on a read, the decoded chunks).
_BATCH_BYTES = 256 << 20


def _chunk_grid(dset):
    import itertools

    shape, chunks = dset.shape, dset.chunks
    if chunks is None:
        raise InvalidArgumentError(f"dataset {dset.name} is not chunked", 1)
    return chunks, list(itertools.product(*[range(0, n, c) for n, c in zip(shape, chunks)]))


def _batches(offsets, chunk_bytes):
    per = max(1, _BATCH_BYTES // max(1, chunk_bytes))
    for k in range(0, len(offsets), per):
        yield offsets[k:k + per]


def _hpcz_alone(dset):
    opts = _options(dset)
    if dset.id.get_create_plist().get_nfilters() != 1:
        raise InvalidArgumentError(f"dataset {dset.name} has filters besides hpcz: use h5py's own reads and writes", 1)
    return opts


def write(dset, array, *, device="auto"):
    """Writes all of `array` (the dataset's shape and dtype, numpy) into `dset`, a dataset created with
    the hpcz filter, every chunk compressed in batches (hpcz.compress_batch with the dataset's own
    options) and stored by direct chunk writes: the same bytes the filter would store, at the speed of
    the batch calls rather than one filter call a chunk. Edge chunks are padded as HDF5 pads them (_padding)."""
    import numpy as np

    from . import compress_batch
    from ._shapes import coded_shape

    opts = _hpcz_alone(dset)
    array = np.asarray(array)
    if array.shape != dset.shape:
        raise InvalidArgumentError(f"array of shape {array.shape} for a dataset of shape {dset.shape}", 1)
    if array.dtype != dset.dtype:
        raise InvalidArgumentError(f"array of {array.dtype} for a dataset of {dset.dtype}", 1)
    chunks, offsets = _chunk_grid(dset)
    pad = _stored_padding(dset)
    for group in _batches(offsets, int(np.prod(chunks)) * array.dtype.itemsize):
        pieces = []
        for off in group:
            sel = tuple(slice(o, min(o + c, n)) for o, c, n in zip(off, chunks, dset.shape))
            piece = array[sel]
            if piece.shape != chunks:
                full = np.full(chunks, _padding(dset), dtype=array.dtype)
                full[tuple(slice(0, n) for n in piece.shape)] = piece
                piece = full
            pieces.append(np.ascontiguousarray(piece).reshape(coded_shape(chunks)))
        blobs = _coded_padded(opts, pad, pieces, lambda chunks, **o: compress_batch(chunks, device=device, **o))
        for off, blob in zip(group, blobs):
            dset.id.write_direct_chunk(off, blob, filter_mask=0)


def read(dset, *, out=None, device="auto"):
    """Reads all of `dset` (created with the hpcz filter) into a new numpy array, or into `out`: the
    stored chunks read directly and decoded in batches (hpcz.decompress_batch). Chunks never written
    read as the dataset's fill value; a chunk stored with its filter skipped reads through h5py."""
    import numpy as np

    from . import decompress_batch

    _hpcz_alone(dset)
    if out is None:
        out = np.empty(dset.shape, dtype=dset.dtype)
    elif out.shape != dset.shape or out.dtype != dset.dtype or not out.flags.writeable:
        raise InvalidArgumentError(f"out must be a writable {dset.dtype} array of shape {dset.shape}", 1)
    chunks, offsets = _chunk_grid(dset)
    fill = dset.fillvalue
    for group in _batches(offsets, int(np.prod(chunks)) * dset.dtype.itemsize):
        blobs, coded, targets = [], [], []
        for off in group:
            sel = tuple(slice(o, min(o + c, n)) for o, c, n in zip(off, chunks, dset.shape))
            if dset.id.get_chunk_info_by_coord(off).byte_offset is None:
                out[sel] = fill  # never written
                continue
            mask, blob = dset.id.read_direct_chunk(off)
            if mask:
                out[sel] = dset[sel]
                continue
            blobs.append(blob)
            coded.append((off, sel))
            # A whole chunk whose place in out is one contiguous run (chunks spanning the faster
            # dimensions) is decoded there; the others into an array of their own, then copied.
            view = out[sel]
            whole = all(s.stop - s.start == c for s, c in zip(sel, chunks))
            targets.append(view if whole and view.flags.c_contiguous else None)
        for (off, sel), target, values in zip(coded, targets, _decode_chunks(dset, blobs, targets, device)):
            if target is not None:
                continue
            if values.size != int(np.prod(chunks)) or values.dtype != dset.dtype:
                raise InvalidArgumentError(f"dataset {dset.name}: the chunk at {off} holds {values.dtype} of "
                                           f"{values.size} values, not a chunk of {chunks}", 1)
            out[sel] = values.reshape(chunks)[tuple(slice(0, s.stop - s.start) for s in sel)]
    return out


def _decode_chunks(dset, blobs, targets, device):
    """decompress_batch into the targets (None: a new array), with the dataset named in an error."""
    from . import Error, decompress_batch

    results = decompress_batch(blobs, out=targets, device=device, errors="return")
    for r in results:
        if isinstance(r, Error):
            raise type(r)(f"dataset {dset.name}: {r}", r.code)
    return results
