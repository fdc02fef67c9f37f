"""abs= and rel= together: every value within both (bound_rule="and", the default: SZ3's ABS_AND_REL,
the library's abs_and_rel) or within either (bound_rule="or": ABS_OR_REL, abs_or_rel), through
hpcz.compress, compress_batch, the numcodecs and Zarr v3 codecs and the HDF5 filter. The bound each
test checks against is computed here, in float64, from the values: min or max of abs and
rel x (max - min) of the finite, non-fill values."""

import struct

import numpy as np
import pytest

import hpcz
from conftest import ROOT, double_words, hdf5_module, refused_at_create_dataset, violations, zarr_written

RULES = {"and": "abs_and_rel", "or": "abs_or_rel"}
FILL = -1e10  # the masked fields' fill value (as test_hdf5.py)


def sample():
    return np.fromfile(ROOT / "data" / "climate-ncar_csm_b003_ts_100x64x128_f32.bin", np.float32).reshape(100, 64, 128)


def fill_of(a):
    return FILL if np.any(a == a.dtype.type(FILL)) else None


def value_range(a, fill=None, skip=None):
    """max - min of a's finite values (fill and skip left out), in float64."""
    v = np.asarray(a).reshape(-1)
    v = v[np.isfinite(v)].astype(np.float64)
    for x in (fill, skip):
        if x is not None:
            v = v[v != np.float64(np.asarray(x, dtype=a.dtype))]
    return float(v.max() - v.min()) if v.size else 0.0


def expected(abs, rel, rule, a, fill=None, skip=None):
    """The bound abs and rel promise under rule, by hand: min (and) or max (or) of abs and rel x range."""
    r = rel * value_range(a, fill, skip)
    return min(abs, r) if rule == "and" else max(abs, r)


def bounds_for(a, binds, rel=1e-3, fill=None):
    """(abs, rel) where the one named by `binds` is the smaller: abs a third of rel x range, or 3x it."""
    r = rel * value_range(a, fill)
    return (r / 3 if binds == "abs" else r * 3), rel


@pytest.mark.parametrize("mode", ["fast", "ratio", "interp"])
@pytest.mark.parametrize("rule", ["and", "or"])
@pytest.mark.parametrize("binds", ["abs", "rel"])  # which of the two is the smaller
def test_roundtrip_within_the_combined_bound(field, mode, rule, binds):
    name, a = field
    fill = fill_of(a)
    abs_, rel = bounds_for(a, binds, fill=fill)
    want = expected(abs_, rel, rule, a, fill)
    blob = hpcz.compress(a, abs=abs_, rel=rel, bound_rule=rule, mode=mode, fill=fill, device="cpu")
    head = hpcz.info(blob)
    assert head["bound_kind"] == head["bound_mode"] == RULES[rule], name
    assert head["version"] == head["format_version"] == 6, name
    assert head["mode"] == mode and head["bound"] == rel
    # The settled bound is the one asked for (rel's part rounded toward zero, never above it).
    assert head["eb_abs"] == pytest.approx(want, rel=1e-12, abs=0)
    assert head["eb_abs"] <= want * (1 + 1e-15)
    if (rule == "and") == (binds == "abs"):  # the absolute bound is the one that holds
        assert head["eb_abs"] == abs_
    back = hpcz.decompress(blob, device="cpu")
    assert back.shape == a.shape and back.dtype == a.dtype
    assert violations(a, back, want, fill=fill) == 0, name
    # The default rule is "and".
    if rule == "and" and mode == "fast":
        assert hpcz.compress(a, abs=abs_, rel=rel, mode=mode, fill=fill, device="cpu") == blob


