"""Bad input to the ridge entries gives an error naming the argument (issue 18)."""

import re

import numpy as np
import pandas as pd
import pytest

from statcore.ridge import SelfDistilledRidge
from statcore.ridge import asymptotics as ra

rng = np.random.default_rng(0)
X = rng.standard_normal((40, 3))
Y = X @ [1.0, -1.0, 0.5] + rng.standard_normal(40)
ONES = np.ones(4)

CASES = {
    "no rows": (
        lambda: SelfDistilledRidge(np.empty(0), np.empty((0, 3))),
        "`endog` needs at least 2 rows; got no rows",
    ),
    "one row": (lambda: SelfDistilledRidge(Y[:1], X[:1]), "got one row"),
    "complex X": (lambda: SelfDistilledRidge(Y, X + 0j), "`exog` must be real"),
    "penalty text": (lambda: SelfDistilledRidge(Y, X, penalty="1"), "`penalty` must be numeric"),
    "penalty zero": (lambda: SelfDistilledRidge(Y, X, penalty=0), "`penalty` must be > 0"),
    "no response": (
        lambda: SelfDistilledRidge.from_formula("~ a", pd.DataFrame(X, columns=list("abc"))),
        "has no response",
    ),
    "xi text": (lambda: SelfDistilledRidge(Y, X).fit(xi=["1"]), "`xi` must be numeric"),
    "xi_method": (
        lambda: SelfDistilledRidge(Y, X).fit(xi_method="loo"),
        "`xi_method` must be one of 'cross_gcv', 'paper'",
    ),
    "kappa gamma": (lambda: ra.solve_kappa(1.0, 0.0, ONES), "`gamma` must lie in (0, inf]"),
    "kappa empty spectrum": (lambda: ra.solve_kappa(1.0, 1.0, []), "`spectrum` must hold"),
    "kappa negative spectrum": (lambda: ra.solve_kappa(1.0, 1.0, [-1.0]), "must be >= 0"),
    "kappa penalty text": (lambda: ra.solve_kappa("1", 1.0, ONES), "`penalty` must be numeric"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_refused_by_name(case):
    call, fragment = CASES[case]
    with pytest.raises((TypeError, ValueError), match=re.escape(fragment)):
        call()


def test_labels_are_aligned_or_refused():
    y = pd.Series(Y, index=np.arange(40)[::-1])
    frame = pd.DataFrame(X, columns=list("abc"))
    aligned = SelfDistilledRidge(y, frame).fit().params
    by_position = SelfDistilledRidge(y.to_numpy(), frame.loc[y.index]).fit().params
    np.testing.assert_allclose(aligned.to_numpy(), by_position.to_numpy())
    with pytest.raises(ValueError, match="must carry the same index labels"):
        SelfDistilledRidge(y, frame.set_axis(np.arange(1, 41)))
