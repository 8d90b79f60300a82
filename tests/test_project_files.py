"""README, CITATION.cff and the method table stay consistent and runnable."""

import importlib
import importlib.util
import inspect
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import yaml

ROOT = Path(__file__).resolve().parents[1]


def readme_python_blocks():
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def test_readme_quick_start_runs_and_agrees_with_statsmodels(capsys):
    namespace = {}
    exec(readme_python_blocks()[0], namespace)  # noqa: S102 - the README's own example
    res = namespace["res"]
    data = namespace["sc"].datasets.load("stackloss")
    ref = sm.GLM(
        data["STACKLOSS"],
        sm.add_constant(data["AIRFLOW"].astype(float)),
        family=sm.families.Poisson(),
    ).fit()
    # generic BFGS on a finite-difference score vs IRLS: both reach the same optimum, the
    # numerical Hessian's error (~1e-6 relative) bounds the standard-error agreement
    np.testing.assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), rtol=1e-5)
    np.testing.assert_allclose(res.bse.to_numpy(), ref.bse.to_numpy(), rtol=1e-4)
    assert res.llf == pytest.approx(ref.llf, rel=1e-8)
    assert "Wald test" in capsys.readouterr().out


_spec = importlib.util.spec_from_file_location("method_index", ROOT / "docs" / "method_index.py")
method_index = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(method_index)


def method_table():
    """The README's method table, parsed as the site's methods page parses it."""
    return pd.DataFrame(method_index.method_rows((ROOT / "README.md").read_text()))


def test_method_table_lists_every_seed_paper():
    seeds = sorted((ROOT.parent / "shared" / "seeds").glob("*.txt"))
    n_papers = sum(
        1 for path in seeds for line in path.read_text().splitlines()[1:] if line.strip()
    )
    table = method_table()
    # the seed list sits beside the checkout during development; a bare clone checks the count
    assert len(table) == (n_papers if seeds else 38)
    assert table["paper"].is_unique


def test_citation_cff_is_valid_and_covers_available_methods():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert cff["version"] == __import__("statcore").__version__
    for key in ("title", "authors", "message", "references"):
        assert cff[key]
    notes = " ".join(ref.get("notes", "") for ref in cff["references"])
    for row in method_table().itertuples():
        assert row.modules.split("`")[1] in notes, f"CITATION.cff has no reference for {row.module}"


def fidelity_label(doc: str) -> str | None:
    """The first word of a docstring's first Fidelity section: "Fidelity: paper, ..." in
    Notes, or a "Fidelity" heading (numpydoc style) followed by its text."""
    found = re.search(r"^\s*Fidelity(?::|\n\s*-+\n)\s*(\w+)", doc, flags=re.M)
    return found.group(1).lower() if found else None


def test_each_method_rows_label_is_its_docstrings_fidelity_label():
    table = method_table()
    assert len(table) >= 38
    for row in table.itertuples():
        module = importlib.import_module(row.module)
        assert row.name or row.entry == "module docstring", row.entry
        obj = getattr(module, row.name) if row.name else module
        label = fidelity_label(inspect.getdoc(obj) or "")
        # the one rule: "paper" where the paper's text or the authors' code was checked
        assert label == row.label, (
            f"{row.paper}: README says {row.label!r}, {row.path} {row.entry} says {label!r}"
        )


def test_method_table_rows_are_one_short_line_each():
    text = (ROOT / "README.md").read_text().split("## Method table")[1].split("\n## ")[0]
    rows = [line for line in text.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == len(method_table())
    assert max(map(len, rows)) <= 240


def test_the_sites_quick_start_runs_and_tests_equal_slopes(capsys):
    text = (ROOT / "docs" / "index.md").read_text()
    assert "make install" in text and ".venv/bin/activate" in text
    namespace = {}
    exec(re.findall(r"```python\n(.*?)```", text, flags=re.S)[0], namespace)  # noqa: S102
    res = namespace["res"]
    assert list(res.params.columns) == [0.25, 0.5, 0.75]
    # Engel's income slope rises across the levels (R: 0.474, 0.560, 0.644): the printed
    # Wald test of equal slopes rejects
    assert "income[0.25] = income[0.75]" in capsys.readouterr().out
    assert res.wald_test("income[0.25] = income[0.75]").pvalue < 1e-4
