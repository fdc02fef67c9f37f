#!/usr/bin/env python3
# CPU ratio mode, 1 against 2 threads on single-chunk arrays (4 MiB tiles, rel 1e-3): median of 5 runs,
# the two thread counts interleaved so that drift in the machine speed hits both alike. Prints table rows:
# field | comp T=1 | comp T=2 | decomp T=1 | decomp T=2 (GB/s of field). Run from the repo root after a build,
# with the shared fields in .data/.
import os, re, statistics, subprocess
fields = ["era5", "pressure_slice", "ncar", "mpas", "vorticity", "wrf"]
rows = []
for f in fields:
    res = {(c, t): [] for c in (8, 10) for t in (1, 2)}
    for k in range(5):
        for t in (1, 2):
            out = subprocess.run(["build/hpcz", "bench", "--device", "cpu", "--mode", "ratio", "--quick", "--data", ".data",
                                  "--fields", f, "--bounds", "rel:1e-3", "--size-mib", "4", "--reps", "5"],
                                 env=dict(os.environ, OMP_NUM_THREADS=str(t)), capture_output=True, text=True).stdout
            line = [l for l in out.splitlines() if l.startswith("| ") and "field" not in l and "---" not in l][0]
            cols = line.split("|")
            for c in (8, 10):
                per_core = float(re.search(r"\(([0-9.]+)/core", cols[c]).group(1))
                res[(c, t)].append(per_core * t)
    med = {k: statistics.median(v) for k, v in res.items()}
    rows.append(f"| {f} | {med[(8,1)]:.2f} | {med[(8,2)]:.2f} | {med[(10,1)]:.2f} | {med[(10,2)]:.2f} |")
    print(rows[-1], flush=True)
