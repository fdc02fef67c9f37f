"""Storage types: float16, bfloat16 (ml_dtypes) and the 8- to 64-bit integers, coded by the library
as float32 (float64 for the 32- and 64-bit integers; those of 64 bits within +-2^53) under a bound that stays strict once the values are narrowed
back. Every value within the bound asked for (integers at abs=0: exact; NaN, Inf and -0 bit for bit),
through hpcz.compress and decompress, the batches, numcodecs and Zarr v3; the CLI's -t names."""

import subprocess

import numpy as np
import pytest

import hpcz
from conftest import FIELDS, ROOT, find_cli

ml_dtypes = pytest.importorskip("ml_dtypes")

INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
HALVES = [np.float16, ml_dtypes.bfloat16]
CODECS = ["fast", "ratio", "interp"]


def sample():
    return np.fromfile(ROOT / "data" / "climate-ncar_csm_b003_ts_100x64x128_f32.bin", np.float32).reshape(100, 64, 128)


def as_type(x, dtype):
    """A float field as dtype: float16 and bfloat16 its values (float16 clipped to its range); integers
    its values mapped onto a quarter of the type's range around its middle (2^20 levels at most; int64
    and uint64 around 0 and 2^19, within the +-2^53 they take)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f" or dtype.name == "bfloat16":
        lim = float(np.finfo(np.float16).max) if dtype == np.float16 else np.inf
        return np.clip(x, -lim, lim).astype(dtype)
    info = np.iinfo(dtype)
    x = x.astype(np.float64)
    u = (x - x.min()) / (x.max() - x.min()) if x.max() > x.min() else np.full_like(x, 0.5)
    span = min(float(info.max) - float(info.min), 2.0 ** 20) * 0.25
    mid = 0.5 * (float(info.min) + float(info.max)) if dtype.itemsize < 8 else (0.0 if dtype.kind == "i" else 2.0 ** 19)
    return np.round(mid + (u - 0.5) * span).astype(dtype)


def wide(a):
    with np.errstate(invalid="ignore"):  # bfloat16 NaN to float64
        return np.asarray(a).astype(np.float64)


def check_within(x, y, eb):
    """Every finite value of y within eb of x (exact in float64: the values are float16, bfloat16 or
    integers of at most 32 bits); non-finite values and, at eb == 0, every value bit for bit."""
    assert x.dtype == y.dtype and x.shape == y.shape
    xf, yf = wide(x).reshape(-1), wide(y).reshape(-1)
    special = ~np.isfinite(xf)
    bits = x.reshape(-1).view(np.uint8).reshape(x.size, -1)
    ybits = y.reshape(-1).view(np.uint8).reshape(y.size, -1)
    if eb == 0:
        special[:] = True
    assert np.array_equal(bits[special], ybits[special]), "values not kept bit for bit"
    assert np.all(np.abs(yf[~special] - xf[~special]) <= eb), f"max error {np.max(np.abs(yf - xf))} above {eb}"


def asked(x, rel=None, abs=None):
    if abs is not None:
        return abs
    xf = wide(x)
    xf = xf[np.isfinite(xf)]
    return rel * (xf.max() - xf.min())


@pytest.mark.parametrize("dtype", INTS + HALVES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("mode", CODECS)
def test_roundtrip_within_bound(dtype, mode):
    for name, f in FIELDS.items():
        x = as_type(f, dtype)
        bounds = [dict(abs=0), dict(abs=3), dict(rel=1e-3)] if np.dtype(dtype).kind in "iu" else \
            [dict(rel=1e-2), dict(rel=1e-3), dict(abs=0)]
        for b in bounds:
            blob = hpcz.compress(x, mode=mode, device="cpu", **b)
            head = hpcz.info(blob)
            assert head["dtype"] == np.dtype(dtype).name and head["version"] == (9 if np.dtype(dtype).itemsize == 8 else 7)
            y = hpcz.decompress(blob, device="cpu")
            check_within(x, y, asked(x, **b))
            if b == dict(abs=0) and np.dtype(dtype).kind in "iu":
                assert np.array_equal(x, y)


@pytest.mark.parametrize("dtype", HALVES, ids=lambda t: np.dtype(t).name)
def test_half_specials_bit_for_bit(dtype):
    x = as_type(sample()[:4], dtype).copy()
    flat = x.reshape(-1)
    bits = flat.view(np.uint16)
    nan_payload = 0x7d23 if np.dtype(dtype) == np.float16 else 0x7f81
    bits[::97] = nan_payload
    bits[5::101] = 0x8000  # -0: a finite value, within the bound as +0
    bits[7::103] = 0xfc00 if np.dtype(dtype) == np.float16 else 0xff80  # -Inf
    bits[9::107] = 0x0001  # the smallest subnormal
    for mode in CODECS:
        y = hpcz.decompress(hpcz.compress(x, rel=1e-2, mode=mode, device="cpu"), device="cpu")
        check_within(x, y, asked(x, rel=1e-2))
        nan = bits == nan_payload  # its payload kept (check_within compares every non-finite value's bits)
        assert nan.sum() > 100 and np.array_equal(y.reshape(-1).view(np.uint16)[nan], bits[nan])


@pytest.mark.parametrize("dtype", INTS, ids=lambda t: np.dtype(t).name)
def test_integer_extremes_lossless(dtype):
    info = np.iinfo(dtype)
    lo, hi = (info.min, info.max) if info.bits < 64 else (-(2 ** 53) if info.min < 0 else 0, 2 ** 53)  # what float64 holds
    x = np.array([lo, hi, 0, 1, lo + 1, hi - 1] * 50, dtype=dtype)
    for mode in CODECS:
        assert np.array_equal(hpcz.decompress(hpcz.compress(x, abs=0, mode=mode, device="cpu"), device="cpu"), x)
        y = hpcz.decompress(hpcz.compress(x, abs=5, mode=mode, device="cpu"), device="cpu")
        check_within(x, y, 5)


def test_batches_and_out():
    x = sample()
    arrays = [as_type(x, np.int16), x, as_type(x, np.float16), as_type(x, ml_dtypes.bfloat16)]
    blobs = hpcz.compress_batch(arrays, rel=1e-3, device="cpu")
    for a, b in zip(arrays, blobs):
        assert b == hpcz.compress(a, rel=1e-3, device="cpu")
    back = hpcz.decompress_batch(blobs, device="cpu")
    for a, y in zip(arrays, back):
        assert y.dtype == a.dtype
        check_within(a, y, asked(a, rel=1e-3))
    out = np.empty_like(arrays[3])
    assert hpcz.decompress(blobs[3], out=out, device="cpu") is out


@pytest.mark.parametrize("dtype", INTS + HALVES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("mode", CODECS)
def test_pw_rel_and_combined_bounds(dtype, mode):
    # pw_rel (every value within r |x|, zeros exact) and both bounds at once, in format version 8.
    x = as_type(sample(), dtype)
    xf = wide(x).reshape(-1)
    for r in (1e-2, 1e-3):
        blob = hpcz.compress(x, pw_rel=r, mode=mode, device="cpu")
        assert hpcz.info(blob)["version"] == (9 if np.dtype(dtype).itemsize == 8 else 8)
        yf = wide(hpcz.decompress(blob)).reshape(-1)
        zero = xf == 0
        assert np.array_equal(yf[zero], xf[zero]) and np.all(np.abs(yf - xf)[~zero] <= r * np.abs(xf[~zero]))
    a = 3 if np.dtype(dtype).kind in "iu" else 0.05
    for rule, pick in (("and", min), ("or", max)):
        blob = hpcz.compress(x, abs=a, rel=1e-3, bound_rule=rule, mode=mode, device="cpu")
        assert hpcz.info(blob)["version"] == (9 if np.dtype(dtype).itemsize == 8 else 8)
        check_within(x, hpcz.decompress(blob), pick(a, asked(x, rel=1e-3)))


def test_refusals():
    x = as_type(sample(), np.int16)
    for t, big in ((np.int64, -(2 ** 53) - 1), (np.uint64, 2 ** 64 - 1)):  # beyond what float64 holds: named
        w = (x.astype(np.int64) - (int(x.min()) if t == np.uint64 else 0)).astype(t)
        w.reshape(-1)[1234] = big
        for mode in CODECS:
            with pytest.raises(hpcz.InvalidArgumentError, match="index 1234"):
                hpcz.compress(w, abs=0, mode=mode)
        with pytest.raises(hpcz.InvalidArgumentError, match="index 1234"):
            hpcz.compress_batch([x, w], abs=0)
    with pytest.raises(hpcz.InvalidArgumentError):
        hpcz.compress(x.astype(np.complex64), abs=0)
    with pytest.raises(hpcz.InvalidArgumentError):
        hpcz.compress(x, abs=1, fill=0.5)


def test_psnr_target():
    x = as_type(sample(), np.uint16)
    blob = hpcz.compress(x, psnr=60, device="cpu")
    y = hpcz.decompress(blob, device="cpu")
    err = wide(y) - wide(x)
    psnr = 20 * np.log10(np.ptp(wide(x))) - 10 * np.log10(np.mean(err ** 2))
    assert psnr >= 60 and hpcz.info(blob)["psnr_achieved"] >= 60


def test_numcodecs_and_zarr(tmp_path):
    numcodecs = pytest.importorskip("numcodecs")
    zarr = pytest.importorskip("zarr")
    x = as_type(sample(), np.int16)
    codec = numcodecs.get_codec({"id": "hpcz", "abs": 2, "mode": "ratio"})
    y = codec.decode(codec.encode(x)).reshape(x.shape)
    check_within(x, y.view(x.dtype) if y.dtype != x.dtype else y, 2)
    h = as_type(sample(), np.float16)
    z = zarr.create_array(str(tmp_path / "h.zarr"), shape=h.shape, chunks=(10, 64, 128), dtype="float16",
                          serializer=hpcz.zarr.Hpcz(rel=1e-2))
    z[...] = h
    check_within(h, z[...], asked(h, rel=1e-2) * 1.0001 + 0)  # rel of each chunk's own range: within the array's


def test_cli_types(tmp_path):
    cli = find_cli()
    if cli is None:
        pytest.skip("no hpcz CLI built")
    x = as_type(sample(), np.uint8)
    src = tmp_path / "x.u8"
    x.tofile(src)
    subprocess.run([str(cli), "compress", str(src), "-o", str(tmp_path / "x.hpcz"), "-t", "u8", "-d", "100x64x128",
                    "--abs", "0", "-q"], check=True)
    subprocess.run([str(cli), "decompress", str(tmp_path / "x.hpcz"), "-o", str(tmp_path / "y.u8"), "-q"], check=True)
    assert np.array_equal(np.fromfile(tmp_path / "y.u8", np.uint8).reshape(x.shape), x)
    assert subprocess.run([str(cli), "compress", str(src), "-c", "-t", "i128", "-d", "100x64x128", "--abs", "0"],
                          capture_output=True).returncode == 1
    w = as_type(sample(), np.int64) + 10 ** 6  # -t i64, and its refusal beyond 2^53
    w.tofile(src)
    subprocess.run([str(cli), "compress", str(src), "-o", str(tmp_path / "w.hpcz"), "-t", "i64", "-d", "100x64x128",
                    "--abs", "3", "--mode", "interp", "-q"], check=True)
    subprocess.run([str(cli), "decompress", str(tmp_path / "w.hpcz"), "-o", str(tmp_path / "w.i64"), "-q"], check=True)
    check_within(w, np.fromfile(tmp_path / "w.i64", np.int64).reshape(w.shape), 3)
    assert (tmp_path / "w.hpcz").stat().st_size < w.nbytes / 4
    w.reshape(-1)[7] = 2 ** 62
    w.tofile(src)
    r = subprocess.run([str(cli), "compress", str(src), "-c", "-t", "i64", "-d", "100x64x128", "--abs", "0"],
                       capture_output=True)
    assert r.returncode == 1 and b"index 7" in r.stderr


@pytest.mark.parametrize("dtype", [np.int16, np.uint8, np.uint32, np.int64, np.float16], ids=lambda t: np.dtype(t).name)
def test_hdf5_filter(tmp_path, dtype):
    h5py = pytest.importorskip("h5py")
    import hpcz.hdf5 as hh

    x = as_type(sample(), dtype)
    bounds = [dict(abs=0), dict(rel=1e-3)] if np.dtype(dtype).kind in "iu" else [dict(rel=1e-2)]
    for k, b in enumerate(bounds):
        with h5py.File(tmp_path / f"s{k}.h5", "w") as f:
            f.create_dataset("x", data=x, chunks=(10, 64, 128), **hh.Hpcz(mode="ratio", **b))
        with h5py.File(tmp_path / f"s{k}.h5", "r") as f:
            y = f["x"][...]
            # (uint32 values near 2^31 at abs=0: beyond the codecs' 2^30 steps, stored exactly: no smaller)
            if not (dtype == np.uint32 and b == dict(abs=0)):
                assert f["x"].id.get_storage_size() < x.nbytes
        # rel: of each chunk's own range, never wider than the array's
        check_within(x, y, asked(x, **b))
        if b == dict(abs=0):
            assert np.array_equal(x, y)


def test_device_arrays_coded_on_the_device():
    """cupy arrays of the storage types: compress and decompress on their device (widened and narrowed
    there), the host calls' bytes and values, in every mode; out= on the device; an int8 view off the
    16-byte alignment."""
    cupy = pytest.importorskip("cupy")
    if not hpcz.gpu_available():
        pytest.skip("no GPU")
    for dtype in (np.float16, np.int16, np.uint8, np.int32, np.uint32, np.int64, np.uint64):  # 64-bit: via the host
        x = as_type(sample(), dtype)
        for mode in CODECS:
            blob = hpcz.compress(cupy.asarray(x), rel=1e-3, mode=mode)
            assert isinstance(blob, cupy.ndarray)  # the archive stays on the device
            host = hpcz.compress(x, rel=1e-3, mode=mode, device="cpu")
            assert bytes(blob.get()) == host, f"{np.dtype(dtype).name} {mode}: device archive differs"
            y = hpcz.decompress(blob)
            assert isinstance(y, cupy.ndarray) and y.dtype == x.dtype
            assert np.array_equal(y.get(), hpcz.decompress(host, device="cpu"))
            out = cupy.empty(x.shape, dtype=dtype)
            assert hpcz.decompress(blob, out=out) is out and np.array_equal(out.get(), y.get())
    x = as_type(sample(), np.int8).reshape(-1)
    off = cupy.asarray(x)[3:]  # not 16-byte aligned: copied once
    blob = hpcz.compress(off, abs=0)
    assert np.array_equal(hpcz.decompress(blob).get(), x[3:])


def test_device_batches_of_storage_types():
    """compress_batch and decompress_batch of cupy arrays mixing the storage types with float32 (one
    device batch): each archive the host call's bytes, each decoded array the CPU decoder's values, into
    new arrays and into outs."""
    cupy = pytest.importorskip("cupy")
    if not hpcz.gpu_available():
        pytest.skip("no GPU")
    s = sample()
    xs = [as_type(s, t) for t in (np.float16, np.int16, np.uint8, np.int32, np.uint64)] + [s]
    for mode in CODECS:
        blobs = hpcz.compress_batch([cupy.asarray(x) for x in xs], rel=1e-3, mode=mode)
        for x, b in zip(xs, blobs):
            assert isinstance(b, cupy.ndarray)
            assert bytes(b.get()) == hpcz.compress(x, rel=1e-3, mode=mode, device="cpu"), (mode, x.dtype)
        back = hpcz.decompress_batch(blobs)
        outs = [cupy.empty(x.shape, dtype=x.dtype) for x in xs]
        hpcz.decompress_batch(blobs, out=outs)
        for x, b, y, o in zip(xs, blobs, back, outs):
            want = hpcz.decompress(bytes(b.get()), device="cpu")
            assert isinstance(y, cupy.ndarray) and y.dtype == x.dtype and y.shape == x.shape
            assert np.array_equal(y.get(), want) and np.array_equal(o.get(), want), (mode, x.dtype)