@pytest.mark.parametrize("rule", ["and", "or"])
def test_batch_writes_the_same_archives(field, rule):
    _, a = field
    fill = fill_of(a)
    abs_, rel = bounds_for(a, "abs", fill=fill)
    parts = [np.ascontiguousarray(a.reshape(-1)[:k]) for k in (a.size, a.size // 2, 1000)]
    got = hpcz.compress_batch(parts, abs=abs_, rel=rel, bound_rule=rule, mode="ratio", fill=fill, device="cpu")
    for p, blob in zip(parts, got):
        assert blob == hpcz.compress(p, abs=abs_, rel=rel, bound_rule=rule, mode="ratio", fill=fill, device="cpu")
        assert hpcz.info(blob)["bound_kind"] == RULES[rule]
    back = hpcz.decompress_batch(got)
    for p, b in zip(parts, back):
        assert violations(p, b, expected(abs_, rel, rule, p, fill), fill=fill) == 0


def test_without_a_range():
    # A constant array: rel x range is 0, so "and" keeps the values exactly and "or" keeps abs.
    a = np.full(1000, 7.25, dtype=np.float32)
    for rule, eb in (("and", 0.0), ("or", 0.5)):
        blob = hpcz.compress(a, abs=0.5, rel=1e-2, bound_rule=rule, device="cpu")
        assert hpcz.info(blob)["eb_abs"] == eb
        assert violations(a, hpcz.decompress(blob), eb) == 0


def test_the_modules_abs_bound_argument():
    # _hpcz takes the combined modes' absolute bound last (abs_bound, 0 by default): by position or name.
    from hpcz import _hpcz

    a = sample()[:10]
    by_position = _hpcz.compress(a, "fast", "abs_and_rel", 1e-3, False, None, "cpu", 0.01)
    assert by_position == _hpcz.compress(a, "fast", "abs_and_rel", 1e-3, False, None, "cpu", abs_bound=0.01)
    assert by_position == hpcz.compress(a, abs=0.01, rel=1e-3, device="cpu")
    assert _hpcz.compress(a, "fast", "absolute_or_relative", 1e-3, False, None, "cpu", 0.01) == \
        hpcz.compress(a, abs=0.01, rel=1e-3, bound_rule="or", device="cpu")
    blobs, statuses = _hpcz.compress_batch([a], "fast", "abs_or_rel", 1e-3, False, None, "cpu", 0.01)
    assert statuses == [(0, "")] and blobs[0] == hpcz.compress(a, abs=0.01, rel=1e-3, bound_rule="or", device="cpu")
    with pytest.raises(hpcz.InvalidArgumentError, match="absolute bound"):
        _hpcz.compress(a, "fast", "abs_and_rel", 1e-3, False, None, "cpu", float("nan"))


def test_bad_arguments():
    a = sample()[:4]
    cases = {
        "bound_rule must be 'and' or 'or', not 'xor'": dict(abs=0.1, rel=1e-3, bound_rule="xor"),
        "bound_rule must be 'and' or 'or', not 1": dict(abs=0.1, rel=1e-3, bound_rule=1),
        "bound_rule='and' says how abs= and rel= combine: give both": dict(abs=0.1, bound_rule="and"),
        "bound_rule='or' says how abs= and rel= combine: give both": dict(rel=1e-3, bound_rule="or"),
        "give abs=, rel= or both": dict(),
        "absolute bound must be a finite number >= 0": dict(abs=-1.0, rel=1e-3),
        "error bound must be a finite number >= 0": dict(abs=0.1, rel=float("inf"), bound_rule="or"),
    }
    for message, kw in cases.items():
        for call in (lambda: hpcz.compress(a, device="cpu", **kw), lambda: hpcz.compress_batch([a], device="cpu", **kw)):
            with pytest.raises(hpcz.InvalidArgumentError, match=message) as e:
                call()
            assert e.value.code == 1


def test_codec_classes_refuse_the_same():
    import hpcz.numcodecs
    import hpcz.zarr

    for make in (hpcz.numcodecs.Hpcz, hpcz.zarr.Hpcz):
        with pytest.raises(hpcz.InvalidArgumentError, match="not 'xor'"):
            make(abs=0.1, rel=1e-3, bound_rule="xor")
        with pytest.raises(hpcz.InvalidArgumentError, match="give both"):
            make(abs=0.1, bound_rule="and")
        with pytest.raises(hpcz.InvalidArgumentError, match="give both"):
            make(relative=1e-3, bound_rule="or")


@pytest.mark.parametrize("rule", ["and", "or"])
@pytest.mark.parametrize("mode", ["fast", "ratio", "interp"])
def test_numcodecs_roundtrip_and_config(field, rule, mode):
    import numcodecs

    import hpcz.numcodecs

    _, a = field
    fill = fill_of(a)
    abs_, rel = bounds_for(a, "rel" if rule == "and" else "abs", fill=fill)  # the bound that is the rel part
    codec = numcodecs.get_codec({"id": "hpcz", "abs": abs_, "rel": rel, "bound_rule": rule, "mode": mode, "fill": fill})
    config = codec.get_config()
    assert (config["abs"], config["rel"], config["bound_rule"], config["mode"]) == (abs_, rel, rule, mode)
    again = numcodecs.get_codec(config)
    assert again == codec and again.get_config() == config
    assert hpcz.numcodecs.Hpcz.from_config({k: v for k, v in config.items() if k != "id"}).get_config() == config
    enc = codec.encode(a)
    # 0 (Zarr v2's padding) at an end of the range is left out of it: the array is then coded as abs.
    lo, hi = hpcz.info(enc)["range"]
    assert hpcz.info(enc)["bound_kind"] == ("abs" if 0.0 in (lo, hi) else RULES[rule])
    back = np.asarray(codec.decode(enc)).reshape(a.shape)
    assert violations(a, back, expected(abs_, rel, rule, a, fill), fill=fill) == 0
    # The default rule is "and", written out in the config.
    assert hpcz.numcodecs.Hpcz(abs=abs_, rel=rel).get_config()["bound_rule"] == "and"
    assert "bound_rule" not in hpcz.numcodecs.Hpcz(rel=rel).get_config()  # one bound: the config as before


@pytest.mark.parametrize("rule", ["and", "or"])
def test_numcodecs_leaves_the_zero_padding_out_of_the_range(rule):
    # Zarr v2 pads edge chunks with 0: an end of the range of a temperature chunk. The rel part leaves it
    # out as for rel alone: the chunk is coded as abs = min/max(abs, rel x the range of its other values).
    import hpcz.numcodecs

    a = sample()[:20].copy()
    a[-3:] = 0.0  # a padded edge chunk
    r = value_range(a, skip=0.0)
    abs_, rel = (3e-3 * r, 1e-3) if rule == "and" else (0.3e-3 * r, 1e-3)  # the rel part decides
    codec = hpcz.numcodecs.Hpcz(abs=abs_, rel=rel, bound_rule=rule)
    enc = codec.encode(a)
    head = hpcz.info(enc)
    want = expected(abs_, rel, rule, a, skip=0.0)
    assert head["bound_kind"] == "abs" and head["eb_abs"] == pytest.approx(want, rel=1e-12, abs=0)
    assert head["eb_abs"] <= want * (1 + 1e-15)
    back = np.asarray(codec.decode(enc)).reshape(a.shape)
    assert violations(a, back, want) == 0


@pytest.mark.parametrize("rule", ["and", "or"])
@pytest.mark.parametrize("binds", ["abs", "rel"])
def test_zarr_roundtrip_and_config(tmp_path, rule, binds):
    pytest.importorskip("zarr")
    import hpcz.zarr

    a = sample()
    abs_, rel = bounds_for(a, binds)
    codec = hpcz.zarr.Hpcz(abs=abs_, rel=rel, bound_rule=rule, mode="ratio")
    d = codec.to_dict()
    assert d["configuration"]["abs"] == abs_ and d["configuration"]["rel"] == rel
    assert d["configuration"]["bound_rule"] == rule
    assert hpcz.zarr.Hpcz.from_dict(d) == codec and hpcz.zarr.Hpcz.from_dict(d).to_dict() == d
    # Zarr's padding of the edge chunks (0) left out of each range.
    back = zarr_written(tmp_path, a, codec, d["configuration"])
    # Each chunk's range is within the array's: its bound is at most the array's.
    assert violations(a, back, expected(abs_, rel, rule, a)) == 0


@pytest.mark.parametrize("rule", ["and", "or"])
def test_zarr_v2_with_the_numcodecs_codec(tmp_path, rule):
    zarr = pytest.importorskip("zarr")
    import hpcz.numcodecs

    a = sample()
    abs_, rel = bounds_for(a, "rel" if rule == "and" else "abs")  # the rel part decides
    z = zarr.create_array(str(tmp_path / "v2.zarr"), shape=a.shape, chunks=(30, 48, 48), dtype=a.dtype, zarr_format=2,
                          compressors=hpcz.numcodecs.Hpcz(abs=abs_, rel=rel, bound_rule=rule), filters=None)
    z[...] = a
    back = zarr.open_array(str(tmp_path / "v2.zarr"), mode="r")[...]
    assert violations(a, back, expected(abs_, rel, rule, a)) == 0


def test_data_turns_both_bounds_into_the_arrays_abs_bound():
    import hpcz.numcodecs
    import hpcz.zarr

    a = sample()
    r = 1e-3 * value_range(a)
    for abs_ in (r / 2, r * 2):
        for rule in ("and", "or"):
            want = min(abs_, r) if rule == "and" else max(abs_, r)
            n = hpcz.numcodecs.Hpcz(abs=abs_, rel=1e-3, bound_rule=rule, data=a)
            z = hpcz.zarr.Hpcz(abs=abs_, rel=1e-3, bound_rule=rule, data=a)
            for c in (n, z):
                assert c.rel is None and c.bound_rule is None
                assert c.abs == pytest.approx(want, rel=1e-15, abs=0) and c.abs <= want * (1 + 1e-15)
            assert n.get_config()["abs"] == z.abs and "rel" not in n.get_config()


# --- HDF5 ------------------------------------------------------------------------------------------



def _double(lo, hi):
    return struct.unpack("<d", struct.pack("<II", lo, hi))[0]


def test_hdf5_words():
    from hpcz import _hpcz

    hh = hdf5_module()
    for rule in ("and", "or"):
        words = hh.Hpcz(abs=0.25, rel=1e-3, bound_rule=rule, mode="ratio", fill=-1.0).filter_options
        # Parameters version 2: version 1's words (the rel factor as the bound), then the absolute bound.
        assert len(words) == 10 and words[0] == 2
        assert (words[1], words[2]) == (_hpcz.codecs()["ratio"], _hpcz.bound_modes()[RULES[rule]])
        assert _double(*words[3:5]) == 1e-3 and _double(*words[8:10]) == 0.25
        assert words[5] == 1 and _double(*words[6:8]) == -1.0
        assert hh.Hpcz(0.25, 1e-3, "ratio", False, -1.0, bound_rule=rule).filter_options == words
    # One bound: version 1's 8 words, as before.
    assert hh.Hpcz(abs=0.25).filter_options[0] == 1 and len(hh.Hpcz(rel=1e-3).filter_options) == 8
    assert hh.Hpcz(abs=0.25, rel=1e-3).filter_options == hh.Hpcz(abs=0.25, rel=1e-3, bound_rule="and").filter_options
    for kw in ({"abs": 0.1, "rel": 1e-3, "bound_rule": "xor"}, {"abs": 0.1, "bound_rule": "or"},
               {"abs": float("nan"), "rel": 1e-3}, {"abs": 0.1, "rel": -1.0}):
        with pytest.raises(hpcz.InvalidArgumentError):
            hh.Hpcz(**kw)


@pytest.mark.parametrize("rule", ["and", "or"])
@pytest.mark.parametrize("binds", ["abs", "rel"])
@pytest.mark.parametrize("mode", ["fast", "ratio", "interp"])
def test_hdf5_roundtrip_with_both_bounds(tmp_path, rule, binds, mode):
    h5py = pytest.importorskip("h5py")
    hh = hdf5_module()
    a = sample()
    abs_, rel = bounds_for(a, binds)
    want = expected(abs_, rel, rule, a)
    kw = dict(abs=abs_, rel=rel, bound_rule=rule, mode=mode)
    with h5py.File(tmp_path / "b.h5", "w") as f:
        d = f.create_dataset("x", data=a, chunks=(16, 48, 48), **hh.Hpcz(**kw))  # padded edge chunks
        values = d.id.get_create_plist().get_filter(0)[2]
        assert tuple(values[:10]) == hh.Hpcz(**kw)["compression_opts"]
        assert tuple(values[12:15]) == (16, 48, 48)  # dtype, rank after the 10 user words, then the dims
        assert hh._options(d) == {"mode": mode, "abs": abs_, "rel": rel, "bound_rule": rule, "lossless": False,
                                  "fill": None}
        assert hh._stored_padding(d) == 0.0  # the padding is left out of the rel part's range
        e = f.create_dataset("y", shape=a.shape, dtype=a.dtype, chunks=(16, 48, 48), **hh.Hpcz(**kw))
        hh.write(e, a)  # the batch path: the filter's bytes
    with h5py.File(tmp_path / "b.h5", "r") as f:
        back = f["x"][...]
        assert violations(a, back, want) == 0
        assert np.array_equal(hh.read(f["y"]).view(np.uint8), back.view(np.uint8))
        inner, corner = (0, 0, 0), (96, 48, 96)
        for off in (inner, corner):
            assert f["x"].id.read_direct_chunk(off)[1] == f["y"].id.read_direct_chunk(off)[1], off
        # An inner chunk keeps the combined mode; the corner one (0, the padding, is its minimum) is
        # coded as abs = min/max(abs, rel x the range of its values).
        head = hpcz.info(f["x"].id.read_direct_chunk(inner)[1])
        assert head["bound_kind"] == RULES[rule] and head["version"] == 6
        head = hpcz.info(f["x"].id.read_direct_chunk(corner)[1])
        written = a[96:, 48:96, 96:]
        assert head["bound_kind"] == "abs"
        assert head["eb_abs"] == pytest.approx(expected(abs_, rel, rule, written), rel=1e-12, abs=0)


@pytest.mark.parametrize("rule", ["and", "or"])
def test_hdf5_direct_chunk_write_and_data(tmp_path, rule):
    h5py = pytest.importorskip("h5py")
    hh = hdf5_module()
    a = sample()
    abs_, rel = bounds_for(a, "abs")
    with h5py.File(tmp_path / "w.h5", "w") as f:
        d = f.create_dataset("x", shape=a.shape, dtype=a.dtype, chunks=(30, 64, 128),
                             **hh.Hpcz(abs=abs_, rel=rel, bound_rule=rule, mode="ratio"))
        for k in range(0, 100, 30):  # the last chunk is 10 rows: padded
            hh.write_chunk(d, (k, 0, 0), a[k:k + 30])
        words = hh.Hpcz(abs=abs_, rel=rel, bound_rule=rule, data=a)["compression_opts"]
        assert len(words) == 8 and words[2] == hpcz._hpcz.bound_modes()["abs"]  # data=: a plain abs bound
        assert _double(*words[3:5]) == pytest.approx(expected(abs_, rel, rule, a), rel=1e-15, abs=0)
    with h5py.File(tmp_path / "w.h5", "r") as f:
        assert violations(a, f["x"][...], expected(abs_, rel, rule, a)) == 0



def _words(version, kind, bound=1e-3, abs_bound=None, n=None):
    """cd_values as a user gives them: version, mode fast, kind, bound, no flags, fill 0 (and abs_bound)."""
    w = [version, 1, kind] + double_words(bound) + [0] + double_words(0.0)
    if abs_bound is not None:
        w += double_words(abs_bound)
    return tuple(w[:n] if n else w)


@pytest.mark.parametrize("words, reason", [
    (_words(1, 6), "need parameters version 2"), (_words(1, 7, abs_bound=0.1), "need parameters version 2"),
    (_words(2, 6), "need their absolute bound"), (_words(2, 7, abs_bound=0.1, n=9), "given by half"),
    (_words(2, 6, abs_bound=float("nan")), "absolute bound must be a finite number"),
    (_words(2, 7, abs_bound=-1.0), "absolute bound must be a finite number"),
    (_words(3, 1), "unknown version"),
])
def test_hdf5_invalid_version_2_words_fail_at_create_dataset(tmp_path, words, reason):
    refused_at_create_dataset(tmp_path / "w.h5", words, reason)


def test_hdf5_version_2_words_with_one_bound(tmp_path):
    # Version 2 with kind abs or rel: the absolute bound is unused; version 1's 8 words still read as before.
    h5py = pytest.importorskip("h5py")
    hh = hdf5_module()
    a = np.linspace(0, 1, 1000, dtype=np.float32)
    with h5py.File(tmp_path / "v.h5", "w") as f:
        for name, words in (("v2", _words(2, 1, bound=1e-3, abs_bound=0.0)), ("v2n8", _words(2, 1, bound=1e-3)),
                            ("v1", _words(1, 1, bound=1e-3))):
            d = f.create_dataset(name, data=a, chunks=(300,), compression=hh.FILTER_ID, compression_opts=words)
            assert hh._options(d) == {"mode": "fast", "abs": 1e-3, "lossless": False, "fill": None}
            assert hh._stored_padding(d) is None  # an abs bound: no padding words
    with h5py.File(tmp_path / "v.h5", "r") as f:
        for name in ("v2", "v2n8", "v1"):
            assert violations(a, f[name][...], 1e-3) == 0, name


# --- Arrays on the GPU (skipped without cupy and a GPU) ------------------------------------------------


class _Interface:
    """A device array behind a plain __cuda_array_interface__: the general device path (test_gpu.py)."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = a.__cuda_array_interface__


@pytest.mark.parametrize("rule", ["and", "or"])
@pytest.mark.parametrize("mode", ["fast", "ratio", "interp"])
def test_device_arrays_give_the_host_archives(field, rule, mode):
    cupy = pytest.importorskip("cupy")
    if not hpcz.gpu_available():
        pytest.skip("no GPU")
    _, a = field
    fill = fill_of(a)
    abs_, rel = bounds_for(a, "abs" if rule == "and" else "rel", fill=fill)  # the other one binds under "or"
    kw = dict(abs=abs_, rel=rel, bound_rule=rule, mode=mode, fill=fill)
    host = hpcz.compress(a, device="cpu", **kw)
    d = cupy.asarray(a)
    assert hpcz.compress(d, **kw).get().tobytes() == host  # one array on its device
    parts = [d, d.reshape(-1)[: d.size // 2]]
    want = [host, hpcz.compress(a.reshape(-1)[: a.size // 2], device="cpu", **kw)]
    assert [x.get().tobytes() for x in hpcz.compress_batch(parts, **kw)] == want  # cupy batches (C++)
    assert [x.get().tobytes() for x in hpcz.compress_batch([_Interface(p) for p in parts], **kw)] == want  # general
    assert violations(a, hpcz.decompress(host), expected(abs_, rel, rule, a, fill), fill=fill) == 0
