import subprocess
import threading

import numpy as np
import pytest

import hpcz
from conftest import ROOT, find_cli, violations


@pytest.mark.parametrize("mode", ["fast", "ratio", "interp"])
@pytest.mark.parametrize("rel", [1e-2, 1e-4])
def test_roundtrip_within_bound(field, mode, rel):
    name, a = field
    blob = hpcz.compress(a, rel=rel, mode=mode, device="cpu")
    assert isinstance(blob, bytes)
    head = hpcz.info(blob)
    assert head["shape"] == a.shape and head["dtype"] == a.dtype.name and head["mode"] == mode
    b = hpcz.decompress(blob, device="cpu")
    assert b.shape == a.shape and b.dtype == a.dtype
    assert violations(a, b, head["eb_abs"]) == 0, name
    assert a.nbytes / len(blob) > 1.5, name  # real fields compress at these bounds


def test_lossless_stage_shrinks_and_decodes(field):
    name, a = field
    plain = hpcz.compress(a, rel=1e-3, mode="ratio", device="cpu")
    staged = hpcz.compress(a, rel=1e-3, mode="ratio", lossless=True, device="cpu")
    assert hpcz.info(staged)["lossless"] and len(staged) <= len(plain)
    assert np.array_equal(hpcz.decompress(staged).view(np.uint8), hpcz.decompress(plain).view(np.uint8))


def test_same_bytes_as_the_cli(tmp_path):
    cli = find_cli()
    if cli is None:
        pytest.skip("no hpcz CLI built in build/")
    src = ROOT / "data" / "climate-ncar_csm_b003_ts_100x64x128_f32.bin"
    a = np.fromfile(src, dtype=np.float32).reshape(100, 64, 128)
    for mode in ("fast", "ratio", "interp"):
        out = tmp_path / f"{mode}.hpcz"
        subprocess.run([str(cli), "compress", "-i", str(src), "-o", str(out), "-t", "f32", "-d", "100x64x128",
                        "--rel", "1e-3", "--mode", mode, "--device", "cpu", "-q"], check=True)
        assert out.read_bytes() == hpcz.compress(a, rel=1e-3, mode=mode, device="cpu")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values_bit_exact(dtype):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(50_000) * 100).astype(dtype)
    a[::97] = np.nan
    a[5::101] = np.inf
    a[7::103] = -np.inf
    a[9::89] = -0.0
    a[11::83] = -1e10
    for mode in ("fast", "ratio", "interp"):
        blob = hpcz.compress(a, abs=0.5, mode=mode, fill=-1e10)
        b = hpcz.decompress(blob)
        assert violations(a, b, 0.5, fill=-1e10) == 0
        assert hpcz.info(blob)["fill"] == -1e10


def test_abs_zero_is_bit_exact():
    a = np.array([-0.0, 0.0, 1.5, -2.25, 3e-39], dtype=np.float32)
    b = hpcz.decompress(hpcz.compress(a, abs=0))
    assert np.array_equal(a.view(np.uint32), b.view(np.uint32))


def test_out_is_filled_and_returned(field):
    _, a = field
    blob = hpcz.compress(a, rel=1e-3)
    out = np.full(a.shape, 7, dtype=a.dtype)
    got = hpcz.decompress(blob, out=out)
    assert got is out
    assert np.array_equal(out, hpcz.decompress(blob))
    flat = np.empty(a.size, dtype=a.dtype)  # any shape of the right size
    assert np.array_equal(hpcz.decompress(blob, out=flat), out.reshape(-1))


def test_bad_requests_raise_value_errors():
    a = np.ones((4, 4), dtype=np.float32)
    cases = [
        lambda: hpcz.compress(np.ones(8, dtype=np.complex64), rel=1e-3),
        lambda: hpcz.compress(np.ones((2,) * 5, dtype=np.float32), rel=1e-3),
        lambda: hpcz.compress(np.float32(1.0), rel=1e-3),
        lambda: hpcz.compress(np.ones((8, 8), dtype=np.float32)[:, ::2], rel=1e-3),
        lambda: hpcz.compress(a, abs=1.0, bound_rule="or"),  # a rule for one bound (both: test_bound_modes.py)
        lambda: hpcz.compress(a),
        lambda: hpcz.compress(a, rel=-1.0),
        lambda: hpcz.compress(a, rel=1e-3, mode="best"),
        lambda: hpcz.compress(a, rel=1e-3, device="tpu"),
        lambda: hpcz.decompress(hpcz.compress(a, rel=1e-3), out=np.empty(15, dtype=np.float32)),
        lambda: hpcz.decompress(hpcz.compress(a, rel=1e-3), out=np.empty(16, dtype=np.float64)),
        lambda: hpcz.decompress(hpcz.compress(a, rel=1e-3), out=np.empty((8, 4), dtype=np.float32)[:, ::2]),
        lambda: hpcz.decompress(12345),
    ]
    for case in cases:
        with pytest.raises(ValueError) as e:
            case()
        assert isinstance(e.value, hpcz.InvalidArgumentError) and e.value.code == 1


