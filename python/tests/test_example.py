import subprocess
import sys

from conftest import ROOT


def test_xarray_dask_zarr_example(tmp_path):
    out = tmp_path / "ts.zarr"
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "xarray_dask_zarr.py"), str(out)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "max error" in r.stdout and (out / "ts" / "zarr.json").exists()
    # The array's metadata names the codec, so any zarr reader knows what to load.
    assert '"hpcz"' in (out / "ts" / "zarr.json").read_text()
