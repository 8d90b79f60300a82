"""What users see from bad input to statcore.ot: one check of the solver options for every entry,
``maxiter`` as the cap on all iterations, and errors that name the argument."""

import numpy as np
import pytest

from statcore.exceptions import ConvergenceWarning
from statcore.ot import cost_matrix, sinkhorn, sinkhorn_divergence, sinkhorn_points

rng0 = np.random.default_rng(3)
x, y = rng0.normal(size=(30, 2)), rng0.normal(size=(25, 2)) + 1.0
C = cost_matrix(x, y)

ENTRIES = {
    "sinkhorn": lambda **kw: sinkhorn(None, None, C, 0.01, **kw),
    "sinkhorn_points": lambda **kw: sinkhorn_points(x, y, epsilon=0.01, **kw),
    "sinkhorn_divergence": lambda **kw: sinkhorn_divergence(x, y, epsilon=0.01, **kw),
}


@pytest.mark.parametrize("entry", list(ENTRIES))
@pytest.mark.parametrize("maxiter", [1, 2, 3, 7])
def test_maxiter_caps_every_iteration_annealing_included(entry, maxiter):
    # epsilon = 0.01 against costs up to ~6 anneals over ~10 stages: sinkhorn(maxiter=2) ran 10
    with pytest.warns(ConvergenceWarning, match=f"maxiter={maxiter}"):
        res = ENTRIES[entry](maxiter=maxiter)
    records = getattr(res, "records", {"": res.iterations})
    assert all(1 <= rec.n_iter <= maxiter for rec in records.values())


@pytest.mark.parametrize("entry", list(ENTRIES))
def test_the_cap_leaves_results_at_the_defaults_unchanged(entry):
    # the default maxiter is far above the annealing stages: the schedule is not cut
    default, roomy = ENTRIES[entry](), ENTRIES[entry](maxiter=10**7)
    assert default.n_iter == roomy.n_iter
    value = "divergence" if entry == "sinkhorn_divergence" else "objective"
    assert getattr(default, value) == getattr(roomy, value)


@pytest.mark.parametrize("entry", list(ENTRIES))
@pytest.mark.parametrize(
    ("value", "error"),
    [
        (1.0, ValueError),
        (0, ValueError),
        (2, ValueError),
        (-0.5, ValueError),
        (np.nan, ValueError),
        ("0.5", TypeError),
        (True, TypeError),
    ],
)
def test_epsilon_scaling_is_none_or_a_factor_in_the_open_unit_interval(entry, value, error):
    # 1.0 raised OverflowError, 0 and 2 silently skipped the annealing
    with pytest.raises(error, match="`epsilon_scaling` must"):
        ENTRIES[entry](epsilon_scaling=value)


BAD_INPUTS = {
    "cost NaN": (
        lambda: sinkhorn(None, None, np.full((2, 2), np.nan), 0.1),
        ValueError,
        "`cost` must not contain NaN",
    ),
    "cost inf": (
        lambda: sinkhorn(None, None, np.full((2, 2), np.inf), 0.1),
        ValueError,
        "`cost` must be finite",
    ),
    "cost 1-D": (lambda: sinkhorn(None, None, np.ones(3), 0.1), ValueError, "`cost` must be 2-D"),
    "cost empty": (
        lambda: sinkhorn(None, None, np.empty((0, 3)), 0.1),
        ValueError,
        "at least one row",
    ),
    "cost strings": (lambda: sinkhorn(None, None, "abc", 0.1), TypeError, "`cost` must be numeric"),
    "weights length": (lambda: sinkhorn([1, 2], None, C, 0.1), ValueError, "one weight per point"),
    "weights negative": (lambda: sinkhorn(-np.ones(30), None, C, 0.1), ValueError, "non-negative"),
    "weights zero": (lambda: sinkhorn(None, np.zeros(25), C, 0.1), ValueError, "positive sum"),
    "weights 2-D": (
        lambda: sinkhorn(np.ones((30, 1)), None, C, 0.1),
        ValueError,
        "`a` must be 1-D",
    ),
    "epsilon 0": (lambda: sinkhorn(None, None, C, 0), ValueError, "`epsilon` must lie in"),
    "epsilon string": (
        lambda: sinkhorn(None, None, C, "0.1"),
        TypeError,
        "`epsilon` must be a real",
    ),
    "maxiter 0": (lambda: sinkhorn(None, None, C, 0.1, maxiter=0), ValueError, "`maxiter` must"),
    "tol 0": (lambda: sinkhorn(None, None, C, 0.1, tol=0), ValueError, "`tol` must lie in"),
    "method": (
        lambda: sinkhorn(None, None, C, 0.1, method="exact"),
        ValueError,
        "`method` must be one of",
    ),
    "points empty": (
        lambda: sinkhorn_points(np.empty((0, 2)), y),
        ValueError,
        "`x` needs at least 1",
    ),
    "points columns": (lambda: sinkhorn_points(x, y[:, :1]), ValueError, "same number of columns"),
    "points 3-D": (
        lambda: sinkhorn_divergence(x[:, :, None], y),
        ValueError,
        "`x` must be 1-D or 2-D",
    ),
    "points NaN": (
        lambda: sinkhorn_divergence(x, np.full((3, 2), np.nan)),
        ValueError,
        "`y` must not contain NaN",
    ),
    "metric name": (
        lambda: cost_matrix(x, y, metric="cosine"),
        ValueError,
        "`metric` must be one of",
    ),
    "metric output": (
        lambda: cost_matrix(x, y, metric=lambda A, B: np.ones(3)),
        ValueError,
        "`metric` must return",
    ),
    "metric non-finite": (
        lambda: sinkhorn_points(x, y, metric=lambda A, B: np.full((len(A), len(B)), np.nan)),
        ValueError,
        "non-finite",
    ),
    "plan": (
        lambda: sinkhorn_points(x, y, plan="yes"),
        TypeError,
        "`plan` must be None, True or False",
    ),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS), ids=list(BAD_INPUTS))
def test_bad_input_gives_an_error_naming_the_argument(case):
    call, error, fragment = BAD_INPUTS[case]
    with pytest.raises(error, match=fragment):
        call()
