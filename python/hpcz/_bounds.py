"""A rel bound turned into the abs bound it means for a whole array, for front ends that code the array
in chunks: each chunk's own range is never wider than the array's, but a chunk's padding can be. The
combined bounds (abs= and rel= together: bound_rule "and", the default, or "or") depend on the range
through their rel part: they become the smaller (and) or the larger (or) of abs and that abs bound."""

import math
from fractions import Fraction

import numpy as np

from ._errors import InvalidArgumentError

_BLOCK = 1 << 22  # values a pass looks at once: the masks stay small for arrays of any size


def value_range(data, fill=None, skip=None):
    """(min, max) of the finite values of `data` not equal to `fill` or `skip`, or None where there are
    none: the range a rel bound is relative to (hpcz.info's "range")."""
    from ._dtypes import ACCEPTED, is_float, name_of

    a = np.asarray(data)
    if name_of(a.dtype) is None:
        raise InvalidArgumentError(f"data= must be an array of {ACCEPTED}, not {a.dtype}", 1)
    flat = a.reshape(-1)
    lo = hi = None
    for k in range(0, flat.size, _BLOCK):
        part = flat[k:k + _BLOCK]
        if not is_float(part.dtype):  # float16, bfloat16, integers: exact as float64
            with np.errstate(invalid="ignore"):
                part = part.astype(np.float64)
        keep = np.isfinite(part)
        for v in (fill, skip):
            if v is not None:
                keep &= part != part.dtype.type(v)
        if keep.all():
            sel = part
        elif keep.any():
            sel = part[keep]
        else:
            continue
        a_lo, a_hi = float(sel.min()), float(sel.max())
        lo = a_lo if lo is None else min(lo, a_lo)
        hi = a_hi if hi is None else max(hi, a_hi)
    return None if lo is None else (lo, hi)


def _toward_zero(rel, lo, hi):
    """rel x (hi - lo), never above the exact product: hi - lo rounded down where it is not a double,
    the product rounded toward zero (hdf5/filter_params.hpp's rel_to_abs, the same double)."""
    r = hi - lo
    bv = r - hi
    if (hi - (r - bv)) + (-lo - bv) < 0:
        r = math.nextafter(r, 0.0)
    if not (r > 0 and rel > 0):
        return 0.0
    r = min(r, _MAX)
    exact = Fraction(rel) * Fraction(r)
    if exact > Fraction(_MAX):
        return _MAX
    bound = float(exact)
    return math.nextafter(bound, 0.0) if Fraction(bound) > exact else bound


_MAX = float(np.finfo(np.float64).max)


def abs_of_rel(rel, data, fill=None, skip=None):
    """rel x (max - min) over `data` (value_range), rounded toward zero so that it is never above the
    exact product: the bound rel promises, as an abs bound. 0 where data has no such values."""
    rel = float(rel)
    if not (rel >= 0 and math.isfinite(rel)):
        raise InvalidArgumentError(f"the error bound must be a finite number >= 0, not {rel!r}", 1)
    r = value_range(data, fill, skip)
    return 0.0 if r is None else _toward_zero(rel, *r)


def combine(abs, rel_abs, bound_rule=None):
    """The abs bound of abs= with a rel part that is worth rel_abs: rel_abs alone where abs is None (a
    plain rel bound), else the smaller of the two (bound_rule "and" or None) or the larger ("or"), as
    the library settles abs_and_rel and abs_or_rel."""
    if abs is None:
        return rel_abs
    abs = float(abs)
    return max(abs, rel_abs) if bound_rule == "or" else min(abs, rel_abs)


def abs_of_bounds(abs, rel, data, fill=None, bound_rule=None):
    """The abs bound that rel (and abs, combined by bound_rule) mean for all of `data`: abs_of_rel,
    then combine. Never looser than asked: rel's part is rounded toward zero."""
    if abs is not None and not (float(abs) >= 0 and math.isfinite(float(abs))):
        raise InvalidArgumentError(f"the error bound must be a finite number >= 0, not {abs!r}", 1)
    return combine(abs, abs_of_rel(rel, data, fill), bound_rule)


def archive_range(blob):
    """The range an archive's header records (hpcz.info's "range": the finite, non-fill values the
    encoder saw), read from its first header bytes; a device archive's are copied to the host."""
    from . import _device, _hpcz

    n = _hpcz.header_size()
    head = blob[:n].get() if _device.is_device_array(blob) else np.frombuffer(memoryview(blob).cast("B")[:n], np.uint8)
    return _hpcz.info(head, False)["range"]


def recode_padded(blobs, chunks, rel, fill, pad, code, abs=None, bound_rule=None):
    """Chunks padded with `pad` and coded with a rel bound (blobs, in place of chunks): those whose
    padding is an end of the range their archive's header records would have it widen their bound, and
    are coded again by code(those chunks, abs) with abs = rel x the range of their other values (toward
    zero; the padding, and values equal to it, then within it). The range is the encoder's own, so other
    chunks cost no pass of their own. The HDF5 filter does the same (h5z_hpcz.cpp). With abs= too (the
    chunks coded with abs and rel combined by bound_rule): abs = combine(abs, that rel part, bound_rule)."""
    if rel is None or pad is None or not math.isfinite(pad):
        return blobs
    from . import _device

    redo = {}
    for k, (blob, chunk) in enumerate(zip(blobs, chunks)):
        if blob is None:
            continue
        p = float(np.asarray(pad, dtype=chunk.dtype))  # as the chunk holds it
        r = archive_range(blob)
        if r is not None and p in r:
            host = chunk.get() if _device.is_device_array(chunk) else chunk
            redo.setdefault(combine(abs, abs_of_rel(rel, host, fill, p), bound_rule), []).append(k)
    blobs = list(blobs)
    for bound, ks in redo.items():
        for k, blob in zip(ks, code([chunks[k] for k in ks], bound)):
            blobs[k] = blob
    return blobs


_BOUND_KEYS = ("abs", "rel", "bound_rule", "pw_rel", "psnr", "nrmse")


def bound_config(codec):
    """The bound keys of a codec's stored configuration (numcodecs, Zarr): those it was given, in one
    order; absent ones stay out, so that a configuration written before a key existed reads the same.
    bound_rule is there only with both abs and rel."""
    return {k: getattr(codec, k) for k in _BOUND_KEYS if getattr(codec, k) is not None}
