"""The hpcz codec for numcodecs (and so Zarr v2): ``numcodecs.get_codec({"id": "hpcz", "rel": 1e-3})``.

Registered through the ``numcodecs.codecs`` entry point, so a process that has hpcz installed finds
it without importing it. Chunks of more than 4 dimensions are coded with their slowest dimensions
merged (the same values in the same order); a 0-d chunk as one value.

A rel bound is relative to each chunk's range, 0 left out: Zarr pads edge chunks with the array's
fill_value, 0 by default (NaN is left out of the range anyway; another one needs fill= that value). Where
0 is an end of a chunk's range, the chunk is coded with abs = rel x the range of its other values. Hpcz(rel=..., data=a): abs = rel x a's range.

abs and rel together: both hold (bound_rule "and", the default) or either does ("or"); the rel part as
above (with data=: abs = the smaller, or the larger, of abs and rel x a's range).

pw_rel (pointwise relative, instead of abs and rel): every value x within pw_rel x |x|;
no range is involved, so neither the padding nor data= changes it (config key "pw_rel").

psnr / nrmse (quality targets, instead of the others; every mode): each chunk is coded by hpcz.compress
as a whole array, so the target holds per chunk, over each chunk's own range and values, Zarr's padding
of edge chunks included (config keys "psnr", "nrmse"); data= leaves them as they are. fill= the array's
fill_value keeps the padding exactly and out of the measure, so that edge chunks' written values meet the
target too (hpcz.zarr's module doc says what that costs sparse fields).
"""

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ensure_ndarray_like, ndarray_copy

import hpcz
from hpcz import _dtypes
from hpcz._bounds import abs_of_bounds, bound_config, recode_padded
from hpcz._shapes import as_coded_shape, check_archive_fits


