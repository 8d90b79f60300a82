# %% [markdown]
# # Quantile regression and its federated one-shot ensemble
#
# `statcore.quantreg` fits linear quantile regressions exactly (a Frisch-Newton interior point
# method in numba, finished on the optimal vertex of the linear program), by convolution
# smoothing (`conquer`, for very large n) or with scipy's HiGHS as a reference, with iid,
# kernel (Powell), nid (Hendricks-Koenker) or bootstrap standard errors, at one or many
# quantile levels with the joint covariance across levels.
#
# The second half is the one-shot weighted-ensemble estimator of *federated* quantile
# regression (ICML 2026): agents hold different subsets of the features, send their local
# slopes and covariance once, and the server combines them with minimum-variance weights.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import statcore as sc
from statcore.quantreg import FederatedQuantReg, QuantReg, anova, simulate

engel = sc.datasets.load("engel")

# %% [markdown]
# ## Engel's food expenditure: the quantile process
#
# The median regression reproduces R's `rq(foodexp ~ income, tau = .5)`: 81.48225 and
# 0.56018; `cov_type="nid"` is R's default sandwich and gives its standard errors
# (19.25066, 0.02828).

# %%
median = QuantReg.from_formula("foodexp ~ income", engel, q=0.5).fit(cov_type="nid")
print(median.summary())

# %% [markdown]
# `QuantReg` follows R's `summary.rq`: every `se=` option (`iid`, `nid`, `ker`) matches R to
# 1e-9 on Engel and Grunfeld in the tests, where R's numbers are frozen. Its default is R's
# rule: rank-inversion intervals (Koenker 1994) up to 1,000 rows, the nid sandwich above. Rank
# intervals have no covariance matrix (`bse` is NaN, as R prints none): pass
# `cov_type="nid"` (or `"kernel"`, `"iid"`, `"bootstrap"`) for Wald tests.

# %%
rank = QuantReg.from_formula("foodexp ~ income", engel, q=0.5).fit()  # rank: Engel has 235 rows
rank.conf_int(0.1)  # R: summary(rq(foodexp ~ income, .5, engel), alpha = .1)

# %% [markdown]
# Nineteen levels at once: `params` is a terms x levels table and `vcov` covers the stacked
# `(level, term)` estimates, so slopes at different levels can be compared by a Wald test.

# %%
levels = np.round(np.arange(0.05, 0.96, 0.05), 2).tolist()
process = QuantReg.from_formula("foodexp ~ income", engel, q=levels).fit(cov_type="nid")
process.params.T.head()

# %%
process.wald_test("`income[0.25]` = `income[0.75]`")

# %%
axes = process.plot()
ols_slope = np.polyfit(engel["income"], engel["foodexp"], 1)[0]
axes[1].axhline(ols_slope, color="C3", ls="--", label="least squares")
axes[1].legend(frameon=False)
plt.show()

# %% [markdown]
# The slope rises with the quantile: richer households spread their food spending more, which
# a mean regression hides. The fitted lines fan out over the data:

# %%
fig, ax = plt.subplots(figsize=(6, 4))
ax.scatter(engel["income"], engel["foodexp"], s=6, color="0.5")
grid = pd.DataFrame({"income": np.linspace(engel["income"].min(), engel["income"].max(), 50)})
fan = QuantReg.from_formula("foodexp ~ income", engel, q=[0.1, 0.25, 0.5, 0.75, 0.9]).fit()
for level, line in fan.predict(grid).items():
    ax.plot(grid["income"], line, label=f"q = {level:g}")
ax.set_xlabel("household income")
ax.set_ylabel("food expenditure")
ax.legend(frameon=False)
plt.show()

# %% [markdown]
# The solvers agree: `fn` and HiGHS reach the same check loss; `conquer` minimises a
# smoothed loss and lands within its smoothing bias. From 50,000 rows the default
# (`method="auto"`) is `"pfn"`, R's Portnoy-Koenker preprocessing: it solves a subsample,
# globs the rows sure to lie above or below the fit and repairs wrong globs, so the answer is
# the Frisch-Newton vertex itself; `benchmarks/bench_quantreg.py` measures it 1.5x faster than
# R's `rq.fit(method = "pfn")` at 100,000 rows and 2.5x at 1,000,000 (p = 20).

# %%
model = QuantReg.from_formula("foodexp ~ income", engel, q=0.5)
pd.DataFrame(
    {
        m: {**model.fit(method=m).params, "objective": model.fit(method=m).objective}
        for m in ("fn", "highs", "conquer")
    }
)

