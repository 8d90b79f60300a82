"""Execute the vignettes and render them to HTML: the harness behind ``make demo``.

A vignette is a Python script in jupytext's percent format (``# %%`` opens a code cell,
``# %% [markdown]`` a prose cell) lying directly in the source folder; sub-folders are not
searched. ``python -m statcore._vignettes SRC_DIR OUT_DIR [--timeout SECONDS]`` takes the
vignettes in order of file name (``--jobs N`` runs N at once) and, for each one,

1. converts it to a notebook with jupytext;
2. executes it with nbclient in a fresh kernel. The kernel is ipykernel's native ``python3``
   kernel spec built for the interpreter that runs the harness (``sys.executable``, so
   ``.venv/bin/python`` under ``make demo``), never a ``python3`` kernel spec that some Jupyter
   data folder happens to hold, so no ``ipykernel install`` is needed. The kernel's working
   directory is the vignette's own folder, so a relative path in a vignette means the same
   thing whichever folder the harness is started from. Matplotlib runs on the inline backend
   in the kernel, even when the harness itself runs under ``MPLBACKEND=Agg``, so every figure
   becomes a PNG output. Each cell may run for ``--timeout`` seconds (600 by default);
3. writes ``OUT_DIR/<stem>.html`` with nbconvert's HTMLExporter. Figures are embedded as
   ``data:image/png;base64`` URIs, so each page stands alone;
4. writes the executed notebook, outputs included, to ``OUT_DIR/<stem>.ipynb``: the documentation
   site (``make docs``) renders these rather than running every vignette a second time.

Finally it writes ``OUT_DIR/index.html``, linking every vignette under its title (its first
markdown heading, else its file name) with its status, and prints that file's path, and
``OUT_DIR/durations.json``, the seconds each vignette took.

With several jobs the longest vignettes start first (a long one started last would leave the
other cores idle while it finishes), by the seconds recorded in ``SRC_DIR/durations.json``:
copy an ``OUT_DIR/durations.json`` there to refresh it, as pytest-split keeps its durations.
Vignettes it does not list start before all others, the rest by file name.

A vignette that raises, times out or kills its kernel does not stop the others. Its page is
still written, with the outputs of the cells that ran, the traceback in the failing cell and a
banner at the top that repeats it; the run prints the failures with their tracebacks and exits
with status 1 (status 2 when no vignette is found).

:func:`build_vignettes` does the work and returns one :class:`VignetteResult` per vignette.
"""

from __future__ import annotations

import argparse
import html
import json
import math
import os
import re
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat
import zmq
from jupyter_client.kernelspec import NATIVE_KERNEL_NAME, KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellControlSignal, CellExecutionError
from nbconvert import HTMLExporter
from nbconvert.filters import strip_ansi

__all__ = ["VignetteResult", "build_vignettes", "main"]

_INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)(?:\s+#+)?\s*$", re.MULTILINE)


@dataclass(frozen=True)
class VignetteResult:
    """How one vignette went.

    ``name`` is the file's stem, ``title`` its first markdown heading (else ``name``), ``html``
    the page written for it; the executed notebook lies beside it (``html.with_suffix(".ipynb")``).
    ``ok`` is false when it failed; then ``error`` is the one-line ``"ExceptionName: message"``
    and ``traceback`` the full report, both ``None`` when it ran.
    """

    name: str
    title: str
    html: Path
    ok: bool
    error: str | None
    traceback: str | None
    seconds: float


def build_vignettes(src_dir, out_dir, *, timeout=600, jobs=1) -> list[VignetteResult]:
    """Execute every ``*.py`` vignette in ``src_dir``; write their pages and ``index.html``.

    ``timeout`` is the most seconds a single cell may run. ``jobs`` vignettes run at once, each
    in its own kernel; the results keep the order of the file names whatever order they finish
    in. Progress is printed, one line per vignette as it finishes. Raises
    ``FileNotFoundError`` when ``src_dir`` holds no vignette.
    """
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer; got {jobs!r}")
    src_dir, out_dir = Path(src_dir), Path(out_dir)
    sources = sorted(src_dir.glob("*.py"))
    if not sources:
        raise FileNotFoundError(f"no vignettes (*.py) found in {src_dir}")
    out_dir.mkdir(parents=True, exist_ok=True)
    results = {}
    expected = _recorded_durations(src_dir / DURATIONS)
    queue = sorted(sources, key=lambda source: -expected.get(source.stem, math.inf))
    # Threads suffice: each vignette's work happens in its own kernel process.
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        pending = {pool.submit(_build_one, source, out_dir, timeout): source for source in queue}
        for finished in as_completed(pending):
            result = finished.result()
            status = "ok" if result.ok else f"FAILED: {result.error}"
            print(
                f"[{len(results) + 1}/{len(sources)}] {pending[finished].name} ... "
                f"{status} ({result.seconds:.1f} s)",
                flush=True,
            )
            results[pending[finished]] = result
    ordered = [results[source] for source in sources]
    _write_index(ordered, out_dir / "index.html")
    durations = {result.name: round(result.seconds, 1) for result in ordered}
    (out_dir / DURATIONS).write_text(json.dumps(durations, indent=1) + "\n", encoding="utf-8")
    return ordered


#: the file of seconds per vignette: written into OUT_DIR, read from SRC_DIR to order the runs
DURATIONS = "durations.json"


def _recorded_durations(path: Path) -> dict:
    """``{stem: seconds}`` from ``path``; empty when there is none (or it is not such a map)."""
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(recorded, dict):
        return {}
    return {str(k): float(v) for k, v in recorded.items() if isinstance(v, int | float)}


def _build_one(source: Path, out_dir: Path, timeout) -> VignetteResult:
    start = time.perf_counter()
    notebook = nbformat.v4.new_notebook()
    error = report = None
    try:
        notebook = jupytext.read(source, fmt="py:percent")
        _execute(notebook, source.parent, timeout)
    except Exception as exc:  # one failing vignette must not stop the others
        error, report = describe(exc)
    title = _title(notebook) or source.stem
    if error is not None:
        banner = (
            '<div style="border: 2px solid #c00; background: #fee; padding: 0.5em;">'
            f"<strong>This vignette failed:</strong><pre>{html.escape(report)}</pre></div>"
        )
        notebook.cells.insert(0, nbformat.v4.new_markdown_cell(banner))
    page, _ = HTMLExporter().from_notebook_node(notebook, resources={"metadata": {"name": title}})
    target = out_dir / f"{source.stem}.html"
    target.write_text(page, encoding="utf-8")
    nbformat.write(notebook, out_dir / f"{source.stem}.ipynb")
    return VignetteResult(
        name=source.stem,
        title=title,
        html=target,
        ok=error is None,
        error=error,
        traceback=report,
        seconds=time.perf_counter() - start,
    )


def _execute(notebook, cwd: Path, timeout) -> None:
    """Run ``notebook`` in place, in a fresh native kernel of ``sys.executable``, from ``cwd``."""
    # No kernel folders: the spec is ipykernel's own, whose argv[0] is sys.executable.
    kernel_specs = KernelSpecManager(kernel_dirs=[])
    manager = AsyncKernelManager(
        kernel_name=NATIVE_KERNEL_NAME,
        kernel_spec_manager=kernel_specs,
        # Encrypted sockets where pyzmq can, which also keeps ipykernel from warning about TCP.
        transport_encryption="auto" if zmq.has("curve") else "disabled",
    )
    client = NotebookClient(
        notebook,
        km=manager,
        timeout=timeout,
        # Every output is in by then; a graceful stop of a kernel stuck in a timed-out cell
        # only makes it log socket errors.
        shutdown_kernel="immediate",
        resources={"metadata": {"path": str(cwd)}},
    )
    # The client is handed the manager, so it must be told to shut the kernel down itself.
    client.execute(cleanup_kc=True, env={**os.environ, "MPLBACKEND": _INLINE_BACKEND})


def describe(exc: Exception) -> tuple[str, str]:
    """A failure's one-line summary and full report, free of terminal colour codes."""
    if isinstance(exc, CellExecutionError):
        summary = f"{exc.ename}: {exc.evalue}"
    else:
        summary = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, CellControlSignal):  # a cell raised or timed out: nbclient says which
        report = str(exc)
    else:
        report = "".join(traceback.format_exception(exc))
    return strip_ansi(summary).strip().splitlines()[0], strip_ansi(report)


def _title(notebook) -> str | None:
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and (heading := _HEADING.search(cell.source)):
            return heading.group(1)
    return None


def _write_index(results: list[VignetteResult], target: Path) -> None:
    rows = []
    for result in results:
        status = "ok" if result.ok else f"failed: {html.escape(result.error)}"
        rows.append(
            f'<tr class="{"ok" if result.ok else "failed"}">'
            f'<td><a href="{html.escape(result.html.name)}">{html.escape(result.title)}</a></td>'
            f"<td><code>{html.escape(result.name)}.py</code></td>"
            f"<td>{status}</td><td>{result.seconds:.1f} s</td></tr>"
        )
    failed = sum(not result.ok for result in results)
    summary = f"{len(results)} vignettes" + (f", {failed} failed" if failed else "")
    body = "\n".join(rows)
    target.write_text(
        f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>statcore vignettes</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; }}
td, th {{ border: 1px solid #ccc; padding: 0.3em 0.8em; text-align: left; }}
tr.failed td {{ background: #fee; }}
</style>
</head>
<body>
<h1>statcore vignettes</h1>
<p>{summary}</p>
<table>
<tr><th>Vignette</th><th>Source</th><th>Status</th><th>Time</th></tr>
{body}
</table>
</body>
</html>
""",
        encoding="utf-8",
    )


def main(argv=None) -> int:
    """Command-line entry point; returns the exit status (0 all ran, 1 some failed, 2 none)."""
    parser = argparse.ArgumentParser(
        prog="python -m statcore._vignettes", description=__doc__.splitlines()[0]
    )
    parser.add_argument("src_dir", type=Path, help="folder of jupytext percent-format *.py files")
    parser.add_argument("out_dir", type=Path, help="folder to write the HTML pages into")
    parser.add_argument(
        "--timeout", type=int, default=600, help="most seconds one cell may run (default 600)"
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="vignettes run at once, one kernel each (default 1)"
    )
    args = parser.parse_args(argv)
    try:
        results = build_vignettes(args.src_dir, args.out_dir, timeout=args.timeout, jobs=args.jobs)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    failures = [result for result in results if not result.ok]
    for result in failures:
        print(f"\n===== {result.name} failed =====\n{result.traceback}", file=sys.stderr)
    if failures:
        names = ", ".join(result.name for result in failures)
        print(f"{len(failures)} of {len(results)} vignettes failed: {names}")
    print(f"index: {(args.out_dir / 'index.html').resolve()}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
