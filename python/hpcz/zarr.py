"""The hpcz codec for Zarr v3, as the array-to-bytes codec (``serializer=``):

    zarr.create_array(store, shape=..., chunks=..., dtype="float32", serializer=hpcz.zarr.Hpcz(rel=1e-3),
                      compressors=None)

compressors=None: zarr otherwise adds its default Zstd compressor after hpcz (a second pass over
every archive). With shards=(...) (zarr's sharding_indexed) hpcz codes the inner chunks, and a read
decodes only the inner chunks it touches.

Registered through zarr's ``zarr.codecs`` entry point under the name "hpcz", so a process that imports
only zarr reads such arrays back.

Every batch of chunks zarr hands the codec is one hpcz.compress_batch / decompress_batch call, run off
the event loop (so that zarr's other chunk reads and writes go on meanwhile). zarr hands codecs one
chunk at a time unless told otherwise: ``zarr.config.set({"codec_pipeline.batch_size": 64})`` lets
hpcz code 64 chunks a call.

A rel bound is relative to each chunk's range, the chunk's padding left out: zarr pads edge chunks with
the array's fill_value; where that value is an end of a chunk's range the chunk is coded with abs = rel x
the range of its other values, so the error is never above rel x the range of the values written. Hpcz(rel=..., data=a): abs = rel x a's range.

abs and rel together: both hold (bound_rule "and", the default) or either does ("or"); the rel part as
above (with data=: abs = the smaller, or the larger, of abs and rel x a's range).

pw_rel (pointwise relative, instead of abs and rel): every value x within pw_rel x |x|;
no range is involved, so neither the padding nor data= changes it (configuration key "pw_rel").

psnr / nrmse (quality targets, instead of the others; every mode): each chunk is coded as a whole array
(hpcz.compress_batch codes such a batch chunk by chunk), so the target holds per chunk, over each
chunk's own range and values, zarr's padding of edge chunks included (configuration keys "psnr",
"nrmse"); data= leaves them as they are. The padding can cost an edge chunk's written values many dB
(the bundled sample's temperatures padded with 0, psnr=40: 28.5 dB): give fill= the array's fill_value, and the
padding is kept exactly and left out of the range and the measure, so the values written meet the
target. The codec does not do so by itself: it cannot tell padding from values equal to it, and a
sparse field's zeros coded as fill values cost it most of its ratio (wrf qcloud, fast, psnr=60: 73.9 -> 3.8).
"""

import asyncio
from dataclasses import dataclass

import numpy as np
from zarr.abc.codec import ArrayBytesCodec
from zarr.registry import register_codec

import hpcz
from hpcz import _dtypes
from hpcz._bounds import abs_of_bounds, bound_config, recode_padded
from hpcz._shapes import as_coded_shape, check_archive_fits


def _padding(spec):
    """The array's fill_value, which zarr pads edge chunks with, as a float (None where it is not one)."""
    pad = spec.fill_value
    return float(pad) if pad is not None and np.ndim(pad) == 0 and np.asarray(pad).dtype.kind in "fiu" else None


