"""psnr= and nrmse=: quality targets (the library's BoundMode::psnr and nrmse, bound kinds 4 and 5). The
array's PSNR, 20 log10(range / RMSE) over its finite, non-fill values (range = max - min), is at least
psnr dB, or its RMSE / range at most nrmse; every codec. Checked here against the PSNR measured
independently in long double; hpcz.info's "psnr_achieved" is a lower bound of it, within 0.1 dB.
Whole arrays only in the library: compress_batch codes the arrays one by one, the codec classes each
chunk on its own (the target per chunk, over the chunk's own range, its padding included)."""

import json
import math
import struct

import numpy as np
import pytest

import hpcz
from conftest import (ROOT, double_words, hdf5_module, refused_at_create_dataset, refused_by_compress_and_batch,
                      specials_kept, violations)

MODES = ["fast", "ratio", "interp"]
TARGETS = [("psnr", 40.0), ("psnr", 70.0), ("nrmse", 1e-4)]
FILL = -1e10  # the masked fields' fill value (as test_hdf5.py)


def sample():
    return np.fromfile(ROOT / "data" / "climate-ncar_csm_b003_ts_100x64x128_f32.bin", np.float32).reshape(100, 64, 128)


def fill_of(a):
    return FILL if np.any(a == a.dtype.type(FILL)) else None


def target_db(kind, value):
    """The PSNR (dB) a target asks for."""
    return value if kind == "psnr" else -20 * math.log10(value)


def measured(x, y, fill=None):
    """(PSNR dB, NRMSE) of y against x over x's finite, non-fill values, in long double: range = max - min
    of those values, RMSE of y - x over them. (inf, 0.0) where every one of them is exact."""
    x = np.asarray(x).reshape(-1)
    y = np.asarray(y).reshape(-1)
    assert x.dtype == y.dtype and x.size == y.size
    keep = np.isfinite(x)
    if fill is not None:
        keep &= x != x.dtype.type(fill)
    xs, ys = x[keep].astype(np.longdouble), y[keep].astype(np.longdouble)
    mse = np.mean((ys - xs) ** 2)
    if mse == 0:
        return math.inf, 0.0
    rng = xs.max() - xs.min()
    return float(20 * np.log10(rng) - 10 * np.log10(mse)), float(np.sqrt(mse) / rng)




def check_target(x, blob, kind, value, fill=None, mode=None):
    """The archive meets its target on x, by the measure here; its header says so. The decoded values."""
    head = hpcz.info(blob)
    assert head["bound_kind"] == head["bound_mode"] == kind
    assert head["bound"] == value and head["version"] == 6
    if mode is not None:
        assert head["mode"] == mode
    y = hpcz.decompress(blob)
    assert y.shape == x.shape and y.dtype == x.dtype
    psnr, nrmse = measured(x, y, fill)
    want = target_db(kind, value)
    assert psnr >= want, (psnr, want)
    if kind == "nrmse":
        assert nrmse <= value * (1 + 1e-9), (nrmse, value)
    got = head["psnr_achieved"]
    # Recorded rounded down to 0.01 dB: a lower bound of the PSNR measured, at least the target (as
    # rounded), and close to it.
    assert got <= psnr + 1e-9, (got, psnr)
    assert got >= math.floor(want * 100) / 100, (got, want)
    if math.isfinite(psnr):
        assert got >= psnr - 0.1, (got, psnr)
    else:
        assert got == math.inf
    assert violations(x, y, head["eb_abs"], fill) == 0  # every value within the archive's eb_abs too
    assert specials_kept(x, y, fill)
    return y


# --- hpcz.compress --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind, value", TARGETS, ids=lambda v: str(v))
def test_every_field_meets_the_target(field, mode, kind, value):
    name, a = field
    fill = fill_of(a)
    blob = hpcz.compress(a, mode=mode, fill=fill, device="cpu", **{kind: value})
    check_target(a, blob, kind, value, fill, mode)
    assert hpcz.compress(a, mode=mode, fill=fill, **{kind: value}) == blob  # device="auto": the same bytes


