# %% [markdown]
# # InfoAtlas: mutual information from a network trained once
#
# Neural MI estimators (MINE, InfoNCE, SMILE) train a critic for every data set; the kNN
# estimator of Kraskov, Stögbauer and Grassberger (KSG) needs no training but degrades in
# dimension. InfoAtlas (Hu et al. 2026) trains one network, once, to *emit* the critic from the
# paired samples (after a rank-Gaussian copula transform); the Donsker–Varadhan bound of that
# critic is the estimate. New data cost a few forward passes.
#
# `mlcore.mi` ships a toy-size InfoAtlas trained for about 40 minutes on one CPU core
# (`python -m mlcore.mi.train_infoatlas` retrains it from seed 0), next to KSG (statcore,
# numba), MINE, InfoNCE and SMILE behind one call. The network is a reconstruction: the critic
# is a sum of lookup grids over the coordinate pairs, decoded by a small CNN from each pair's
# histogram (InfoNet's grid critic), read on folds it was not decoded from. An optional
# Gaussian head adds the Gaussian log ratio of the sample's correlation matrix; it is off by
# default, so that the learned critic carries the estimate. See the `InfoAtlas` docstring.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from scipy import stats

from mlcore.mi import InfoAtlas, independence_test, mutual_information
from statcore.geometry.mi_designs import (
    correlated_bernoulli_mi,
    correlated_bernoulli_sample,
    crossed_mixture_mi,
    crossed_mixture_sample,
    gaussian_copula_mi,
    gaussian_copula_sample,
    shared_poisson_mi,
    shared_poisson_sample,
    squared_noise_mi,
    squared_noise_sample,
    student_t_mi,
    student_t_sample,
)

torch.set_num_threads(1)
atlas = InfoAtlas.pretrained()

# %% [markdown]
# ## Ground truths
# Gaussian copulas with Beta / Gamma marginals (MI = −(d/2) log(1 − ρ²) whatever the
# marginals), correlated Bernoulli and shared-component Poisson pairs, n = 2000.

# %%
designs = [
    ("copula ρ=0.5, d=1", gaussian_copula_mi(0.5), gaussian_copula_sample, {"rho": 0.5}),
    ("copula ρ=0.8, d=1", gaussian_copula_mi(0.8), gaussian_copula_sample, {"rho": 0.8}),
    ("copula ρ=.2 d=5", gaussian_copula_mi(0.2, 5), gaussian_copula_sample, {"rho": 0.2, "dim": 5}),
    ("copula ρ=.5 d=5", gaussian_copula_mi(0.5, 5), gaussian_copula_sample, {"rho": 0.5, "dim": 5}),
    ("Bernoulli q=0.9", correlated_bernoulli_mi(0.9), correlated_bernoulli_sample, {"q": 0.9}),
    ("Poisson λ0=2", shared_poisson_mi(2.0), shared_poisson_sample, {"lam0": 2.0}),
]  # fmt: skip
rows = []
for name, truth, sample, params in designs:
    x, y = sample(2000, random_state=0, **params)
    ia = mutual_information(x, y, model=atlas, n_resamples=20, random_state=0)
    ksg = mutual_information(x, y, method="ksg", scale="rank")
    rows.append((name, truth, ia.estimate, ia.conf_low, ia.conf_high, ksg.estimate))
    print(f"{name:20s} true {truth:.3f}   InfoAtlas {ia.estimate:.3f} "
          f"[{ia.conf_low:.3f}, {ia.conf_high:.3f}]   KSG {ksg.estimate:.3f}")  # fmt: skip

# %%
fig, ax = plt.subplots(figsize=(6, 4))
pos = np.arange(len(rows))
ax.scatter(pos, [r[1] for r in rows], marker="_", s=400, color="k", label="truth")
ax.errorbar(pos - 0.1, [r[2] for r in rows],
            yerr=[[r[2] - r[3] for r in rows], [r[4] - r[2] for r in rows]],
            fmt="o", label="InfoAtlas (95% bootstrap)")  # fmt: skip
ax.scatter(pos + 0.1, [r[5] for r in rows], marker="s", label="KSG")
ax.set_xticks(pos, [r[0] for r in rows], rotation=30, ha="right")
ax.set_ylabel("MI (nats)")
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Non-Gaussian dependence: does the learned critic carry the estimate?
#
# Three families whose dependence a correlation misses, with exact truths: y = x² + σe
# (uncorrelated; MI by quadrature), an X-shaped mixture (correlation +ρ or −ρ with probability
# 1/2 each; quadrature) and a bivariate t (tail dependence; closed form). n = 5000, 3 seeds.
# The control is what a Gaussian critic can see: the Gaussian-copula MI of the sample's
# normal-score correlation, −½ log(1 − r²).