# %% [markdown]
# ## What R's `rq()` and Stata's `qreg` users reach for next
#
# **Observation weights**, as R's `rq(weights=)`: the fit minimises `sum w_i rho_q(r_i)` and
# every inference method works on the rows `(w x, w y)` exactly as R's `summary.rq` does (the
# tests hold R's numbers for each `se=` option). Here households are weighted by a made-up
# sampling weight; with `from_formula` the weights may also be a column name.

# %%
survey = engel.assign(weight=0.5 + (np.arange(len(engel)) % 4) / 2)
weighted = QuantReg.from_formula("foodexp ~ income", survey, q=0.5, weights="weight")
weighted.fit(cov_type="nid").tidy()

# %% [markdown]
# **Stata's sparsity**: `qreg, vce(iid, kernel(K) bwidth(B))` estimates `1 / f(0)` by a kernel
# density of the residuals. `sparsity="kernel"` with Stata's kernels and bandwidth rules gives
# Stata's standard errors (its published Engel results for all 8 kernels x 3 rules are in the
# tests); the default iid estimate stays R's.

# %%
stata = {("R's iid (the default)", ""): model.fit(cov_type="iid").bse}
for kernel in ("epanechnikov", "biweight", "gaussian"):
    for rule in ("hall-sheather", "bofinger", "chamberlain"):
        options = {"sparsity": "kernel", "kernel": kernel, "bandwidth": rule}
        stata[(kernel, rule)] = model.fit(cov_type="iid", **options).bse
pd.DataFrame(stata).T.round(4)

# %% [markdown]
# **R's bootstrap methods** (`boot.rq(bsmethod=)`): pairs (`"xy"`), Exp(1)-weighted rows
# (`"wxy"`), Parzen-Wei-Ying's resampled score (`"pwy"`), the Markov chain marginal bootstrap
# (`"mcmb"`) and the wild bootstrap (`"wild"`). Their standard errors agree with R's within
# Monte Carlo error in the tests; the methods themselves differ on Engel (mcmb's chain gives the
# smallest errors here, as it does in R: 18.6 and 0.0215 there with 4,000 draws).

# %%
pd.DataFrame(
    {
        method: model.fit(
            cov_type="bootstrap", bootstrap_method=method, n_resamples=500, random_state=0
        ).bse
        for method in ("xy", "wxy", "pwy", "mcmb", "wild")
    }
).T.round(4)

# %% [markdown]
# **anova across levels**, as R's `anova(rq(..., tau = c(.25, .5, .75)))`: the joint Wald test
# that the slopes are equal at every level, with R's degrees of freedom, or one test per slope
# (`joint=False`); two single-level fits on the same data, or two nested models at one level,
# work too. Engel's income slope clearly differs across the quartiles.

# %%
quartiles = QuantReg.from_formula("foodexp ~ income", engel, q=[0.25, 0.5, 0.75]).fit()
print(anova(quartiles))

# %% [markdown]
# **Prediction intervals**, as R's `predict.rq(interval = "confidence")`: `fit`, `lower` and
# `upper` from the fit's covariance (a rank fit, which has none, uses the nid covariance, as R
# does).

# %%
new_households = pd.DataFrame({"income": [500.0, 1000.0, 2000.0]})
weighted.fit(cov_type="nid").predict(new_households, interval="confidence", alpha=0.05)

# %% [markdown]
# ## Federated quantile regression with heterogeneous features
#
# Six agents (sites) hold 600 to 1500 rows each and see different blocks of eight features
# (the identifiable design of the method notes: the blocks an agent lacks are independent of
# its own and enter by a location shift). No row leaves an agent: each sends its slopes, their
# covariance and its sample size.

# %%
design = simulate.block_agents(random_state=2026)
{name: cols for name, cols in design.features_by_agent.items()}

# %%
fed = FederatedQuantReg(design.agents, q=[0.25, 0.5, 0.75], response="y").fit()
print(fed.summary())

# %% [markdown]
# What each agent sent, in floats, and the weight each agent's estimate of each coefficient
# gets at the median:

# %%
fed.communication

# %%
fed.weights[0.5].round(2)

# %% [markdown]
# Against the equal-weight average and the pooled (oracle) fit on all rows with all
# features, at the median: the optimal ensemble has the smaller standard errors, close to the
# pooled fit's, which the federation cannot compute.

