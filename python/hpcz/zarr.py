"""The hpcz codec for Zarr v3, as the array-to-bytes codec (``serializer=``):

    zarr.create_array(store, shape=..., chunks=..., dtype="float32", serializer=hpcz.zarr.Hpcz(rel=1e-3))

Registered through zarr's ``zarr.codecs`` entry point under the name "hpcz", so a process that imports
only zarr reads such arrays back.
"""

from dataclasses import dataclass

import numpy as np
from zarr.abc.codec import ArrayBytesCodec
from zarr.registry import register_codec

import hpcz
from hpcz._shapes import as_coded_shape


@dataclass(frozen=True)
class Hpcz(ArrayBytesCodec):
    """Error-bounded lossy compression of float32/float64 chunks (see hpcz.compress)."""

    is_fixed_size = False

    mode: str = "fast"
    abs: float = None
    rel: float = None
    lossless: bool = False
    fill: float = None

    def __init__(self, *, mode="fast", abs=None, rel=None, lossless=False, fill=None):
        if (abs is None) == (rel is None):
            raise hpcz.InvalidArgumentError("give exactly one of abs= and rel=", 1)
        if mode not in ("fast", "ratio", "interp"):
            raise hpcz.InvalidArgumentError(f"mode must be 'fast', 'ratio' or 'interp', not {mode!r}", 1)
        object.__setattr__(self, "mode", mode)
        object.__setattr__(self, "abs", None if abs is None else float(abs))
        object.__setattr__(self, "rel", None if rel is None else float(rel))
        object.__setattr__(self, "lossless", bool(lossless))
        object.__setattr__(self, "fill", None if fill is None else float(fill))

    @classmethod
    def from_dict(cls, data):
        if data.get("name") != "hpcz":
            raise ValueError(f"not an hpcz codec: {data!r}")
        return cls(**data.get("configuration", {}))

    def to_dict(self):
        config = {"mode": self.mode, "lossless": self.lossless}
        config["abs" if self.abs is not None else "rel"] = self.abs if self.abs is not None else self.rel
        if self.fill is not None:
            config["fill"] = self.fill
        return {"name": "hpcz", "configuration": config}

    def validate(self, *, shape, dtype, chunk_grid):
        native = dtype.to_native_dtype()
        if native not in (np.float32, np.float64):
            raise hpcz.InvalidArgumentError(f"hpcz codes float32 and float64 arrays, not {native}", 1)

    def _encode_sync(self, chunk_array, chunk_spec):
        values = as_coded_shape(chunk_array.as_numpy_array())
        blob = hpcz.compress(values, abs=self.abs, rel=self.rel, mode=self.mode, lossless=self.lossless,
                             fill=self.fill)
        return chunk_spec.prototype.buffer.from_bytes(blob)

    def _decode_sync(self, chunk_bytes, chunk_spec):
        values = hpcz.decompress(chunk_bytes.as_numpy_array())
        return chunk_spec.prototype.nd_buffer.from_numpy_array(values.reshape(chunk_spec.shape))

    async def _encode_single(self, chunk_array, chunk_spec):
        return self._encode_sync(chunk_array, chunk_spec)

    async def _decode_single(self, chunk_bytes, chunk_spec):
        return self._decode_sync(chunk_bytes, chunk_spec)

    def compute_encoded_size(self, input_byte_length, chunk_spec):
        raise NotImplementedError  # variable: the archive's size depends on the values


register_codec("hpcz", Hpcz)
