"""pw_rel=: the pointwise-relative bound (the library's BoundMode::pw_rel, bound kind 3). Every finite,
nonzero value x comes back as x' with |x' - x| <= pw_rel x |x| (checked exactly, with fractions for the
values near the bound), zeros (-0.0 too), NaN and Inf bit for bit, signs kept; through hpcz.compress,
compress_batch, the numcodecs and Zarr v3 codecs and the HDF5 filter. The fast codec codes the values' bits
(format version 6); the ratio and interp codecs code log2 |x| (version 8, pw_rel >= 1e-6, on the CPU). No
range is involved, so the padding rules of the rel bounds leave it alone."""

import json
import struct
from fractions import Fraction

import numpy as np
import pytest

import hpcz
from conftest import ROOT, double_words, hdf5_module, refused_at_create_dataset, refused_by_compress_and_batch, zarr_written

RS = [1e-2, 1e-3, 1e-4]
FILL = -1e10  # the masked fields' fill value (as test_hdf5.py)


def sample():
    return np.fromfile(ROOT / "data" / "climate-ncar_csm_b003_ts_100x64x128_f32.bin", np.float32).reshape(100, 64, 128)


def pw_violations(x, y, r, fill=None):
    """Values of y that break the pointwise bound r on x: finite nonzero x off by more than r x |x|
    (checked exactly: float64 first, fractions for those within 1e-9 of the bound and for the tiny ones
    whose r x |x| float64 rounds coarsely), a sign changed, or a value that should come back bit for bit
    (0, -0, NaN, Inf, the fill value) that does not."""
    x = np.asarray(x).reshape(-1)
    y = np.asarray(y).reshape(-1)
    assert x.dtype == y.dtype and x.size == y.size
    bits = np.uint32 if x.dtype == np.float32 else np.uint64
    exact = ~np.isfinite(x) | (x == 0)
    if fill is not None:
        exact |= x == x.dtype.type(fill)
    bad = int(np.count_nonzero(x[exact].view(bits) != y[exact].view(bits)))
    xs, ys = x[~exact], y[~exact]
    finite = np.isfinite(ys)
    bad += int(np.count_nonzero(~finite))
    bad += int(np.count_nonzero((np.signbit(xs[finite]) != np.signbit(ys[finite])) | (ys[finite] == 0)))
    xf, yf = xs[finite].astype(np.float64), ys[finite].astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        d = np.abs(yf - xf)
        lim = r * np.abs(xf)
    # Clearly within: d and lim are each within a few ulps of the exact values.
    near = ~(d <= lim * (1 - 1e-9)) | (np.abs(xf) < 2.0 ** -900)
    fr = Fraction(r)
    for a, b in zip(xf[near].tolist(), yf[near].tolist()):
        if abs(Fraction(b) - Fraction(a)) > fr * abs(Fraction(a)):
            bad += 1
    return bad


def test_the_checker():
    # pw_violations itself: a value one ulp past r x |x|, a sign, a -0.0 and a NaN payload are each caught.
    r = 1e-3
    for dtype in (np.float32, np.float64):
        x = np.array([3.0, -7.5, 0.0, -0.0, np.nan, np.inf, 1e-30], dtype=dtype)
        assert pw_violations(x, x.copy(), r) == 0
        within = lambda v: Fraction(float(v)) - 3 <= Fraction(r) * 3  # noqa: E731
        top = dtype(3 + 3 * r)  # then the largest value of the type within 3 + r x 3, exactly
        while not within(top):
            top = np.nextafter(top, dtype(0))
        while within(np.nextafter(top, dtype(np.inf))):
            top = np.nextafter(top, dtype(np.inf))
        y = x.copy()
        y[0] = top
        assert pw_violations(x, y, r) == 0
        y[0] = np.nextafter(y[0], dtype(np.inf))
        assert pw_violations(x, y, r) == 1
        for k, v in ((1, 7.5), (2, -0.0), (3, 0.0), (5, -np.inf), (6, -1e-30)):
            y = x.copy()
            y[k] = v
            assert pw_violations(x, y, r) >= 1, (dtype, k)  # a sign flip also breaks the bound
        y = x.copy()
        y[4] = -y[4]  # the NaN's sign bit
        assert pw_violations(x, y, r) == 1


def both_dtypes(a):
    """a, and a in the other float type (f64 fields cut to f32 where their values fit)."""
    other = np.float64 if a.dtype == np.float32 else np.float32
    with np.errstate(over="ignore"):
        b = a.astype(other)
    return [a, b]


