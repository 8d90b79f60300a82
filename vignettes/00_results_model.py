# %% [markdown]
# # The statcore object model
#
# Every statcore method follows the R / statsmodels way of working: a *model* holds the data and
# what is to be estimated, `fit()` returns a new, immutable *results* object, and every result
# reports itself the same way: `summary()`, `tidy()`, `glance()`, `conf_int()`, `plot()`.
#
# This vignette shows that object model on Ernst Engel's 1857 Belgian household budgets and on
# the Grunfeld investment panel, with a twenty-line least-squares model written here for the
# purpose. The method areas (quantile regression, NVMM, MMDD, ...) build on exactly the same
# pieces.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import statcore as sc
from statcore.base import Model
from statcore.results import LikelihoodResults, ResamplingResult, compare

engel = sc.datasets.load("engel")
print(engel.attrs["description"])
engel.head()

# %% [markdown]
# ## A model in twenty lines
#
# A `Model` receives arrays, a DataFrame or a formula and turns them into a `Design`: float64
# copies of `y` and `X`, term names, the rows kept. Its `fit()` builds a results object from
# labelled pandas objects once. Here: least squares with the classical covariance.


# %%
class LeastSquares(Model):
    """OLS: beta = (X'X)^-1 X'y, vcov = s^2 (X'X)^-1, t(n - k) reference."""

    def fit(self, *, inference="t"):
        X, y = self.design.X, self.design.y
        n, k = X.shape
        xtx_inv = np.linalg.inv(X.T @ X)
        beta = xtx_inv @ X.T @ y
        resid = y - X @ beta
        s2 = resid @ resid / (n - k)
        names = self.exog_names
        return LikelihoodResults(
            method="Least squares",
            params=pd.Series(beta, index=names),
            vcov=pd.DataFrame(s2 * xtx_inv, index=names, columns=names),
            df_resid=n - k,
            inference=inference,
            llf=-0.5 * n * (np.log(2 * np.pi * resid @ resid / n) + 1),
            scale=s2,
            **self._result_fields(),
        )


model = LeastSquares.from_formula("foodexp ~ income", engel)
res = model.fit()
res

# %% [markdown]
# `print(res)` is compact, as R's `print`; the full report is `summary()`. It carries no date,
# so the same fit prints the same text every time.

# %%
print(res.summary())

# %% [markdown]
# The same numbers as data frames, with broom's column names:

# %%
res.tidy()

# %%
res.glance()

# %%
res.conf_int(alpha=0.1)

# %% [markdown]
# ## Array input, names and the intercept
#
# Arrays get an `Intercept` column by default (the R convention); pandas labels become term
# names, plain arrays get `x0, x1, ...`. A constant column already present is refused with a
# pointer to `intercept=False`.

# %%
arrays = LeastSquares(engel["foodexp"], engel[["income"]]).fit()
print(arrays.params)
try:
    LeastSquares(engel["foodexp"], np.column_stack([np.ones(len(engel)), engel["income"]]))
except ValueError as err:
    print("ValueError:", err)

# %% [markdown]
# ## Categorical terms, Wald tests and prediction on new data
#
# The Grunfeld panel has a firm factor. Term names come from formulaic (`C(firm)[T.Chrysler]`),
# `wald_test` takes constraint strings, and `predict(newdata)` re-applies the fitted
# specification: the same factor levels, the same stateful transforms.

# %%
grunfeld = sc.datasets.load("grunfeld")
panel = LeastSquares.from_formula("invest ~ value + capital + C(firm)", grunfeld).fit()
panel.tidy().head(6)

# %%
print(panel.wald_test("value = capital"))

# %%
new = pd.DataFrame(
    {"value": [1000.0, 1000.0], "capital": [200.0, 200.0], "firm": ["General Motors", "IBM"]}
)
panel.predict(new)

# %% [markdown]
# `augment()` returns the data with fitted values and residuals; a formula with a stateful
# transform (`center(income)`) keeps the training mean when it predicts.

