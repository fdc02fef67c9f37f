#!/usr/bin/env python3
"""A/B of hpcz_small_chunks binaries (bench/host/small_chunks.cpp) on a shared or noisy machine.

Runs the binaries one after another, ROUNDS times (one trial each, so that every round of A sits next
to a round of B in time), and prints per row and binary the lowest and the median of the rounds'
medians, compress and decompress, in us a call. On a 2-core VM whose host has slow phases (everything
about 1.5x slower for seconds at a time) the lowest is the figure to compare; the median shows how
often the slow phase hit. Each round waits until the machine is idle (another user's jobs).

usage: bench/host/small_chunks_ab.py ROUNDS "ENV=VALUE ..." BIN_A BIN_B [...] -- [hpcz_small_chunks args]
  e.g. bench/host/small_chunks_ab.py 10 "OMP_NUM_THREADS=1" old/hpcz_small_chunks build-cpu/hpcz_small_chunks \\
           -- --modes fast --sizes 16K,64K --reps 300
"""
import os
import statistics
import subprocess
import sys
import time


def wait_idle(limit_s=1200):
    """Waits (at most limit_s) until the machine is at least 95% idle over 2 s: another user's build
    or tests on a shared machine would be measured too."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
        return v[3], sum(v)
    waited = 0
    while waited < limit_s:
        i0, t0 = sample()
        time.sleep(2)
        i1, t1 = sample()
        if t1 > t0 and (i1 - i0) * 100 >= 95 * (t1 - t0):
            return
        waited += 2


def main():
    if "--" not in sys.argv or len(sys.argv) < 5:
        sys.exit(__doc__)
    rounds = int(sys.argv[1])
    env = dict(os.environ)
    for kv in sys.argv[2].split():
        k, v = kv.split("=", 1)
        env[k] = v
    cut = sys.argv.index("--")
    bins, args = sys.argv[3:cut], sys.argv[cut + 1:]
    rows = {}  # row -> binary -> [(compress us, decompress us)]
    for _ in range(rounds):
        wait_idle()
        for b in bins:
            out = subprocess.run([b, "--trials", "1"] + args, env=env, capture_output=True, text=True, check=True).stdout
            for line in out.splitlines():
                if not line.startswith("| ") or line.startswith("| mode"):
                    continue
                f = [x.strip() for x in line.strip().strip("|").split("|")]
                rows.setdefault(" ".join(f[0:4]), {}).setdefault(b, []).append((float(f[5]), float(f[7])))
    print(f"{rounds} rounds, {sys.argv[2] or 'default environment'}: lowest (median) us a call")
    for row, by_bin in rows.items():
        parts = []
        for b in bins:
            c = [x[0] for x in by_bin[b]]
            d = [x[1] for x in by_bin[b]]
            parts.append(f"{b}: compress {min(c):.1f} ({statistics.median(c):.1f}) "
                         f"decompress {min(d):.1f} ({statistics.median(d):.1f})")
        print(f"{row:30s} " + " | ".join(parts))


if __name__ == "__main__":
    main()
