"""The njit shim: kernels cached on disk, one notice on the first compile, ``statcore.warmup``."""

import os
import subprocess
import sys

import pytest

import statcore
from statcore._numba import COMPILE_NOTICE

# Warms quantreg (the quickest area to compile) and reports the seconds of two calls.
_SCRIPT = """
import statcore
first = statcore.warmup(["quantreg"])["quantreg"]
second = statcore.warmup("quantreg")["quantreg"]
print(f"{first} {second}")
"""


def _run(cache_dir, script=_SCRIPT):
    # NUMBA_CACHE_DIR: a cache of the test's own, so the first process surely compiles.
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert run.returncode == 0, run.stderr
    return run


def test_first_compile_says_so_once_and_the_cache_serves_the_next_process(tmp_path):
    cold = _run(tmp_path)
    assert cold.stderr.count(COMPILE_NOTICE) == 1, cold.stderr
    first, second = map(float, cold.stdout.split())
    assert second < first / 5 and second < 1.0, (first, second)
    warm = _run(tmp_path)
    assert COMPILE_NOTICE not in warm.stderr, warm.stderr
    loaded, _ = map(float, warm.stdout.split())
    assert loaded < first, (loaded, first)


def test_other_numba_functions_compile_without_the_notice(tmp_path):
    script = "import statcore._numba, numba\nf = numba.njit(lambda x: x + 1)\nassert f(1) == 2\n"
    assert COMPILE_NOTICE not in _run(tmp_path, script).stderr


def test_warmup_covers_every_area_and_reports_seconds():
    seconds = statcore.warmup()
    assert list(seconds) == [
        "quantreg",
        "quantized",
        "manifold",
        "ot",
        "shift",
        "network",
        "cluster",
        "select",
        "geometry",
        "outliers",
        "theory",
    ]
    assert all(value >= 0 for value in seconds.values())


def test_warmup_names_the_unknown_area():
    with pytest.raises(ValueError, match=r"`areas` must be one of 'quantreg'.*; got 'nope'"):
        statcore.warmup(["quantreg", "nope"])