@pytest.mark.parametrize("mode", MODES)
def test_specials_and_fill(mode):
    # NaN, Inf and the fill value come back bit for bit and are left out of the range and the PSNR.
    for dtype in (np.float32, np.float64):
        a = sample()[:40].astype(dtype)
        a[0, 0, :7] = [np.nan, np.inf, -np.inf, -1e30, -1e30, np.nan, 1e30]
        a[1, :3, :3] = -999.0
        for kind, value in TARGETS:
            blob = hpcz.compress(a, mode=mode, fill=-999.0, device="cpu", **{kind: value})
            check_target(a, blob, kind, value, fill=-999.0)
            assert hpcz.info(blob)["fill"] == -999.0
            assert hpcz.info(blob)["range"] == (float(a[np.isfinite(a) & (a != -999.0)].min()),
                                                float(a[np.isfinite(a) & (a != -999.0)].max()))


def test_lossless_stage():
    a = sample()
    for kind, value in TARGETS:
        blob = hpcz.compress(a, mode="ratio", lossless=True, device="cpu", **{kind: value})
        assert hpcz.info(blob)["lossless"]
        check_target(a, blob, kind, value)


def test_exact_arrays_record_infinity():
    # Constant arrays (a range of 0) and arrays of specials only: every value exact, psnr_achieved inf.
    for a in (np.zeros(1000, np.float32), np.full((10, 10), 3.5), np.full(5, np.nan, np.float32)):
        for kind, value in TARGETS:
            blob = hpcz.compress(a, device="cpu", **{kind: value})
            head = hpcz.info(blob)
            assert head["psnr_achieved"] == math.inf and head["bound_kind"] == kind
            assert hpcz.info(blob, verify=False)["psnr_achieved"] == math.inf
            assert np.array_equal(hpcz.decompress(blob).view(np.uint8), a.view(np.uint8))


def test_a_higher_target_costs_more():
    a = sample()
    sizes = [len(hpcz.compress(a, psnr=p, mode="ratio", device="cpu")) for p in (30, 50, 70, 90)]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    # nrmse E is the target of psnr -20 log10(E): the same coding, only the header's mode and bound differ.
    p, n = hpcz.info(hpcz.compress(a, psnr=40.0, device="cpu")), hpcz.info(hpcz.compress(a, nrmse=0.01, device="cpu"))
    assert (p["bound_kind"], n["bound_kind"]) == ("psnr", "nrmse") and p["eb_abs"] == n["eb_abs"]


# --- info ------------------------------------------------------------------------------------------


def test_info_psnr_achieved_only_for_targets():
    a = sample()
    blob = hpcz.compress(a, psnr=40, device="cpu")
    head = hpcz.info(blob)
    assert isinstance(head["psnr_achieved"], float)
    assert hpcz.info(blob, verify=False)["psnr_achieved"] == head["psnr_achieved"]
    assert head["psnr_achieved"] == round(head["psnr_achieved"], 2)  # 0.01 dB steps
    for kw in (dict(abs=0.1), dict(rel=1e-3), dict(pw_rel=1e-3), dict(abs=0.1, rel=1e-3),
               dict(abs=0.1, rel=1e-3, bound_rule="or")):
        other = hpcz.info(hpcz.compress(a, device="cpu", **kw))
        assert "psnr_achieved" not in other, kw  # absent, as in `hpcz info --json`


def test_info_matches_the_cli(tmp_path):
    import subprocess

    import hpcz.__main__

    cli = hpcz.__main__.cli_path()
    if not cli.is_file():
        pytest.skip("no bundled hpcz CLI (a source tree)")
    for a, kind, value in ((sample(), "psnr", 40.0), (sample(), "nrmse", 1e-4), (np.zeros(64, np.float32), "psnr", 60.0)):
        blob = hpcz.compress(a, device="cpu", **{kind: value})
        path = tmp_path / "a.hpcz"
        path.write_bytes(blob)
        out = subprocess.run([str(cli), "info", "--json", str(path)], check=True, capture_output=True, text=True).stdout
        shell, py = json.loads(out), hpcz.info(blob)
        assert sorted(shell) == sorted(py)
        got = py["psnr_achieved"]
        assert shell["psnr_achieved"] == (None if got == math.inf else got)  # JSON has no infinity
        assert shell["bound_mode"] == kind and shell["bound"] == value


