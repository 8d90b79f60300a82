# %% [markdown]
# # Local intrinsic dimension and representational alignment
#
# `statcore.geometry` follows Yu et al. (2026, arXiv:2601.22722): across models, lower
# **local** intrinsic dimension (LID) of the embeddings goes with stronger model-model and
# model-brain alignment and better generalisation, while global dimension does not. The
# estimators and the study harness are here; the paper's models and fMRI data are not, so this
# vignette uses synthetic manifolds and tiny models built on the spot.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch
from scipy.stats import ortho_group

from mlcore.analysis import extract_features
from statcore.geometry import AlignmentStudy, GlobalID, LocalID, alignment

# %% [markdown]
# ## Manifolds of known dimension
# Uniform points in [0, 1]^d rotated into R^D. The kNN estimators read d = 2 well and
# underestimate higher d (the known bias of every kNN estimator at fixed n).

# %%
rng = np.random.default_rng(0)
rows = []
for d, D in [(2, 10), (5, 20), (8, 40)]:
    X = rng.uniform(size=(3000, d)) @ ortho_group.rvs(D, random_state=d)[:d]
    local = LocalID(X).fit(k=20, n_resamples=100, random_state=0)
    glob = GlobalID(X).fit()
    rows.append((d, *local.estimates.round(2), *glob.estimates.round(2)))
print("d | LID mean, median, harmonic | participation ratio, PCA 90 %, TwoNN")
for row in rows:
    print(row)

# %%
local.tidy()

# %%
local.plot()
plt.show()

# %% [markdown]
# ## Alignment with a permutation test
# Mutual kNN is 1 for the same neighbourhoods and about k / (n - 1) for unrelated ones;
# the p-value comes from permuting the rows of B.

# %%
A = rng.normal(size=(500, 32))
B = A @ rng.normal(size=(32, 16)) + 2.0 * rng.normal(size=(500, 16))
for metric in ("mutual_knn", "cka", "unbiased_cka", "cknna", "rsa"):
    res = alignment(A, B, metric=metric, k=10, n_resamples=199, random_state=0)
    print(f"{metric:>13}: {res.statistic:.3f}  p = {res.pvalue:.3f}")
alignment(A, B, metric="mutual_knn", n_resamples=199, random_state=0)

# %% [markdown]
# ## A small alignment study on tiny models
# Six tiny MLPs learn a 2-class rule on 4-d inputs for different numbers of steps; a hidden
# "brain" responds to a noisy linear view of the same rule-relevant latent. Features of the
# penultimate layer come from `extract_features` (forward hooks).

# %%
torch.manual_seed(0)
latent = torch.randn(600, 4)
labels = (latent[:, 0] + latent[:, 1] > 0).long()
stimuli, test = latent[:400], latent[400:]
features, accuracy, size = {}, {}, {}
for width, steps in [(16, 5), (16, 40), (32, 80), (32, 160), (64, 240), (64, 400)]:
    net = torch.nn.Sequential(torch.nn.Linear(4, width), torch.nn.Tanh(), torch.nn.Linear(width, 2))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(stimuli), labels[:400]).backward()
        opt.step()
    name = f"w{width}_s{steps}"
    features[name] = extract_features(net, stimuli.split(100), layers="1")["1"]
    with torch.no_grad():
        accuracy[name] = float((net(test).argmax(1) == labels[400:]).float().mean())
    size[name] = sum(p.numel() for p in net.parameters())
brain = (stimuli[:, :2] @ torch.randn(2, 20)).numpy() + 0.3 * rng.normal(size=(400, 20))
study = AlignmentStudy(features, accuracy=accuracy, brain=brain, size=size).fit(
    n_resamples=499, random_state=0
)
study.models

# %% [markdown]
# Correlations across models, with permutation p-values over the model labels and partial
# correlations controlling for log(size). Six toy models illustrate the harness; they are no
# test of the paper's claim.

# %%
study.tidy().query("term.str.startswith('lid')")

# %%
study.plot()
plt.show()

# %%
study.plot("matrix")
plt.show()