# %%
hard = [
    ("y = x² + 0.3e", squared_noise_mi(0.3), squared_noise_sample, {"sigma": 0.3}),
    ("y = x² + 0.5e", squared_noise_mi(0.5), squared_noise_sample, {"sigma": 0.5}),
    ("y = x² + 1.0e", squared_noise_mi(1.0), squared_noise_sample, {"sigma": 1.0}),
    ("y = x² + 0.1e", squared_noise_mi(0.1), squared_noise_sample, {"sigma": 0.1}),
    ("X mixture ρ=0.9", crossed_mixture_mi(0.9), crossed_mixture_sample, {"rho": 0.9}),
    ("t ρ=0.5 ν=3", student_t_mi(0.5, 3), student_t_sample, {"rho": 0.5, "dof": 3}),
    ("t ρ=0.8 ν=2", student_t_mi(0.8, 2), student_t_sample, {"rho": 0.8, "dof": 2}),
    ("t ρ=0 ν=3", student_t_mi(0.0, 3), student_t_sample, {"rho": 0.0, "dof": 3}),
]  # fmt: skip
table = []
for name, truth, sample, params in hard:
    reps = []
    for seed in range(3):
        x, y = sample(5000, random_state=seed, **params)
        scores = stats.norm.ppf(stats.rankdata(np.c_[x, y], axis=0) / 5001)
        r = np.corrcoef(scores.T)[0, 1]
        reps.append({
            "learned": atlas.estimate(x, y, n_resamples=0, random_state=seed).estimate,
            "+ Gaussian head": atlas.estimate(
                x, y, n_resamples=0, random_state=seed, gaussian_head=True
            ).estimate,
            "KSG": mutual_information(x, y, method="ksg", scale="rank").estimate,
            "Gaussian fit": -0.5 * np.log1p(-(r**2)),
        })  # fmt: skip
    table.append({"design": name, "truth": truth, **pd.DataFrame(reps).mean().to_dict()})
table = pd.DataFrame(table).set_index("design")
print(table.round(3).to_string())
print("error of the learned critic alone:", (table["learned"] - table["truth"]).round(3).to_dict())

# %% [markdown]
# **Reading the numbers.** A critic that saw only the correlation would report 0 for the
# squared and crossed designs (the "Gaussian fit" column): the learned critic is what carries
# these estimates. With the Gaussian head off it lands within 0.05 nats of the truth for
# y = x² + σe at σ = 0.3 to 1 and for the t pairs, and 0.14 low for the X mixture; the
# Gaussian head changes almost nothing here (it was the whole estimate in the previous,
# hypernetwork reconstruction, which gave 0.006 for y = x² + noise). Two limits, as
# measured: the sharp ridge of y = x² + 0.1e (MI 1.99) comes out 0.28 low, finer than the
# 32-cell grids resolve, and every estimate errs low, as a DV bound read on held-out folds
# should. KSG, which is exact-ish in one dimension, is the better tool there; InfoAtlas
# pulls ahead in dimension (the Gaussian copula with d = 5 above: 0.68 against KSG's 0.53,
# truth 0.72).

# %% [markdown]
# ## Invariance and cost
# The network sees only ranks: a monotone map of a coordinate leaves the estimate unchanged.
# A trained MINE gives a comparable number only after a full training run.

# %%
x, y = gaussian_copula_sample(5000, rho=0.5, dim=3, random_state=1)
a = atlas.estimate(x, y, n_resamples=0, random_state=0).estimate
b = atlas.estimate(np.exp(x), y**3, n_resamples=0, random_state=0).estimate
print(f"raw {a:.4f}  after exp / cube maps {b:.4f}  (truth {gaussian_copula_mi(0.5, 3):.4f})")
for method, opts in (
    ("infoatlas", {"n_resamples": 0, "random_state": 0}),
    ("ksg", {}),
    ("mine", {"maxiter": 300, "random_state": 0}),
):
    start = time.perf_counter()
    est = mutual_information(x, y, method=method, **opts).estimate
    print(f"{method:10s} {est:.4f}  {time.perf_counter() - start:.2f} s")

# %% [markdown]
# ## Independence testing
# A permutation test with the InfoAtlas estimate as statistic: each permutation is one estimate
# (49 of them here, so the smallest p-value is 0.02; use 999 for a paper).

# %%
x, y = gaussian_copula_sample(500, rho=0.0, random_state=2)
print(independence_test(x, y, model=atlas, n_resamples=49, random_state=0))
x, y = gaussian_copula_sample(500, rho=0.3, random_state=2)
print(independence_test(x, y, model=atlas, n_resamples=49, random_state=0))
