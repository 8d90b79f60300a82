"""Tiny models whose answers are known in closed form: fixtures for the object-model tests.

They are not public features; they exercise ``Model``/``LikelihoodModel`` and the results
classes against hand computation and statsmodels.
"""

import numpy as np
import pandas as pd
from scipy import special

from statcore.base import LikelihoodModel, Model
from statcore.results import LikelihoodResults


class OLSFixture(Model):
    """Ordinary least squares: beta = (X'X)^-1 X'y, vcov = s^2 (X'X)^-1, t(n - k) reference."""

    def fit(self, *, inference="t"):
        X, y = self.design.X, self.design.y
        n, k = X.shape
        xtx_inv = np.linalg.inv(X.T @ X)
        beta = xtx_inv @ X.T @ y
        resid = y - X @ beta
        s2 = resid @ resid / (n - k)
        llf = -0.5 * n * (np.log(2 * np.pi * resid @ resid / n) + 1)
        names = self.exog_names
        return LikelihoodResults(
            method="OLS",
            params=pd.Series(beta, index=names),
            vcov=pd.DataFrame(s2 * xtx_inv, index=names, columns=names),
            df_resid=n - k,
            inference=inference,
            llf=llf,
            scale=s2,
            **self._result_fields(),
        )


class GaussianRegressionMLE(LikelihoodModel):
    """y = X beta + N(0, sigma^2) by generic maximum likelihood, parameters (beta, log sigma)."""

    @property
    def param_names(self):
        return [*self.exog_names, "log_sigma"]

    def start_params(self):
        return np.zeros(len(self.param_names))

    def loglike(self, params):
        beta, log_sigma = params[:-1], params[-1]
        resid = self.design.y - self.design.X @ beta
        return float(
            -len(resid) * (log_sigma + 0.5 * np.log(2 * np.pi))
            - 0.5 * resid @ resid * np.exp(-2 * log_sigma)
        )


class LogisticMLE(LikelihoodModel):
    """Logistic regression with an analytic score: a second likelihood fixture."""

    method_name = "Logistic regression (ML)"

    def loglike(self, params):
        eta = self.design.X @ params
        return float(self.design.y @ eta - np.logaddexp(0.0, eta).sum())

    def score(self, params):
        return self.design.X.T @ (self.design.y - special.expit(self.design.X @ params))
