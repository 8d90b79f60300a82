# %% [markdown]
# # Coresets and fair clustering
#
# `statcore.cluster.Coreset` summarises a large point set by a small weighted sample whose
# k-means (or k-median) cost tracks the data's: sensitivity sampling (the construction behind
# Prabhu, Schwiegelshohn & Shyam's *approximation-preserving coresets*, arXiv:2606.17316),
# uniform and lightweight sampling for comparison, and a *resilient* coreset with consistent,
# hashed sampling keys (after Norouzi-Fard, Lattanzi, Bateni & Monemizadeh, ICML 2026).
# The constructions are reconstructions from the papers' abstracts (see the `Coreset`
# docstring's Fidelity paragraph).

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from statcore.cluster.coreset import Coreset
from statcore.cluster.resilience import resilience
from statcore.cluster.simulate import imbalanced_blobs

# %% [markdown]
# ## One coreset
# The notes' imbalanced Gaussian blobs: 50,000 points in 20 dimensions, 20 clusters of very
# unequal sizes. `sum(w)` estimates n without bias; the table counts coreset points per
# cluster of the construction's seeding solution.

# %%
X, labels = imbalanced_blobs(50_000, 20, 20, random_state=0)
res = Coreset(X, 20).fit(size=1000, random_state=1)
print(res)
res.tidy().T

# %% [markdown]
# ## Coreset size against the approximation ratio
# For each size and law, one coreset is drawn and solved four times (k-means++ and weighted
# Lloyd, 3 starts each); the ratio is the solution's cost on the full data over the best cost
# found (scikit-learn's KMeans, best of 5 starts on the full data, or any coreset solution if
# better).

# %%
from sklearn.cluster import KMeans

best = KMeans(20, n_init=5, random_state=0).fit(X).inertia_
rows = []
model = Coreset(X, 20)
for method in ("sensitivity", "lightweight", "uniform"):
    for size in (200, 500, 2000):
        check = model.fit(size=size, method=method, random_state=size).check_approximation(
            n_repeats=4, reference_cost=best, random_state=0
        )
        rows.append(
            {
                "method": method,
                "size": size,
                "mean ratio": check.estimate,
                "conf_high": check.conf_high,
                "max": check.ratios.max(),
            }
        )
ratios = pd.DataFrame(rows)
fig, ax = plt.subplots()
for method, group in ratios.groupby("method"):
    ax.plot(group["size"], group["mean ratio"], "o-", label=method)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("coreset size m")
ax.set_ylabel("cost ratio to the best solution")
ax.axhline(1.05, color="0.6", linestyle=":")
ax.legend()
ratios.round(3)

# %% [markdown]
# ## Resilience
# An eps-close copy of the data, X' = X (I + E) with |E|_2 = eps / 2, moves every distance by a
# factor in [1 - eps/2, 1 + eps/2]. The resilient coreset keeps the same rows (hashed keys of
# the row ids, same seed), seeds consistently (an exponential race on hashed keys) and so lands
# on nearly the same clustering; scikit-learn's KMeans with the same seed on both copies often
# does not. On the uniform cube (no cluster structure, the hardest case):

# %%
cube = np.random.default_rng(0).random((3000, 10))
curve = resilience(cube, 10, eps_grid=[0.01, 0.03, 0.1], size=1000, n_seeds=2, random_state=0)
curve.plot()
curve.gamma_hat.round(3)

# %% [markdown]
# ## Capacitated fair-range clustering on a real table
#
# `FairRangeKClustering` picks `n_clusters` centres among candidate facilities, each serving at most
# its capacity, with the number of centres from each demographic group inside a range
# (Gadekar & Thejaswi, 2025, arXiv:2505.15905). Here: 200 respondents of the 1996 American
# National Election Study (`anes96`, public domain, shipped: see `data/README.md`), placed by
# age and the log population of their home town (standardised); 30 of them are candidate
# "panel representatives". Groups are by education: a panel of 6 must hold 2 or 3 college
# graduates, and each representative speaks for at most 40 respondents. Row labels of the
# frames flow to the results.

# %%
import numpy as np

import statcore as sc
from statcore.cluster import FairRangeKClustering

anes = sc.datasets.load("anes96")
rng = np.random.default_rng(0)
people = anes.iloc[rng.choice(len(anes), 200, replace=False)][["age", "logpopul", "educ"]]
xy = (people[["age", "logpopul"]] - people[["age", "logpopul"]].mean()) / people[
    ["age", "logpopul"]
].std()
candidates = xy.iloc[rng.choice(200, 30, replace=False)]
education = np.where(people.loc[candidates.index, "educ"] >= 5, "college", "no_college")

plain = FairRangeKClustering(xy, candidates, n_clusters=6, capacities=40)
fair = FairRangeKClustering(
    xy,
    candidates,
    n_clusters=6,
    capacities=40,
    groups=education,
    ranges={"college": (2, 3), "no_college": (3, 4)},
)
res_plain = plain.fit(method="milp")
res_fair = fair.fit(method="milp")
print(res_fair.summary())
print(
    "college graduates on the unconstrained panel:",
    int((education[np.isin(candidates.index, res_plain.loads["facility"])] == "college").sum()),
)
print(f"price of the ranges: {res_fair.cost / res_plain.cost - 1:.2%} more k-median cost")

# %% [markdown]
# The polynomial approximation (FRT tree embedding of 32 leaders, exact DP on the tree over
# type-count vectors and flows, assignment re-solved exactly) against the exact MILP:

# %%
res_tree = fair.fit(method="tree", random_state=0)
violations = res_tree.constraint_violations() or "none"
print(f"tree / MILP cost: {res_tree.cost / res_fair.cost:.3f}; violations: {violations}")
res_fair.group_counts

# %%
res_fair.plot()
plt.show()
