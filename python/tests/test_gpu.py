"""Arrays on the GPU (cupy, torch): coded in place on their device and stream, the same archive bytes
as the host path, decoded on the GPU within the bound. Skipped where there is no GPU or no cupy."""

import numpy as np
import pytest

import hpcz
from conftest import violations

cupy = pytest.importorskip("cupy")
if not hpcz.gpu_available():
    pytest.skip("no GPU", allow_module_level=True)


@pytest.mark.parametrize("mode", ["fast", "ratio", "interp"])
def test_device_archive_is_the_host_archive(field, mode):
    _, a = field
    d = cupy.asarray(a)
    arc = hpcz.compress(d, rel=1e-3, mode=mode)
    assert isinstance(arc, cupy.ndarray) and arc.dtype == cupy.uint8
    host = hpcz.compress(a, rel=1e-3, mode=mode, device="cpu")
    assert arc.get().tobytes() == host
    back = hpcz.decompress(arc)
    assert isinstance(back, cupy.ndarray) and back.shape == a.shape and back.dtype == a.dtype
    assert violations(a, back.get(), hpcz.info(host)["eb_abs"]) == 0
    assert np.array_equal(back.get(), hpcz.decompress(host, device="cpu"))


def test_decode_into_a_device_array_and_from_host_bytes(field):
    _, a = field
    host = hpcz.compress(a, abs=0.01, mode="ratio")
    out = cupy.full(a.shape, 7, dtype=a.dtype)
    assert hpcz.decompress(host, out=out) is out  # host bytes, device out
    assert np.array_equal(out.get(), hpcz.decompress(host))
    raw = cupy.empty(a.size * a.itemsize + 4, dtype=cupy.uint8)  # an out off 16-byte alignment
    odd = raw[4:].view(a.dtype)
    hpcz.decompress(cupy.asarray(np.frombuffer(host, dtype=np.uint8)), out=odd)
    assert np.array_equal(odd.get().reshape(a.shape), out.get())


def test_on_the_array_stream():
    a = np.sin(np.arange(1 << 22, dtype=np.float32) * 1e-3).reshape(1024, 4096)
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        d = cupy.asarray(a)
        arc = hpcz.compress(d, rel=1e-4)
        back = hpcz.decompress(arc)
    s.synchronize()
    assert violations(a, back.get(), hpcz.info(arc)["eb_abs"]) == 0


def test_misaligned_and_non_contiguous_inputs():
    a = np.cos(np.arange(100_001, dtype=np.float64))
    d = cupy.asarray(a)
    arc = hpcz.compress(d[1:], abs=1e-6)  # 8 bytes off 16-byte alignment: copied once
    assert arc.get().tobytes() == hpcz.compress(a[1:], abs=1e-6, device="cpu")
    with pytest.raises(ValueError):
        hpcz.compress(d.reshape(1, -1)[:, ::2], abs=1e-6)  # a strided view
    with pytest.raises(ValueError):
        hpcz.compress(cupy.arange(10, dtype=cupy.complex64), abs=1)
    with pytest.raises(ValueError):
        hpcz.compress(d, abs=1e-6, lossless=True)


