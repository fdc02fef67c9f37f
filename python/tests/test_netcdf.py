"""netCDF-4 through the HDF5 filter: xarray writes with the h5netcdf engine, xarray's netCDF4 engine
and ncdump read with only HDF5_PLUGIN_PATH (netCDF-C's own writer: ctest netcdf_filter)."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("h5netcdf")
import hpcz  # noqa: E402

try:
    import hpcz.hdf5 as hh
except hpcz.BackendUnavailableError as e:
    pytest.skip(str(e), allow_module_level=True)

from conftest import ROOT, violations  # noqa: E402

SAMPLE = ROOT / "data" / "climate-ncar_csm_b003_ts_100x64x128_f32.bin"


def written(tmp_path, **kw):
    a = np.fromfile(SAMPLE, dtype=np.float32).reshape(100, 64, 128)
    ds = xr.Dataset({"ts": (("year", "lat", "lon"), a, {"units": "K"})}, coords={"year": np.arange(100)})
    f = hh.Hpcz(**kw)
    enc = {"ts": {"compression": f["compression"], "compression_opts": f["compression_opts"], "chunksizes": (25, 64, 128)}}
    path = tmp_path / "ts.nc"
    ds.to_netcdf(path, engine="h5netcdf", encoding=enc)
    return a, path


@pytest.mark.parametrize("kw", [{"abs": 0.05}, {"abs": 0.05, "mode": "ratio", "lossless": True}])
def test_xarray_h5netcdf_roundtrip(tmp_path, kw):
    a, path = written(tmp_path, **kw)
    with xr.open_dataset(path, engine="h5netcdf") as back:
        assert back["ts"].attrs["units"] == "K"
        assert violations(a, back["ts"].values, 0.05) == 0
    assert os.path.getsize(path) < a.nbytes / 3


def test_netcdf4_engine_with_only_the_plugin_path(tmp_path):
    pytest.importorskip("netCDF4")
    a, path = written(tmp_path, abs=0.05, mode="ratio")
    np.save(tmp_path / "a.npy", a)
    env = dict(os.environ, HDF5_PLUGIN_PATH=hh.PLUGIN_PATH)
    code = ("import sys, numpy as np, xarray as xr\n"
            f"b = xr.open_dataset({str(path)!r}, engine='netcdf4')['ts'].values\n"
            "assert 'hpcz' not in sys.modules\n"
            f"assert np.abs(b.astype(np.float64) - np.load({str(tmp_path / 'a.npy')!r})).max() <= 0.05\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr


@pytest.mark.skipif(shutil.which("ncdump") is None, reason="no ncdump (Debian: netcdf-bin)")
def test_ncdump_reads(tmp_path):
    a, path = written(tmp_path, abs=0.05)
    env = dict(os.environ, HDF5_PLUGIN_PATH=hh.PLUGIN_PATH)
    r = subprocess.run(["ncdump", "-v", "ts", str(path)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    body = r.stdout.split("data:", 1)[1].split(" ts =", 1)[1]
    first = np.array([float(x) for x in body.replace(";", ",").split(",")[:7]])
    assert np.abs(first - a[0, 0, :7]).max() <= 0.05 + 1e-3  # ncdump prints 7 significant digits
    r = subprocess.run(["ncdump", "-hs", str(path)], capture_output=True, text=True, env=env)
    assert '_Filter = "34520,' in r.stdout
