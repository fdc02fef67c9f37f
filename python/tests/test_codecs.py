import subprocess
import sys

import numpy as np
import numcodecs
import pytest
import zarr

import hpcz
from conftest import violations


def eb_of(a, rel):
    finite = a[np.isfinite(a)]
    return hpcz.info(hpcz.compress(a, rel=rel))["eb_abs"] if finite.size else 0.0


def run_alone(code):
    """Runs code in a fresh interpreter (no import of hpcz unless the code makes one)."""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_numcodecs_entry_point_without_import():
    run_alone(
        "import sys, numcodecs, numpy as np\n"
        "c = numcodecs.get_codec({'id': 'hpcz', 'rel': 1e-3, 'mode': 'ratio'})\n"
        "a = np.linspace(0, 1, 5000, dtype=np.float32)\n"
        "assert np.abs(c.decode(c.encode(a)) - a).max() <= 1e-3\n"
        "assert c.get_config()['rel'] == 1e-3 and c.get_config()['mode'] == 'ratio'\n")


@pytest.mark.parametrize("config", [{"rel": 1e-3}, {"abs": 0.01, "mode": "ratio", "lossless": True},
                                    {"rel": 1e-2, "mode": "interp", "lossless": True}])
def test_numcodecs_roundtrip(field, config):
    _, a = field
    codec = numcodecs.get_codec({"id": "hpcz", **config})
    assert numcodecs.get_codec(codec.get_config()).get_config() == codec.get_config()
    enc = codec.encode(a)
    eb = hpcz.info(enc)["eb_abs"]
    dec = codec.decode(enc)
    assert violations(a, np.asarray(dec).reshape(a.shape), eb) == 0
    out = np.empty_like(a)
    codec.decode(enc, out=out)
    assert np.array_equal(out, np.asarray(dec).reshape(a.shape))


def test_numcodecs_shapes_beyond_four_dimensions():
    codec = hpcz.numcodecs.Hpcz(abs=1e-3)
    a = np.random.default_rng(1).standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
    dec = np.asarray(codec.decode(codec.encode(a))).reshape(a.shape)
    assert violations(a, dec, 1e-3) == 0
    one = np.float64(2.5)
    assert abs(np.asarray(codec.decode(codec.encode(np.asarray(one)))).reshape(()) - 2.5) <= 1e-3