def test_damaged_archives_raise_corrupt_archive(field):
    _, a = field
    blob = bytearray(hpcz.compress(a, rel=1e-3))
    for bad in (bytes(blob[:100]), bytes(blob[:-1]), b"not an archive at all" * 10):
        with pytest.raises(hpcz.CorruptArchiveError) as e:
            hpcz.decompress(bad)
        assert e.value.code == 2
    blob[len(blob) // 2] ^= 0x10  # a flipped bit in the chunk data: its checksum catches it
    with pytest.raises(hpcz.CorruptArchiveError):
        hpcz.decompress(bytes(blob))


def test_gpu_request_without_gpu():
    if hpcz.gpu_available():
        pytest.skip("a GPU is present")
    with pytest.raises(hpcz.BackendUnavailableError) as e:
        hpcz.compress(np.ones(10, dtype=np.float32), rel=1e-3, device="gpu")
    assert e.value.code == 4


def test_threads_give_the_same_bytes(field):
    _, a = field
    want = hpcz.compress(a, rel=1e-3, mode="ratio")
    got = [None] * 6

    def work(k):
        got[k] = hpcz.compress(a, rel=1e-3, mode="ratio")
        assert np.array_equal(hpcz.decompress(got[k]), hpcz.decompress(want))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(g == want for g in got)


def test_gil_released_while_coding():
    # Another Python thread keeps running during one long call; it could not if the GIL were held
    # (it would get only the few milliseconds before the call starts).
    import time

    a = np.tile(np.sin(np.arange(1 << 20, dtype=np.float32)), 24)
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < 0.1:
        n += 1
    rate = n / (time.perf_counter() - t0)  # ticks a second with the interpreter to itself
    done = threading.Event()

    def code():
        hpcz.compress(a, rel=1e-4, mode="ratio", device="cpu")
        done.set()

    ticks = 0
    t = threading.Thread(target=code)
    t0 = time.perf_counter()
    t.start()
    while not done.is_set():
        ticks += 1
    elapsed = time.perf_counter() - t0
    t.join()
    assert elapsed > 0.05
    assert ticks > 0.2 * rate * elapsed, (ticks, rate, elapsed)


def test_info_without_verify_reads_the_header_alone():
    blob = hpcz.compress(np.arange(1000, dtype=np.float64), abs=0.01)
    head = hpcz.info(blob[:144], verify=False)
    assert head["shape"] == (1000,) and head["dtype"] == "float64" and head["bound_kind"] == "abs"
    with pytest.raises(hpcz.CorruptArchiveError):
        hpcz.info(blob[:144])


def test_gpu_and_cpu_write_the_same_bytes(field):
    if not hpcz.gpu_available():
        pytest.skip("no GPU")
    _, a = field
    for mode in ("fast", "ratio", "interp"):
        for lossless in (False, True):
            cpu = hpcz.compress(a, rel=1e-3, mode=mode, lossless=lossless, device="cpu")
            assert hpcz.compress(a, rel=1e-3, mode=mode, lossless=lossless, device="gpu") == cpu
            assert np.array_equal(hpcz.decompress(cpu, device="gpu").view(np.uint8),
                                  hpcz.decompress(cpu, device="cpu").view(np.uint8))


def test_read_only_arrays_compress():
    a = np.linspace(0, 1, 10_000, dtype=np.float32)
    a.flags.writeable = False
    assert hpcz.compress(a, rel=1e-3, device="cpu") == hpcz.compress(a.copy(), rel=1e-3, device="cpu")


def test_damaged_archives_of_empty_arrays():
    blob = hpcz.compress(np.empty((0, 5), dtype=np.float32), abs=1e-3)
    assert hpcz.decompress(blob).shape == (0, 5)
    with pytest.raises(hpcz.CorruptArchiveError):
        hpcz.decompress(blob + b"garbage" * 100)
    with pytest.raises(hpcz.CorruptArchiveError):
        hpcz.decompress(hpcz.compress(np.ones(10_000, dtype=np.float32), abs=1e-3)[:144])


def test_version_is_the_library_release_and_the_package_version():
    """hpcz.__version__ is the release the library reports, and pyproject.toml's where the tree is here."""
    import pathlib
    import re

    assert hpcz.__version__ == hpcz._hpcz.version().split()[1]
    assert re.fullmatch(r"\d+\.\d+\.\d+", hpcz.__version__)
    toml = pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml"
    if toml.exists():
        m = re.search(r'^version = "([^"]+)"', toml.read_text(), re.M)
        assert m and m.group(1) == hpcz.__version__


# Pairs of keys that name one field in hpcz.info() and `hpcz info --json` (README, "Archive info keys").
_SAME_FIELD = [("version", "format_version"), ("shape", "dims"), ("mode", "codec"), ("bound_kind", "bound_mode"),
               ("lossless", "second_stage"), ("archive_size", "archive_bytes")]


def _plain(x):
    """Tuples as lists (JSON has only lists), recursively."""
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


@pytest.mark.parametrize("kw", [dict(mode="fast", rel=1e-3), dict(mode="ratio", abs=0.05, lossless=True, fill=-1e10),
                                dict(mode="interp", rel=1e-4, fill=-1e10)])
def test_info_gives_the_clis_keys_and_values(tmp_path, kw):
    cli = find_cli()
    if cli is None:
        pytest.skip("no hpcz CLI built")
    import json

    a = np.fromfile(ROOT / "data" / "climate-ncar_csm_b003_ts_100x64x128_f32.bin", dtype=np.float32)
    a = a.reshape(100, 64, 128).copy()
    a[3, :5] = -1e10
    blob = hpcz.compress(a, device="cpu", **kw)
    path = tmp_path / "a.hpcz"
    path.write_bytes(blob)
    out = subprocess.run([str(cli), "info", "--json", str(path)], check=True, capture_output=True, text=True).stdout
    shell, py = json.loads(out), _plain(hpcz.info(blob))
    assert sorted(shell) == sorted(py)  # the union of both outputs' keys, in each
    for k in shell:
        if k == "dtype":  # the one key spelt two ways, kept as each always was
            assert (shell[k], py[k]) == ("f32", "float32")
        else:
            assert shell[k] == py[k], k
    for one, other in _SAME_FIELD:
        assert py[one] == py[other] and shell[one] == shell[other], (one, other)
    assert (py["mode"], py["bound_kind"], py["lossless"]) == (kw["mode"], "abs" if "abs" in kw else "rel",
                                                             kw.get("lossless", False))
    assert ("stages" in py) == (kw["mode"] != "fast") and len(py["chunks"]) == py["n_chunks"]
    assert py["compression_ratio"] == a.nbytes / len(blob)
    # Without verify only the header is read: no chunk table, no stages; the rest as with it.
    head = hpcz.info(blob, verify=False)
    assert "chunks" not in head and "stages" not in head
    assert {k: v for k, v in _plain(head).items()} == {k: v for k, v in py.items() if k not in ("chunks", "stages")}


def test_one_vocabulary_from_the_library():
    from hpcz import _hpcz

    # The codec names and numbers are the library's (its registry), the ones the archive header, the C API
    # and the HDF5 filter's words use; the Python front ends take them from there.
    assert _hpcz.codecs() == {"fast": 1, "ratio": 2, "interp": 3}
    assert hpcz._MODES == ("fast", "ratio", "interp")
    assert _hpcz.bound_modes() == {"abs": 1, "rel": 2, "pw_rel": 3, "psnr": 4, "nrmse": 5, "abs_and_rel": 6,
                                   "abs_or_rel": 7}
    assert _hpcz.dtypes() == {"float32": 1, "float64": 2, "float16": 3, "bfloat16": 4, "int8": 5, "uint8": 6, "int16": 7,
                              "uint16": 8, "int32": 9, "uint32": 10, "int64": 11, "uint64": 12}
    assert [_hpcz.parse_bound_mode(s) for s in ("abs", "absolute", "rel", "relative", "pw_rel", "pointwise_relative",
                                                "psnr", "nrmse", "ssim")] == \
        ["abs", "abs", "rel", "rel", "pw_rel", "pw_rel", "psnr", "nrmse", None]
    assert [_hpcz.parse_bound_mode(s) for s in ("abs_and_rel", "absolute_and_relative", "abs_or_rel",
                                                "absolute_or_relative")] == ["abs_and_rel"] * 2 + ["abs_or_rel"] * 2
    a = np.ones(100, dtype=np.float32)
    for call in (lambda: hpcz.compress(a, rel=1e-3, mode="lorenzo"),
                 lambda: hpcz.compress_batch([a], rel=1e-3, mode="lorenzo")):
        with pytest.raises(hpcz.InvalidArgumentError, match="mode must be 'fast', 'ratio' or 'interp', not 'lorenzo'"):
            call()
    # The module itself refuses a bound kind it does not know (it mapped anything but "abs" to rel).
    with pytest.raises(hpcz.InvalidArgumentError, match="bound kind must be 'abs', 'rel', 'pw_rel', 'psnr', 'nrmse', "
                                                        "'abs_and_rel' or 'abs_or_rel', not 'ssim'"):
        _hpcz.compress(a, "fast", "ssim", 1e-3, False, None, "cpu")
    blob = _hpcz.compress(a, "fast", "absolute", 0.5, False, None, "cpu")
    assert hpcz.info(blob)["bound_kind"] == "abs"


def test_keyword_arguments_in_one_order():
    import inspect

    import hpcz.numcodecs
    import hpcz.zarr

    order = ["abs", "rel", "mode", "lossless", "fill", "device"]

    def shared(f):
        return [p for p in inspect.signature(f).parameters if p in order]

    codecs = (hpcz.numcodecs.Hpcz.__init__, hpcz.zarr.Hpcz.__init__)  # hpcz.hdf5.Hpcz: test_hdf5.py
    for f in (hpcz.compress, hpcz.compress_batch) + codecs:
        assert shared(f) == [p for p in order if p in shared(f)], f
    assert shared(hpcz.compress) == order
    # The codec classes: the same keywords in the same order, hdf5plugin's spellings and data= after them.
    rest = ["absolute", "relative", "data"]
    for f in codecs:
        assert [p for p in inspect.signature(f).parameters if p in order + rest] == order[:5] + rest, f
    # numcodecs' Hpcz takes mode first by position (Hpcz("ratio", 0.01)), as it always has.
    config = hpcz.numcodecs.Hpcz("ratio", 0.01).get_config()
    assert (config["mode"], config["abs"]) == ("ratio", 0.01)
    config = hpcz.numcodecs.Hpcz("interp", None, 1e-3, True, -1.0).get_config()
    assert (config["mode"], config["rel"], config["lossless"], config["fill"]) == ("interp", 1e-3, True, -1.0)
    assert hpcz.numcodecs.Hpcz("ratio", rel=0.01).get_config() == hpcz.numcodecs.Hpcz(mode="ratio", rel=0.01).get_config()
    assert "mode='fast'" in str(inspect.signature(hpcz.numcodecs.Hpcz.__init__))  # the default, as it reads
    with pytest.raises(TypeError, match="two values for mode"):
        hpcz.numcodecs.Hpcz("ratio", mode="fast", abs=0.1)
    with pytest.raises(TypeError, match="at most 5"):
        hpcz.numcodecs.Hpcz("ratio", 0.1, None, False, None, 1)


def test_numcodecs_and_zarr_take_hdf5plugins_spellings():
    import hpcz.numcodecs
    import hpcz.zarr

    assert hpcz.numcodecs.Hpcz(relative=1e-3).get_config() == hpcz.numcodecs.Hpcz(rel=1e-3).get_config()
    assert hpcz.numcodecs.Hpcz(absolute=0.5, mode="ratio").get_config() == hpcz.numcodecs.Hpcz(abs=0.5, mode="ratio").get_config()
    assert hpcz.zarr.Hpcz(relative=1e-3).to_dict() == hpcz.zarr.Hpcz(rel=1e-3).to_dict()
    assert hpcz.zarr.Hpcz(absolute=0.5).to_dict()["configuration"]["abs"] == 0.5
    for make in (hpcz.numcodecs.Hpcz, hpcz.zarr.Hpcz):
        with pytest.raises(hpcz.InvalidArgumentError, match="abs= or absolute="):
            make(abs=0.1, absolute=0.1)
        with pytest.raises(hpcz.InvalidArgumentError, match="rel= or relative="):
            make(rel=0.1, relative=0.1)
        # Both spellings of both bounds: abs_and_rel (test_bound_modes.py), the same as abs= with rel=.
        assert make(absolute=0.1, relative=0.1) == make(abs=0.1, rel=0.1)
        with pytest.raises(hpcz.InvalidArgumentError, match="give abs=, rel= or both"):
            make()
