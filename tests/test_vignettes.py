"""The vignette harness (``make demo``).

Each executed vignette starts a kernel (about a second), so the hand-written vignettes are
built once per module and shared by the tests. The repository's own vignettes take minutes:
tests/test_docs.py runs them once and builds the site from the executed notebooks (one file,
so that ``pytest -n 2 --dist loadfile`` keeps them on one worker).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from statcore._vignettes import build_vignettes, main

REPO_VIGNETTES = Path(__file__).resolve().parents[1] / "vignettes"

GOOD = """\
# %% [markdown]
# # A good vignette
#
# It plots and prints.

# %%
import json
import os
import sys

import matplotlib.pyplot as plt

plt.plot([0, 1, 2], [0, 1, 4])
print("printed-by-the-good-vignette")
print("kernel-executable:", sys.executable)
print("kernel-cwd:", os.getcwd())
"""

BAD = """\
# %% [markdown]
# ## A vignette that raises

# %%
print("ran-before-the-error")

# %%
raise ValueError("deliberate-failure")

# %%
print("never-printed")
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    src = tmp_path_factory.mktemp("src")
    (src / "a_good.py").write_text(GOOD)
    (src / "b_bad.py").write_text(BAD)
    out = tmp_path_factory.mktemp("out")
    # Two at once: the good and the failing vignette run side by side in their own kernels.
    results = build_vignettes(src, out, jobs=2)
    assert [result.name for result in results] == ["a_good", "b_bad"]
    return src, out, {result.name: result for result in results}


@pytest.mark.parametrize("jobs", [0, 1.5, True, "2"])
def test_jobs_must_be_a_positive_integer(tmp_path, jobs):
    with pytest.raises(ValueError, match="jobs must be a positive integer"):
        build_vignettes(tmp_path, tmp_path / "out", jobs=jobs)


def test_good_vignette_page_holds_output_and_embedded_figure(built):
    _, out, results = built
    good = results["a_good"]
    assert good.ok and good.error is None and good.traceback is None
    assert good.title == "A good vignette"
    assert good.html == out / "a_good.html"
    notebook = nbformat.read(out / "a_good.ipynb", as_version=4)
    [image] = [
        o for c in notebook.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})
    ]
    assert image
    page = good.html.read_text()
    assert "printed-by-the-good-vignette" in page
    assert 'src="data:image/png;base64,' in page


def test_kernel_is_the_running_interpreter_in_the_vignette_folder(built):
    src, _, results = built
    page = results["a_good"].html.read_text()
    assert f"kernel-executable: {sys.executable}" in page
    assert f"kernel-cwd: {src}" in page


def test_raising_vignette_is_reported_and_its_page_still_written(built):
    _, out, results = built
    bad = results["b_bad"]
    assert not bad.ok
    assert bad.error == "ValueError: deliberate-failure"
    assert "deliberate-failure" in bad.traceback
    assert bad.title == "A vignette that raises"
    page = (out / "b_bad.html").read_text()
    assert "ran-before-the-error" in page
    assert "This vignette failed" in page
    assert "ValueError" in page


def test_index_links_every_vignette_with_title_and_status(built):
    _, out, _ = built
    index = (out / "index.html").read_text()
    assert '<a href="a_good.html">A good vignette</a>' in index
    assert '<a href="b_bad.html">A vignette that raises</a>' in index
    assert "failed: ValueError: deliberate-failure" in index
    assert "<td>ok</td>" in index


def test_cell_timeout_fails_the_vignette(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "slow.py").write_text("# %%\nimport time\n\ntime.sleep(60)\n")
    [result] = build_vignettes(src, tmp_path / "out", timeout=1)
    assert not result.ok
    assert result.error.startswith("CellTimeoutError")
    assert result.html.exists()


def test_command_line_exits_non_zero_when_a_vignette_fails(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "bad.py").write_text(BAD)
    out = tmp_path / "out"
    env = {**os.environ, "MPLBACKEND": "Agg"}
    run = subprocess.run(
        [sys.executable, "-m", "statcore._vignettes", str(src), str(out)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 of 1 vignettes failed: bad" in run.stdout
    assert f"index: {out / 'index.html'}" in run.stdout
    assert "deliberate-failure" in run.stderr
    assert (out / "bad.html").exists()


def test_no_vignettes_is_an_error(tmp_path, capsys):
    assert main([str(tmp_path), str(tmp_path / "out")]) == 2
    assert "no vignettes" in capsys.readouterr().err


def test_recorded_durations_order_the_runs_longest_first(tmp_path, monkeypatch):
    from statcore import _vignettes

    for name in ("a_short", "b_long", "c_new"):
        (tmp_path / f"{name}.py").write_text('# %%\nprint("x")\n')
    (tmp_path / _vignettes.DURATIONS).write_text('{"a_short": 1.0, "b_long": 90.0}')
    started = []
    real = _vignettes._build_one

    def recording(source, out_dir, timeout):
        started.append(source.stem)
        return real(source, out_dir, timeout)

    monkeypatch.setattr(_vignettes, "_build_one", recording)
    results = build_vignettes(tmp_path, tmp_path / "out", jobs=1)
    # unrecorded first (its length is unknown), then longest first; results in name order
    assert started == ["c_new", "b_long", "a_short"]
    assert [r.name for r in results] == ["a_short", "b_long", "c_new"]
    written = json.loads((tmp_path / "out" / _vignettes.DURATIONS).read_text())
    assert set(written) == {"a_short", "b_long", "c_new"} and all(v > 0 for v in written.values())