def test_zarr_v2_with_the_numcodecs_codec(tmp_path, field):
    _, a = field
    codec = numcodecs.get_codec({"id": "hpcz", "rel": 1e-3})
    chunks = (max(1, a.shape[0] // 3),) + a.shape[1:]
    z = zarr.create_array(str(tmp_path / "v2.zarr"), shape=a.shape, chunks=chunks, dtype=a.dtype,
                          zarr_format=2, compressors=codec, filters=None)
    z[...] = a
    back = zarr.open_array(str(tmp_path / "v2.zarr"), mode="r")[...]
    # rel is relative to each chunk's range, an edge chunk's padding (the array's fill value, 0) included
    def padded(k):
        c = np.zeros(chunks, dtype=a.dtype)
        c[: min(chunks[0], a.shape[0] - k)] = a[k:k + chunks[0]]
        return c

    eb = max(eb_of(padded(k), 1e-3) for k in range(0, a.shape[0], chunks[0]))
    assert violations(a, back, eb) == 0


def test_zarr_v3_serializer_read_by_a_process_that_imports_only_zarr(tmp_path, field):
    _, a = field
    path = str(tmp_path / "v3.zarr")
    z = zarr.create_array(path, shape=a.shape, chunks=(max(1, a.shape[0] // 4),) + a.shape[1:], dtype=a.dtype,
                          serializer=hpcz.zarr.Hpcz(abs=0.01, mode="ratio"), compressors=None)
    z[...] = a
    np.save(tmp_path / "want.npy", a)
    run_alone(
        "import sys, zarr, numpy as np\n"
        f"z = zarr.open_array({path!r}, mode='r')\n"
        f"a = np.load({str(tmp_path / 'want.npy')!r})\n"
        "b = z[...]\n"
        "assert 'hpcz' in sys.modules  # loaded by zarr's entry point, not by this code\n"
        "assert b.shape == a.shape and b.dtype == a.dtype\n"
        "assert np.abs(b.astype(np.float64) - a).max() <= 0.01\n")


def test_zarr_v3_rejects_integer_arrays(tmp_path):
    with pytest.raises(ValueError):
        zarr.create_array(str(tmp_path / "i.zarr"), shape=(10,), dtype="int32", serializer=hpcz.zarr.Hpcz(rel=1e-3))


@pytest.mark.parametrize("mode", ["fast", "interp"])
def test_zarr_v3_fill_and_partial_chunks(tmp_path, mode):
    a = np.random.default_rng(2).standard_normal((37, 23)).astype(np.float64)
    a[a > 1.5] = -9999.0
    a[0, 0] = np.nan
    z = zarr.create_array(str(tmp_path / "f.zarr"), shape=a.shape, chunks=(16, 16), dtype=a.dtype,
                          serializer=hpcz.zarr.Hpcz(abs=1e-4, fill=-9999.0, mode=mode), compressors=None)
    z[...] = a
    back = zarr.open_array(str(tmp_path / "f.zarr"), mode="r")[...]
    assert violations(a, back, 1e-4, fill=-9999.0) == 0


def test_numcodecs_zero_extent_beyond_four_dimensions():
    codec = hpcz.numcodecs.Hpcz(abs=1e-3)
    a = np.empty((2, 0, 3, 4, 5), dtype=np.float32)
    assert np.asarray(codec.decode(codec.encode(a))).size == 0


def test_numcodecs_refuses_an_out_of_another_shape_or_dtype():
    codec = hpcz.numcodecs.Hpcz(abs=1e-3)
    enc = codec.encode(np.linspace(0, 1, 100, dtype=np.float32))
    # the same bytes as the archive's values (float64 of 50): decoded as they are, they were wrong values
    for out in (np.empty(50, np.float32), np.empty(100, np.float64), np.empty(50, np.float64)):
        with pytest.raises(hpcz.InvalidArgumentError, match="the archive holds 100 float32 values"):
            codec.decode(enc, out=out)
    with pytest.raises(hpcz.InvalidArgumentError, match="the archive holds 100 float32 values"):
        codec.decode(enc, out=bytearray(100))
    out = bytearray(400)  # a byte buffer of the right size takes the values
    codec.decode(enc, out=out)
    assert np.abs(np.frombuffer(out, np.float32) - np.linspace(0, 1, 100, dtype=np.float32)).max() <= 1e-3


@pytest.mark.parametrize("other", [dict(chunks=(8, 16), dtype="float64"), dict(chunks=(8, 16), dtype="float32")])
def test_zarr_v3_refuses_a_chunk_of_another_shape_or_dtype(tmp_path, other):
    # A chunk file replaced by another array's: the float64 one has the same bytes as the chunk's values.
    a = np.random.default_rng(5).standard_normal((16, 16)).astype(np.float32)
    z = zarr.create_array(str(tmp_path / "a.zarr"), shape=(16, 16), chunks=(16, 16), dtype="float32",
                          serializer=hpcz.zarr.Hpcz(abs=1e-3), compressors=None)
    z[...] = a
    b = zarr.create_array(str(tmp_path / "b.zarr"), shape=other["chunks"], serializer=hpcz.zarr.Hpcz(abs=1e-3),
                          compressors=None, **other)
    b[...] = np.ones(other["chunks"])
    (tmp_path / "a.zarr" / "c" / "0" / "0").write_bytes((tmp_path / "b.zarr" / "c" / "0" / "0").read_bytes())
    with pytest.raises(hpcz.InvalidArgumentError, match=f"the archive holds 128 {other['dtype']} values"):
        zarr.open_array(str(tmp_path / "a.zarr"), mode="r")[...]