class _Default:
    """A keyword's default (shown as the value itself), told apart from the same value given."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return repr(self.value)


class Hpcz(Codec):
    """Error-bounded lossy compression of float32/float64 chunks.

    Keywords, in the order of hpcz.compress and of the three codec classes (hpcz.numcodecs.Hpcz,
    hpcz.zarr.Hpcz, hpcz.hdf5.Hpcz): abs or rel: the error bound (hdf5plugin's absolute= and relative=
    are the same), or both: within both (bound_rule="and", the default) or within either
    (bound_rule="or"); mode: "fast", "ratio" or "interp"; lossless: a lossless stage after the
    codec; fill: a value kept exactly and left out of the range (masked cells); data=: the whole array
    (numpy) with rel: the bound becomes abs = rel x the range of data's finite values (those equal to
    fill left out; with abs= too, the smaller or the larger of the two, by bound_rule). A rel bound
    leaves 0 (Zarr's padding) out of the range. pw_rel (keyword only, instead of abs and rel):
    pointwise relative, every value x within pw_rel x |x| (0 < pw_rel < 1; from 1e-6 in the ratio and interp modes); it
    needs no range (data= leaves it as it is). psnr or nrmse (keyword only, instead of the others; every
    mode): a quality target for each chunk, its PSNR at least psnr dB (psnr > 0) or its RMSE / range at
    most nrmse (0 < nrmse < 1), over the chunk's own range and values (the padding of edge chunks
    included), not the whole array's; data= leaves it as it is.

    By position this class takes mode first, as it always has: Hpcz("ratio", 0.01) is
    Hpcz(mode="ratio", abs=0.01); then abs, rel, lossless, fill.
    """

    codec_id = "hpcz"

    # By position: the order this class has always taken, for the callers that pass them so.
    _positional = ("mode", "abs", "rel", "lossless", "fill")

    def __init__(self, *args, abs=_Default(None), rel=_Default(None), mode=_Default("fast"),
                 lossless=_Default(False), fill=_Default(None), absolute=None, relative=None, data=None,
                 bound_rule=None, pw_rel=None, psnr=None, nrmse=None):
        if len(args) > len(self._positional):
            raise TypeError(f"Hpcz takes at most {len(self._positional)} arguments by position ({len(args)} given)")
        given = {"abs": abs, "rel": rel, "mode": mode, "lossless": lossless, "fill": fill}
        for name, value in zip(self._positional, args):
            if not isinstance(given[name], _Default):
                raise TypeError(f"Hpcz got two values for {name}, by position and as {name}=")
            given[name] = value
        abs, rel, mode, lossless, fill = (v.value if isinstance(v, _Default) else v for v in given.values())
        abs, rel = hpcz._aliases(abs, rel, absolute, relative)
        kind = hpcz._bound_rule(abs, rel, bound_rule, pw_rel, psnr, nrmse)
        hpcz._check_mode(mode)
        hpcz._check_pw_rel_mode(kind, mode, pw_rel)
        # pw_rel needs no range, and a target is met per chunk: data= leaves them as they are
        if data is not None and kind not in ("pw_rel", "psnr", "nrmse"):
            if rel is None:
                raise hpcz.InvalidArgumentError("data= turns a rel bound into the array's abs bound: give rel=, not abs=", 1)
            abs, rel, kind = abs_of_bounds(abs, rel, data, fill, bound_rule), None, "abs"
        self.mode = mode
        self.abs = None if abs is None else float(abs)
        self.rel = None if rel is None else float(rel)
        self.pw_rel = None if pw_rel is None else hpcz._pw_rel(pw_rel)
        self.psnr = None if psnr is None else hpcz._psnr(psnr)
        self.nrmse = None if nrmse is None else hpcz._nrmse(nrmse)
        # "and" or "or" where abs and rel are both kept, else None
        self.bound_rule = {"abs_and_rel": "and", "abs_or_rel": "or"}.get(kind)
        self.lossless = bool(lossless)
        self.fill = None if fill is None else float(fill)

    def encode(self, buf):
        array = buf if isinstance(buf, np.ndarray) else np.asarray(buf)
        if isinstance(buf, (bytes, bytearray, memoryview)) or _dtypes.name_of(array.dtype.newbyteorder("=")) is None:
            # Raw bytes carry no dtype or shape: np.asarray makes them one string ("|S3276800").
            got = (f"{type(buf).__name__} ({memoryview(buf).nbytes} bytes): pass the array itself, not its bytes"
                   if isinstance(buf, (bytes, bytearray, memoryview)) else f"an array of {array.dtype}")
            raise hpcz.InvalidArgumentError(f"the hpcz codec takes an array of {_dtypes.ACCEPTED}, not {got}", 1)
        # Zarr pads edge chunks with the array's fill_value, 0 by default: left out of a rel bound's range.
        array = as_coded_shape(array)
        kw = dict(mode=self.mode, lossless=self.lossless, fill=self.fill)
        blob = hpcz.compress(array, abs=self.abs, rel=self.rel, bound_rule=self.bound_rule, pw_rel=self.pw_rel,
                             psnr=self.psnr, nrmse=self.nrmse, **kw)
        return recode_padded([blob], [array], self.rel, self.fill, 0.0,
                             lambda chunks, bound: [hpcz.compress(c, abs=bound, **kw) for c in chunks],
                             abs=self.abs, bound_rule=self.bound_rule)[0]

    def decode(self, buf, out=None):
        buf = ensure_contiguous_ndarray(buf)
        if out is not None:
            dst = ensure_ndarray_like(out)
            head = hpcz.info(buf, verify=False)
            held = _dtypes.numpy_dtype(head["dtype"])
            if dst.dtype.kind == "f" or dst.dtype == held:
                check_archive_fits(head, dst.dtype, dst.size, f"out (shape {dst.shape})")
            elif dst.nbytes != head["n_values"] * held.itemsize:  # a byte buffer
                raise hpcz.InvalidArgumentError(
                    f"the archive holds {head['n_values']} {head['dtype']} values, not the {dst.nbytes} bytes of out", 1)
        return ndarray_copy(hpcz.decompress(buf), out)

    def get_config(self):
        config = {"id": self.codec_id, "mode": self.mode, "lossless": self.lossless, "fill": self.fill}
        config.update(bound_config(self))
        return config

    def __repr__(self):
        named = (("abs", self.abs), ("rel", self.rel), ("bound_rule", self.bound_rule), ("pw_rel", self.pw_rel),
                 ("psnr", self.psnr), ("nrmse", self.nrmse))
        bound = ", ".join(f"{k}={v!r}" for k, v in named if v is not None)
        return f"Hpcz(mode={self.mode!r}, {bound}, lossless={self.lossless!r}, fill={self.fill!r})"