# --- compress_batch ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind, value", TARGETS, ids=lambda v: str(v))
def test_batch_codes_each_array_as_compress(kind, value):
    a = sample()
    parts = [a, np.ascontiguousarray(a[:10]), a.astype(np.float64)[50:], np.ascontiguousarray(a.reshape(-1)[:1000])]
    for mode in MODES:
        blobs = hpcz.compress_batch(parts, mode=mode, device="cpu", **{kind: value})
        assert blobs == [hpcz.compress(p, mode=mode, device="cpu", **{kind: value}) for p in parts]
        for p, blob, back in zip(parts, blobs, hpcz.decompress_batch(blobs, device="cpu")):
            check_target(p, blob, kind, value, mode=mode)  # each array's own target, over its own range
            assert np.array_equal(back.view(np.uint8), hpcz.decompress(blob).view(np.uint8))
    assert hpcz.compress_batch([], psnr=40) == []


def test_batch_errors_per_item():
    a = sample()[:10]
    items = [a, np.arange(10, dtype=np.complex64), a.reshape(-1), np.zeros((1, 1, 1, 1, 2), np.float32)]
    got = hpcz.compress_batch(items, psnr=40, device="cpu", errors="return")
    assert got[0] == hpcz.compress(a, psnr=40, device="cpu")
    assert got[2] == hpcz.compress(a.reshape(-1), psnr=40, device="cpu")
    for k, why in ((1, "not complex64"), (3, "1 to 4 dimensions")):
        assert isinstance(got[k], hpcz.InvalidArgumentError) and got[k].code == 1
        assert str(got[k]).startswith(f"item {k}: ") and why in str(got[k])
    with pytest.raises(hpcz.InvalidArgumentError, match="item 1: .*not complex64"):
        hpcz.compress_batch(items, nrmse=1e-3, device="cpu")
    with pytest.raises(hpcz.InvalidArgumentError, match="errors must be"):
        hpcz.compress_batch([a], psnr=40, errors="ignore")


def test_the_library_refuses_batches():
    # What the Python batch works around: the library codes targets over whole arrays only.
    from hpcz import _hpcz

    a = sample()[:4]
    for kind in ("psnr", "nrmse"):
        blobs, statuses = _hpcz.compress_batch([a], "fast", kind, 0.5, False, None, "cpu")
        assert blobs == [None] and statuses[0][0] == 1 and "over a whole array" in statuses[0][1]


# --- the module's words -----------------------------------------------------------------------------


def test_the_modules_bound_kinds():
    from hpcz import _hpcz

    a = sample()[:10]
    assert _hpcz.bound_modes()["psnr"] == 4 and _hpcz.bound_modes()["nrmse"] == 5
    assert _hpcz.parse_bound_mode("psnr") == "psnr" and _hpcz.parse_bound_mode("nrmse") == "nrmse"
    assert _hpcz.compress(a, "ratio", "psnr", 50.0, False, None, "cpu") == hpcz.compress(a, psnr=50, mode="ratio",
                                                                                        device="cpu")
    assert _hpcz.compress(a, "fast", "nrmse", 1e-3, False, None, "cpu", 0.0) == hpcz.compress(a, nrmse=1e-3,
                                                                                              device="cpu")


# --- errors ---------------------------------------------------------------------------------------------


BAD_PSNR = [0, 0.0, -1, -40.0, float("nan"), float("inf"), -float("inf"), "x", [40], True]
BAD_NRMSE = [0, 0.0, 1, 1.0, -1e-3, 1.5, float("nan"), float("inf"), "x", [1e-3], True]


