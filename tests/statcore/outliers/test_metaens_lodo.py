"""MetaEns leave-one-data-set-out on the shipped ADBench score tables (issue 22's outcome check).

The issue asks for mean AP(MetaEns) >= mean AP(mega-ensemble) at a mean ensemble size <= 5. On
these tables that does not hold: at the paper's 500 / 800 trees (seed 0, clean protocol,
``benchmarks/bench_outliers.py``) MetaEns 0.418 (mean size 2.04) against 0.429, MetaEns minus
mega-ensemble -0.011 with a paired 95% t interval [-0.048, 0.025]. This test pins what the
study does show, so that a broken selection fails it: the ensembles stay small, they beat
random ensembles of the same size, and they are not distinguishable from the 40-detector
mega-ensemble (the paired interval covers 0).

Ten trees per forest instead of 500 / 800 keep the 28 refits inside the test budget (about
40 s of CPU). The outcome barely moves with the tree count, all seed 0, clean protocol:

    trees      MetaEns  size  minus mega-ensemble (95% t)  minus random of its size
    10 / 10    0.421    2.14  -0.008 [-0.043, 0.027]       +0.035
    30 / 30    0.417    2.07  -0.013 [-0.051, 0.026]       +0.027
    500 / 800  0.418    2.04  -0.011 [-0.048, 0.025]       +0.024

because the greedy mostly stops after the first partner, and the primary comes from the
tree-free ELECT-style selector.
"""

import numpy as np
import pytest
from scipy import stats

from statcore.outliers import MetaEns, load_score_tables


@pytest.fixture(scope="module")
def study():
    tables, names = load_score_tables()
    return tables, names, MetaEns(names).lodo(tables, n_estimators=10, random_state=0)


def test_lodo_runs_on_enough_tables_and_detectors(study):
    tables, names, res = study
    assert len(tables) >= 20 and len(names) >= 30
    assert len(res.folds) == len(tables)
    assert all(f["held_out"] not in f["rows"] + f["policy"] + f["ranking"] for f in res.folds)


def test_metaens_ensembles_are_small_and_beat_random_ones_of_their_size(study):
    _, _, res = study
    sizes = res.table.query("method == 'MetaEns'")["size"]
    assert sizes.mean() <= 5 and sizes.min() >= 1
    wide = res.wide()
    # random ensembles of MetaEns's size sit 0.024-0.035 AP below it at 10 to 800 trees (the
    # table above); a selection no better than chance would put the difference near 0
    assert (wide["MetaEns"] - wide["random"]).mean() > 0.01


def test_metaens_is_not_distinguishable_from_the_mega_ensemble(study):
    _, _, res = study
    d = res.paired_difference("MetaEns", "mega-ensemble")
    assert d["n"] == len(res.folds)
    assert d["conf_low"] < d["estimate"] < d["conf_high"]
    # the check (estimate >= 0) fails on these tables (see the module docstring); a
    # paired interval covering 0 is what holds, and a selection significantly worse than
    # the mega-ensemble (as random pairs are) would move the upper end below 0
    assert d["conf_low"] < 0 < d["conf_high"]
    assert abs(d["estimate"]) < 0.03
    wide = res.wide()
    r = (wide["random"] - wide["mega-ensemble"]).to_numpy()
    t = stats.t.ppf(0.975, len(r) - 1)
    assert r.mean() + t * r.std(ddof=1) / np.sqrt(len(r)) < 0
