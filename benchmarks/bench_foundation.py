"""The foundation's own costs beside their anchors: design building, reporting, bootstrap CIs."""

import numpy as np
import pandas as pd
import scipy
import statsmodels
import statsmodels.formula.api as smf
from scipy import stats

import statcore as sc
from statcore.formula import design_from_formula
from statcore.results import LikelihoodResults, ResamplingResult

grunfeld = sc.datasets.load("grunfeld")
FORMULA = "invest ~ value + capital + C(firm)"
sm_fit = smf.ols(FORMULA, grunfeld).fit()


def statcore_ols_summary():
    design = design_from_formula(FORMULA, grunfeld)
    X, y = design.X, design.y
    xtx_inv = np.linalg.inv(X.T @ X)
    beta = xtx_inv @ X.T @ y
    resid = y - X @ beta
    df = len(y) - X.shape[1]
    names = list(design.x_names)
    res = LikelihoodResults(
        method="OLS",
        params=pd.Series(beta, index=names),
        vcov=pd.DataFrame(resid @ resid / df * xtx_inv, index=names, columns=names),
        df_resid=df,
        inference="t",
        llf=-0.5 * len(y) * (np.log(2 * np.pi * resid @ resid / len(y)) + 1),
        nobs=len(y),
    )
    return res.summary().as_text()


rng = np.random.default_rng(0)
sample = rng.exponential(size=200)
jackknife = pd.DataFrame({"mean": (sample.sum() - sample) / (len(sample) - 1)})


def statcore_bca():
    idx = np.random.default_rng(1).integers(0, len(sample), (2000, len(sample)))
    res = ResamplingResult(
        method="bootstrap",
        estimate=pd.Series([sample.mean()], index=["mean"]),
        replicates=pd.DataFrame({"mean": sample[idx].mean(axis=1)}),
        jackknife=jackknife,
    )
    return res.conf_int(method="bca")


CASES = [
    {
        "name": "design from formula (Grunfeld, 11-level factor)",
        "ours": lambda: design_from_formula(FORMULA, grunfeld),
        "anchor": lambda: smf.ols(FORMULA, grunfeld),
        "anchor_name": f"statsmodels {statsmodels.__version__} model construction",
    },
    {
        "name": "OLS fit + text summary (Grunfeld)",
        "ours": statcore_ols_summary,
        "anchor": lambda: smf.ols(FORMULA, grunfeld).fit().summary().as_text(),
        "anchor_name": f"statsmodels {statsmodels.__version__}",
    },
    {
        "name": "BCa interval of a mean, n=200, B=2000",
        "ours": statcore_bca,
        "anchor": lambda: stats.bootstrap(
            (sample,), np.mean, n_resamples=2000, method="BCa", rng=np.random.default_rng(1)
        ),
        "anchor_name": f"scipy {scipy.__version__} stats.bootstrap",
    },
]