# %%
centred = LeastSquares.from_formula("foodexp ~ center(income)", engel).fit()
print(centred.predict(pd.DataFrame({"income": [engel["income"].mean()]})))
centred.augment().head()

# %% [markdown]
# ## Nested fits: likelihood-ratio test and a side-by-side table

# %%
small = LeastSquares.from_formula("invest ~ value + capital", grunfeld).fit()
print(panel.lr_test(small))
print(compare(small, panel, names=["pooled", "firm effects"], stars=True))

# %% [markdown]
# ## What every fit records: its options and how it stopped
#
# `fit()` options are keyword-only, and the results keep them (`fit_options`, defaults filled in),
# so a table of fits says how each was made. An iterative procedure reports one
# `IterationRecord`: its `status` (`"converged"`, `"maxiter"`, `"stalled"`, `"diverged"`), the
# criterion compared with `tol`, its last value and a history. It is made by one constructor with
# one rule set: reaching `maxiter` without meeting the tolerance is never "converged", and a fit
# that did not converge warns `ConvergenceWarning` once, naming itself and the remedy. Below, a
# model without a design matrix (the `Estimator` base): the Huber location estimate by
# iteratively reweighted means, on the Engel food expenditures.

# %%
import warnings

from statcore.base import Estimator
from statcore.results import EstimationResults, IterationRecord


class HuberLocation(Estimator):
    """Huber's M-estimate of location (scale fixed at the normalised MAD)."""

    method_name = "Huber location (IRLS)"

    def __init__(self, x):
        self.x = np.asarray(x, dtype=float)

    @property
    def nobs(self):
        return len(self.x)

    def fit(self, *, c=1.345, maxiter=50, tol=1e-10):
        scale = 1.4826 * np.median(np.abs(self.x - np.median(self.x)))
        mu, steps = np.median(self.x), []
        for _ in range(maxiter):
            r = (self.x - mu) / scale
            w = np.minimum(1.0, c / np.maximum(np.abs(r), 1e-12))
            new = np.sum(w * self.x) / np.sum(w)
            steps.append(abs(new - mu) / scale)
            mu = new
            if steps[-1] <= tol:
                break
        record = IterationRecord.from_run(
            function="HuberLocation.fit",
            n_iter=len(steps),
            maxiter=maxiter,
            tol=tol,
            criterion="step / scale",
            last_value=steps[-1],
            history=pd.DataFrame({"step": steps}),
        )
        return EstimationResults(
            method=self.method_name,
            params=pd.Series({"location": mu}),
            iterations=record,
            **self._result_fields(),
        )


huber = HuberLocation(engel["foodexp"]).fit()
print(huber.iterations, dict(huber.fit_options), sep="\n")

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    early = HuberLocation(engel["foodexp"]).fit(maxiter=2)
print(early.iterations.status, early.converged, "|", caught[0].message)

# %% [markdown]
# The Huber fit reports no standard errors, so its table has no interval columns (not columns
# of NaN), and asking for intervals says so:

# %%
print(huber.summary())
try:
    huber.conf_int()
except ValueError as err:
    print("ValueError:", err)

# %% [markdown]
# ## A likelihood model with a link
#
# A `LikelihoodModel` needs only `loglike`; the base maximises it and takes the covariance from
# the observed information. With an `inverse_link`, `predict()` answers on the response scale (a
# probability here) and `predict(which="linear")` gives the linear predictor, as in statsmodels.
# `df_model` counts the slopes (statsmodels' convention); AIC and BIC count every parameter
# (`k_params`).

# %%
from scipy import special

from statcore.base import LikelihoodModel


class Logit(LikelihoodModel):
    """Logistic regression: P(y = 1) = expit(X beta)."""

    method_name = "Logistic regression"
    inverse_link = staticmethod(special.expit)

    def loglike(self, params):
        eta = self.exog @ params
        return float(self.endog @ eta - np.logaddexp(0.0, eta).sum())


