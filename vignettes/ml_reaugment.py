# %% [markdown]
# # ReAugment: model-zoo-guided RL augmentation for few-shot forecasting
#
# With a few hundred training windows a forecaster overfits. ReAugment (Yuan et al., ICML 2026,
# arXiv 2409.06282) augments the training set where that overfitting happens: a K-fold *model
# zoo* scores every window by how much the zoo members disagree on it, the most disputed half
# become *anchors*, and a variational masked autoencoder (VMAE), trained by REINFORCE on a
# reward from the zoo's backtests plus a proximity term, turns anchors into new windows. The
# final forecaster trains on original plus augmented windows.
#
# `mlcore.augment` implements a reconstruction (the paper's abstract and summaries were read,
# not its method section): the `Fidelity` paragraph of `mlcore.augment.reaugment`'s docstring
# lists the reconstructed choices.
#
# Contents: (1) the zoo flags windows of another regime; (2) the REINFORCE estimator against
# the analytic gradient; (3) one ReAugment fit on weekly Mauna Loa CO₂; (4) CO₂ with a 10 %
# prefix over 5 seeds against no augmentation and the tsaug-style baselines (jitter, scaling,
# time warp); (5) two more shipped series, sunspots and El Niño.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from scipy.stats import rankdata

from mlcore.augment import (
    DLinear,
    Jitter,
    LinearForecaster,
    MLPForecaster,
    ReAugment,
    Scaling,
    TimeWarp,
    ZooDisagreement,
    compare_augmenters,
    make_windows,
    regime_windows,
    reinforce_loss,
)
from statcore.datasets import load

torch.set_num_threads(1)


def auroc(score, label):
    ranks = rankdata(score)
    n1 = label.sum()
    return (ranks[label].sum() - n1 * (n1 + 1) / 2) / (n1 * (label.size - n1))


# %% [markdown]
# ## 1. The zoo's disagreement flags windows of another regime
#
# 400 AR(1) windows with φ = 0.8, of which 5 % are drawn with φ = −0.8; one-step forecasts
# (at even horizons the two regimes' forecasts φʰx coincide). A zoo of five linear
# forecasters, each trained on four of five folds; the score is the variance of the zoo's
# errors. We ask for AUROC ≥ 0.8 (this library's acceptance bar).


# %%
rows = []
for seed in range(6):
    X, Y, odd = regime_windows(400, 16, odd_fraction=0.05, random_state=seed)
    zoo = ZooDisagreement(
        lambda: LinearForecaster(16, 1, normalize=False), train_options={"epochs": 200, "lr": 1e-2}
    ).fit(X, Y, random_state=seed)
    rows.append((auroc(zoo.scores, odd), auroc(zoo.errors(X, Y).mean(1).numpy(), odd)))
rows = np.array(rows)
print(
    "AUROC of the zoo variance per seed:",
    np.round(rows[:, 0], 3),
    "mean",
    rows[:, 0].mean().round(3),
)
print(
    "AUROC of the zoo mean error       :",
    np.round(rows[:, 1], 3),
    "mean",
    rows[:, 1].mean().round(3),
)

# %% [markdown]
# ## 2. REINFORCE against the analytic gradient
#
# A Gaussian policy N(μ, 0.7²I) in three dimensions with reward −‖x − a‖²: the gradient of the
# expected reward is −2(μ − a). 300 batches of 32 draws of the surrogate `reinforce_loss`.

# %%
a = torch.tensor([1.0, -0.5, 2.0], dtype=torch.float64)
mu = torch.tensor([0.3, 0.2, -0.4], dtype=torch.float64, requires_grad=True)
gen = torch.Generator().manual_seed(0)
grads = []
for _ in range(300):
    x = (mu + 0.7 * torch.randn(32, 3, generator=gen, dtype=torch.float64)).detach()
    log_prob = torch.distributions.Normal(mu, 0.7).log_prob(x).sum(-1)
    (g,) = torch.autograd.grad(reinforce_loss(log_prob, -((x - a) ** 2).sum(-1)), mu)
    grads.append(-g)
grads = torch.stack(grads)
se = grads.std(0) / math.sqrt(len(grads))
print("analytic :", (-2 * (mu - a)).detach().numpy().round(3))
print("estimate :", grads.mean(0).numpy().round(3), "± s.e.", se.numpy().round(3))
print(
    "|difference| / s.e.:", ((grads.mean(0) - (-2 * (mu - a))).abs() / se).detach().numpy().round(2)
)

# %% [markdown]
# ## 3. One ReAugment fit on CO₂
#
# Weekly CO₂ at Mauna Loa (2,225 weeks from 1958), standardised by its first 10 %: the
# training prefix (222 weeks, 189 windows of 26 weeks → 8 weeks). The forecaster is a small MLP
# on the lookback relative to its last value.

