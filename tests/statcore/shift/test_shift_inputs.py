"""What users see from bad input to statcore.shift: range-checked bound arguments, the solver
options checked as in statcore.ot, the seed checked on entry, errors that name the argument."""

import numpy as np
import pandas as pd
import pytest

from statcore.exceptions import ConvergenceWarning
from statcore.shift import DataShifts, simulate

SAMPLE = simulate.linear_shift(20, dim=2, mean_shift=0.5, random_state=0)
XS, YS, XT, YT = (SAMPLE[k] for k in ("x_source", "y_source", "x_target", "y_target"))
MODEL = DataShifts(XS, YS, XT, YT, epsilon=0.1)
RESULT = MODEL.fit(n_resamples=3, random_state=0)


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"source_error": -1}, ValueError, r"`source_error` must lie in \[0, inf\]; got -1"),
        ({"source_error": np.nan}, ValueError, "`source_error` must be finite"),
        ({"source_error": "0.1"}, TypeError, "`source_error` must be a real number"),
        ({"source_error": np.ones(3)}, TypeError, "`source_error` must be a real number"),
        ({"lipschitz_h": -2}, ValueError, "`lipschitz_h` must lie in"),
        ({"lipschitz_loss": -1}, ValueError, "`lipschitz_loss` must lie in"),
        ({"lipschitz_loss": (1, -1)}, ValueError, r"`lipschitz_loss\[1\]` must lie in"),
        ({"lipschitz_loss": (1, 2, 3)}, TypeError, "`lipschitz_loss` must be a number or a pair"),
        ({"target_error": -0.5}, ValueError, "`target_error` must lie in"),
    ],
)
def test_bound_arguments_are_range_checked(kwargs, error, fragment):
    # a negative source error was accepted and gave a bound below the shift terms
    arguments = {"source_error": 0.1, "lipschitz_h": 1.0, **kwargs}
    with pytest.raises(error, match=fragment):
        RESULT.bound(**arguments)


def test_bound_accepts_its_edges():
    res = RESULT.bound(0.0, 0.0, (0.0, 0.0), target_error=0.0)
    assert float(res) == 0.0


@pytest.mark.parametrize(
    ("value", "error"), [(1.0, ValueError), (0, ValueError), (2, ValueError), ("x", TypeError)]
)
def test_fit_checks_epsilon_scaling_as_the_ot_entries_do(value, error):
    # 2 and 0 silently skipped the annealing, 1.0 raised OverflowError
    with pytest.raises(error, match="`epsilon_scaling` must"):
        MODEL.fit(epsilon_scaling=value)


def test_fit_maxiter_caps_every_ot_problem():
    with pytest.warns(ConvergenceWarning):
        res = DataShifts(XS, YS, XT, YT, epsilon=0.001).fit(maxiter=3, random_state=0)
    ot_terms = res.components[res.components.index.str.startswith("OT")]
    assert ot_terms["n_iter"].between(1, 3).all()


@pytest.mark.parametrize(
    "call",
    [
        lambda rs: MODEL.fit(random_state=rs),
        lambda rs: simulate.linear_shift(5, random_state=rs),
        lambda rs: simulate.label_flip(5, random_state=rs),
    ],
    ids=["fit", "linear_shift", "label_flip"],
)
@pytest.mark.parametrize("bad", ["seed", 0.5, -3])
def test_random_state_is_checked_on_entry(call, bad):
    with pytest.raises((TypeError, ValueError), match="`random_state` must be"):
        call(bad)


SOURCE = pd.DataFrame({"y": YS, "a": XS[:, 0]})
TARGET = pd.DataFrame({"y": YT, "a": XT[:, 0]})

BAD_INPUTS = {
    "three rows": (lambda: DataShifts(XS[:3], YS[:3], XT, YT), ValueError, "at least 4 rows"),
    "empty": (lambda: DataShifts(XS[:0], YS[:0], XT, YT), ValueError, "`x_source` needs at least"),
    "NaN": (
        lambda: DataShifts(XS * np.nan, YS, XT, YT),
        ValueError,
        "`x_source` must not contain NaN",
    ),
    "inf label": (
        lambda: DataShifts(XS, YS, XT, YT * np.inf),
        ValueError,
        "`y_target` must be finite",
    ),
    "label rows": (
        lambda: DataShifts(XS, YS[:5], XT, YT),
        ValueError,
        "one label per covariate row",
    ),
    "columns": (lambda: DataShifts(XS, YS, XT[:, :1], YT), ValueError, "same number of columns"),
    "label columns": (lambda: DataShifts(XS, YS, XT, np.c_[YT, YT]), ValueError, "label columns"),
    "weights negative": (
        lambda: DataShifts(XS, YS, XT, YT, -np.ones(20)),
        ValueError,
        "non-negative",
    ),
    "weights length": (
        lambda: DataShifts(XS, YS, XT, YT, None, np.ones(3)),
        ValueError,
        "one weight per point",
    ),
    "epsilon": (lambda: DataShifts(XS, YS, XT, YT, epsilon=0), ValueError, "`epsilon` must lie in"),
    "x_metric": (
        lambda: DataShifts(XS, YS, XT, YT, x_metric="cosine"),
        ValueError,
        "`x_metric` must be one of",
    ),
    "strings": (lambda: DataShifts("abc", YS, XT, YT), TypeError, "`x_source` must be numeric"),
    "n_resamples": (lambda: MODEL.fit(n_resamples=1), ValueError, "0 or at least 2"),
    "maxiter": (lambda: MODEL.fit(maxiter=0), ValueError, "`maxiter` must lie in"),
    "tol": (lambda: MODEL.fit(tol=-1), ValueError, "`tol` must lie in"),
    "backend": (
        lambda: MODEL.fit(n_resamples=2, backend="gpu"),
        ValueError,
        "`backend` must be one of",
    ),
    "alpha": (lambda: RESULT.conf_int(alpha=2), ValueError, "`alpha` must lie in"),
    "no response": (
        lambda: DataShifts.from_formula("~ a", SOURCE, TARGET),
        ValueError,
        "no response",
    ),
    "target lacks response": (
        lambda: DataShifts.from_formula("y ~ a", SOURCE, TARGET[["a"]]),
        ValueError,
        "`target` lacks the response 'y'",
    ),
    "missing": (
        lambda: DataShifts.from_formula("y ~ a", SOURCE, TARGET, missing="x"),
        ValueError,
        "`missing` must be one of",
    ),
    "simulate n": (lambda: simulate.linear_shift(0), ValueError, "`n_source` must lie in"),
    "simulate dim": (lambda: simulate.label_flip(5, dim=1), ValueError, "`dim` must lie in"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS), ids=list(BAD_INPUTS))
def test_bad_input_gives_an_error_naming_the_argument(case):
    call, error, fragment = BAD_INPUTS[case]
    with pytest.raises(error, match=fragment):
        call()