def bad_argument_cases():
    cases = [("psnr= \\(a quality target\\) is a bound of its own: give it without rel=", dict(psnr=40, rel=1e-3)),
             ("give it without abs=", dict(psnr=40, abs=0.1)),
             ("give it without abs= and rel= and bound_rule=", dict(psnr=40, abs=0.1, rel=1e-3, bound_rule="or")),
             ("give it without bound_rule=", dict(nrmse=1e-3, bound_rule="and")),
             ("nrmse= \\(a quality target\\) is a bound of its own: give it without rel=", dict(nrmse=1e-3, rel=1e-3)),
             ("give it without nrmse=", dict(psnr=40, nrmse=1e-3)),
             ("pw_rel= \\(pointwise relative\\) is a bound of its own: give it without psnr=", dict(psnr=40, pw_rel=1e-3)),
             ("give it without nrmse=", dict(pw_rel=1e-3, nrmse=1e-3)),
             ("mode must be", dict(psnr=40, mode="best"))]
    cases += [("psnr must be a finite number of dB above 0", dict(psnr=b)) for b in BAD_PSNR]
    cases += [("nrmse must be above 0 and below 1", dict(nrmse=b)) for b in BAD_NRMSE]
    return cases


@pytest.mark.parametrize("message, kw", bad_argument_cases())
def test_bad_arguments(message, kw):
    refused_by_compress_and_batch(hpcz, sample()[:4], kw, message)


def test_no_bound_names_the_targets():
    with pytest.raises(hpcz.InvalidArgumentError, match="psnr= or nrmse="):
        hpcz.compress(sample()[:4])


def test_the_library_refuses_the_same():
    from hpcz import _hpcz

    a = sample()[:4]
    for b in (0.0, -1.0, float("inf")):
        with pytest.raises(hpcz.InvalidArgumentError, match="PSNR target must be a finite number of dB above 0|finite"):
            _hpcz.compress(a, "fast", "psnr", b, False, None, "cpu")
    for b in (0.0, 1.0, 2.0):
        with pytest.raises(hpcz.InvalidArgumentError, match="NRMSE target must be above 0 and below 1"):
            _hpcz.compress(a, "interp", "nrmse", b, False, None, "cpu")


def _makers():
    import hpcz.numcodecs
    import hpcz.zarr

    makers = [hpcz.numcodecs.Hpcz, hpcz.zarr.Hpcz]
    try:
        import hpcz.hdf5

        makers.append(hpcz.hdf5.Hpcz)
    except (ImportError, hpcz.BackendUnavailableError):
        pass
    return makers


@pytest.mark.parametrize("message, kw", bad_argument_cases())
def test_codec_classes_refuse_the_same(message, kw):
    for make in _makers():
        with pytest.raises(hpcz.InvalidArgumentError, match=message):
            make(**kw)
    for make in _makers():  # hdf5plugin's spellings are abs= and rel= too
        with pytest.raises(hpcz.InvalidArgumentError, match="give it without abs="):
            make(psnr=40, absolute=0.1)
        with pytest.raises(hpcz.InvalidArgumentError, match="give it without rel="):
            make(nrmse=1e-3, relative=1e-3)


# --- numcodecs and Zarr ---------------------------------------------------------------------------------


def chunk_regions(shape, chunks):
    import itertools

    for start in itertools.product(*[range(0, n, c) for n, c in zip(shape, chunks)]):
        yield tuple(slice(s, min(s + c, n)) for s, c, n in zip(start, chunks, shape))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind, value", TARGETS, ids=lambda v: str(v))
