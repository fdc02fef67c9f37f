"""An xarray Dataset, chunked with Dask, written to Zarr v3 with the hpcz codec by several worker
processes, then read back lazily and checked against the bound.

    python examples/xarray_dask_zarr.py [OUT.zarr]

On a Dask cluster the same code runs unchanged once a distributed Client is created before
to_zarr (``from dask.distributed import Client; Client("scheduler:8786")``): each worker compresses
the chunks it computes and writes them to the store, which must then be one every worker reaches
(a shared file system or object storage). hpcz must be installed on every worker.
"""

import pathlib
import sys
import tempfile

import dask
import numpy as np
import xarray as xr

import hpcz

ROOT = pathlib.Path(__file__).resolve().parents[1]
FIELD = ROOT / "data" / "climate-ncar_csm_b003_ts_100x64x128_f32.bin"  # NCAR CSM surface temperature (K)
ABS = 0.05  # kelvin


def main(out):
    ts = np.fromfile(FIELD, dtype=np.float32).reshape(100, 64, 128)
    ds = xr.Dataset(
        {"ts": (("year", "lat", "lon"), ts, {"units": "K"})},
        coords={"year": np.arange(200, 300), "lat": np.linspace(-87.9, 87.9, 64), "lon": np.linspace(0, 357.2, 128)},
    ).chunk({"year": 10})
    encoding = {"ts": {"serializer": hpcz.zarr.Hpcz(abs=ABS, mode="ratio"), "compressors": None}}
    # Several worker processes, each coding the chunks it computes: the codec travels to them pickled.
    with dask.config.set(scheduler="processes", num_workers=4):
        ds.to_zarr(out, mode="w", encoding=encoding, zarr_format=3, consolidated=False)
    back = xr.open_zarr(out, consolidated=False)
    assert back["ts"].chunks[0] == (10,) * 10  # lazily, one Dask chunk per Zarr chunk
    err = float(np.abs(back["ts"].values.astype(np.float64) - ts).max())
    stored = sum(p.stat().st_size for p in pathlib.Path(out, "ts").rglob("*") if p.is_file())
    print(f"ts: {ts.nbytes} bytes -> {stored} stored (ratio {ts.nbytes / stored:.1f}), max error {err:.4f} K <= {ABS}")
    assert err <= ABS
    return err


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        with tempfile.TemporaryDirectory() as d:
            main(str(pathlib.Path(d) / "ts.zarr"))
