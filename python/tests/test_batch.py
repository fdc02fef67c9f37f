"""hpcz.compress_batch / decompress_batch: each archive is hpcz.compress's for its array, each decode
hpcz.decompress's; a bad item is reported in its place and the others come through; zarr batches."""

import numpy as np
import pytest

import hpcz
from conftest import FIELDS, violations


def pieces():
    """Chunks of every real field along its slowest axis, mixed sizes and both dtypes."""
    out = []
    for name in sorted(FIELDS):
        a = FIELDS[name]
        step = max(1, a.shape[0] // 3)
        out += [a[i:i + step] for i in range(0, a.shape[0], step)]
    out.append(np.zeros((0, 3), dtype=np.float32))
    out.append(np.float64(np.arange(7.0)) / 3)
    return out


@pytest.mark.parametrize("mode", ["fast", "ratio", "interp"])
@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_batch_archives_are_the_one_call_archives(mode, device):
    ps = pieces()
    blobs = hpcz.compress_batch(ps, rel=1e-3, mode=mode, device=device)
    assert len(blobs) == len(ps)
    for p, b in zip(ps, blobs):
        assert isinstance(b, bytes) and b == hpcz.compress(p, rel=1e-3, mode=mode, device="cpu")
    back = hpcz.decompress_batch(blobs, device=device)
    for p, b, v in zip(ps, blobs, back):
        assert v.shape == p.shape and v.dtype == p.dtype
        assert violations(p, v, hpcz.info(b)["eb_abs"]) == 0
        assert np.array_equal(v.view(np.uint8), hpcz.decompress(b, device="cpu").view(np.uint8))


def test_batch_into_given_outs_and_lossless():
    ps = pieces()
    blobs = hpcz.compress_batch(ps, abs=1e-2, lossless=True)
    assert all(hpcz.info(b)["lossless"] for b in blobs if hpcz.info(b)["n_values"])
    outs = [np.full_like(p, np.nan) for p in ps]
    got = hpcz.decompress_batch(blobs, out=outs)
    assert all(g is o for g, o in zip(got, outs))
    for p, b, o in zip(ps, blobs, outs):
        assert violations(p, o, hpcz.info(b)["eb_abs"]) == 0


def test_bad_items_are_reported_in_place():
    ps = pieces()[:6]
    with pytest.raises(hpcz.InvalidArgumentError, match="item 2"):
        hpcz.compress_batch(ps[:2] + [np.arange(5, dtype=np.complex64)] + ps[2:], rel=1e-3)
    blobs = hpcz.compress_batch(ps, rel=1e-3)
    damaged = bytearray(blobs[1])
    damaged[-5] ^= 0x10
    bad = [blobs[0], bytes(damaged), blobs[2][: len(blobs[2]) // 2], b"not an archive", *blobs[3:]]
    got = hpcz.decompress_batch(bad, errors="return")
    assert isinstance(got[1], hpcz.CorruptArchiveError) and "item 1" in str(got[1])
    assert isinstance(got[2], hpcz.CorruptArchiveError)
    assert isinstance(got[3], hpcz.CorruptArchiveError)
    for k, i in [(0, 0), (4, 3), (5, 4), (6, 5)]:
        assert np.array_equal(got[k], hpcz.decompress(blobs[i]))
    with pytest.raises(hpcz.CorruptArchiveError, match="item 1"):
        hpcz.decompress_batch(bad)
    wrong = [np.empty(3, dtype=np.float32)] + [np.empty_like(p) for p in ps[1:]]
    got = hpcz.decompress_batch(blobs, out=wrong, errors="return")
    assert isinstance(got[0], hpcz.InvalidArgumentError)
    assert np.array_equal(got[1], hpcz.decompress(blobs[1]))


def test_empty_batches():
    assert hpcz.compress_batch([], rel=1e-3) == []
    assert hpcz.decompress_batch([]) == []
    with pytest.raises(hpcz.InvalidArgumentError):
        hpcz.decompress_batch([b""], out=[])
    with pytest.raises(hpcz.InvalidArgumentError):
        hpcz.compress_batch([np.ones(4, np.float32)], rel=1e-3, errors="ignore")


def test_zarr_batches_are_the_one_call_archives():
    zarr = pytest.importorskip("zarr")
    import hpcz.zarr as hz

    name = sorted(FIELDS)[0]
    a = FIELDS[name]
    rows = max(1, a.shape[0] // 8)
    for batch_size in (1, 16):
        store = {}
        with zarr.config.set({"codec_pipeline.batch_size": batch_size}):
            z = zarr.create_array(zarr.storage.MemoryStore(store), shape=a.shape, chunks=(rows,) + a.shape[1:],
                                  dtype=a.dtype, serializer=hz.Hpcz(rel=1e-3), compressors=None)
            z[...] = a
            back = z[...]
        chunk_keys = sorted(k for k in store if k.startswith("c/"))
        assert len(chunk_keys) == -(-a.shape[0] // rows)
        first = store["c/" + "/".join(["0"] * a.ndim)].to_bytes()
        assert first == hpcz.compress(np.ascontiguousarray(a[:rows]), rel=1e-3, device="cpu")
        head = hpcz.info(first)
        assert violations(a[:rows], back[:rows], head["eb_abs"]) == 0