def test_numcodecs_roundtrip_and_config(field, mode, kind, value):
    import numcodecs

    import hpcz.numcodecs

    _, a = field
    fill = fill_of(a)
    codec = numcodecs.get_codec({"id": "hpcz", "mode": mode, "fill": fill, kind: value})
    config = codec.get_config()
    assert config == {"id": "hpcz", "mode": mode, "lossless": False, "fill": fill, kind: value}
    assert not {"abs", "rel", "bound_rule", "pw_rel", "psnr", "nrmse"} - {kind} & set(config)
    again = numcodecs.get_codec(config)
    assert again == codec and again.get_config() == config
    assert hpcz.numcodecs.Hpcz.from_config({k: v for k, v in config.items() if k != "id"}).get_config() == config
    assert f"{kind}={value!r}" in repr(codec) and "abs=" not in repr(codec)
    enc = codec.encode(a)
    assert enc == hpcz.compress(a, mode=mode, fill=fill, **{kind: value})  # no padding rule: the plain archive
    check_target(a, enc, kind, value, fill, mode)
    out = np.empty_like(a)
    codec.decode(enc, out=out)
    assert np.array_equal(out.view(np.uint8), hpcz.decompress(enc).view(np.uint8))


def test_zarr_edge_chunks_meet_the_target_with_fill(tmp_path):
    """zarr pads edge chunks with the array's fill_value, counted in the chunk's measure (the module's doc):
    with fill= that value the padding is kept exactly and left out, and each chunk's written values meet
    the target over their own range; without it an edge chunk of the field padded with 0 misses it."""
    zarr = pytest.importorskip("zarr")
    import hpcz.zarr

    a = sample()
    chunks = (30, 48, 48)  # not dividing (100, 64, 128): the last chunks along every axis are padded
    worst = {}
    for fill in (None, 0.0):
        path = tmp_path / f"z{fill}.zarr"
        z = zarr.create_array(str(path), shape=a.shape, chunks=chunks, dtype="float32",
                              serializer=hpcz.zarr.Hpcz(mode="fast", psnr=40.0, fill=fill), compressors=None,
                              fill_value=0.0)
        z[...] = a
        back = zarr.open_array(str(path), mode="r")[...]
        worst[fill] = min(measured(a[sel], back[sel])[0] for sel in chunk_regions(a.shape, chunks))
    assert worst[0.0] >= 40.0 and worst[None] < 35.0, worst


def test_numcodecs_data_and_position():
    import hpcz.numcodecs

    a = sample()
    for kind, value in TARGETS:
        codec = hpcz.numcodecs.Hpcz(data=a, **{kind: value})  # a target per chunk: data= leaves it as it is
        assert getattr(codec, kind) == value and codec.abs is None and codec.rel is None
        assert codec.get_config() == hpcz.numcodecs.Hpcz(**{kind: value}).get_config()
    # Keywords only: by position the class takes mode, abs, rel, lossless, fill, as before.
    assert hpcz.numcodecs.Hpcz("ratio", None, None, True, None, psnr=50).get_config() == \
        {"id": "hpcz", "mode": "ratio", "lossless": True, "fill": None, "psnr": 50.0}
    with pytest.raises(hpcz.InvalidArgumentError, match="give it without abs="):
        hpcz.numcodecs.Hpcz("fast", 0.01, psnr=40)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind, value", TARGETS, ids=lambda v: str(v))
def test_zarr_roundtrip_and_config(tmp_path, mode, kind, value):
    zarr = pytest.importorskip("zarr")
    import hpcz.zarr

    a = sample()
    codec = hpcz.zarr.Hpcz(mode=mode, **{kind: value})
    d = codec.to_dict()
    assert d == {"name": "hpcz", "configuration": {"mode": mode, "lossless": False, kind: value}}
    assert hpcz.zarr.Hpcz.from_dict(d) == codec and hpcz.zarr.Hpcz.from_dict(d).to_dict() == d
    assert getattr(codec, kind) == value and codec.abs is None and codec.rel is None and codec.pw_rel is None
    chunks = (25, 32, 64)  # dividing the shape: each chunk's values are the array's, no padding
    with zarr.config.set({"codec_pipeline.batch_size": 16}):  # several chunks a compress_batch call
        z = zarr.create_array(str(tmp_path / "z.zarr"), shape=a.shape, chunks=chunks, dtype="float32",
                              serializer=codec, compressors=None, fill_value=0.0)
        z[...] = a
    meta = json.loads((tmp_path / "z.zarr" / "zarr.json").read_text())
    assert meta["codecs"][0] == {"name": "hpcz", "configuration": d["configuration"]}
    back = zarr.open_array(str(tmp_path / "z.zarr"), mode="r")[...]
    want = target_db(kind, value)
    for sel in chunk_regions(a.shape, chunks):  # the target holds per chunk, over the chunk's own range
        assert measured(a[sel], back[sel])[0] >= want, sel
    n = 0
    for p in (tmp_path / "z.zarr" / "c").rglob("*"):
        if p.is_file():
            head = hpcz.info(p.read_bytes())
            assert head["bound_kind"] == kind and head["mode"] == mode and head["psnr_achieved"] >= math.floor(want * 100) / 100
            n += 1
    assert n == 4 * 2 * 2


