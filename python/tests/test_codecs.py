import subprocess
import sys

import numpy as np
import pytest

numcodecs = pytest.importorskip("numcodecs")
zarr = pytest.importorskip("zarr")

import hpcz
from conftest import ROOT, violations


def eb_of(a, rel):
    finite = a[np.isfinite(a)]
    return hpcz.info(hpcz.compress(a, rel=rel))["eb_abs"] if finite.size else 0.0


def written_range_bound(a, rel, fill=None):
    """rel x (max - min) of a's finite values (fill left out): what a rel bound promises for the array."""
    v = a[np.isfinite(a)].astype(np.float64)
    if fill is not None:
        v = v[v != fill]
    return rel * (v.max() - v.min())


def sample():
    return np.fromfile(ROOT / "data" / "climate-ncar_csm_b003_ts_100x64x128_f32.bin", np.float32).reshape(100, 64, 128)


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
    # rel is relative to each chunk's range, an edge chunk's padding (the array's fill value, 0) left out
    assert violations(a, back, written_range_bound(a, 1e-3)) == 0


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


def test_zarr_v3_rejects_complex_arrays(tmp_path):
    with pytest.raises(ValueError):
        zarr.create_array(str(tmp_path / "i.zarr"), shape=(10,), dtype="complex64", serializer=hpcz.zarr.Hpcz(rel=1e-3))


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


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("mode", ["fast", "interp"])
def test_zarr_rel_is_relative_to_the_values_written_in_edge_chunks(tmp_path, fmt, mode):
    # Temperatures (200-310 K) in chunks that do not divide the shape: zarr pads edge chunks with the
    # fill_value (0), which counted in their range loosened rel=1e-3 2.6x (0.31 against 0.12).
    a = sample()
    codec = dict(compressors=hpcz.numcodecs.Hpcz(rel=1e-3, mode=mode), filters=None) if fmt == 2 else \
        dict(serializer=hpcz.zarr.Hpcz(rel=1e-3, mode=mode), compressors=None)
    z = zarr.create_array(str(tmp_path / "t.zarr"), shape=a.shape, chunks=(16, 48, 48), dtype=a.dtype,
                          zarr_format=fmt, **codec)
    z[...] = a
    back = zarr.open_array(str(tmp_path / "t.zarr"), mode="r")[...]
    assert violations(a, back, written_range_bound(a, 1e-3)) == 0


@pytest.mark.parametrize("fill", [None, -999.0, -9999.0])
def test_zarr_v3_rel_with_a_fill_value_and_chunks_of_only_fill(tmp_path, fill):
    # The array's fill_value (-999) pads the edge chunks and is the minimum: left out of the range with
    # fill= absent, -999 (the same) or -9999 (another). Whole chunks of only -999 are written too.
    a = sample()
    a[:, :10, :10] = -999.0
    a[64:80] = -999.0
    if fill == -9999.0:
        a[:, 60:, 120:] = -9999.0  # the user's masked cells
    with zarr.config.set({"array.write_empty_chunks": True, "codec_pipeline.batch_size": 8}):
        z = zarr.create_array(str(tmp_path / "f.zarr"), shape=a.shape, chunks=(16, 48, 48), dtype=a.dtype,
                              fill_value=-999.0, serializer=hpcz.zarr.Hpcz(rel=1e-3, fill=fill), compressors=None)
        z[...] = a
    back = zarr.open_array(str(tmp_path / "f.zarr"), mode="r")[...]
    v = a[np.isfinite(a) & (a != -999.0) & (a != (fill or 0.5))].astype(np.float64)
    assert violations(a, back, 1e-3 * (v.max() - v.min()), fill=fill) == 0
    assert np.array_equal(back[64:80], a[64:80])  # chunks of only the fill value come back as they were


def test_rel_with_data_is_the_arrays_abs_bound():
    a = sample()
    a[0, :5, :5] = -9999.0
    a[1, 0, :2] = [np.nan, np.inf]
    for fill in (None, -9999.0):
        v = a[np.isfinite(a)].astype(np.float64)
        v = v if fill is None else v[v != fill]
        by_hand = 1e-3 * (v.max() - v.min())
        z = hpcz.zarr.Hpcz(rel=1e-3, data=a, fill=fill)
        n = hpcz.numcodecs.Hpcz(rel=1e-3, data=a, fill=fill)
        assert z.rel is None and n.rel is None
        assert z.abs == pytest.approx(by_hand, rel=1e-15, abs=0) and n.abs == z.abs
        assert z.to_dict()["configuration"]["abs"] == z.abs and n.get_config()["abs"] == z.abs
    with pytest.raises(ValueError, match="give rel="):
        hpcz.zarr.Hpcz(abs=0.1, data=a)
    with pytest.raises(ValueError, match="give rel="):
        hpcz.numcodecs.Hpcz(abs=0.1, data=a)


def test_clear_messages_for_bytes_and_byte_order(tmp_path):
    codec = hpcz.numcodecs.Hpcz(rel=1e-3)
    a = sample()
    with pytest.raises(hpcz.InvalidArgumentError, match="takes an array of float32, .*, not bytes \\(3276800 bytes\\)"):
        codec.encode(a.tobytes())
    with pytest.raises(hpcz.InvalidArgumentError, match="not an array of complex64"):
        codec.encode(np.arange(10, dtype=np.complex64))
    for call in (lambda: codec.encode(a.astype(">f4")), lambda: hpcz.compress(a.astype(">f4"), rel=1e-3)):
        with pytest.raises(hpcz.InvalidArgumentError, match=r"big-endian float32 \(>f4\).*\.astype\('<f4'\)"):
            call()
    with pytest.raises(hpcz.InvalidArgumentError, match=r"big-endian float64 \(>f8\).*'<f8'"):
        zarr.create_array(str(tmp_path / "b.zarr"), shape=(10,), dtype=">f8", serializer=hpcz.zarr.Hpcz(rel=1e-3),
                          compressors=None)


@pytest.mark.parametrize("mode", ["fast", "ratio"])
def test_zarr_v3_sharding_with_hpcz_as_the_inner_codec(tmp_path, field, mode, monkeypatch):
    """Sharding (sharding_indexed) with hpcz as the inner chunks' serializer: the array round trips within
    the bound, and reading one element decodes that element's inner chunk alone, not the rest of its shard."""
    _, a = field
    chunks = tuple(max(1, s // 8) for s in a.shape)
    shards = tuple(min(s, 4 * c) for s, c in zip(a.shape, chunks))
    shards = tuple(sh - sh % c for sh, c in zip(shards, chunks))  # whole inner chunks a shard
    z = zarr.create_array(str(tmp_path / "s.zarr"), shape=a.shape, chunks=chunks, shards=shards, dtype=a.dtype,
                          serializer=hpcz.zarr.Hpcz(abs=1e-2, mode=mode), compressors=None)
    z[...] = a
    back = zarr.open_array(str(tmp_path / "s.zarr"), mode="r")
    assert violations(a, back[...], 1e-2) == 0
    decoded = []
    batch = hpcz.decompress_batch

    def counting(blobs, *args, **kwargs):
        blobs = list(blobs)
        decoded.append(len(blobs))
        return batch(blobs, *args, **kwargs)

    monkeypatch.setattr(hpcz, "decompress_batch", counting)
    # an element of a chunk that is stored (zarr leaves out chunks of fill_value alone, the zeros of wrf's clouds)
    at = np.unravel_index(np.nanargmax(np.abs(a)), a.shape)
    one = back[at]
    assert sum(decoded) == 1
    assert abs(float(one) - float(a[at])) <= 1e-2
