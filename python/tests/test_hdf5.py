"""The HDF5 filter through h5py, h5dump and h5ls, and a process that only sets HDF5_PLUGIN_PATH."""

import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
import hpcz  # noqa: E402

import hpcz.hdf5 as hh  # noqa: E402  every build has the filter (hdf5/h5_decls.hpp): no skip

from conftest import ROOT, violations  # noqa: E402

GOLDEN = pathlib.Path(__file__).parent / "golden" / "ts-hpcz-filter-v1.h5"
SAMPLE = ROOT / "data" / "climate-ncar_csm_b003_ts_100x64x128_f32.bin"


def write(path, a, chunks, **kw):
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=a, chunks=chunks, **hh.Hpcz(**kw))


@pytest.mark.parametrize("kw", [{"abs": 0.01}, {"abs": 0.01, "mode": "ratio"}, {"abs": 0.01, "mode": "ratio", "lossless": True}])
def test_roundtrip_within_bound(tmp_path, field, kw):
    _, a = field
    chunks = (max(1, a.shape[0] // 3),) + a.shape[1:]
    fill = -1e10 if np.any(a == a.dtype.type(-1e10)) else None  # a masked field names its fill value
    kw = dict(kw, fill=fill)
    write(tmp_path / "f.h5", a, chunks, **kw)
    with h5py.File(tmp_path / "f.h5", "r") as f:
        d = f["x"]
        back = d[...]
        stored = d.id.get_storage_size()
        code, _, values, _ = d.id.get_create_plist().get_filter(0)
        assert code == hh.FILTER_ID and tuple(values[:8]) == hh.Hpcz(**kw)["compression_opts"]
        assert tuple(values[10:]) == chunks  # set_local added dtype, rank and the chunk's dims
    assert violations(a, back, 0.01, fill=fill) == 0
    assert a.nbytes / stored > 1.0  # smaller than the raw chunks, on every field at this bound


def test_rel_fill_and_many_dimensions(tmp_path):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 4, 5, 6, 70)).astype(np.float64)
    a[a > 2] = -9999.0
    a[0, 0, 0, 0, :3] = [np.nan, np.inf, -0.0]
    write(tmp_path / "m.h5", a, (2, 4, 5, 6, 70), abs=1e-5, fill=-9999.0)
    with h5py.File(tmp_path / "m.h5", "r") as f:
        assert violations(a, f["x"][...], 1e-5, fill=-9999.0) == 0


def test_complex_datasets_are_refused(tmp_path):
    with h5py.File(tmp_path / "i.h5", "w") as f:
        with pytest.raises((ValueError, RuntimeError, OSError)):
            f.create_dataset("i", data=np.arange(100, dtype=np.complex64), chunks=(50,), **hh.Hpcz(rel=1e-3))


def test_bad_options_are_refused():
    for kw in ({}, {"abs": 1, "rel": 1, "bound_rule": "xor"}, {"abs": 1, "bound_rule": "and"}, {"abs": -1.0},
               {"abs": -1.0, "rel": 1e-3}, {"abs": 1.0, "rel": float("nan"), "bound_rule": "or"}, {"rel": 1e-3, "mode": "best"}, {"abs": float("nan")},
               {"rel": float("inf")}, {"abs": 1.0, "fill": float("nan")}):
        with pytest.raises(ValueError):
            hh.Hpcz(**kw)


def test_shuffle_before_hpcz_fails_at_create_dataset(tmp_path):
    # The shuffle filter runs first: hpcz would bound shuffled bytes read as floats (max error 522,712
    # for abs=10 before set_local refused it).
    a = np.fromfile(SAMPLE, dtype=np.float32).reshape(100, 64, 128)[:10] * 1000
    with h5py.File(tmp_path / "s.h5", "w") as f:
        with pytest.raises(ValueError, match="hpcz must be the first filter"):
            f.create_dataset("x", data=a, chunks=(5, 64, 128), shuffle=True, **hh.Hpcz(abs=10))
        assert "x" not in f
        # A filter after hpcz sees only the archive: allowed, and the bound holds.
        f.create_dataset("y", data=a, chunks=(5, 64, 128), fletcher32=True, **hh.Hpcz(abs=10))
        assert violations(a, f["y"][...], 10) == 0


def opts(bound=1.0, version=1, mode=1, kind=1, flags=0, fill=0.0, n=8):
    return tuple([version, mode, kind] + hh._words(bound) + [flags] + hh._words(fill))[:n]