def check_header(blob, r, dtype, shape):
    head = hpcz.info(blob)
    assert head["bound_kind"] == head["bound_mode"] == "pw_rel"
    assert head["version"] == head["format_version"] == 6
    assert head["mode"] == head["codec"] == "fast"
    assert head["bound"] == head["eb_abs"] == r
    assert head["dtype"] == np.dtype(dtype).name and tuple(head["shape"]) == tuple(shape)
    step = head["step"]
    assert step == int(step) and int(step) % 2 == 1 and step >= 1  # an odd integer: the magnitude steps' width
    return head


# --- The bound, on every field ---------------------------------------------------------------------


@pytest.mark.parametrize("r", RS)
@pytest.mark.parametrize("which", ["native", "other"])
def test_roundtrip_within_the_pointwise_bound(field, r, which):
    name, a = field
    a = both_dtypes(a)[0 if which == "native" else 1]
    blob = hpcz.compress(a, pw_rel=r, device="cpu")
    check_header(blob, r, a.dtype, a.shape)
    back = hpcz.decompress(blob, device="cpu")
    assert back.shape == a.shape and back.dtype == a.dtype
    assert pw_violations(a, back, r) == 0, (name, a.dtype, r)
    assert len(blob) < a.nbytes, (name, a.dtype, r)  # smaller than the values at every bound here


@pytest.mark.parametrize("r", RS)
def test_fill_is_kept_exactly(field, r):
    name, a = field
    fill = FILL if np.any(a == a.dtype.type(FILL)) else float(a.reshape(-1)[a.size // 2])
    blob = hpcz.compress(a, pw_rel=r, fill=fill, device="cpu")
    assert hpcz.info(blob)["fill"] == float(a.dtype.type(fill))
    assert pw_violations(a, hpcz.decompress(blob), r, fill=fill) == 0, name


def test_the_ratio_on_a_smooth_field():
    a = sample()
    blob = hpcz.compress(a, pw_rel=1e-2, device="cpu")
    assert a.nbytes / len(blob) > 1.5
    assert hpcz.info(blob)["compression_ratio"] == pytest.approx(a.nbytes / len(blob))
    # A tighter bound costs bytes, never the other way.
    sizes = [len(hpcz.compress(a, pw_rel=r, device="cpu")) for r in RS]
    assert sizes == sorted(sizes)


def test_zeros_and_signs():
    a = np.array([0.0, -0.0, 1.0, -1.0, -0.0, 0.0, 3.5, -3.5] * 100, dtype=np.float32)
    for dtype in (np.float32, np.float64):
        x = a.astype(dtype)
        back = hpcz.decompress(hpcz.compress(x, pw_rel=1e-2, device="cpu"))
        assert np.array_equal(np.signbit(back), np.signbit(x))
        assert np.array_equal(back[x == 0].view(np.uint8), x[x == 0].view(np.uint8))  # -0.0 stays -0.0
        assert pw_violations(x, back, 1e-2) == 0


def adversarial(dtype, seed=11):
    """Values a pointwise bound is hard on: the type's extremes, denormals, +-0, NaN (with payloads),
    +-Inf, runs, alternating signs, values beside powers of two, random bit patterns, magnitudes over
    the whole exponent range."""
    dtype = np.dtype(dtype)
    fi = np.finfo(dtype)
    bits = np.uint32 if dtype == np.float32 else np.uint64
    rng = np.random.default_rng(seed)
    one = dtype.type(1)
    parts = [np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, fi.max, -fi.max, fi.tiny, -fi.tiny,
                       fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny / 3, -fi.tiny / 7, 1.0, -1.0,
                       fi.eps, 1 / 3, -2 / 3, np.nextafter(fi.max, 0), fi.tiny * 2], dtype=dtype)]
    # Powers of two over the whole exponent range (denormals too), with their neighbours, both signs.
    ks = np.arange(fi.minexp - fi.nmant, fi.maxexp)
    p2 = np.ldexp(one, ks).astype(dtype)
    near = np.concatenate([p2, np.nextafter(p2, dtype.type(0)), np.nextafter(p2, dtype.type(np.inf))])
    near = near[np.isfinite(near)]
    parts += [near, -near[::-1]]
    # Magnitudes log-uniform over the whole range, random signs.
    e = rng.uniform(fi.minexp - fi.nmant, fi.maxexp - 2, 4000)
    mag = np.ldexp(rng.uniform(1, 2, e.size), np.floor(e).astype(int)).astype(dtype)
    parts.append(np.where(rng.random(e.size) < 0.5, -mag, mag).astype(dtype))
    # Denormals only.
    sub = rng.integers(1, 1 << fi.nmant, 1000, dtype=np.uint64).astype(bits).view(dtype)
    parts += [sub, -sub]
    # Random bit patterns: every class of value, NaNs with payloads among them.
    parts.append(rng.integers(0, np.iinfo(bits).max, 3000, dtype=bits, endpoint=True).view(dtype))
    # Runs: a constant, zeros, negative zeros, NaN, the largest value.
    for v, n in ((123.456, 300), (0.0, 200), (-0.0, 130), (np.nan, 70), (fi.max, 65), (-1e-30, 64)):
        parts.append(np.full(n, v, dtype=dtype))
    # Alternating signs, smooth and not.
    i = np.arange(2000)
    parts.append(((-1.0) ** i * (1 + i * 1e-3)).astype(dtype))
    parts.append(((-1.0) ** i * np.exp(rng.uniform(-20, 20, i.size))).astype(dtype))
    # A smooth ramp through 0, and one from the largest values to the smallest.
    parts.append(np.linspace(-1, 1, 1001).astype(dtype))
    with np.errstate(over="ignore"):
        g = np.geomspace(float(fi.max), float(fi.smallest_subnormal), 997)
    parts.append(np.where(np.isfinite(g), g, float(fi.max)).astype(dtype))
    a = np.concatenate(parts).astype(dtype)
    return np.concatenate([a, rng.permutation(a)])  # each kind alone, then all mixed in the same blocks


