"""QuantReg(method="fn") beside statsmodels' IRLS QuantReg and scikit-learn's HiGHS
QuantileRegressor; FederatedQuantReg beside a pooled fit as the number of agents grows.

Sizes are kept to a few seconds per call: n = 1e4 and 1e5 at p = 10 and 50 against
statsmodels, p = 10 at n = 1e4 against scikit-learn (HiGHS takes minutes at n = 1e5; the
issue's 1043 s at n = 1e5, p = 20), and n = 1e6 for ours and statsmodels at p = 10 only.
"""

import numpy as np
import sklearn
import statsmodels
import statsmodels.api as sm
from sklearn.linear_model import QuantileRegressor

from statcore.quantreg import FederatedQuantReg, QuantReg, simulate

_DATA = {}


def _data(n, p):
    if (n, p) not in _DATA:
        rng = np.random.default_rng(n + p)
        X = np.column_stack([np.ones(n), rng.normal(size=(n, p - 1))])
        y = X @ np.linspace(0.5, 1.5, p) + rng.standard_t(3, size=n) * (1 + 0.3 * np.abs(X[:, 1]))
        _DATA[(n, p)] = (X, y)
    return _DATA[(n, p)]


def _ours(n, p):
    X, y = _data(n, p)
    return lambda: QuantReg(y, X, q=0.5, intercept=False).fit(cov_type="iid")


def _statsmodels(n, p):
    X, y = _data(n, p)
    return lambda: sm.QuantReg(y, X).fit(q=0.5, vcov="iid")


def _sklearn(n, p):
    X, y = _data(n, p)
    return lambda: QuantileRegressor(
        quantile=0.5, alpha=0.0, fit_intercept=False, solver="highs"
    ).fit(X, y)


def _case(name, ours, anchor, anchor_name, n, p):
    return {
        "name": name,
        "ours": lambda: ours(n, p)(),
        "anchor": lambda: anchor(n, p)(),
        "anchor_name": anchor_name,
        "setup": lambda: _data(n, p),
    }


SM = f"statsmodels {statsmodels.__version__} QuantReg (IRLS)"
SK = f"scikit-learn {sklearn.__version__} QuantileRegressor(highs)"

CASES = [
    _case(f"QuantReg fn, n={n:.0e}, p={p}", _ours, _statsmodels, SM, n, p)
    for n in (10_000, 100_000)
    for p in (10, 50)
]
CASES += [
    _case("QuantReg fn, n=1e+05, p=20 (the issue's target)", _ours, _statsmodels, SM, 100_000, 20),
    _case("QuantReg fn, n=1e+06, p=10", _ours, _statsmodels, SM, 1_000_000, 10),
    _case("QuantReg fn, n=1e+04, p=10", _ours, _sklearn, SK, 10_000, 10),
]


def _federated_case(n_agents):
    design = simulate.homogeneous_agents(
        n_agents=n_agents, n_per_agent=64_000 // n_agents, p=5, random_state=1
    )
    pooled = design.pooled.drop(columns="agent")
    y, X = pooled["y"].to_numpy(), pooled.drop(columns="y")
    model = FederatedQuantReg(design.agents, q=0.5, response="y")
    return {
        "name": f"FederatedQuantReg, {n_agents} agents, N=64000, p=5 (threads)",
        "ours": lambda: model.fit(backend="threads"),
        "anchor": lambda: QuantReg(y, X, q=0.5).fit(),
        "anchor_name": "statcore pooled QuantReg fn + kernel SE",
    }


CASES += [_federated_case(k) for k in (1, 4, 16, 64)]