def test_zarr_padded_edge_chunks(tmp_path):
    # Chunks that do not divide the shape: zarr pads the edge ones with the fill_value, and the target
    # holds over each chunk as coded (its padding included).
    zarr = pytest.importorskip("zarr")
    import hpcz.zarr

    a = sample()
    chunks = (30, 48, 48)
    z = zarr.create_array(str(tmp_path / "e.zarr"), shape=a.shape, chunks=chunks, dtype="float32",
                          serializer=hpcz.zarr.Hpcz(psnr=60, mode="interp", data=a), compressors=None, fill_value=250.0)
    z[...] = a
    back = zarr.open_array(str(tmp_path / "e.zarr"), mode="r")[...]
    for sel in chunk_regions(a.shape, chunks):
        padded = np.full(chunks, 250.0, np.float32)
        padded[tuple(slice(0, s.stop - s.start) for s in sel)] = a[sel]
        key = "/".join(str(s.start // c) for s, c in zip(sel, chunks))
        blob = (tmp_path / "e.zarr" / "c" / key).read_bytes()
        check_target(padded, blob, "psnr", 60.0, mode="interp")
        assert np.array_equal(hpcz.decompress(blob)[tuple(slice(0, s.stop - s.start) for s in sel)], back[sel])


def test_zarr_v2_with_the_numcodecs_codec(tmp_path):
    zarr = pytest.importorskip("zarr")
    import hpcz.numcodecs

    a = sample()
    chunks = (50, 32, 64)
    z = zarr.create_array(str(tmp_path / "v2.zarr"), shape=a.shape, chunks=chunks, dtype=a.dtype, zarr_format=2,
                          compressors=hpcz.numcodecs.Hpcz(nrmse=1e-4, mode="ratio"), filters=None)
    z[...] = a
    meta = json.loads((tmp_path / "v2.zarr" / ".zarray").read_text())
    assert meta["compressor"]["nrmse"] == 1e-4 and "rel" not in meta["compressor"] and "psnr" not in meta["compressor"]
    back = zarr.open_array(str(tmp_path / "v2.zarr"), mode="r")[...]
    for sel in chunk_regions(a.shape, chunks):
        assert measured(a[sel], back[sel])[1] <= 1e-4 * (1 + 1e-9), sel


# --- HDF5 -----------------------------------------------------------------------------------------------




def test_hdf5_words():
    from hpcz import _hpcz

    hh = hdf5_module()
    for kind, value, number in (("psnr", 40.0, 4), ("nrmse", 1e-4, 5)):
        assert _hpcz.bound_modes()[kind] == number
        words = hh.Hpcz(**{kind: value}).filter_options
        # Parameters version 1: the bound kind 4 or 5, the target in words 3 and 4.
        assert words == tuple([1, _hpcz.codecs()["fast"], number] + double_words(value) + [0] + double_words(0.0))
        assert hh.Hpcz(mode="interp", fill=-1.0, lossless=True, **{kind: value}).filter_options == \
            tuple([1, 3, number] + double_words(value) + [3] + double_words(-1.0))
        assert hh.Hpcz(data=sample(), **{kind: value}).filter_options == words  # data=: a target per chunk
        with pytest.raises(hpcz.InvalidArgumentError, match="not complex64"):
            hh.Hpcz(data=np.arange(4, dtype=np.complex64), **{kind: value})


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind, value", TARGETS, ids=lambda v: str(v))
def test_hdf5_roundtrip(tmp_path, mode, kind, value):
    h5py = pytest.importorskip("h5py")
    hh = hdf5_module()
    a = sample()
    opts = hh.Hpcz(mode=mode, **{kind: value})
    want = target_db(kind, value)
    with h5py.File(tmp_path / "q.h5", "w") as f:
        d = f.create_dataset("x", data=a, chunks=(25, 32, 64), **opts)  # dividing the shape
        values = d.id.get_create_plist().get_filter(0)[2]
        assert tuple(values[:8]) == opts["compression_opts"]
        assert len(values) == 8 + 2 + 3  # dtype, rank, dims: no padding words (no rel padding rule)
        assert hh._options(d) == {"mode": mode, kind: value, "lossless": False, "fill": None}
        e = f.create_dataset("y", shape=a.shape, dtype=a.dtype, chunks=(25, 32, 64), **opts)
        hh.write(e, a)  # the batch path (compress_batch: chunk by chunk): the filter's bytes
        g = f.create_dataset("z", shape=a.shape, dtype=a.dtype, chunks=(30, 64, 128), fillvalue=-5.0, **opts)
        for k in range(0, 100, 30):  # the last chunk is 10 rows: padded with the fill value
            hh.write_chunk(g, (k, 0, 0), a[k:k + 30])
        f.create_dataset("w", data=a, chunks=(30, 64, 128), fillvalue=-5.0, **opts)  # the filter pads the same
    with h5py.File(tmp_path / "q.h5", "r") as f:
        back = f["x"][...]
        assert np.array_equal(hh.read(f["y"]).view(np.uint8), back.view(np.uint8))
        for sel in chunk_regions(a.shape, (25, 32, 64)):
            assert measured(a[sel], back[sel])[0] >= want, sel
            off = tuple(s.start for s in sel)
            blob = f["x"].id.read_direct_chunk(off)[1]
            assert blob == f["y"].id.read_direct_chunk(off)[1], off
            assert hpcz.info(blob)["bound_kind"] == kind and hpcz.info(blob)["mode"] == mode
        for k in range(0, 100, 30):
            blob = f["z"].id.read_direct_chunk((k, 0, 0))[1]
            assert blob == f["w"].id.read_direct_chunk((k, 0, 0))[1], k
            padded = np.full((30, 64, 128), -5.0, np.float32)
            padded[:min(30, 100 - k)] = a[k:k + 30]
            check_target(padded, blob, kind, value, mode=mode)  # per chunk, its padding included
        assert np.array_equal(f["z"][...].view(np.uint8), hh.read(f["z"]).view(np.uint8))


def _words(kind=4, bound=40.0, mode=1, n=None):
    w = [1, mode, kind] + double_words(bound) + [0] + double_words(0.0)
    return tuple(w[:n] if n else w)


@pytest.mark.parametrize("words, reason", [
    (_words(bound=0.0), "PSNR target .* above 0"), (_words(bound=-3.0), "finite number"),
    (_words(bound=float("inf")), "finite number"), (_words(kind=5, bound=0.0), "NRMSE target .* above 0 and below 1"),
    (_words(kind=5, bound=1.0), "above 0 and below 1"), (_words(kind=5, bound=2.5), "above 0 and below 1"),
])
def test_hdf5_invalid_words_fail_at_create_dataset(tmp_path, words, reason):
    refused_at_create_dataset(tmp_path / "w.h5", words, reason)


def test_hdf5_words_by_hand(tmp_path):
    # Kinds 4 and 5 given as words (h5py, other programs), every mode.
    h5py = pytest.importorskip("h5py")
    hh = hdf5_module()
    a = sample()[:20]
    with h5py.File(tmp_path / "h.h5", "w") as f:
        for kind, number, value in (("psnr", 4, 55.0), ("nrmse", 5, 1e-3)):
            for mode in (1, 2, 3):
                d = f.create_dataset(f"{kind}{mode}", data=a, chunks=(20, 64, 128), compression=hh.FILTER_ID,
                                     compression_opts=_words(kind=number, bound=value, mode=mode))
                assert hh._options(d)[kind] == value
    with h5py.File(tmp_path / "h.h5", "r") as f:
        for kind, value in (("psnr", 55.0), ("nrmse", 1e-3)):
            for mode in (1, 2, 3):
                blob = f[f"{kind}{mode}"].id.read_direct_chunk((0, 0, 0))[1]
                check_target(a, blob, kind, value, mode=MODES[mode - 1])


# --- Arrays on the GPU (skipped without cupy and a GPU) ------------------------------------------------


class _Interface:
    """A device array behind a plain __cuda_array_interface__: the general device path (test_gpu.py)."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = a.__cuda_array_interface__


@pytest.mark.parametrize("kind, value", TARGETS, ids=lambda v: str(v))
def test_device_arrays_are_coded_on_the_host(kind, value):
    # The device calls refuse targets: a device array is copied to the host and coded there, and its
    # archive comes back to its device (a cupy uint8 array), the host archive's bytes.
    cupy = pytest.importorskip("cupy")
    if not hpcz.gpu_available():
        pytest.skip("no GPU")
    a = sample()
    for x in (a, a.astype(np.float64)):
        for mode in MODES:
            host = hpcz.compress(x, mode=mode, device="cpu", **{kind: value})
            d = cupy.asarray(x)
            got = hpcz.compress(d, mode=mode, **{kind: value})
            assert isinstance(got, cupy.ndarray) and got.dtype == cupy.uint8 and got.device.id == d.device.id
            assert got.get().tobytes() == host
            assert hpcz.compress(_Interface(d), mode=mode, **{kind: value}).get().tobytes() == host
            assert hpcz.compress(x, mode=mode, device="gpu", **{kind: value}) == host  # a host array, GPU backend
            parts = [d, d.reshape(-1)[: d.size // 2]]
            want = [host, hpcz.compress(x.reshape(-1)[: x.size // 2], mode=mode, device="cpu", **{kind: value})]
            assert [b.get().tobytes() for b in hpcz.compress_batch(parts, mode=mode, **{kind: value})] == want
            check_target(x, host, kind, value, mode=mode)
            back = hpcz.decompress(got)
            assert np.array_equal(cupy.asnumpy(back).view(np.uint8), hpcz.decompress(host).view(np.uint8))


def test_device_arrays_refuse_what_the_device_path_refuses():
    cupy = pytest.importorskip("cupy")
    if not hpcz.gpu_available():
        pytest.skip("no GPU")
    d = cupy.asarray(sample()[:4])
    with pytest.raises(hpcz.InvalidArgumentError, match="lossless=True is for host arrays"):
        hpcz.compress(d, psnr=40, lossless=True)
    with pytest.raises(hpcz.InvalidArgumentError, match="device='cpu'"):
        hpcz.compress(d, psnr=40, device="cpu")
    with pytest.raises(hpcz.InvalidArgumentError, match="all host arrays or all device arrays"):
        hpcz.compress_batch([d, sample()[:4]], psnr=40)
    with pytest.raises(hpcz.InvalidArgumentError, match="give it without abs="):
        hpcz.compress_batch([d], psnr=40, abs=0.1)
    with pytest.raises(hpcz.InvalidArgumentError, match="values must be float32, float64, float16"):
        hpcz.compress(cupy.arange(10, dtype=cupy.complex64), psnr=40)  # no type hpcz codes


def test_the_keywords_in_one_order():
    # psnr and nrmse after pw_rel, keyword only, in compress, compress_batch and every codec class.
    import inspect

    import hpcz.numcodecs
    import hpcz.zarr

    tail = ["bound_rule", "pw_rel", "psnr", "nrmse"]
    for f in [hpcz.compress, hpcz.compress_batch] + [m.__init__ for m in _makers()]:
        params = inspect.signature(f).parameters
        assert [p for p in params if p in tail] == tail, f
        assert all(params[p].kind == params[p].KEYWORD_ONLY for p in ("psnr", "nrmse")), f
