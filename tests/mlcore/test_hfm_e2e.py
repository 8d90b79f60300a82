"""HFM against FMA on the entangled synthetic set over 5 seeds (the notes' evidence).

What is asserted, and what the notes claim but is only reported (printed with ``-s``): see
each assertion's comment. Measured numbers are in the vignette ``ml_hfm.py`` and the README.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mlcore.adapt import FlowMatchingAdapter, HyperbolicFlowMatcher, entangled_features

pytestmark = pytest.mark.slow  # ~30 s on an idle core; minutes on a loaded shared machine

SEEDS = range(5)
#: One shared budget for every method (100 epochs instead of FMA's 200, for the CI time).
TRAIN = {"epochs": 100}
#: Crossing threshold: half the roots' smallest separation, the packing radius that the
#: diameter rule also uses (pairs this close sit in one class's ball).
EPS = 0.5


def _run(model, task):
    fit = model.fit(task.support_feats, task.support_labels, task.text_feats)
    fixed = fit.predict(task.query_feats, task.query_labels, steps=10)
    diam = fit.predict(task.query_feats, task.query_labels, steps=10, stop="diameter")
    return {
        "acc_t1": fixed.accuracy,
        "best_fixed": float(fixed.step_accuracy.max()),
        "best_steps": int(fixed.step_accuracy.argmax()),
        "acc_diameter": diam.accuracy,
        "steps_diameter": diam.mean_steps,
        "crossings": fixed.crossing_pairs(EPS),
    }


def _t_interval(x):
    x = np.asarray(x, dtype=float)
    half = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))
    return x.mean() - half, x.mean() + half


@pytest.fixture(scope="module")
def table():
    rows = []
    for seed in SEEDS:
        task = entangled_features(n_classes=6, dim=12, n_shot=8, n_query=30, overlap=1.5,
                                  random_state=seed)  # fmt: skip
        hits = (task.query_feats @ task.text_feats.T).argmax(1).numpy() == task.query_labels
        for name, model in [
            ("FMA", FlowMatchingAdapter(random_state=seed, **TRAIN)),
            ("HFM", HyperbolicFlowMatcher(random_state=seed, **TRAIN)),
            ("HFM-nopath", HyperbolicFlowMatcher(lam_path=0.0, random_state=seed, **TRAIN)),
        ]:
            row = {"seed": seed, "method": name, "zero_shot": float(hits.mean())}
            rows.append({**row, **_run(model, task)})
    out = pd.DataFrame(rows)
    with pd.option_context("display.width", 200):
        print(out.groupby("method").mean(numeric_only=True).round(4))
    return out


def _paired(table, a, b, column):
    wide = table.pivot(index="seed", columns="method", values=column)
    return (wide[a] - wide[b]).to_numpy()


def test_flows_beat_zero_shot(table):
    # The transport must carry information from the shots: the best fixed step of each flow
    # beats the zero-shot cosine classifier, paired over seeds, 95 % t-interval above 0.
    for method in ("FMA", "HFM"):
        rows = table[table.method == method]
        low, _ = _t_interval(rows.best_fixed - rows.zero_shot)
        assert low > 0, method


def test_hfm_against_fma(table):
    diff = _paired(table, "HFM", "FMA", "acc_t1")
    low, high = _t_interval(diff)
    print(f"HFM - FMA at t=1: {diff.mean():+.4f} [{low:+.4f}, {high:+.4f}]")
    best = _paired(table, "HFM", "FMA", "best_fixed")
    print(f"HFM - FMA at the best fixed step: {best.mean():+.4f}")
    # Asserted: HFM is not worse than FMA by more than 2 points at t = 1 (the notes claim
    # HFM >= FMA; the measured mean difference is printed and reported, not asserted).
    assert diff.mean() >= -0.02


def test_path_loss_and_crossings(table):
    with_path = table[table.method == "HFM"].crossings.sum()
    without = table[table.method == "HFM-nopath"].crossings.sum()
    fma = table[table.method == "FMA"].crossings.sum()
    print(f"crossing pairs (eps = {EPS} root separations): HFM {with_path}, "
          f"HFM without path loss {without}, FMA {fma}")  # fmt: skip
    # The notes: the path loss cuts crossings by >= 30 %. Asserted only that it does not add
    # crossings; the measured cut is printed and reported.
    assert with_path <= without


def test_diameter_stopping(table):
    for method in ("FMA", "HFM"):
        rows = table[table.method == method]
        # A trajectory never runs past the fixed budget, and stopping inside a root's packing
        # ball costs at most half a point against running the full flow (t = 1).
        assert (rows.steps_diameter <= 10).all()
        assert (rows.acc_diameter - rows.acc_t1).mean() >= -0.005, method
        gap = (rows.best_fixed - rows.acc_diameter).mean()
        print(
            f"{method}: diameter costs {gap:+.4f} against the best fixed step (an oracle "
            f"on the query labels), {rows.steps_diameter.mean():.2f} steps on average"
        )
