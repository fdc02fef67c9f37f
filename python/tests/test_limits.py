"""What decoding an untrusted archive may cost (issue 51, docs/SECURITY.md): the hostile archives of
tests/hostile/ are refused as corrupt within a few MB, and max_output caps what a genuine one may take."""
import subprocess
import sys

import numpy as np
import pytest

import hpcz
from conftest import ROOT

HOSTILE = ROOT / "tests" / "hostile"
BOMBS = ["stage_bomb_ratio.hpcz", "stage_bomb_padded.hpcz", "stage_bomb_fast.hpcz", "values_bomb_ratio.hpcz",
         "stage_zeros_ratio.hpcz"]

# In a fresh interpreter (so that its peak resident set is the call's): decode one archive, print the
# error's class, the peak resident set in KiB and the call's seconds.
CHILD = """
import resource, sys, time
import hpcz
data = open(sys.argv[1], "rb").read()
kind = "ok"
t = time.monotonic()
try:
    if sys.argv[2] == "info":
        hpcz.info(data)
    else:
        hpcz.decompress(data, device="cpu")
except hpcz.Error as e:
    kind = type(e).__name__
print(kind, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.monotonic() - t)
"""


def peak_kib(path, what):
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), what], capture_output=True, text=True, check=True)
    kind, kib, secs = out.stdout.split()
    return kind, int(kib), float(secs)


@pytest.mark.parametrize("what", ["decompress", "info"])
@pytest.mark.parametrize("name", BOMBS)
def test_hostile_archive_refused_in_little_memory(name, what, tmp_path):
    genuine = tmp_path / "genuine.hpcz"
    genuine.write_bytes(hpcz.compress(np.linspace(0, 1, 10000, dtype=np.float32), rel=1e-3, lossless=True, device="cpu"))
    kind, base, _ = peak_kib(genuine, what)
    assert kind == "ok"
    kind, kib, secs = peak_kib(HOSTILE / name, what)
    # info reads the header and the chunk table only: it refuses what they show (sizes the bytes cannot
    # hold), not what only the stage headers or the chunks would (decompress refuses those).
    assert kind in (("CorruptArchiveError", "ok") if what == "info" else ("CorruptArchiveError",)), name
    assert kib - base < 64 * 1024, f"{name}: {kib // 1024} MiB resident, {base // 1024} MiB for a genuine archive"
    assert secs < 1, f"{name}: {what} took {secs:.2f} s"


@pytest.mark.parametrize("name", BOMBS[:4])
def test_hostile_archive_refused_in_process(name):
    with pytest.raises(hpcz.CorruptArchiveError):
        hpcz.decompress((HOSTILE / name).read_bytes(), device="cpu")


def test_max_output():
    a = np.cos(np.arange(40000, dtype=np.float64) * 0.01)
    for lossless in (False, True):
        blob = hpcz.compress(a, abs=1e-6, lossless=lossless, device="cpu")
        with pytest.raises(hpcz.InvalidArgumentError, match="max_output"):
            hpcz.decompress(blob, max_output=a.nbytes - 1)
        out = np.empty_like(a)
        with pytest.raises(hpcz.InvalidArgumentError, match="max_output"):
            hpcz.decompress(blob, out=out, max_output=a.nbytes - 1)
        b = hpcz.decompress(blob, max_output=a.nbytes)
        assert np.array_equal(b, hpcz.decompress(blob))
        for bad in (0, -1, 1.5, True, "1G"):
            with pytest.raises(hpcz.InvalidArgumentError):
                hpcz.decompress(blob, max_output=bad)
    # The zeros archive's bytes justify the 1 GiB array it declares (a genuine archive of a constant field
    # could): max_output refuses it before anything is allocated.
    with pytest.raises(hpcz.InvalidArgumentError, match="max_output"):
        hpcz.decompress((HOSTILE / "stage_zeros_ratio.hpcz").read_bytes(), max_output=64 << 20)
