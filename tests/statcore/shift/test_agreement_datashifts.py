"""Agreement with the authors' ``datashifts`` package (an extra check; skipped without it)."""

import pytest

from statcore.shift import DataShifts, simulate

datashifts = pytest.importorskip("datashifts")


def test_agrees_with_datashifts_package():
    sample = simulate.linear_shift(400, dim=5, mean_shift=1.0, random_state=0)
    xs, ys, xt, yt = (sample[k] for k in ("x_source", "y_source", "x_target", "y_target"))
    ours = DataShifts(xs, ys, xt, yt, epsilon=0.05).fit(n_resamples=30, random_state=0)
    cov, cpt = datashifts.DataShifts(xs, xt, ys, yt, eps=0.05, device="cpu", seed=0, verbose=False)
    # the concept shift uses the full samples on both sides: only the anchor's fixed annealing
    # budget and float32 separate them
    assert float(cpt) == pytest.approx(ours.concept_shift, rel=0.03)
    # the covariate shift depends on the random half split: agree within 3 bootstrap s.e.
    assert abs(float(cov) - ours.covariate_shift) <= 3 * ours.bse["covariate_shift"] + 1e-3