@dataclass(frozen=True)
class Hpcz(ArrayBytesCodec):
    """Error-bounded lossy compression of float32/float64 chunks (see hpcz.compress).

    Keywords only, in the order of hpcz.compress and of the three codec classes (hpcz.numcodecs.Hpcz,
    hpcz.zarr.Hpcz, hpcz.hdf5.Hpcz): abs or rel: the bound (hdf5plugin's absolute= and relative= are
    the same, stored as abs and rel), or both: within both (bound_rule="and", the default) or within
    either (bound_rule="or"; stored with the bounds); mode: "fast", "ratio" or "interp"; lossless: a
    lossless stage after the codec; fill: a value kept exactly and left out of the range; data=: the
    whole array (numpy) with rel: the bound stored is abs = rel x the range of data's finite values
    (those equal to fill left out; with abs= too, the smaller or the larger of the two, by bound_rule).
    A rel bound leaves each chunk's padding (the array's fill_value) out of its range (see the module's
    doc). pw_rel (instead of abs and rel): pointwise relative, every value x within pw_rel x |x|
    (0 < pw_rel < 1; from 1e-6 in the ratio and interp modes); it needs no range (data= leaves it as it is). psnr or nrmse
    (instead of the others; every mode): a quality target for each chunk, its PSNR at least psnr dB
    (psnr > 0) or its RMSE / range at most nrmse (0 < nrmse < 1), over the chunk's own range and values
    (its padding included), not the whole array's; data= leaves it as it is."""

    is_fixed_size = False

    abs: float = None
    rel: float = None
    mode: str = "fast"
    lossless: bool = False
    fill: float = None
    bound_rule: str = None  # "and" or "or" where abs and rel are both kept, else None
    pw_rel: float = None  # pointwise relative: instead of abs and rel
    psnr: float = None  # quality targets, per chunk: instead of the others
    nrmse: float = None

    # absolute= and relative=: hdf5plugin's spellings of abs= and rel= (stored, and written to the
    # array's metadata, as abs and rel).
    def __init__(self, *, abs=None, rel=None, mode="fast", lossless=False, fill=None, absolute=None, relative=None,
                 data=None, bound_rule=None, pw_rel=None, psnr=None, nrmse=None):
        abs, rel = hpcz._aliases(abs, rel, absolute, relative)
        kind = hpcz._bound_rule(abs, rel, bound_rule, pw_rel, psnr, nrmse)
        hpcz._check_mode(mode)
        hpcz._check_pw_rel_mode(kind, mode, pw_rel)
        # pw_rel needs no range, and a target is met per chunk: data= leaves them as they are
        if data is not None and kind not in ("pw_rel", "psnr", "nrmse"):
            if rel is None:
                raise hpcz.InvalidArgumentError("data= turns a rel bound into the array's abs bound: give rel=, not abs=", 1)
            abs, rel, kind = abs_of_bounds(abs, rel, data, fill, bound_rule), None, "abs"
        object.__setattr__(self, "bound_rule", {"abs_and_rel": "and", "abs_or_rel": "or"}.get(kind))
        object.__setattr__(self, "mode", mode)
        object.__setattr__(self, "abs", None if abs is None else float(abs))
        object.__setattr__(self, "rel", None if rel is None else float(rel))
        object.__setattr__(self, "pw_rel", None if pw_rel is None else hpcz._pw_rel(pw_rel))
        object.__setattr__(self, "psnr", None if psnr is None else hpcz._psnr(psnr))
        object.__setattr__(self, "nrmse", None if nrmse is None else hpcz._nrmse(nrmse))
        object.__setattr__(self, "lossless", bool(lossless))
        object.__setattr__(self, "fill", None if fill is None else float(fill))

    @classmethod
    def from_dict(cls, data):
        if data.get("name") != "hpcz":
            raise ValueError(f"not an hpcz codec: {data!r}")
        return cls(**data.get("configuration", {}))

    def to_dict(self):
        config = {"mode": self.mode, "lossless": self.lossless, **bound_config(self)}
        if self.fill is not None:
            config["fill"] = self.fill
        return {"name": "hpcz", "configuration": config}

    def validate(self, *, shape, dtype, chunk_grid):
        native = dtype.to_native_dtype()
        if native.kind == "f" and native.itemsize in (4, 8) and native.byteorder == ">":
            raise hpcz.InvalidArgumentError(
                f"hpcz codes little-endian floats, not big-endian float{native.itemsize * 8} ({native.str}): "
                f"create the array with dtype '<f{native.itemsize}'", 1)
        if _dtypes.name_of(native) is None:
            raise hpcz.InvalidArgumentError(f"hpcz codes arrays of {_dtypes.ACCEPTED}, not {native}", 1)

    async def _encode_single(self, chunk_array, chunk_spec):
        return (await self.encode([(chunk_array, chunk_spec)]))[0]

    async def _decode_single(self, chunk_bytes, chunk_spec):
        return (await self.decode([(chunk_bytes, chunk_spec)]))[0]

    async def encode(self, chunks_and_specs):
        items = list(chunks_and_specs)
        todo = [(i, c, spec) for i, (c, spec) in enumerate(items) if c is not None]

        def code():
            arrays = [as_coded_shape(c.as_numpy_array()) for _, c, _ in todo]
            kw = dict(mode=self.mode, lossless=self.lossless, fill=self.fill)
            blobs = hpcz.compress_batch(arrays, abs=self.abs, rel=self.rel, bound_rule=self.bound_rule,
                                        pw_rel=self.pw_rel, psnr=self.psnr, nrmse=self.nrmse, **kw)
            # A rel bound leaves each chunk's padding (the array's fill_value) out of its range.
            pads = {}
            for k, (_, _, spec) in enumerate(todo):
                pads.setdefault(_padding(spec), []).append(k)
            for pad, ks in pads.items():
                redone = recode_padded([blobs[k] for k in ks], [arrays[k] for k in ks], self.rel, self.fill, pad,
                                       lambda chunks, bound: hpcz.compress_batch(chunks, abs=bound, **kw),
                                       abs=self.abs, bound_rule=self.bound_rule)
                for k, blob in zip(ks, redone):
                    blobs[k] = blob
            return blobs
        out = [None] * len(items)
        for (i, _, spec), blob in zip(todo, await asyncio.to_thread(code)):
            out[i] = spec.prototype.buffer.from_bytes(blob)
        return out

    async def decode(self, chunks_and_specs):
        items = list(chunks_and_specs)
        todo = [(i, b, spec) for i, (b, spec) in enumerate(items) if b is not None]

        def code():
            blobs = [b.as_numpy_array() for _, b, _ in todo]
            for blob, (_, _, spec) in zip(blobs, todo):
                check_archive_fits(hpcz.info(blob, verify=False), spec.dtype.to_native_dtype(),
                                   int(np.prod(spec.shape, dtype=np.int64)), f"a chunk of shape {tuple(spec.shape)}")
            return hpcz.decompress_batch(blobs)
        out = [None] * len(items)
        for (i, _, spec), values in zip(todo, await asyncio.to_thread(code)):
            out[i] = spec.prototype.nd_buffer.from_numpy_array(values.reshape(spec.shape))
        return out

    def compute_encoded_size(self, input_byte_length, chunk_spec):
        raise NotImplementedError  # variable: the archive's size depends on the values


register_codec("hpcz", Hpcz)
