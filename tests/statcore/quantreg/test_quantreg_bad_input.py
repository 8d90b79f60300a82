"""Bad input to the quantreg entries gives an error naming the argument (issue 18)."""

import re

import numpy as np
import pandas as pd
import pytest

from statcore.quantreg import FederatedQuantReg, QuantReg
from statcore.quantreg import simulate as qsim

rng = np.random.default_rng(0)
X = rng.standard_normal((40, 2))
Y = X @ [1.0, -1.0] + rng.standard_normal(40)
FRAME = pd.DataFrame(X, columns=["a", "b"])


def agent(y, x):
    return [(pd.Series(y), pd.DataFrame(x, columns=["a", "b"][: x.shape[1]]))]


CASES = {
    "empty": (lambda: QuantReg(np.empty(0), np.empty((0, 2))), "`endog` needs at least 2 rows"),
    "one row": (lambda: QuantReg(Y[:1], X[:1]), "got one row"),
    "complex y": (lambda: QuantReg(Y + 1j, X), "`endog` must be real; got complex"),
    "text X": (lambda: QuantReg(Y, np.full((40, 2), "1")), "`exog` must be numeric array-like"),
    "inf X": (lambda: QuantReg(Y, np.r_[[[np.inf, 0]], X[1:]]), "`exog` must be finite"),
    "lengths": (lambda: QuantReg(Y[:5], X), "`endog` has 5, `exog` has 40"),
    "q text": (lambda: QuantReg(Y, X, q="0.5"), "`q` must be a number in (0, 1)"),
    "no response": (lambda: QuantReg.from_formula("~ a", FRAME), "has no response"),
    "method": (
        lambda: QuantReg(Y, X).fit(method="simplex"),
        "'auto', 'fn', 'pfn', 'conquer', 'highs'",
    ),
    "tol text": (lambda: QuantReg(Y, X).fit(tol="1"), "`tol` must be a real number"),
    "unused random_state": (
        lambda: QuantReg(Y, X).fit(random_state="x"),
        "`random_state` must be None",
    ),
    "agent complex y": (
        lambda: FederatedQuantReg(agent(Y[:20] + 1j, X[:20])),
        "agent 'agent0': `endog` must be real",
    ),
    "agent lengths": (
        lambda: FederatedQuantReg(agent(Y[:10], X[:20])),
        "agent 'agent0': arguments must have the same number of rows",
    ),
    "agent names": (
        lambda: FederatedQuantReg([(Y[:20], X[:20], ["a"])]),
        "`feature_names` must name the 2 columns",
    ),
    "agent no response": (
        lambda: FederatedQuantReg.from_formula("~ a", [FRAME]),
        "has no response",
    ),
    "corr": (lambda: qsim.omitted_correlated_agents(100, corr=2), "`corr` must lie in (-1, 1)"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_refused_by_name(case):
    call, fragment = CASES[case]
    with pytest.raises((TypeError, ValueError), match=re.escape(fragment)):
        call()


def test_labels_are_aligned_or_refused():
    y = pd.Series(Y, index=np.arange(40)[::-1])
    frame = FRAME.copy()  # index 0..39: the same labels in another order
    aligned = QuantReg(y, frame).fit().params
    by_position = QuantReg(y.to_numpy(), frame.loc[y.index].to_numpy()).fit().params
    np.testing.assert_allclose(aligned.to_numpy(), by_position.to_numpy())
    with pytest.raises(ValueError, match="must carry the same index labels"):
        QuantReg(y, frame.set_axis(np.arange(1, 41)))
    shuffled = [(y, frame)]
    with pytest.raises(ValueError, match="agent 'agent0'"):
        FederatedQuantReg([(y, frame.set_axis(np.arange(1, 41)))])
    assert FederatedQuantReg(shuffled).nobs == 40
