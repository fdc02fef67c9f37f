"""cupy arrays through the Python package against hpcz bench's device-resident figures (the C++
compress_device / decompress_device between CUDA events), in the same run on the same field tiled
along its slowest axis to SIZE MiB: the whole Python call (allocations from cupy's pool, the size and
status read back), median of REPS after a warm-up.

    python bench/python/cupy_device.py HPCZ_CLI [FIELD] [SIZE_MIB=512] [REPS=10]
"""

import os
import statistics
import subprocess
import sys
import time

import cupy

import hpcz
from tiled import tiled


def main():
    cli = sys.argv[1]
    field = sys.argv[2] if len(sys.argv) > 2 else "data/climate-ncar_csm_b003_ts_100x64x128_f32.bin"
    size_mib = int(sys.argv[3]) if len(sys.argv) > 3 else 512
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    name = os.path.basename(field)
    a, copies, _, stem = tiled(field, size_mib)
    d = cupy.asarray(a)
    print(f"# {name} tiled {copies}x to {d.shape} ({d.nbytes} bytes) on the GPU, rel 1e-3, median of {reps}; "
          f"{hpcz._hpcz.version()}; GPU: {hpcz._hpcz.gpu_name()}")
    for mode in ("fast", "ratio"):
        def timed(fn):
            fn()
            cupy.cuda.get_current_stream().synchronize()
            ts = []
            for _ in range(reps):
                t0 = time.perf_counter()
                fn()  # returns once the size (status) is back: the work is done
                ts.append(time.perf_counter() - t0)
            return statistics.median(ts)

        arc = hpcz.compress(d, rel=1e-3, mode=mode)
        out = cupy.empty_like(d)
        tc = timed(lambda: hpcz.compress(d, rel=1e-3, mode=mode))
        td = timed(lambda: hpcz.decompress(arc, out=out))
        r = subprocess.run([cli, "bench", "--mode", mode, "--device", "gpu", "--data", os.path.dirname(field) or ".",
                            "--fields", "_".join(stem.split("_")[:2]), "--bounds", "rel:1e-3",
                            "--size-mib", str(size_mib), "--reps", str(reps), "--quick"],
                           capture_output=True, text=True, check=True)
        row = [c.strip() for c in next(l for l in r.stdout.splitlines() if l.startswith("|") and "rel:1e-3" in l).split("|")]
        bc, bd = float(row[8].split()[0]), float(row[10].split()[0])
        g = lambda t: d.nbytes / t / 1e9
        print(f"{mode:5} compress   python {g(tc):8.1f} GB/s  hpcz bench {bc:8.1f} GB/s  python/bench {g(tc) / bc:5.3f}"
              f"  (CR {d.nbytes / arc.size:.2f})")
        print(f"{mode:5} decompress python {g(td):8.1f} GB/s  hpcz bench {bd:8.1f} GB/s  python/bench {g(td) / bd:5.3f}")


if __name__ == "__main__":
    main()