engel["big_spender"] = (engel["foodexp"] > engel["foodexp"].median()).astype(float)
logit = Logit.from_formula("big_spender ~ income", engel).fit()
print(logit.summary())
incomes = pd.DataFrame({"income": [500.0, 1000.0, 2000.0]})
pd.DataFrame(
    {"probability": logit.predict(incomes), "linear": logit.predict(incomes, which="linear")}
)

# %% [markdown]
# ## Bootstrap reference
#
# A `ResamplingResult` holds replicates and gives percentile, basic, normal and BCa
# intervals. Attached to an estimation result with `inference="bootstrap"`, it supplies the
# standard errors, intervals and p-values. Here: a pairs bootstrap of the Engel fit, with the
# resampling drawn from a seeded Generator.

# %%
rng = np.random.default_rng(2026)
X, y = model.exog, model.endog


def ols_params(rows):
    return np.linalg.lstsq(X[rows], y[rows], rcond=None)[0]


replicates = np.array([ols_params(rng.integers(0, len(y), len(y))) for _ in range(999)])
jackknife = np.array([ols_params(np.delete(np.arange(len(y)), i)) for i in range(len(y))])
boot = ResamplingResult(
    method="Pairs bootstrap of least squares",
    estimate=res.params,
    replicates=pd.DataFrame(replicates, columns=res.params.index),
    jackknife=pd.DataFrame(jackknife, columns=res.params.index),
    scheme="pairs bootstrap",
    nobs=res.nobs,
)
print(boot.summary(method="bca"))

# %% [markdown]
# The classical and bootstrap standard errors differ: Engel's data are heteroscedastic (food
# spending spreads out with income), which the classical covariance ignores.

# %%
from dataclasses import replace  # noqa: E402

boot_res = replace(
    res, inference="bootstrap", resampling=boot, cov_type="pairs bootstrap", ci_method="bca"
)
compare(res, boot_res, names=["classical", "bootstrap"], show="conf_int")

# %% [markdown]
# Every results class lists its plots in `help(res.plot)`. The coefficient plot gives each term
# a panel of its own, so that an intercept near 100 and a slope near 0.5 are both readable; an
# Axes passed in is split into those panels.

# %%
print(res.plot.__doc__.split("ax :")[0])
fig, axes = plt.subplots(1, 2, figsize=(10, 3.5), layout="constrained")
boot.plot(term="income", ax=axes[0])
res.plot(ax=axes[1])
plt.show()

# %% [markdown]
# ## Tests
#
# Tests return a `TestResult`: printed like R's `htest`, unpacked as `statistic, pvalue`, with
# the reference distribution kept for critical values and plots.

# %%
wt = res.wald_test("income = 0.5")
statistic, pvalue = wt
print(wt)
print("critical value at 5%:", wt.critical_value(0.05))
wt.tidy()

# %% [markdown]
# ## Simulation studies
#
# `MonteCarloStudy` runs a function over a grid of designs with an independent random stream per
# replicate (the same seed gives the same table on every backend: serial, threads, processes,
# dask) and reports rates with Monte Carlo standard errors. Here: does the classical 95% interval
# for the slope cover the truth when the noise grows with the regressor, as in Engel's data?


# %%
def slope_coverage(random_state, n, heteroscedastic):
    income = random_state.uniform(400, 4000, size=n)
    scale = 0.05 * income if heteroscedastic else 100.0
    food = 100 + 0.5 * income + random_state.normal(scale=scale, size=n)
    fit = LeastSquares(food, pd.Series(income, name="income")).fit()
    low, high = fit.conf_int().loc["income"]
    return {"covered": bool(low <= 0.5 <= high), "std_error": float(fit.bse["income"])}


study = sc.MonteCarloStudy(
    slope_coverage,
    grid={"n": [30, 100, 300], "heteroscedastic": [False, True]},
    n_rep=400,
    random_state=2026,
)
coverage = study.run()
print(coverage.summary())

# %%
coverage.plot(metric="covered")
plt.show()
