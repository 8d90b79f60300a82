"""Time statcore against its reference implementations: the harness behind ``make bench``.

    python benchmarks/run.py [--output build/benchmarks.md] [--filter TEXT]
                             [--repeat 5] [--min-time 0.2] [--bench-dir benchmarks]

Every ``bench_*.py`` in the bench folder (this file's folder by default) defines ``CASES``, a
list of dicts or objects with ``name``, ``ours`` and ``anchor`` (zero-argument callables doing
the same job, statcore's way and the reference's), ``anchor_name`` (e.g. ``"statsmodels
0.14"``) and, optionally, ``setup`` (a zero-argument callable run once before the case is
timed, and only when the case is selected). Each case is timed in this one process, ours and
anchor side by side: one warm-up call each (so numba compilation and caches are not timed),
then a loop count for each so that one measurement lasts at least ``--min-time`` seconds, then
``--repeat`` measurements alternating between the two; the best is kept, as with ``timeit``.

The table gives milliseconds per call and the speed-up ``anchor / ours``: above 1 statcore is
faster. It is printed and, with ``--output``, written as Markdown.

Optionally a case sets ``peak_memory=True``: each side then also runs once more in a fresh
subprocess (setup, one warm-up call, then the measured call), and a second table gives the
growth of the resident set over the measured call, its peak (Linux ``VmHWM``, reset through
``/proc/self/clear_refs`` after the warm-up) minus the resident set before it, with glibc's
mmap threshold pinned so that freed large arrays go back to the system and are not reused
unseen. Where the peak cannot be reset, the subprocess skips the warm-up and reports the
growth of ``ru_maxrss``, first-call costs included. A case with ``timed=False`` is only
measured that way (an anchor too large to time, or none: ``anchor=None``).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import platform
import resource
import subprocess
import sys
import time
import timeit
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

_REQUIRED = object()
HEADER = (
    "| case | ours (ms) | anchor | anchor (ms) | speed-up (anchor / ours) |\n"
    "|:---|---:|:---|---:|---:|"
)
MEMORY_HEADER = (
    "| case | ours peak (MiB) | ours, one call (s) | anchor | anchor peak (MiB) "
    "| memory ratio (anchor / ours) |\n"
    "|:---|---:|---:|:---|---:|---:|"
)


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"_statcore_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickle look modules up there
    spec.loader.exec_module(module)
    if not hasattr(module, "CASES"):
        raise AttributeError(f"{path} defines no CASES")
    return module


def discover(bench_dir: Path, pattern: str | None = None, *, where: bool = False) -> list:
    """``(module stem, case)`` for each case of each ``bench_*.py``, in order of file name.

    With ``pattern``, keep the cases whose name or module stem contains it. With ``where``,
    ``(module stem, case, module path, index in CASES)``.
    """
    cases = []
    for path in sorted(bench_dir.glob("bench_*.py")):
        module = _load(path)
        for index, case in enumerate(module.CASES):
            if pattern is None or pattern in path.stem or pattern in _field(case, "name"):
                cases.append((path.stem, case, path, index) if where else (path.stem, case))
    return cases


def _field(case, key: str, default=_REQUIRED):
    value = case.get(key, default) if isinstance(case, Mapping) else getattr(case, key, default)
    if value is _REQUIRED:
        raise KeyError(f"benchmark case {case!r} has no {key!r}")
    return value


def best_time(timers: list[timeit.Timer], repeat: int, min_time: float) -> list[float]:
    """Best seconds per call of each timer: the calibration run, then ``repeat - 1``
    measurements in alternation."""
    calibrations = [_loop_count(timer, min_time) for timer in timers]
    numbers = [number for number, _ in calibrations]
    best = [seconds / number for number, seconds in calibrations]
    for _ in range(repeat - 1):
        for i, (timer, number) in enumerate(zip(timers, numbers, strict=True)):
            best[i] = min(best[i], timer.timeit(number) / number)
    return best


def _loop_count(timer: timeit.Timer, min_time: float) -> tuple[int, float]:
    """The first of 1, 2, 5, 10, 20, 50, ... calls that last at least ``min_time`` seconds,
    and the seconds they lasted (a measurement like any other: a case whose one call runs for
    minutes is not run again to be measured)."""
    number = 1
    while True:
        for count in (number, 2 * number, 5 * number):
            seconds = timer.timeit(count)
            if seconds >= min_time:
                return count, seconds
        number *= 10


def run_case(case, repeat: int, min_time: float) -> dict:
    """Time one case: its table row's fields."""
    setup = _field(case, "setup", None)
    if setup is not None:
        setup()
    ours, anchor = _field(case, "ours"), _field(case, "anchor")
    ours(), anchor()  # warm-up: JIT compilation, imports and caches stay out of the timings
    # a case that runs for minutes says so with its own (smaller) repeat count
    repeat = min(repeat, _field(case, "repeat", repeat))
    ours_s, anchor_s = best_time([timeit.Timer(ours), timeit.Timer(anchor)], repeat, min_time)
    return {
        "name": _field(case, "name"),
        "ours_ms": 1e3 * ours_s,
        "anchor_name": _field(case, "anchor_name"),
        "anchor_ms": 1e3 * anchor_s,
        "speedup": anchor_s / ours_s,
    }