@pytest.mark.parametrize("r", RS + [0.5, 0.999])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adversarial_values(r, dtype):
    a = adversarial(dtype)
    assert np.isnan(a).any() and np.isinf(a).any() and (a == 0).any() and (np.abs(a) < np.finfo(dtype).tiny).any()
    for x in (a, a[: a.size - a.size % 60].reshape(-1, 3, 4, 5), a[:1], a[:7]):
        blob = hpcz.compress(x, pw_rel=r, device="cpu")
        check_header(blob, r, dtype, x.shape)
        back = hpcz.decompress(blob, device="cpu")
        assert back.shape == x.shape
        assert pw_violations(x, back, r) == 0, (dtype, r, x.shape)
        nan = np.isnan(x)
        bits = np.uint32 if dtype == np.float32 else np.uint64
        assert np.array_equal(back[nan].view(bits), x[nan].view(bits))  # payloads too


def test_only_specials():
    for dtype in (np.float32, np.float64):
        for a in (np.zeros(1000, dtype), np.full(513, -0.0, dtype), np.full(300, np.nan, dtype),
                  np.array([np.inf, -np.inf, np.nan, 0.0, -0.0] * 50, dtype)):
            back = hpcz.decompress(hpcz.compress(a, pw_rel=1e-3, device="cpu"))
            assert np.array_equal(back.view(np.uint8), a.view(np.uint8))


def test_no_range_involved():
    # The bound of a value does not depend on the others: an outlier (or a padding value) far away
    # leaves every other value within r x its own magnitude, where a rel bound would widen with it.
    a = sample().astype(np.float64)
    b = a.copy()
    b[0, 0, 0] = 1e30
    for x in (a, b):
        head = hpcz.info(hpcz.compress(x, pw_rel=1e-3, device="cpu"))
        assert head["eb_abs"] == head["bound"] == 1e-3
        assert pw_violations(x, hpcz.decompress(hpcz.compress(x, pw_rel=1e-3, device="cpu")), 1e-3) == 0


# --- The calls and their arguments ------------------------------------------------------------------


