import os
import pathlib
import re
import struct

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NAME = re.compile(r"^(.*)_([0-9x]+)_(f32|f64)\.bin$")


def field_dirs():
    """The bundled sample, plus ../shared/data (or $HPCZ_SHARED_DATA) when there, as the C++ tests."""
    dirs = [ROOT / "data"]
    shared = os.environ.get("HPCZ_SHARED_DATA") or str(ROOT.parent / "shared" / "data")
    if pathlib.Path(shared).is_dir():
        dirs.append(pathlib.Path(shared))
    return dirs


def load_fields():
    out = {}
    for d in field_dirs():
        for p in sorted(d.glob("*.bin")):
            m = NAME.match(p.name)
            if not m or p.name in out:
                continue
            dims = tuple(int(x) for x in m.group(2).split("x"))
            dtype = np.float32 if m.group(3) == "f32" else np.float64
            a = np.fromfile(p, dtype=dtype)
            if a.size == int(np.prod(dims)):
                out[p.name] = a.reshape(dims)
    return out


FIELDS = load_fields()


def find_cli():
    """The hpcz CLI: $HPCZ_CLI, else build/hpcz or build-cpu/hpcz under the checkout, else on PATH; None."""
    import shutil

    for cli in (os.environ.get("HPCZ_CLI"), ROOT / "build" / "hpcz", ROOT / "build-cpu" / "hpcz"):
        if cli and pathlib.Path(cli).is_file():
            return pathlib.Path(cli)
    return shutil.which("hpcz")


@pytest.fixture(params=sorted(FIELDS), ids=lambda n: n.split("_")[0])
def field(request):
    return request.param, FIELDS[request.param]


def _specials(x, y, fill):
    """x and y flat, the mask of x's values kept bit for bit (non-finite, fill), and their bits' type."""
    x = np.asarray(x).reshape(-1)
    y = np.asarray(y).reshape(-1)
    special = ~np.isfinite(x)
    if fill is not None:
        special |= x == x.dtype.type(fill)
    return x, y, special, (np.uint32 if x.dtype == np.float32 else np.uint64)


def violations(x, y, eb, fill=None):
    """Values of y off x by more than eb, checked exactly (TwoSum at == eb); non-finite and fill
    values must come back bit for bit."""
    x, y, special, bits = _specials(x, y, fill)
    bad = int(np.count_nonzero(x[special].view(bits) != y[special].view(bits)))
    xf, yf = x[~special].astype(np.float64), y[~special].astype(np.float64)
    s = xf - yf  # exact for f32 values; for f64, TwoSum gives the rounding error where it matters
    bb = s - xf
    err = (xf - (s - bb)) + (-yf - bb)
    over = np.abs(s) > eb
    at = np.abs(s) == eb
    over |= at & (err != 0) & (np.sign(err) == np.sign(s))
    return bad + int(np.count_nonzero(over))


def hdf5_module():
    """hpcz.hdf5, or the test skipped where h5py is absent."""
    pytest.importorskip("h5py")
    import hpcz.hdf5 as hh

    return hh


def double_words(x):
    """A double as the two 32-bit words (low, high) of HDF5 cd_values."""
    return list(struct.unpack("<II", struct.pack("<d", float(x))))


def specials_kept(x, y, fill=None):
    """NaN, Inf and fill values of x come back bit for bit in y."""
    x, y, special, bits = _specials(x, y, fill)
    return bool(np.array_equal(x[special].view(bits), y[special].view(bits)))


def refused_by_compress_and_batch(hpcz, a, kw, message):
    """compress and compress_batch (CPU) both raise InvalidArgumentError (code 1) matching message."""
    for call in (lambda: hpcz.compress(a, device="cpu", **kw), lambda: hpcz.compress_batch([a], device="cpu", **kw)):
        with pytest.raises(hpcz.InvalidArgumentError, match=message) as e:
            call()
        assert e.value.code == 1


def refused_at_create_dataset(path, words, reason):
    """An h5py dataset with the hpcz filter and these cd_values fails at creation, for reason."""
    h5py = pytest.importorskip("h5py")
    hh = hdf5_module()
    with h5py.File(path, "w") as f:
        with pytest.raises(ValueError, match=reason):
            f.create_dataset("x", data=np.arange(1000, dtype=np.float32), chunks=(100,), compression=hh.FILTER_ID,
                             compression_opts=words)


def zarr_written(tmp_path, a, codec, config):
    """a written through a Zarr v3 array at tmp_path/z.zarr with codec as its serializer, in chunks that do
    not divide its shape (zarr pads the edge ones with 0), its stored configuration checked against
    config; the array read back."""
    import json

    import zarr

    z = zarr.create_array(str(tmp_path / "z.zarr"), shape=a.shape, chunks=(30, 48, 48), dtype="float32",
                          serializer=codec, compressors=None, fill_value=0.0)
    z[...] = a
    meta = json.loads((tmp_path / "z.zarr" / "zarr.json").read_text())
    assert meta["codecs"][0] == {"name": "hpcz", "configuration": config}
    return zarr.open_array(str(tmp_path / "z.zarr"), mode="r")[...]