# %%
equal = FederatedQuantReg(design.agents, q=0.5, response="y").fit(scheme="equal")
median_fed = FederatedQuantReg(design.agents, q=0.5, response="y").fit()
pooled_rows = pd.concat(
    [
        simulate.block_agents(random_state=2026, blocks_by_agent=((0, 1, 2, 3),) * 6).agents[k]
        for k in design.agents
    ]
)
pooled = QuantReg(pooled_rows["y"], pooled_rows.drop(columns="y"), q=0.5).fit(cov_type="kernel")
pd.DataFrame(
    {
        "truth": design.slopes,
        "optimal": median_fed.params,
        "se optimal": median_fed.bse,
        "se equal": equal.bse,
        "se pooled (all features)": pooled.bse.drop("Intercept"),
    }
).round(3)

# %%
ax = median_fed.plot()
ax.figure.set_size_inches(7, 5)

# %% [markdown]
# `stability()` is the perturbation analysis: a change `delta` in agent k's estimate moves the
# ensemble by exactly `W_k delta`, so `influence = ||W_k||` bounds each agent's sway; the
# leave-one-agent-out change shows it on the data.

# %%
median_fed.stability().round(3)

# %% [markdown]
# ## Uniform bands over the quantile levels, and generalisation
#
# The estimates at several levels are jointly normal with the covariance across levels that
# `vcov` holds (the Gaussian-process limit of the quantile process). A band that covers a
# whole coefficient curve with probability 95% uses the 95% quantile of the supremum of the
# standardised process, simulated from that covariance (fixed seed): wider than the pointwise
# Wald intervals, which together cover the curve far less often (about 83% at these seven
# levels in the tests' simulation study).

# %%
from statcore.quantreg.bands import rearrange

seven = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
fed7 = FederatedQuantReg(design.agents, q=seven, response="y").fit()
uniform = fed7.conf_band(kind="uniform")
pointwise = fed7.conf_band(kind="pointwise")
pd.DataFrame(
    {
        "uniform c": uniform.groupby("term")["critical_value"].first(),
        "pointwise c": pointwise.groupby("term")["critical_value"].first(),
    }
).round(3).T

# %%
axes = fed7.plot("band", terms=["x1", "x8"])
plt.show()

# %% [markdown]
# The same for an agent's own fit (its intercept included), e.g. agent0's:

# %%
fed7.local["agent0"].conf_band(terms=["Intercept"]).round(3)

# %% [markdown]
# Fitted quantile curves can cross outside the bulk of the data. Engel's 19 fitted lines cross
# at low incomes; the rearrangement of Chernozhukov, Fernandez-Val and Galichon (2010) sorts
# each curve over the levels, which makes it monotone, leaves curves that did not cross
# unchanged, and never moves a curve away from a monotone truth (`predict(rearrange=True)`,
# `conf_band(rearrange=True)`).

# %%
low_incomes = pd.DataFrame({"income": [100.0, 300.0, 500.0]})
curves = process.predict(low_incomes)
pd.DataFrame(
    {
        "crossings before": (np.diff(curves.to_numpy(), axis=1) < 0).sum(axis=1),
        "after": (np.diff(rearrange(curves).to_numpy(), axis=1) < 0).sum(axis=1),
    },
    index=low_incomes["income"],
)

# %% [markdown]
# Out-of-sample generalisation: the expected check loss on a new draw from each agent's
# population, of the ensemble (its slopes, with the agent's intercept recentred at the agent's
# feature means) and of the agent's own fit. `excess_*` is the expected excess over the best
# linear quantile function, `tr(H_k V) / 2` by the quadratic expansion of the check loss; the
# tests check it against held-out Monte Carlo (within about 15% per agent). The ensemble's
# excess is a fraction of each agent's own (reconstruction: the paper's definition was not
# available).

# %%
gen = fed7.generalization()
gen.groupby("agent")[["n", "excess_local", "excess_ensemble", "ratio"]].mean().round(4)

# %% [markdown]
# ## When the identification assumption fails
#
# The ensemble targets the global slopes only if each agent's sub-model has them. Here an
# agent omits `x2`, correlated with its `x1`, under heteroscedastic noise: its `x1` slope at
# q = 0.9 is far from the true 1, and the ensemble inherits the bias.

# %%
bad = simulate.omitted_correlated_agents(random_state=0)
fit_bad = FederatedQuantReg(bad.agents, q=0.9, response="y").fit()
pd.DataFrame(
    {
        "partial agent": fit_bad.local["partial"].params.drop("Intercept"),
        "full agent": fit_bad.local["full"].params.drop("Intercept"),
        "ensemble": fit_bad.params,
        "truth": bad.slopes,
    }
).round(3)
