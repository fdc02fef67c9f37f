"""Children forked after the parent used hpcz (multiprocessing's default start method on Linux, Dask's
process scheduler with the fork context): they must finish, on the CPU, with the parent's bytes. A
hang fails through a timeout rather than blocking the run (issue 51)."""

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hpcz

pytestmark = pytest.mark.skipif("fork" not in mp.get_all_start_methods(), reason="no fork start method here")

TIMEOUT = 60
BOUND = 1e-3
# Large enough that the CPU backend takes every thread (4 MiB of float32, above kParallelMinBytes).
CASES = [("auto", "fast", False), ("cpu", "fast", False), ("auto", "ratio", False), ("cpu", "interp", False),
         ("cpu", "fast", True)]


def _field():
    rng = np.random.default_rng(51)
    return np.cumsum(rng.standard_normal(1 << 20)).astype(np.float32).reshape(1024, 1024)


def _roundtrip(case):
    device, mode, lossless = case
    a = _field()
    blob = hpcz.compress(a, abs=BOUND, mode=mode, lossless=lossless, device=device)
    back = hpcz.decompress(blob, device=device)
    err = float(np.max(np.abs(back.astype(np.float64) - a)))
    batch = hpcz.compress_batch([a, a[:512]], abs=BOUND, mode=mode, device=device)
    same = [np.array_equal(x, y) for x, y in zip(hpcz.decompress_batch(batch, device=device), [back, back[:512]])]
    return bytes(blob), err, all(same)


def _use_hpcz_in_parent():
    """What the parent does before forking: every CPU path once (their threads now exist), and the GPU check."""
    hpcz.gpu_available()
    return {case: _roundtrip(case)[0] for case in CASES if case[0] == "cpu"}


def test_fork_pool_after_parent_used_hpcz():
    parent = _use_hpcz_in_parent()
    with mp.get_context("fork").Pool(2) as pool:
        results = pool.map_async(_roundtrip, CASES * 2).get(timeout=TIMEOUT)  # a hang fails here
    for case, (blob, err, same) in zip(CASES * 2, results):
        assert err <= BOUND, case
        assert same, case
        if case in parent:
            assert blob == parent[case], f"{case}: a child wrote other bytes than the parent"


def _run_alone(script):
    """Runs script in a Python of its own, in a process group of its own, so that a hang kills every
    process it forked at the timeout (a test that fails, not a run that blocks)."""
    p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=TIMEOUT * 2)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail("forked processes did not finish: hung after their parent used hpcz")
    assert p.returncode == 0 and out.strip() == "ok", err


PARENT = f"""
    import multiprocessing as mp, sys, numpy as np, hpcz
    a = np.cumsum(np.random.default_rng(1).standard_normal(1 << 21)).astype(np.float32).reshape(2048, 1024)
    def use():  # every thread of the CPU backend now exists, and CUDA was asked for
        hpcz.decompress(hpcz.compress(a, abs={BOUND}))
        hpcz.decompress(hpcz.compress(a, abs={BOUND}, mode="ratio", lossless=True))
        hpcz.gpu_available()
    def block(x):
        return hpcz.decompress(hpcz.compress(np.ascontiguousarray(x), abs={BOUND}))
    use()
"""


def test_fork_child_of_child():
    """A forked child that used hpcz forks a pool in turn (its threads, not the parent's, are then the
    missing ones)."""
    _run_alone(PARENT + """
    def child():
        use()
        with mp.get_context("fork").Pool(2) as pool:
            outs = pool.map_async(block, np.split(a, 4)).get(timeout=60)
        sys.exit(0 if np.max(np.abs(np.concatenate(outs).astype(np.float64) - a)) <= 1e-3 else 1)
    p = mp.get_context("fork").Process(target=child)
    p.start()
    p.join()
    assert p.exitcode == 0, p.exitcode
    print("ok")
    """)


def test_dask_process_scheduler_fork():
    """Dask's process scheduler, told to fork (its default context is spawn), after the parent used hpcz."""
    pytest.importorskip("dask.array", reason="dask is not installed (pip install 'hpcz[test]')")
    _run_alone(PARENT + f"""
    import dask, dask.array as da
    with dask.config.set({{"multiprocessing.context": "fork"}}):
        out = da.from_array(a, chunks=(512, 1024)).map_blocks(block).compute(scheduler="processes", num_workers=2)
    assert np.max(np.abs(out.astype(np.float64) - a)) <= {BOUND}
    print("ok")
    """)


def _gpu_child(_):
    a = _field()
    try:
        hpcz.compress(a, abs=BOUND, device="gpu")
        gpu = "no error"
    except hpcz.BackendUnavailableError as e:
        gpu = str(e)
    blob = hpcz.compress(a, abs=BOUND, device="auto")
    err = float(np.max(np.abs(hpcz.decompress(blob, device="auto").astype(np.float64) - a)))
    return gpu, err, hpcz.gpu_available()


@pytest.mark.skipif(not hpcz.gpu_available(), reason="no usable CUDA GPU")
def test_fork_after_cuda_gpu_raises_auto_runs_on_cpu():
    """CUDA cannot be used in a child forked after the parent initialised it: device="gpu" says so and
    names the spawn start method; device="auto" runs on the CPU."""
    a = _field()
    hpcz.decompress(hpcz.compress(a, abs=BOUND, device="gpu"), device="gpu")
    with mp.get_context("fork").Pool(2) as pool:
        for gpu, err, available in pool.map_async(_gpu_child, range(2)).get(timeout=TIMEOUT):
            assert "fork" in gpu and "spawn" in gpu, gpu
            assert err <= BOUND
            assert not available
    # and the parent still has its GPU
    assert hpcz.gpu_available()
    hpcz.decompress(hpcz.compress(a, abs=BOUND, device="gpu"), device="gpu")
