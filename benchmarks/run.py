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
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import sys
import timeit
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

_REQUIRED = object()
HEADER = (
    "| case | ours (ms) | anchor | anchor (ms) | speed-up (anchor / ours) |\n"
    "|:---|---:|:---|---:|---:|"
)


def discover(bench_dir: Path, pattern: str | None = None) -> list[tuple[str, object]]:
    """``(module stem, case)`` for each case of each ``bench_*.py``, in order of file name.

    With ``pattern``, keep the cases whose name or module stem contains it.
    """
    cases = []
    for path in sorted(bench_dir.glob("bench_*.py")):
        spec = importlib.util.spec_from_file_location(f"_statcore_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses and pickle look modules up there
        spec.loader.exec_module(module)
        if not hasattr(module, "CASES"):
            raise AttributeError(f"{path} defines no CASES")
        for case in module.CASES:
            if pattern is None or pattern in path.stem or pattern in _field(case, "name"):
                cases.append((path.stem, case))
    return cases


def _field(case, key: str, default=_REQUIRED):
    value = case.get(key, default) if isinstance(case, Mapping) else getattr(case, key, default)
    if value is _REQUIRED:
        raise KeyError(f"benchmark case {case!r} has no {key!r}")
    return value


def best_time(timers: list[timeit.Timer], repeat: int, min_time: float) -> list[float]:
    """Best seconds per call of each timer, measured in alternation."""
    numbers = [_loop_count(timer, min_time) for timer in timers]
    best = [float("inf")] * len(timers)
    for _ in range(repeat):
        for i, (timer, number) in enumerate(zip(timers, numbers, strict=True)):
            best[i] = min(best[i], timer.timeit(number) / number)
    return best


def _loop_count(timer: timeit.Timer, min_time: float) -> int:
    """The first of 1, 2, 5, 10, 20, 50, ... calls that last at least ``min_time`` seconds."""
    number = 1
    while True:
        for count in (number, 2 * number, 5 * number):
            if timer.timeit(count) >= min_time:
                return count
        number *= 10


def run_case(case, repeat: int, min_time: float) -> dict:
    """Time one case: its table row's fields."""
    setup = _field(case, "setup", None)
    if setup is not None:
        setup()
    ours, anchor = _field(case, "ours"), _field(case, "anchor")
    ours(), anchor()  # warm-up: JIT compilation, imports and caches stay out of the timings
    ours_s, anchor_s = best_time([timeit.Timer(ours), timeit.Timer(anchor)], repeat, min_time)
    return {
        "name": _field(case, "name"),
        "ours_ms": 1e3 * ours_s,
        "anchor_name": _field(case, "anchor_name"),
        "anchor_ms": 1e3 * anchor_s,
        "speedup": anchor_s / ours_s,
    }


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
    args = parser.parse_args(argv)
    cases = discover(args.bench_dir, args.filter)
    if not cases:
        print(f"no benchmark cases found in {args.bench_dir}", file=sys.stderr)
        return 1
    print(HEADER, flush=True)
    rows = []
    for module, case in cases:
        try:
            row = table_row(run_case(case, args.repeat, args.min_time))
        except Exception as exc:
            exc.add_note(f"in benchmark case {_field(case, 'name')!r} of {module}.py")
            raise
        print(row, flush=True)
        rows.append(row)
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        context = (
            f"{stamp}; Python {platform.python_version()} on {platform.platform()}, "
            f"{platform.processor() or platform.machine()}; best of {args.repeat} measurements "
            f"of at least {args.min_time} s each."
        )
        lines = ["# Benchmarks", "", context, "", HEADER, *rows, ""]
        args.output.write_text("\n".join(lines), encoding="utf-8")
        print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
