"""README, CITATION.cff and the method table stay consistent and runnable."""

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


def method_table():
    text = (ROOT / "README.md").read_text()
    rows = re.findall(
        r"^\| (.+?) \| `([^`]+)`.*? \| (planned|available) \| (.+?) \|$", text, flags=re.M
    )
    return pd.DataFrame(rows, columns=["paper", "module", "status", "fidelity"])


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
    for row in method_table().query("status == 'available'").itertuples():
        assert row.module in notes, f"CITATION.cff has no reference for {row.module}"


def test_every_available_method_states_its_fidelity_where_the_docstring_says_it():
    available = method_table().query("status == 'available'")
    assert len(available) >= 10
    for row in available.itertuples():
        assert row.fidelity.startswith(("paper", "reconstruction")), row.paper
        target = re.search(r"\]\(([^)]+\.py)\)", row.fidelity)
        assert target, f"{row.paper}: the fidelity cell links no docstring"
        source = (ROOT / target.group(1)).read_text()
        label = re.match(r"(paper|reconstruction)", row.fidelity).group(1)
        # "Fidelity: paper, ..." in Notes, or a "Fidelity" heading followed by the label
        assert re.search(r"Fidelity\W+" + label, source, flags=re.I), (
            f"{target.group(1)} has no Fidelity paragraph stating '{label}' as the README does"
        )