@pytest.mark.parametrize("words, reason", [
    (opts(bound=float("nan")), "finite number >= 0"), (opts(bound=-1.0), "finite number >= 0"),
    (opts(bound=float("inf")), "finite number >= 0"), (opts(version=3), "unknown version"),
    (opts(mode=9), "unknown mode"), (opts(kind=0), "unknown bound kind"), (opts(flags=8), "unknown flags"),
    (opts(flags=1, n=6), "no fill value"), (opts(flags=1, fill=0.1), "not representable as float32"),
])
def test_invalid_words_fail_at_create_dataset(tmp_path, words, reason):
    # Words the helper would not build, given to h5py directly: refused at create_dataset with hpcz's
    # reason, not stored raw at write time (h5py adds the filter as optional).
    with h5py.File(tmp_path / "w.h5", "w") as f:
        with pytest.raises(ValueError, match=reason):
            f.create_dataset("x", data=np.arange(1000, dtype=np.float32), chunks=(100,), compression=hh.FILTER_ID,
                             compression_opts=words)


def test_the_filter_is_stored_mandatory(tmp_path):
    # h5py adds it as optional; set_local clears that, so a chunk hpcz cannot code fails the write.
    with h5py.File(tmp_path / "m.h5", "w") as f:
        f.create_dataset("x", data=np.arange(1000, dtype=np.float32), chunks=(100,), **hh.Hpcz(abs=1))
        code, flags = f["x"].id.get_create_plist().get_filter(0)[:2]
        assert code == hh.FILTER_ID and flags & h5py.h5z.FLAG_OPTIONAL == 0


def run_alone(code, tmp_path):
    env = dict(os.environ, HDF5_PLUGIN_PATH=hh.PLUGIN_PATH)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr


def test_read_with_only_the_plugin_path(tmp_path):
    a = np.fromfile(SAMPLE, dtype=np.float32).reshape(100, 64, 128)
    write(tmp_path / "p.h5", a, (25, 64, 128), abs=0.05, mode="ratio")
    np.save(tmp_path / "a.npy", a)
    run_alone("import sys, h5py, numpy as np\n"
              "b = h5py.File('p.h5', 'r')['x'][...]\n"
              "assert 'hpcz' not in sys.modules\n"
              "assert np.abs(b.astype(np.float64) - np.load('a.npy')).max() <= 0.05\n", tmp_path)


