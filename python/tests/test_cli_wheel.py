"""The CLI in the wheel: python -m hpcz and the hpcz console script run the bundled hpcz/bin/hpcz."""
import importlib.metadata
import pathlib
import subprocess
import sys
import sysconfig

import numpy as np
import pytest

import hpcz
import hpcz.__main__
from conftest import ROOT, violations

SAMPLE = ROOT / "data" / "climate-ncar_csm_b003_ts_100x64x128_f32.bin"
DIMS = (100, 64, 128)


def installed_from_wheel():
    """True when the hpcz imported here is the pip-installed one (not a source tree on PYTHONPATH)."""
    try:
        dist = importlib.metadata.distribution("hpcz")
    except importlib.metadata.PackageNotFoundError:
        return False
    init = pathlib.Path(dist.locate_file("hpcz/__init__.py"))
    return init.is_file() and init.resolve() == pathlib.Path(hpcz.__file__).resolve()


# Installed by pip, the CLI must be there (a missing one fails); from a source tree it cannot be.
pytestmark = pytest.mark.skipif(not installed_from_wheel() and not hpcz.__main__.cli_path().is_file(),
                                reason="hpcz is not pip-installed here (source tree): no bundled hpcz/bin/hpcz")


def run(args, tmp_path, **kw):
    return subprocess.run(args, cwd=tmp_path, capture_output=True, timeout=300, **kw)


def test_bundled_cli_present():
    assert hpcz.__main__.cli_path().is_file(), "pip-installed hpcz lacks hpcz/bin/hpcz"


def test_python_m_version(tmp_path):
    r = run([sys.executable, "-m", "hpcz", "--version"], tmp_path, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == hpcz._hpcz.version()


def test_console_script_version(tmp_path):
    name = "hpcz.exe" if sys.platform == "win32" else "hpcz"
    script = pathlib.Path(sysconfig.get_path("scripts")) / name
    if not script.is_file():
        script = pathlib.Path(sys.executable).parent / name
    assert script.is_file(), f"no hpcz console script next to {sys.executable}"
    r = run([str(script), "--version"], tmp_path, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == hpcz._hpcz.version()


def test_python_m_round_trip(tmp_path):
    arc = tmp_path / "ts.hpcz"
    r = run([sys.executable, "-m", "hpcz", "compress", "-i", str(SAMPLE), "-o", str(arc), "-t", "f32",
             "-d", "x".join(map(str, DIMS)), "--rel", "1e-3", "-q"], tmp_path)
    assert r.returncode == 0, r.stderr
    blob = arc.read_bytes()
    # Decompressed through a pipe: standard input to standard output.
    r = run([sys.executable, "-m", "hpcz", "decompress", "-i", "-", "-o", "-", "-q"], tmp_path, input=blob)
    assert r.returncode == 0, r.stderr
    x = np.fromfile(SAMPLE, dtype=np.float32)
    y = np.frombuffer(r.stdout, dtype=np.float32)
    assert y.size == x.size
    assert violations(x, y, hpcz.info(blob)["eb_abs"]) == 0
    # The CLI's exit codes come through: 2 for an input that is not there.
    r = run([sys.executable, "-m", "hpcz", "decompress", "-i", str(tmp_path / "missing"), "-o", "-"], tmp_path)
    assert r.returncode == 2, r.stderr


def test_missing_cli_message(monkeypatch, capsys):
    monkeypatch.setattr(hpcz.__main__, "cli_path", lambda: pathlib.Path("/nonexistent/hpcz"))
    assert hpcz.__main__.main(["--version"]) == hpcz.__main__.EXIT_UNAVAILABLE
    err = capsys.readouterr().err
    assert err.startswith("hpcz: ") and err.count("\n") == 1