def test_batch_writes_the_same_archives(field):
    _, a = field
    for x in both_dtypes(a):
        parts = [np.ascontiguousarray(x.reshape(-1)[:k]) for k in (x.size, x.size // 2, 1000, 1)]
        got = hpcz.compress_batch(parts, pw_rel=1e-3, device="cpu")
        for p, blob in zip(parts, got):
            assert blob == hpcz.compress(p, pw_rel=1e-3, device="cpu")
        for p, back in zip(parts, hpcz.decompress_batch(got, device="cpu")):
            assert pw_violations(p, back, 1e-3) == 0


def test_the_modules_bound_kind():
    from hpcz import _hpcz

    a = sample()[:10]
    assert _hpcz.bound_modes()["pw_rel"] == 3
    assert _hpcz.parse_bound_mode("pointwise_relative") == "pw_rel"
    blob = hpcz.compress(a, pw_rel=1e-3, device="cpu")
    assert _hpcz.compress(a, "fast", "pw_rel", 1e-3, False, None, "cpu") == blob
    assert _hpcz.compress(a, "fast", "pointwise_relative", 1e-3, False, None, "cpu", 0.0) == blob
    blobs, statuses = _hpcz.compress_batch([a], "fast", "pw_rel", 1e-3, False, None, "cpu")
    assert statuses == [(0, "")] and blobs[0] == blob


def test_info():
    a = sample()
    blob = hpcz.compress(a, pw_rel=1e-4, device="cpu")
    head = check_header(blob, 1e-4, np.float32, a.shape)
    assert head["n_values"] == a.size and not head["lossless"]
    assert hpcz.info(blob, verify=False)["bound_kind"] == "pw_rel"
    # With the lossless stage too.
    lossless = hpcz.compress(a, pw_rel=1e-4, lossless=True, device="cpu")
    assert hpcz.info(lossless)["bound_kind"] == "pw_rel" and hpcz.info(lossless)["lossless"]
    assert pw_violations(a, hpcz.decompress(lossless), 1e-4) == 0


BAD_BOUNDS = [0, 0.0, 1, 1.0, -1e-3, 1.5, float("nan"), float("inf"), -float("inf"), "x", [1e-3], True]


def bad_argument_cases():
    cases = [("a bound of its own: give it without abs=", dict(pw_rel=1e-3, abs=0.1)),
             ("a bound of its own: give it without rel=", dict(pw_rel=1e-3, rel=1e-3)),
             ("give it without abs= and rel= and bound_rule=", dict(pw_rel=1e-3, abs=0.1, rel=1e-3, bound_rule="or")),
             ("give it without bound_rule=", dict(pw_rel=1e-3, bound_rule="and")),
             ("pw_rel in the ratio mode takes bounds from 1e-06", dict(pw_rel=1e-7, mode="ratio")),
             ("pw_rel in the interp mode takes bounds from 1e-06", dict(pw_rel=5e-7, mode="interp"))]
    cases += [("pw_rel must be above 0 and below 1", dict(pw_rel=b)) for b in BAD_BOUNDS]
    return cases


@pytest.mark.parametrize("message, kw", bad_argument_cases())
def test_bad_arguments(message, kw):
    refused_by_compress_and_batch(hpcz, sample()[:4], kw, message)


def test_the_library_refuses_the_same():
    # The module's own words for what the Python checks catch first.
    from hpcz import _hpcz

    a = sample()[:4]
    for r in (0.0, 1.0, 2.0):
        with pytest.raises(hpcz.InvalidArgumentError, match="above 0 and below 1"):
            _hpcz.compress(a, "fast", "pw_rel", r, False, None, "cpu")
    with pytest.raises(hpcz.InvalidArgumentError, match="above 0 and below 1|finite number >= 0"):
        _hpcz.compress(a, "fast", "pw_rel", -0.5, False, None, "cpu")
    for mode in ("ratio", "interp"):
        with pytest.raises(hpcz.InvalidArgumentError, match=f"pw_rel in the {mode} mode takes bounds from 1e-06"):
            _hpcz.compress(a, mode, "pw_rel", 1e-7, False, None, "cpu")


@pytest.mark.parametrize("message, kw", bad_argument_cases())
def test_codec_classes_refuse_the_same(message, kw):
    import hpcz.numcodecs
    import hpcz.zarr

    makers = [hpcz.numcodecs.Hpcz, hpcz.zarr.Hpcz]
    try:
        import hpcz.hdf5

        makers.append(hpcz.hdf5.Hpcz)
    except (ImportError, hpcz.BackendUnavailableError):
        pass
    for make in makers:
        with pytest.raises(hpcz.InvalidArgumentError, match=message):
            make(**kw)
    for make in makers:  # hdf5plugin's spellings are abs= and rel= too
        with pytest.raises(hpcz.InvalidArgumentError, match="give it without abs="):
            make(pw_rel=1e-3, absolute=0.1)
        with pytest.raises(hpcz.InvalidArgumentError, match="give it without rel="):
            make(pw_rel=1e-3, relative=1e-3)


# --- numcodecs and Zarr -----------------------------------------------------------------------------


@pytest.mark.parametrize("r", RS)
def test_numcodecs_roundtrip_and_config(field, r):
    import numcodecs

    import hpcz.numcodecs

    _, a = field
    codec = numcodecs.get_codec({"id": "hpcz", "pw_rel": r})
    config = codec.get_config()
    assert config == {"id": "hpcz", "mode": "fast", "lossless": False, "fill": None, "pw_rel": r}
    assert not {"abs", "rel", "bound_rule"} & set(config)
    again = numcodecs.get_codec(config)
    assert again == codec and again.get_config() == config
    assert hpcz.numcodecs.Hpcz.from_config({k: v for k, v in config.items() if k != "id"}).get_config() == config
    assert "pw_rel=" in repr(codec) and "abs=" not in repr(codec)
    for x in both_dtypes(a):
        enc = codec.encode(x)
        assert enc == hpcz.compress(x, pw_rel=r)  # no padding rule: the plain archive
        check_header(enc, r, x.dtype, x.shape)
        back = np.asarray(codec.decode(enc)).reshape(x.shape)
        assert pw_violations(x, back, r) == 0
        out = np.empty_like(x)
        codec.decode(enc, out=out)
        assert np.array_equal(out.view(np.uint8), back.view(np.uint8))


def test_numcodecs_zero_padding_and_data():
    # Zarr v2 pads edge chunks with 0: zeros are kept exactly by pw_rel, and no chunk is coded again.
    import hpcz.numcodecs

    a = sample()[:20].copy()
    a[-3:] = 0.0
    codec = hpcz.numcodecs.Hpcz(pw_rel=1e-3)
    enc = codec.encode(a)
    assert hpcz.info(enc)["bound_kind"] == "pw_rel"
    assert pw_violations(a, np.asarray(codec.decode(enc)).reshape(a.shape), 1e-3) == 0
    # data= turns a rel bound into an abs one; pw_rel needs no range and stays as it is.
    with_data = hpcz.numcodecs.Hpcz(pw_rel=1e-3, data=a)
    assert with_data.pw_rel == 1e-3 and with_data.abs is None and with_data.rel is None
    assert with_data.get_config() == codec.get_config()
    # With fill: kept exactly, in the config.
    f = hpcz.numcodecs.Hpcz(pw_rel=1e-3, fill=-999.0)
    assert f.get_config()["fill"] == -999.0 and f.get_config()["pw_rel"] == 1e-3
    b = a.copy()
    b[0, 0, :5] = -999.0
    assert pw_violations(b, np.asarray(f.decode(f.encode(b))).reshape(b.shape), 1e-3, fill=-999.0) == 0


def test_numcodecs_by_position_keeps_its_order():
    import hpcz.numcodecs

    # pw_rel is a keyword only: by position the class takes mode, abs, rel, lossless, fill, as before.
    assert hpcz.numcodecs.Hpcz("fast", None, None, False, None, pw_rel=1e-3).get_config()["pw_rel"] == 1e-3
    with pytest.raises(hpcz.InvalidArgumentError, match="give it without abs="):
        hpcz.numcodecs.Hpcz("fast", 0.01, pw_rel=1e-3)


@pytest.mark.parametrize("r", RS)
def test_zarr_roundtrip_and_config(tmp_path, r):
    pytest.importorskip("zarr")
    import hpcz.zarr

    a = sample()
    codec = hpcz.zarr.Hpcz(pw_rel=r)
    d = codec.to_dict()
    assert d == {"name": "hpcz", "configuration": {"mode": "fast", "lossless": False, "pw_rel": r}}
    assert hpcz.zarr.Hpcz.from_dict(d) == codec and hpcz.zarr.Hpcz.from_dict(d).to_dict() == d
    assert codec.abs is None and codec.rel is None and codec.bound_rule is None and codec.pw_rel == r
    # Zarr's padding of the edge chunks (0) kept exactly.
    back = zarr_written(tmp_path, a, codec, d["configuration"])
    assert pw_violations(a, back, r) == 0
    # Every stored chunk is a pw_rel archive (none coded again as abs).
    for p in (tmp_path / "z.zarr" / "c").rglob("*"):
        if p.is_file():
            assert hpcz.info(p.read_bytes())["bound_kind"] == "pw_rel", p


def test_zarr_f64_nan_padding_and_data(tmp_path):
    zarr = pytest.importorskip("zarr")
    import hpcz.zarr

    a = adversarial(np.float64)[:9000].reshape(90, 100)
    z = zarr.create_array(str(tmp_path / "n.zarr"), shape=a.shape, chunks=(32, 32), dtype="float64",
                          serializer=hpcz.zarr.Hpcz(pw_rel=1e-3, data=a), compressors=None, fill_value=float("nan"))
    z[...] = a
    back = zarr.open_array(str(tmp_path / "n.zarr"), mode="r")[...]
    assert pw_violations(a, back, 1e-3) == 0
    c = hpcz.zarr.Hpcz(pw_rel=1e-3, data=a)
    assert c == hpcz.zarr.Hpcz(pw_rel=1e-3) and c.to_dict()["configuration"]["pw_rel"] == 1e-3


def test_zarr_v2_with_the_numcodecs_codec(tmp_path):
    zarr = pytest.importorskip("zarr")
    import hpcz.numcodecs

    a = sample()
    z = zarr.create_array(str(tmp_path / "v2.zarr"), shape=a.shape, chunks=(30, 48, 48), dtype=a.dtype, zarr_format=2,
                          compressors=hpcz.numcodecs.Hpcz(pw_rel=1e-3), filters=None)
    z[...] = a
    meta = json.loads((tmp_path / "v2.zarr" / ".zarray").read_text())
    assert meta["compressor"]["pw_rel"] == 1e-3 and "rel" not in meta["compressor"]
    back = zarr.open_array(str(tmp_path / "v2.zarr"), mode="r")[...]
    assert pw_violations(a, back, 1e-3) == 0


# --- HDF5 ------------------------------------------------------------------------------------------




def test_hdf5_words():
    from hpcz import _hpcz

    hh = hdf5_module()
    words = hh.Hpcz(pw_rel=1e-3).filter_options
    # Parameters version 1: the bound kind 3, the factor in words 3 and 4.
    assert words == tuple([1, _hpcz.codecs()["fast"], 3] + double_words(1e-3) + [0] + double_words(0.0))
    assert _hpcz.bound_modes()["pw_rel"] == 3
    assert hh.Hpcz(pw_rel=1e-3, fill=-1.0, lossless=True).filter_options == \
        tuple([1, 1, 3] + double_words(1e-3) + [3] + double_words(-1.0))
    assert hh.Hpcz(pw_rel=1e-3)["compression_opts"] == words and hh.Hpcz(pw_rel=1e-3)["compression"] == hh.FILTER_ID
    a = sample()
    assert hh.Hpcz(pw_rel=1e-3, data=a).filter_options == words  # data=: no range for pw_rel
    with pytest.raises(hpcz.InvalidArgumentError, match="not complex64"):
        hh.Hpcz(pw_rel=1e-3, data=np.arange(4, dtype=np.complex64))


@pytest.mark.parametrize("r", RS)
def test_hdf5_roundtrip(tmp_path, r):
    h5py = pytest.importorskip("h5py")
    hh = hdf5_module()
    a = sample()
    a64 = a.astype(np.float64) * 1e-200  # magnitudes the f32 type does not have
    with h5py.File(tmp_path / "p.h5", "w") as f:
        d = f.create_dataset("x", data=a, chunks=(16, 48, 48), **hh.Hpcz(pw_rel=r))  # padded edge chunks
        values = d.id.get_create_plist().get_filter(0)[2]
        assert tuple(values[:8]) == hh.Hpcz(pw_rel=r)["compression_opts"]
        assert len(values) == 8 + 2 + 3  # dtype, rank, dims: no padding words (no range involved)
        assert hh._options(d) == {"mode": "fast", "pw_rel": r, "lossless": False, "fill": None}
        assert hh._stored_padding(d) is None
        e = f.create_dataset("y", shape=a.shape, dtype=a.dtype, chunks=(16, 48, 48), **hh.Hpcz(pw_rel=r))
        hh.write(e, a)  # the batch path: the filter's bytes
        g = f.create_dataset("z", shape=a.shape, dtype=a.dtype, chunks=(30, 64, 128), fillvalue=-5.0,
                             **hh.Hpcz(pw_rel=r))
        for k in range(0, 100, 30):  # the last chunk is 10 rows: padded with the fill value
            hh.write_chunk(g, (k, 0, 0), a[k:k + 30])
        f.create_dataset("w", data=a64, chunks=(16, 64, 64), **hh.Hpcz(pw_rel=r))
    with h5py.File(tmp_path / "p.h5", "r") as f:
        back = f["x"][...]
        assert pw_violations(a, back, r) == 0
        assert np.array_equal(hh.read(f["y"]).view(np.uint8), back.view(np.uint8))
        for off in ((0, 0, 0), (96, 48, 96)):  # an inner chunk and the corner one (padded with 0)
            blob = f["x"].id.read_direct_chunk(off)[1]
            assert blob == f["y"].id.read_direct_chunk(off)[1], off
            assert hpcz.info(blob)["bound_kind"] == "pw_rel", off  # never coded again as abs
        assert pw_violations(a, f["z"][...], r) == 0
        assert pw_violations(a64, f["w"][...], r) == 0
        assert pw_violations(a64, hh.read(f["w"]), r) == 0


def _words(mode=1, bound=1e-3, n=None):
    w = [1, mode, 3] + double_words(bound) + [0] + double_words(0.0)
    return tuple(w[:n] if n else w)


@pytest.mark.parametrize("words, reason", [
    (_words(bound=0.0), "above 0 and below 1"), (_words(bound=1.0), "above 0 and below 1"),
    (_words(bound=2.5), "above 0 and below 1"), (_words(bound=float("nan")), "finite number"),
    (_words(mode=2, bound=1e-7), "from 1e-06"), (_words(mode=3, bound=5e-7), "from 1e-06"),
])
def test_hdf5_invalid_words_fail_at_create_dataset(tmp_path, words, reason):
    refused_at_create_dataset(tmp_path / "w.h5", words, reason)


def test_hdf5_words_by_hand(tmp_path):
    # Kind 3 given as words (h5py, other programs): the bound given, or set_local's default (1e-3).
    h5py = pytest.importorskip("h5py")
    hh = hdf5_module()
    a = np.linspace(-2, 2, 1000, dtype=np.float32)
    with h5py.File(tmp_path / "h.h5", "w") as f:
        for name, words in (("given", _words(bound=1e-2)), ("default", _words(n=3))):
            d = f.create_dataset(name, data=a, chunks=(300,), compression=hh.FILTER_ID, compression_opts=words)
            assert hh._options(d)["pw_rel"] == (1e-2 if name == "given" else 1e-3)
    with h5py.File(tmp_path / "h.h5", "r") as f:
        assert pw_violations(a, f["given"][...], 1e-2) == 0
        assert pw_violations(a, f["default"][...], 1e-3) == 0


# --- Arrays on the GPU (skipped without cupy and a GPU) ------------------------------------------------


class _Interface:
    """A device array behind a plain __cuda_array_interface__: the general device path (test_gpu.py)."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = a.__cuda_array_interface__


@pytest.mark.parametrize("r", RS)
def test_device_arrays_give_the_host_archives(field, r):
    cupy = pytest.importorskip("cupy")
    if not hpcz.gpu_available():
        pytest.skip("no GPU")
    _, a = field
    for x in both_dtypes(a):
        host = hpcz.compress(x, pw_rel=r, device="cpu")
        d = cupy.asarray(x)
        assert hpcz.compress(d, pw_rel=r).get().tobytes() == host  # one array on its device
        assert hpcz.compress(x, pw_rel=r, device="gpu") == host  # a host array coded on the GPU
        parts = [d, d.reshape(-1)[: d.size // 2]]
        want = [host, hpcz.compress(x.reshape(-1)[: x.size // 2], pw_rel=r, device="cpu")]
        assert [b.get().tobytes() for b in hpcz.compress_batch(parts, pw_rel=r)] == want  # cupy batches (C++)
        assert [b.get().tobytes() for b in hpcz.compress_batch([_Interface(p) for p in parts], pw_rel=r)] == want
        back = hpcz.decompress(cupy.asarray(np.frombuffer(host, np.uint8)))
        assert pw_violations(x, cupy.asnumpy(back), r) == 0
        assert np.array_equal(hpcz.decompress(host, device="gpu").view(np.uint8),
                              hpcz.decompress(host, device="cpu").view(np.uint8))


def test_device_arrays_refuse_the_same():
    cupy = pytest.importorskip("cupy")
    if not hpcz.gpu_available():
        pytest.skip("no GPU")
    d = cupy.asarray(sample()[:4])
    with pytest.raises(hpcz.InvalidArgumentError, match="from 1e-06"):
        hpcz.compress(d, pw_rel=1e-7, mode="ratio")
    with pytest.raises(hpcz.InvalidArgumentError, match="give it without abs="):
        hpcz.compress_batch([d], pw_rel=1e-3, abs=0.1)


# --- The ratio and interp modes: log2 |x| (format version 8) ---------------------------------------


@pytest.mark.parametrize("mode", ["ratio", "interp"])
@pytest.mark.parametrize("r", RS)
def test_log_modes_within_the_pointwise_bound(field, mode, r):
    name, a = field
    fill = FILL if np.any(a == a.dtype.type(FILL)) else None
    for x in both_dtypes(a):
        blob = hpcz.compress(x, pw_rel=r, mode=mode, fill=fill, device="cpu")
        head = hpcz.info(blob)
        assert head["version"] == 8 and head["mode"] == mode and head["bound_kind"] == "pw_rel" and head["bound"] == r
        assert 0 < head["eb_abs"] < np.log2(1 + r)  # the logs' absolute bound
        back = hpcz.decompress(blob, device="cpu")
        assert back.dtype == x.dtype and pw_violations(x, back, r, fill=fill) == 0, (name, mode, x.dtype, r)
        assert hpcz.compress(x, pw_rel=r, mode=mode, fill=fill) == blob  # device auto: the CPU's bytes
        assert hpcz.decompress(blob).tobytes() == back.tobytes()


@pytest.mark.parametrize("mode", ["ratio", "interp"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_modes_adversarial_values(mode, dtype):
    x = adversarial(dtype)
    for r in (0.5, 1e-3, 1e-6):
        blob = hpcz.compress(x, pw_rel=r, mode=mode, device="cpu")
        assert pw_violations(x, hpcz.decompress(blob), r) == 0, (mode, dtype, r)


def test_interp_beats_the_fast_mode_on_a_smooth_field():
    # The interpolation of the logs against the fast mode's magnitude steps, on the bundled sample.
    a = sample()
    for r in RS:
        fast = len(hpcz.compress(a, pw_rel=r, device="cpu"))
        interp = len(hpcz.compress(a, pw_rel=r, mode="interp", device="cpu"))
        assert interp < fast, r


def test_log_modes_in_the_front_ends(tmp_path):
    import hpcz.numcodecs

    a = sample()
    c = hpcz.numcodecs.Hpcz(pw_rel=1e-3, mode="interp")
    assert pw_violations(a, np.frombuffer(c.decode(c.encode(a)), np.float32).reshape(a.shape), 1e-3) == 0
    blobs = hpcz.compress_batch([a, a[:50]], pw_rel=1e-3, mode="ratio", device="cpu")
    assert blobs[0] == hpcz.compress(a, pw_rel=1e-3, mode="ratio", device="cpu")
    assert all(hpcz.info(b)["version"] == 8 for b in blobs)


def test_log_modes_on_the_gpu():
    # The log transform on the GPU: the CPU's archive, decoded to the CPU's values, both directions.
    if not hpcz.gpu_available():
        pytest.skip("no GPU")
    a = sample()
    for mode in ("ratio", "interp"):
        host = hpcz.compress(a, pw_rel=1e-3, mode=mode, device="cpu")
        assert hpcz.compress(a, pw_rel=1e-3, mode=mode, device="gpu") == host
        assert np.array_equal(hpcz.decompress(host, device="gpu"), hpcz.decompress(host, device="cpu"))


def test_log_modes_with_device_arrays():
    # Arrays and archives on the GPU: coded and decoded there, the CPU's bytes and values.
    cupy = pytest.importorskip("cupy")
    if not hpcz.gpu_available():
        pytest.skip("no GPU")
    a = sample()
    host = hpcz.compress(a, pw_rel=1e-3, mode="interp", device="cpu")
    d = cupy.asarray(a)
    blob = hpcz.compress(d, pw_rel=1e-3, mode="interp")
    assert blob.get().tobytes() == host
    want = hpcz.decompress(host, device="cpu")
    assert np.array_equal(cupy.asnumpy(hpcz.decompress(blob)), want)  # a device archive
    out = cupy.empty_like(d)
    assert hpcz.decompress(host, out=out) is out and np.array_equal(cupy.asnumpy(out), want)  # a device out
    fast = hpcz.compress(d, pw_rel=1e-3)
    back = hpcz.decompress_batch([blob, fast, cupy.asarray(np.frombuffer(host, np.uint8))])  # mixed with the fast mode's
    assert np.array_equal(cupy.asnumpy(back[0]), want) and np.array_equal(cupy.asnumpy(back[2]), want)
    assert pw_violations(a, cupy.asnumpy(back[1]), 1e-3) == 0
    got = hpcz.compress_batch([d, d[:50]], pw_rel=1e-3, mode="ratio")
    assert got[0].get().tobytes() == hpcz.compress(a, pw_rel=1e-3, mode="ratio", device="cpu")