# %%
co2 = load("co2")["co2"].to_numpy()
cut = len(co2) // 10
z = (co2 - co2[:cut].mean()) / co2[:cut].std()
X, Y = make_windows(z[:cut], 26, 8)
X_test, Y_test = make_windows(z[cut:], 26, 8, stride=4)
opts = {"epochs": 300, "lr": 1e-2}


def mlp():
    return MLPForecaster(26, 8, hidden=64)


res = ReAugment(mlp, train_options=opts).fit(X, Y, random_state=0)
print(res.summary())
fig, axes = plt.subplots(1, 3, figsize=(15, 3.8))
res.plot("scores", ax=axes[0])
res.plot("rewards", ax=axes[1])
res.plot("windows", ax=axes[2])
plt.show()

# %% [markdown]
# A proximity check: the mean distance from an augmented window to its anchor should
# be at most twice the median nearest-neighbour distance among the training windows.

# %%
print(
    f"mean distance to anchor {res.mean_distance:.3f}, median NN distance "
    f"{res.median_nn_distance:.3f}, ratio {res.proximity_ratio:.2f} (bound 2)"
)

# %% [markdown]
# ## 4. CO₂, 10 % prefix, 5 seeds
#
# Within a seed all augmenters start from the same initialisation and batch order; the table
# gives each test MSE with its t-interval over seeds and the paired difference
# MSE(ReAugment) − MSE(method) with its t-interval (negative: ReAugment better).

# %%
augmenters = {
    "ReAugment": ReAugment(mlp, train_options=opts),
    "none": None,
    "jitter": Jitter(0.1),
    "scaling": Scaling(0.1),
    "timewarp": TimeWarp(),
}
mlp_cmp = compare_augmenters(
    mlp, X, Y, X_test, Y_test, augmenters, seeds=5, train_options=opts, random_state=0
)
print(mlp_cmp.summary())
mlp_cmp.plot("mse")
plt.show()

# %% [markdown]
# ReAugment has the lowest mean MSE and beats no augmentation on average; with these 5 seeds
# that difference's interval now reaches just above 0 (it did not before a dependency update
# moved the numbers), and with 10 seeds (`tests/mlcore/test_reaugment.py`) it is -0.051
# [-0.079, -0.022]. Its edge over scaling and time warp is within seed noise. An ablation (not
# rerun here, to keep this page quick; it was measured on the same seeds before torch's seeds
# were drawn through `mlcore._device`,
# when ReAugment also scored 0.176): the pretrained VMAE without any REINFORCE step gave
# 0.174 (difference 0.002 [−0.015, 0.019]); augmenting every window instead of the anchors
# gave 0.198 (worse by 0.022 [0.002, 0.042]); 300 REINFORCE steps instead of 100 gave 0.191.
# On this series the gain comes from the zoo's choice of anchors and the VMAE, not from RL.
#
# DLinear (Zeng et al., AAAI 2023) is the usual linear baseline. A linear forecaster on 189
# windows has little variance to remove: none of the augmenters helps it, and ReAugment's
# windows cost it accuracy (in the same earlier measurement, lowering the policy's output
# noise to `output_std=0.01` narrowed the loss to 0.261 against 0.242, but did not remove
# it).


# %%
def dlinear():
    return DLinear(26, 8, kernel=13)


augmenters["ReAugment"] = ReAugment(dlinear, train_options=opts)
dl_cmp = compare_augmenters(
    dlinear, X, Y, X_test, Y_test, augmenters, seeds=5, train_options=opts, random_state=0
)
print(dl_cmp.summary())

# %% [markdown]
# ## 5. Sunspots and El Niño
#
# Yearly sunspot numbers (1700–2008; a 30 % prefix, 93 years) and monthly Niño 1+2 sea-surface
# temperature (1950–2010; a 20 % prefix, 146 months), the same MLP forecaster, 3 seeds.

# %%
for name, series, frac, lookback, horizon in [
    ("sunspots", load("sunspots")["SUNACTIVITY"].to_numpy(), 0.3, 16, 4),
    ("elnino", load("elnino")["sst"].to_numpy(), 0.2, 24, 6),
]:
    cut = int(frac * len(series))
    zs = (series - series[:cut].mean()) / series[:cut].std()
    Xs, Ys = make_windows(zs[:cut], lookback, horizon)
    Xs_test, Ys_test = make_windows(zs[cut:], lookback, horizon, stride=2)

    def make(lookback=lookback, horizon=horizon):
        return MLPForecaster(lookback, horizon, hidden=64)

    cmp = compare_augmenters(
        make,
        Xs,
        Ys,
        Xs_test,
        Ys_test,
        {
            "ReAugment": ReAugment(make, train_options=opts),
            "none": None,
            "jitter": Jitter(0.1),
            "scaling": Scaling(0.1),
            "timewarp": TimeWarp(),
        },
        seeds=3,
        train_options=opts,
        random_state=0,
    )
    print(name, f"({len(Xs)} training windows)")
    print(
        cmp.tidy()[["method", "mse", "diff", "diff_low", "diff_high"]]
        .round(4)
        .to_string(index=False)
    )