def test_damaged_device_archive():
    a = np.linspace(0, 1, 300_000, dtype=np.float32)
    arc = hpcz.compress(cupy.asarray(a), rel=1e-3)
    bad = arc.copy()
    bad[arc.size // 2] ^= 0x10
    with pytest.raises(hpcz.CorruptArchiveError) as e:
        hpcz.decompress(bad)
    assert e.value.code == 2
    with pytest.raises(hpcz.CorruptArchiveError):
        hpcz.decompress(arc[: arc.size - 1])


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(5).standard_normal((64, 300)).astype(np.float32)
    t = torch.as_tensor(a, device="cuda")
    arc = hpcz.compress(t, abs=1e-3)
    assert arc.get().tobytes() == hpcz.compress(a, abs=1e-3, device="cpu")
    out = torch.empty((64, 300), dtype=torch.float32, device="cuda")
    hpcz.decompress(arc, out=out)
    torch.cuda.synchronize()
    assert violations(a, out.cpu().numpy(), 1e-3) == 0


def test_direct_chunk_writes_from_the_gpu(tmp_path):
    h5py = pytest.importorskip("h5py")
    try:
        import hpcz.hdf5 as hh
    except hpcz.BackendUnavailableError:
        pytest.skip("no HDF5 filter in this build")
    a = np.random.default_rng(8).standard_normal((64, 300)).astype(np.float32)
    with h5py.File(tmp_path / "g.h5", "w") as f:
        d = f.create_dataset("x", shape=a.shape, dtype=a.dtype, chunks=(16, 300), **hh.Hpcz(abs=1e-3))
        for k in range(0, 64, 16):
            hh.write_chunk(d, (k, 0), cupy.asarray(a[k:k + 16]))
    with h5py.File(tmp_path / "g.h5", "r") as f:
        assert violations(a, f["x"][...], 1e-3) == 0


def test_device_archive_wants_a_device_out():
    arc = hpcz.compress(cupy.linspace(0, 1, 1000, dtype=cupy.float32), abs=1e-3)
    with pytest.raises(ValueError):
        hpcz.decompress(arc, out=np.empty(1000, dtype=np.float32))


@pytest.mark.parametrize("mode", ["fast", "ratio"])
def test_device_batch_is_the_host_archives(field, mode):
    """A cupy batch (one set of launches in the fast mode): mixed sizes and dtypes, an empty array, a
    view off 16-byte alignment and a bad item; each archive is the host call's, each decodes within
    the bound, and a damaged archive fails alone."""
    _, a = field
    flat = a.reshape(-1)
    host_arrays = [flat[:1], flat[:1000], flat[: 1 << 16].reshape(256, -1), flat[5 : 5 + 300000],
                   flat[: 1 << 18].astype(np.float64), np.empty(0, np.float32), flat[-70001:]] * 3
    arrays = [cupy.asarray(h) for h in host_arrays]
    arrays[3] = cupy.asarray(flat)[5 : 5 + 300000]  # off 16-byte alignment on the device
    arrays.append(cupy.zeros(10, dtype=cupy.complex64))  # refused alone (complex64 is no type hpcz codes)
    got = hpcz.compress_batch(arrays, rel=1e-3, mode=mode, errors="return")
    assert isinstance(got[-1], hpcz.Error)
    for h, arc in zip(host_arrays, got):
        assert isinstance(arc, cupy.ndarray)
        assert arc.get().tobytes() == hpcz.compress(h, rel=1e-3, mode=mode, device="cpu")
    archives = got[:-1]
    bad = archives[2].copy()
    bad[-3] ^= 0xFF  # a payload byte: its chunk's checksum fails
    back = hpcz.decompress_batch(archives[:2] + [bad] + archives[3:], errors="return")
    assert isinstance(back[2], hpcz.CorruptArchiveError)
    for i, (h, b) in enumerate(zip(host_arrays, back)):
        if i == 2:
            continue
        assert isinstance(b, cupy.ndarray) and b.shape == h.shape and b.dtype == h.dtype
        eb = hpcz.info(archives[i].get().tobytes())["eb_abs"]
        assert violations(h, b.get(), eb) == 0
    outs = [cupy.empty_like(x) for x in arrays[:-1]]
    assert all(o is r for o, r in zip(outs, hpcz.decompress_batch(archives, out=outs)))


class _Interface:
    """A device array behind a plain __cuda_array_interface__: what the general device path takes."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = a.__cuda_array_interface__


def test_cupy_batches_read_in_cpp_are_the_general_path(field):
    """Batches of plain cupy arrays are read and placed in C++ (_hpcz.cupy_compress_batch and
    cupy_decompress_batch); the same arrays behind another __cuda_array_interface__ take the general
    path. Both give the same archives, the same values and the same refusals, word for word."""
    _, a = field
    flat = a.reshape(-1)
    host = [flat[:1], flat[:4096].reshape(64, 64), flat[: 1 << 18].astype(np.float64), np.empty(0, np.float32),
            flat[-70001:]]
    arrays = [cupy.asarray(h) for h in host]
    assert hpcz._device.compress_batch_cupy(arrays, "fast", "rel", 1e-3, None) is not None  # the C++ path applies
    fast = hpcz.compress_batch(arrays, rel=1e-3)
    general = hpcz.compress_batch([_Interface(x) for x in arrays], rel=1e-3)
    assert [x.get().tobytes() for x in fast] == [x.get().tobytes() for x in general]
    assert [x.get().tobytes() for x in fast] == [hpcz.compress(h, rel=1e-3, device="cpu") for h in host]
    for h, x, y in zip(host, hpcz.decompress_batch(fast), hpcz.decompress_batch([_Interface(x) for x in fast])):
        assert x.shape == y.shape == h.shape and x.dtype == y.dtype == h.dtype
        assert x.get().tobytes() == y.get().tobytes()
    bad = fast[1].copy()
    bad[-3] ^= 0xFF  # a payload byte: its chunk's checksum fails
    blobs = [fast[0], bad, fast[2], fast[3], fast[4]]
    outs = [cupy.empty_like(x) for x in arrays]
    outs[2] = cupy.empty(outs[2].size, cupy.float32)  # the wrong dtype
    outs[4] = cupy.empty(10, cupy.float32)  # the wrong size
    got = hpcz.decompress_batch(blobs, out=outs, errors="return")
    want = hpcz.decompress_batch([_Interface(b) for b in blobs], out=[_Interface(o) for o in outs], errors="return")
    assert [isinstance(x, Exception) for x in got] == [isinstance(y, Exception) for y in want]
    assert isinstance(got[1], hpcz.CorruptArchiveError) and isinstance(got[2], hpcz.InvalidArgumentError)
    for x, y in zip(got, want):
        if isinstance(x, Exception):  # the general path's outs are the wrappers: only refusals compare
            assert type(x) is type(y) and str(x) == str(y)
    assert got[0] is outs[0] and got[3] is outs[3]
    with pytest.raises(hpcz.CorruptArchiveError, match="item 1: corrupt archive"):
        hpcz.decompress_batch(blobs)
