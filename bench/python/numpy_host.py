"""numpy arrays through the Python package against the C++ host calls it wraps, on the same bytes in
the same run: a field tiled along its slowest axis to SIZE MiB, hpcz.compress and hpcz.decompress
(into a given array, and into a new one), median of REPS after a warm-up, GB/s of the array.

    python bench/python/numpy_host.py HOST_CALL_BIN [FIELD] [SIZE_MIB=512] [REPS=10] [DEVICE=gpu]
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import hpcz
from tiled import tiled


def main():
    host_call = sys.argv[1]
    field = sys.argv[2] if len(sys.argv) > 2 else "data/climate-ncar_csm_b003_ts_100x64x128_f32.bin"
    size_mib = int(sys.argv[3]) if len(sys.argv) > 3 else 512
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    device = sys.argv[5] if len(sys.argv) > 5 else "gpu"
    a, copies, tag, _ = tiled(field, size_mib)
    print(f"# {os.path.basename(field)} tiled {copies}x to {a.shape} ({a.nbytes} bytes), rel 1e-3, device {device}, "
          f"median of {reps}; hpcz {hpcz._hpcz.version()}; GPU: {hpcz._hpcz.gpu_name() or '-'}")
    with tempfile.NamedTemporaryFile(dir="/dev/shm" if os.path.isdir("/dev/shm") else None, suffix=".bin") as tmp:
        a.tofile(tmp.name)
        for mode in ("fast", "ratio"):
            def timed(fn):
                fn()
                ts = []
                for _ in range(reps):
                    t0 = time.perf_counter()
                    fn()
                    ts.append(time.perf_counter() - t0)
                return statistics.median(ts)

            blob = hpcz.compress(a, rel=1e-3, mode=mode, device=device)
            out = np.empty_like(a)
            tc = timed(lambda: hpcz.compress(a, rel=1e-3, mode=mode, device=device))
            td_out = timed(lambda: hpcz.decompress(blob, out=out, device=device))
            td_new = timed(lambda: hpcz.decompress(blob, device=device))
            r = subprocess.run([host_call, tmp.name, tag, ",".join(map(str, a.shape)), mode, "1e-3", str(reps),
                                device], capture_output=True, text=True, check=True)
            cc, cd, size = r.stdout.split()
            cc, cd = float(cc), float(cd)
            assert int(size) == len(blob), "the C++ call wrote other bytes"
            g = lambda t: a.nbytes / t / 1e9
            print(f"{mode:5} compress   python {g(tc):7.2f} GB/s  C++ {g(cc):7.2f} GB/s  python/C++ {cc / tc:5.3f}")
            print(f"{mode:5} decompress python {g(td_out):7.2f} GB/s (out=), {g(td_new):7.2f} (new array)  "
                  f"C++ {g(cd):7.2f} GB/s  python/C++ {cd / td_out:5.3f} (out=), {cd / td_new:5.3f} (new)")


if __name__ == "__main__":
    main()