@pytest.mark.skipif(shutil.which("h5dump") is None, reason="no h5dump (Debian: hdf5-tools)")
def test_h5dump_and_h5ls(tmp_path):
    a = np.fromfile(SAMPLE, dtype=np.float32).reshape(100, 64, 128)
    write(tmp_path / "d.h5", a, (50, 64, 128), abs=0.01)
    env = dict(os.environ, HDF5_PLUGIN_PATH=hh.PLUGIN_PATH)
    r = subprocess.run(["h5dump", "-d", "/x", "-s", "7,3,0", "-c", "1,1,6", str(tmp_path / "d.h5")],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    line = next(l for l in r.stdout.splitlines() if l.strip().startswith("(7,3,0)"))
    got = np.array([float(x) for x in line.split(":", 1)[1].split(",")])
    assert np.abs(got - a[7, 3, :6]).max() <= 0.01 + 1e-3  # h5dump prints 6 significant digits
    r = subprocess.run(["h5ls", "-v", str(tmp_path / "d.h5")], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "hpcz" in r.stdout and str(hh.FILTER_ID) in r.stdout


def test_golden_file_still_reads():
    # Written by the first version of the filter (python/tests/golden/make_golden.py): every later one reads it.
    a = np.fromfile(SAMPLE, dtype=np.float32).reshape(100, 64, 128)[:20]
    with h5py.File(GOLDEN, "r") as f:
        for name, eb in (("fast_abs", 0.05), ("ratio_rel", 1e-3 * (a.max() - a.min())), ("ratio_lossless", 0.05)):
            assert violations(a, f[name][...], eb) == 0, name


def test_interp_mode_with_a_mask(tmp_path):
    # mode "interp" through the filter: the fill value comes back exactly and costs little
    # (chunks of 6.25 MiB: coded on the GPU where the codec has a GPU implementation, else the CPU)
    a = np.tile(np.fromfile(SAMPLE, dtype=np.float32).reshape(100, 64, 128), (2, 1, 1))
    a[:, 10:50, 30:80] = -1e10
    sizes = {}
    with h5py.File(tmp_path / "m.h5", "w") as f:
        for mode in ("ratio", "interp"):
            f.create_dataset(mode, data=a, chunks=(200, 64, 128), **hh.Hpcz(abs=0.05, mode=mode, fill=-1e10))
            sizes[mode] = f[mode].id.get_storage_size()
    with h5py.File(tmp_path / "m.h5", "r") as f:
        back = f["interp"][...]
    mask = a == np.float32(-1e10)
    assert np.array_equal(back[mask], a[mask])
    assert violations(a[~mask], back[~mask], 0.05) == 0
    assert sizes["interp"] * 2 < sizes["ratio"]


def test_direct_chunk_writes_read_through_the_filter(tmp_path):
    a = np.fromfile(SAMPLE, dtype=np.float32).reshape(100, 64, 128)
    with h5py.File(tmp_path / "w.h5", "w") as f:
        d = f.create_dataset("x", shape=a.shape, dtype=a.dtype, chunks=(30, 64, 128), **hh.Hpcz(abs=0.02, mode="ratio"))
        for k in range(0, 100, 30):  # the last chunk is 10 rows: padded
            hh.write_chunk(d, (k, 0, 0), a[k:k + 30])
        with pytest.raises(ValueError):
            hh.write_chunk(d, (5, 0, 0), a[:30])
        with pytest.raises(ValueError):
            hh.write_chunk(d, (0, 0, 0), a[:30].astype(np.float64))
    with h5py.File(tmp_path / "w.h5", "r") as f:
        assert violations(a, f["x"][...], 0.02) == 0


def test_big_endian_datasets_are_refused(tmp_path):
    # The filter codes the stored bytes as the machine's floats: a big-endian type would lose the bound.
    with h5py.File(tmp_path / "be.h5", "w") as f:
        for t in (">f4", ">f8"):
            with pytest.raises((ValueError, RuntimeError, OSError)):
                f.create_dataset(t, data=np.linspace(1, 2, 1000).astype(t), chunks=(500,), **hh.Hpcz(abs=1e-3))


def test_a_chunk_of_another_size_or_dtype_fails_cleanly(tmp_path):
    # An archive that is not the chunk's (a direct chunk write gone wrong) fails the read with an error;
    # in a child process, so that a crash would show as one.
    code = ("import h5py, numpy as np, hpcz, hpcz.hdf5 as hh\n"
            "with h5py.File('c.h5', 'w') as f:\n"
            "    d = f.create_dataset('x', shape=(100000,), dtype='f4', chunks=(100000,), **hh.Hpcz(abs=1e-3))\n"
            "    d.id.write_direct_chunk((0,), hpcz.compress(np.ones(1000, 'f4'), abs=1e-3), filter_mask=0)\n"
            "    e = f.create_dataset('y', shape=(1000,), dtype='f4', chunks=(1000,), **hh.Hpcz(abs=1e-3))\n"
            "    e.id.write_direct_chunk((0,), hpcz.compress(np.ones(1000, 'f8'), abs=1e-3), filter_mask=0)\n"
            "for name in ('x', 'y'):\n"
            "    try:\n"
            "        h5py.File('c.h5', 'r')[name][...]\n"
            "        raise SystemExit(name + ' read without an error')\n"
            "    except OSError:\n"
            "        pass\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr + r.stdout


def test_direct_chunk_write_options(tmp_path):
    a = np.random.default_rng(9).standard_normal((4, 3, 5, 6, 20)).astype(np.float32)
    with h5py.File(tmp_path / "o.h5", "w") as f:
        d = f.create_dataset("x", shape=a.shape, dtype=a.dtype, chunks=(2, 3, 5, 6, 20),
                             **hh.Hpcz(abs=1e-3, mode="ratio", lossless=True))
        for k in (0, 2):  # five dims, the lossless stage kept
            hh.write_chunk(d, (k, 0, 0, 0, 0), a[k:k + 2])
        assert hpcz.info(d.id.read_direct_chunk((0, 0, 0, 0, 0))[1])["lossless"]
        g = f.create_dataset("g", shape=(100,), dtype="f4", chunks=(50,), fletcher32=True, **hh.Hpcz(abs=1e-3))
        with pytest.raises(ValueError):  # a pipeline with another filter than hpcz
            hh.write_chunk(g, (0,), np.ones(50, "f4"))
    with h5py.File(tmp_path / "o.h5", "r") as f:
        assert violations(a, f["x"][...], 1e-3) == 0


@pytest.mark.parametrize("kw", [{"rel": 1e-3}, {"abs": 0.01, "mode": "ratio", "lossless": True}])
def test_batch_write_and_read_store_the_filters_bytes(tmp_path, field, kw):
    """hpcz.hdf5.write stores the bytes the filter stores (edge chunks included); hpcz.hdf5.read gives
    what h5py reads through the filter, for chunks written either way."""
    _, a = field
    chunks = (max(1, a.shape[0] // 3 + 1),)  # edges on the first axis, and on the last where there are two
    if a.ndim > 1:
        chunks += a.shape[1:-1] + (max(1, a.shape[-1] // 2 + 1),)
    with h5py.File(tmp_path / "f.h5", "w") as f:
        by_filter = f.create_dataset("filter", data=a, chunks=chunks, **hh.Hpcz(**kw))
        by_batch = f.create_dataset("batch", shape=a.shape, dtype=a.dtype, chunks=chunks, **hh.Hpcz(**kw))
        hh.write(by_batch, a)
    with h5py.File(tmp_path / "f.h5", "r") as f:
        d, b = f["filter"], f["batch"]
        n = d.id.get_num_chunks()
        assert n == b.id.get_num_chunks() > 1
        for k in range(n):
            off = d.id.get_chunk_info(k).chunk_offset
            assert d.id.read_direct_chunk(off) == b.id.read_direct_chunk(off), off
        through_filter = d[...]
        assert np.array_equal(hh.read(d).view(np.uint8), through_filter.view(np.uint8))
        assert np.array_equal(hh.read(b).view(np.uint8), through_filter.view(np.uint8))


def test_batch_read_of_a_partly_written_dataset(tmp_path):
    a = np.fromfile(SAMPLE, dtype=np.float32).reshape(100, 64, 128)
    with h5py.File(tmp_path / "p.h5", "w") as f:
        d = f.create_dataset("x", shape=a.shape, dtype=a.dtype, chunks=(10, 64, 128), fillvalue=-5.0, **hh.Hpcz(abs=0.1))
        d[20:30] = a[20:30]  # one chunk through the filter, the rest never written
        out = np.full(a.shape, np.nan, dtype=a.dtype)
        assert hh.read(d, out=out) is out
        assert np.all(out[:20] == -5.0) and np.all(out[30:] == -5.0)
        assert violations(a[20:30], out[20:30], 0.1) == 0
        with pytest.raises(hpcz.InvalidArgumentError):
            hh.write(d, a[:50])
        with pytest.raises(hpcz.InvalidArgumentError):
            hh.read(d, out=np.empty((100, 64, 127), np.float32))


def test_keyword_arguments_in_the_codecs_order():
    import inspect

    # The order of hpcz.compress and the other codec classes (test_api.py), and by position the same.
    names = ["abs", "rel", "mode", "lossless", "fill", "absolute", "relative", "data", "bound_rule", "pw_rel", "psnr",
             "nrmse"]
    params = list(inspect.signature(hh.Hpcz.__init__).parameters.values())[1:]
    assert [p.name for p in params] == names
    assert [p.name for p in params if p.kind == p.POSITIONAL_OR_KEYWORD] == names[:5]
    assert hh.Hpcz(1e-3, None, "ratio", True, -1.0).filter_options == \
        hh.Hpcz(abs=1e-3, mode="ratio", lossless=True, fill=-1.0).filter_options


def test_hdf5plugins_spellings_and_the_librarys_numbers(tmp_path):
    from hpcz import _hpcz

    # absolute= / relative=, as hdf5plugin's SZ and SZ3 take them: the same words as abs= / rel=.
    assert hh.Hpcz(absolute=0.25, mode="ratio").filter_options == hh.Hpcz(abs=0.25, mode="ratio").filter_options
    assert hh.Hpcz(relative=1e-3, fill=-1.0).filter_options == hh.Hpcz(rel=1e-3, fill=-1.0).filter_options
    assert hh.Hpcz(0.25).filter_options == hh.Hpcz(abs=0.25).filter_options  # positional as before
    with pytest.raises(hpcz.InvalidArgumentError, match="abs= or absolute="):
        hh.Hpcz(abs=0.1, absolute=0.1)
    # Both bounds, either spelling: abs_and_rel (test_bound_modes.py).
    assert hh.Hpcz(absolute=0.1, relative=0.1).filter_options == hh.Hpcz(abs=0.1, rel=0.1).filter_options
    with pytest.raises(hpcz.InvalidArgumentError, match="give abs=, rel= or both"):
        hh.Hpcz()
    # Words 1 and 2 are the library's codec and bound mode numbers, and read back as their names.
    for mode, number in _hpcz.codecs().items():
        words = hh.Hpcz(relative=1e-2, mode=mode).filter_options
        assert (words[1], words[2]) == (number, _hpcz.bound_modes()["rel"])
        a = np.linspace(0, 1, 64 * 64, dtype=np.float32).reshape(64, 64)
        with h5py.File(tmp_path / f"{mode}.h5", "w") as f:
            d = f.create_dataset("x", data=a, chunks=(32, 64), **hh.Hpcz(absolute=1e-3, mode=mode))
            assert hh._options(d) == {"mode": mode, "abs": 1e-3, "lossless": False, "fill": None}
            assert violations(a, d[...], 1e-3) == 0


def sample():
    return np.fromfile(SAMPLE, dtype=np.float32).reshape(100, 64, 128)


def written_range_bound(a, rel, fill=None):
    """rel x (max - min) of a's finite values (fill left out): what a rel bound promises for the array."""
    v = a[np.isfinite(a)].astype(np.float64)
    if fill is not None:
        v = v[v != fill]
    return rel * (v.max() - v.min())


@pytest.mark.parametrize("chunks", [True, (16, 48, 48)])
@pytest.mark.parametrize("mode", ["fast", "ratio"])
def test_rel_is_relative_to_the_values_written_in_edge_chunks(tmp_path, chunks, mode):
    # Surface temperatures (about 200-310 K) in chunks that do not divide the shape: HDF5 pads the edge
    # chunks with 0, which counted in their range loosened rel=1e-3 2.6x (max error 0.31 against 0.12).
    a = sample()
    with h5py.File(tmp_path / "t.h5", "w") as f:
        d = f.create_dataset("x", data=a, chunks=chunks, **hh.Hpcz(rel=1e-3, mode=mode))
        assert any(n % c for n, c in zip(a.shape, d.chunks)), d.chunks  # edge chunks, padded
        assert hh._stored_padding(d) == 0.0  # set_local's word: what the filter leaves out of the range
    with h5py.File(tmp_path / "t.h5", "r") as f:  # read from the file, not from h5py's chunk cache
        back = f["x"][...]
    assert violations(a, back, written_range_bound(a, 1e-3)) == 0
    with h5py.File(tmp_path / "t.h5", "r") as f:  # the batch path stores and reads the same
        with h5py.File(tmp_path / "w.h5", "w") as g:
            e = g.create_dataset("x", shape=a.shape, dtype=a.dtype, chunks=f["x"].chunks, **hh.Hpcz(rel=1e-3, mode=mode))
            hh.write(e, a)
            assert violations(a, hh.read(e), written_range_bound(a, 1e-3)) == 0
            corner = tuple((n - 1) // c * c for n, c in zip(a.shape, e.chunks))
            for off in [(0, 0, 0), corner]:  # an inner chunk and the corner one, as the filter stored them
                assert e.id.read_direct_chunk(off)[1] == f["x"].id.read_direct_chunk(off)[1]


def test_rel_with_the_datasets_fill_value_and_a_chunk_of_only_fill(tmp_path):
    a = sample()
    a[:, :10, :10] = -999.0  # masked cells, the dataset's fill value
    a[64:80] = -999.0  # whole chunks of only the fill value
    with h5py.File(tmp_path / "m.h5", "w") as f:
        d = f.create_dataset("x", data=a, chunks=(16, 48, 48), fillvalue=-999.0, **hh.Hpcz(rel=1e-3))
        assert hh._stored_padding(d) == -999.0 and hh._options(d)["fill"] is None
    with h5py.File(tmp_path / "m.h5", "r") as f:
        back = f["x"][...]
    # -999 (the padding, and the minimum of the chunks with masked cells) is left out of every range
    assert violations(a, back, written_range_bound(a, 1e-3, fill=-999.0)) == 0
    assert np.array_equal(back[64:80], a[64:80])  # chunks of only the padding value: abs 0, exact


def test_rel_with_a_fill_and_many_zeros(tmp_path):
    # The user's fill (-9999) is not the padding (0); and a field whose values are mostly 0 (the padding
    # value too) keeps its ratio: the zeros are coded as values, not kept exactly.
    a = sample()
    a[:, 60:, 120:] = -9999.0
    p = np.maximum(sample() - 290, 0).astype(np.float32)
    with h5py.File(tmp_path / "c.h5", "w") as f:
        f.create_dataset("x", data=a, chunks=(16, 48, 48), **hh.Hpcz(rel=1e-3, fill=-9999.0))
        f.create_dataset("p", data=p, chunks=(16, 48, 48), **hh.Hpcz(rel=1e-3, mode="ratio"))
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert violations(a, f["x"][...], written_range_bound(a, 1e-3, -9999.0), fill=-9999.0) == 0
        assert violations(p, f["p"][...], written_range_bound(p, 1e-3)) == 0
        assert p.nbytes / f["p"].id.get_storage_size() > 5  # 1.0 with the zeros kept exactly


def test_rel_with_data_is_the_arrays_abs_bound(tmp_path):
    import struct
    from fractions import Fraction

    a = sample()
    a[0, :5, :5] = -9999.0
    a[1, 0, :3] = [np.nan, np.inf, -np.inf]
    for fill in (None, -9999.0):
        words = hh.Hpcz(rel=1e-3, data=a, fill=fill, mode="ratio")["compression_opts"]
        got = struct.unpack("<d", struct.pack("<II", *words[3:5]))[0]
        v = a[np.isfinite(a)].astype(np.float64)
        v = v if fill is None else v[v != fill]
        assert words[2] == hpcz._hpcz.bound_modes()["abs"]
        assert got == pytest.approx(1e-3 * (v.max() - v.min()), rel=1e-15, abs=0)
        assert Fraction(got) <= Fraction(1e-3) * (Fraction(v.max()) - Fraction(v.min()))  # never above it
    assert hh.Hpcz(rel=1e-3, data=a, fill=-9999.0)["compression_opts"] != hh.Hpcz(rel=1e-3, data=a)["compression_opts"]
    with h5py.File(tmp_path / "d.h5", "w") as f:
        f.create_dataset("x", data=a, chunks=(16, 48, 48), **hh.Hpcz(rel=1e-3, data=a, fill=-9999.0))
    with h5py.File(tmp_path / "d.h5", "r") as f:
        assert violations(a, f["x"][...], written_range_bound(a, 1e-3, -9999.0), fill=-9999.0) == 0
    with pytest.raises(ValueError, match="give rel="):
        hh.Hpcz(abs=0.1, data=a)
    with pytest.raises(ValueError, match="datasets of float32, .*, not complex64"):
        hh.Hpcz(rel=1e-3, data=np.arange(10, dtype=np.complex64))
    with pytest.raises(ValueError, match=r"big-endian float32.*astype\('<f4'\)"):
        hh.Hpcz(rel=1e-3, data=a.astype(">f4"))


@pytest.mark.parametrize("dtype, reason", [("complex64", "a compound"), (">f4", r"big-endian float32.*'<f4'"),
                                           (">f8", r"big-endian float64.*'<f8'"), (">i2", r"big-endian int16.*'<i2'")])
def test_types_the_filter_does_not_code_are_refused_with_the_reason(tmp_path, dtype, reason):
    with h5py.File(tmp_path / "t.h5", "w") as f:
        with pytest.raises(ValueError, match=reason):
            f.create_dataset("x", data=np.arange(100).astype(dtype), chunks=(50,), **hh.Hpcz(abs=1))


def test_datasets_are_created_with_only_the_plugin_path(tmp_path):
    # h5py finds the filter through HDF5_PLUGIN_PATH without importing hpcz: its HDF5 is private, so
    # set_local looks up the HDF5 that calls it (it once failed every dataset: "error during user callback").
    code = ("import h5py, numpy as np\n"
            "a = np.linspace(250, 300, 1000, dtype='f4')\n"
            "with h5py.File('p.h5', 'w') as f:\n"
            "    f.create_dataset('x', data=a, chunks=(300,), compression=34520)\n"
            "    assert np.abs(f['x'][...] - a).max() <= 1e-3 * 50\n"
            "    try:\n"
            "        f.create_dataset('i', data=np.arange(10, dtype='c8'), chunks=(5,), compression=34520)\n"
            "        raise SystemExit('a complex64 dataset was created')\n"
            "    except ValueError as e:\n"
            "        assert 'a compound' in str(e), str(e)\n")
    run_alone(code, tmp_path)
