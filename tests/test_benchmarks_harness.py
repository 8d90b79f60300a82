"""The benchmark runner (``make bench``) on a throw-away bench module; no timing is asserted."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

RUNNER = Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"

BENCH_MODULE = """\
from pathlib import Path
from types import SimpleNamespace


def _setup():
    Path(__file__).with_name("setup_ran").touch()


CASES = [
    {
        "name": "sum_small",
        "ours": lambda: sum(range(10)),
        "anchor": lambda: sum(list(range(200))),
        "anchor_name": "builtins sum",
        "setup": _setup,
    },
    SimpleNamespace(
        name="sort_small",
        ours=lambda: sorted([3, 1, 2]),
        anchor=lambda: sorted(range(100, 0, -1)),
        anchor_name="builtins sorted",
    ),
]
"""


def _run(bench_dir, *args):
    command = [sys.executable, str(RUNNER), "--bench-dir", str(bench_dir)]
    command += ["--repeat", "2", "--min-time", "0.001", *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def _table(text):
    return [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("|")
    ]


@pytest.fixture
def bench_dir(tmp_path):
    (tmp_path / "bench_trivial.py").write_text(BENCH_MODULE)
    (tmp_path / "not_a_bench.py").write_text("raise RuntimeError('must not be imported')\n")
    return tmp_path


def test_writes_a_well_formed_table_with_a_speedup_column(bench_dir, tmp_path):
    output = tmp_path / "report" / "benchmarks.md"
    run = _run(bench_dir, "--output", str(output))
    assert run.returncode == 0, run.stderr
    header, separator, *rows = _table(output.read_text())
    assert header == ["case", "ours (ms)", "anchor", "anchor (ms)", "speed-up (anchor / ours)"]
    assert all(re.fullmatch(r":?-+:?", cell) for cell in separator)
    assert [row[0] for row in rows] == ["sum_small", "sort_small"]
    assert [row[2] for row in rows] == ["builtins sum", "builtins sorted"]
    for _, ours_ms, _, anchor_ms, speedup in rows:
        assert re.fullmatch(r"\d+\.\d\d×", speedup)
        ratio = float(anchor_ms.replace(",", "")) / float(ours_ms.replace(",", ""))
        assert float(speedup[:-1]) == pytest.approx(ratio, rel=0.02, abs=0.01)
    assert _table(run.stdout) == [header, separator, *rows]  # the same table is printed
    assert (bench_dir / "setup_ran").exists()


def test_filter_keeps_matching_cases_only(bench_dir):
    run = _run(bench_dir, "--filter", "sort")
    assert run.returncode == 0, run.stderr
    _, _, *rows = _table(run.stdout)
    assert [row[0] for row in rows] == ["sort_small"]
    assert not (bench_dir / "setup_ran").exists()  # a skipped case is not set up


def test_no_cases_is_an_error(tmp_path):
    run = _run(tmp_path)
    assert run.returncode == 1
    assert "no benchmark cases found" in run.stderr


class _CountingTimer:
    """A stand-in for ``timeit.Timer``: each call 'lasts' ``seconds``, and calls are counted."""

    def __init__(self, seconds):
        self.seconds, self.runs = seconds, []

    def timeit(self, number):
        self.runs.append(number)
        return self.seconds * number


def test_calibration_run_is_the_first_measurement():
    spec = importlib.util.spec_from_file_location("benchmark_runner", RUNNER)
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    slow, fast = _CountingTimer(300.0), _CountingTimer(0.03)
    # a call of minutes is run once when repeat is 1: the calibration run is its measurement
    assert run.best_time([slow], repeat=1, min_time=0.2) == [300.0]
    assert slow.runs == [1]
    # a fast call is calibrated up to 10 calls (0.3 s >= 0.2 s), then measured twice more
    assert run.best_time([fast], repeat=3, min_time=0.2) == [pytest.approx(0.03)]
    assert fast.runs == [1, 2, 5, 10, 10, 10]