def _rss_bytes(key: str) -> int | None:
    """A ``kB`` line of /proc/self/status (``VmRSS``, ``VmHWM``) in bytes; None off Linux."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(key + ":"):
                    return 1024 * int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
    except OSError:
        return False
    return _rss_bytes("VmHWM") is not None


def measure_peak(path: Path, index: int, side: str) -> tuple[float, float]:
    """``(bytes, seconds)``: the growth of the resident set over one call of ``side`` of case
    ``index`` of the bench module at ``path``, and that call's wall time (run this in a fresh
    process, as :func:`run_peak_memory` does)."""
    case = _load(path).CASES[index]
    setup = _field(case, "setup", None)
    if setup is not None:
        setup()
    fn = _field(case, side)
    resettable = _reset_peak()
    if resettable:
        fn()  # warm-up: JIT compilation, imports and caches stay out of the measurement
    gc.collect()
    if resettable:
        _reset_peak()
        before = _rss_bytes("VmRSS")
    else:
        before = 1024 * resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    fn()
    seconds = time.perf_counter() - start
    after = (
        _rss_bytes("VmHWM")
        if resettable
        else 1024 * resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    )
    return max(0, after - before), seconds


def run_peak_memory(path: Path, index: int, case) -> dict:
    """The memory table's fields for one case: each side measured in its own subprocess."""
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="131072", MALLOC_TRIM_THRESHOLD_="131072")
    result = {"name": _field(case, "name"), "anchor_name": _field(case, "anchor_name")}
    for side in ("ours", "anchor"):
        if side == "anchor" and _field(case, "anchor") is None:
            result["anchor_mib"] = None
            continue
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--measure-peak",
            str(path),
            str(index),
            side,
        ]
        run = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
        if run.returncode != 0:
            raise RuntimeError(f"peak-memory subprocess for {side} failed:\n{run.stderr}")
        peak, seconds = map(float, run.stdout.split()[-2:])
        result[f"{side}_mib"] = peak / 2**20
        if side == "ours":
            result["ours_s"] = seconds
    return result


def memory_row(row: dict) -> str:
    anchor = row["anchor_mib"]
    ratio = "—" if anchor is None else f"{anchor / max(row['ours_mib'], 1e-9):.1f}×"
    return (
        f"| {row['name']} | {row['ours_mib']:,.1f} | {row['ours_s']:.3g} | {row['anchor_name']} "
        f"| {'—' if anchor is None else f'{anchor:,.1f}'} | {ratio} |"
    )


def table_row(row: dict) -> str:
    return (
        f"| {row['name']} | {_ms(row['ours_ms'])} | {row['anchor_name']} "
        f"| {_ms(row['anchor_ms'])} | {row['speedup']:.2f}× |"
    )


def _ms(value: float) -> str:
    return f"{value:.3g}" if value < 1000 else f"{value:,.0f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, help="write the Markdown report here")
    parser.add_argument("--filter", help="run only the cases whose name or module contains this")
    parser.add_argument("--repeat", type=int, default=5, help="measurements per side (best kept)")
    parser.add_argument(
        "--min-time", type=float, default=0.2, help="least seconds one measurement lasts"
    )
    parser.add_argument(
        "--bench-dir",
        type=Path,
        default=Path(__file__).resolve().parent,
        help="folder holding the bench_*.py modules",
    )
    parser.add_argument("--measure-peak", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure_peak is not None:
        path, index, side = args.measure_peak
        print(*measure_peak(Path(path), int(index), side))
        return 0
    cases = discover(args.bench_dir, args.filter, where=True)
    if not cases:
        print(f"no benchmark cases found in {args.bench_dir}", file=sys.stderr)
        return 1
    print(HEADER, flush=True)
    rows, memory_rows = [], []
    for module, case, path, index in cases:
        try:
            if _field(case, "timed", True):
                row = table_row(run_case(case, args.repeat, args.min_time))
                print(row, flush=True)
                rows.append(row)
            if _field(case, "peak_memory", False):
                memory_rows.append(memory_row(run_peak_memory(path, index, case)))
        except Exception as exc:
            exc.add_note(f"in benchmark case {_field(case, 'name')!r} of {module}.py")
            raise
    if memory_rows:
        print("", MEMORY_HEADER, *memory_rows, sep="\n", flush=True)
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        context = (
            f"{stamp}; Python {platform.python_version()} on {platform.platform()}, "
            f"{platform.processor() or platform.machine()}; best of {args.repeat} measurements "
            f"of at least {args.min_time} s each."
        )
        lines = ["# Benchmarks", "", context, "", HEADER, *rows, ""]
        if memory_rows:
            lines += [
                "Peak memory: growth of the resident set over one call, each side in a "
                "fresh process after a warm-up call.",
                "",
                MEMORY_HEADER,
                *memory_rows,
                "",
            ]
        args.output.write_text("\n".join(lines), encoding="utf-8")
        print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
