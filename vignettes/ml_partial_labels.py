# %% [markdown]
# # CLAPOR: partial labels, long tails and a random class prior
#
# In *imbalanced unreliable partial-label learning* every training example comes with a
# candidate set of labels that may miss the true one, and the classes are long-tailed.
# Balancing methods (logit adjustment, SoLar's Sinkhorn refinery, RECORDS) need the class prior,
# but early in training it can only be estimated from ambiguous labels. CLAPOR (ICML 2026)
# trains under class priors drawn from a Dirichlet distribution around, and pushed away from,
# the running estimate, so that no single wrong estimate locks in.
#
# Only the paper's abstract could be read: the loss below is this package's reconstruction
# (documented in `mlcore.weak.CLAPORLoss`), compared with the baselines in the same API:
# fixed-prior logit adjustment (Menon et al. 2021), SoLar-style Sinkhorn targets and PRODEN
# without balancing.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from mlcore.weak import (
    CLAPORLoss,
    DirichletPriorPerturbation,
    long_tailed_mixture,
    long_tailed_split,
    partial_label_candidates,
    partial_label_study,
    train_partial_label_classifier,
)

torch.set_num_threads(1)

# %% [markdown]
# ## The perturbed priors
#
# `DirichletPriorPerturbation(kappa, gamma=0.5)` draws priors from
# `Dir(kappa * g(pi_hat))` with `g(pi) ∝ pi^0.5`: centred on a flattened estimate, and on the
# log scale that logit adjustment uses, the tail classes are sometimes given far smaller
# priors than the estimate (hence larger margins).

# %%
pi_hat = torch.tensor(np.geomspace(1, 1 / 50, 10) / np.geomspace(1, 1 / 50, 10).sum())
sampler = DirichletPriorPerturbation(20.0, n_samples=200, random_state=0)
draws = sampler(pi_hat).numpy()
fig, ax = plt.subplots(figsize=(6.4, 3.6))
ax.boxplot(np.log(draws), positions=range(10), widths=0.5, showfliers=False)
ax.plot(range(10), np.log(pi_hat.numpy()), "k*", label="log pi_hat")
ax.plot(
    range(10), np.log(sampler.centre(pi_hat).numpy()), "r_", markersize=14, label="log g(pi_hat)"
)
ax.set_xlabel("class (head to tail)")
ax.set_ylabel("log prior")
ax.legend()
plt.show()

loss_fn = CLAPORLoss(tau=1.0, penalty=1.0, perturbation=sampler)
logits = torch.randn(8, 10)
q = torch.softmax(torch.randn(8, 10), 1)
loss, diag = loss_fn(logits, q, pi_hat.float(), return_diagnostics=True)
print(f"loss {float(loss):.3f} = L_PLL {diag['pll']:.3f} + 1.0 * L_reg {diag['reg']:.3f}")

# %% [markdown]
# ## A long-tailed Gaussian mixture
#
# Ten classes, imbalance ratio 100 (500 down to 5 examples), each wrong label added to the
# candidate set with probability q = 0.3 and the true label dropped with probability
# eta = 0.2. A linear classifier, 20 epochs, five seeds; head = the three largest classes,
# tail = the three smallest, all scored on a balanced test set.

# %%
X, y, Xt, yt = long_tailed_mixture(
    n_classes=10, n_max=500, imbalance_ratio=100, separation=2.5, random_state=0
)
print("training class sizes:", np.bincount(y))
mixture = partial_label_study(
    X, y, Xt, yt, methods=("clapor", "logit_adjustment", "solar", "proden"), epochs=20
)
print(mixture.summary().tables["means"].round(3).to_string())

# %% [markdown]
# Logit adjustment trades head accuracy for tail recall through its strength `tau`. Sweeping
# it draws the baseline's trade-off curve, against which CLAPOR's point can be read.

# %%
sweep = []
for tau in (0.3, 0.5, 0.7, 1.0, 1.5):
    r = partial_label_study(X, y, Xt, yt, methods=("logit_adjustment",), epochs=20, tau=tau)
    means = r.per_seed[["head_accuracy", "tail_recall"]].mean()
    sweep.append({"tau": tau, **means})
sweep = pd.DataFrame(sweep)
print(sweep.round(3).to_string(index=False))
ax = mixture.plot()
ax.plot(sweep["head_accuracy"], sweep["tail_recall"], "k--", lw=1, label="LA, tau sweep")
for row in sweep.itertuples():
    ax.annotate(f"tau={row.tau}", (row.head_accuracy, row.tail_recall), fontsize=7)
ax.legend(loc="center left", bbox_to_anchor=(1, 0.5))
plt.show()

# %% [markdown]
# On this mixture CLAPOR's default (gamma = 0.5, kappa = 20) lands between `tau` = 0.5 and
# 0.7 on the logit-adjustment curve, at or slightly below it: more head accuracy and less tail
# recall than `tau` = 1, at about the same balanced accuracy. In these runs it does *not*
# raise tail recall at equal head accuracy, which the paper's claim would need; the numbers
# printed above are the measurement (per seed, read on each seed's own LA curve, CLAPOR's tail
# recall is 0.022 below it on average: `tests/mlcore/test_clapor.py`).
#
# ## A stale prior estimate: the claimed robustness
#
# The paper's premise is that balancing methods suffer from a poor early prior estimate and
# CLAPOR does not. The control: the same runs with the estimate kept near the flat candidate
# frequencies (`prior_momentum=0.999` instead of 0.9). If the claim held, CLAPOR would lose
# less balanced accuracy than logit adjustment.

# %%
stale = {}
for label, method in (("CLAPOR", "clapor"), ("logit adjustment", "logit_adjustment")):
    runs = {
        momentum: partial_label_study(
            X, y, Xt, yt, methods=(method,), epochs=20, prior_momentum=momentum
        ).per_seed["balanced_accuracy"]
        for momentum in (0.9, 0.999)
    }
    stale[label] = {
        "running estimate (0.9)": runs[0.9].mean(),
        "stale estimate (0.999)": runs[0.999].mean(),
        "loss from the stale estimate": (runs[0.9].to_numpy() - runs[0.999].to_numpy()).mean(),
    }
pd.DataFrame(stale).T.round(3)

# %% [markdown]
# Measured: the stale estimate costs CLAPOR about 0.02 of balanced accuracy and logit
# adjustment nothing (it gains about 0.01): on this mixture the premise (logit adjustment
# hurt by a poor estimate) does not hold, and CLAPOR as reconstructed is the more sensitive
# of the two. A negative result for this reconstruction, not a test of the paper's own
# loss, whose equations could not be read.
#
# ## Features of the tiny CLIP encoder
#
# The same study on `tiny_clip()` image features of the downstream digits: a balanced test
# set of 20 per class, a long-tailed training set (ratio 50: 59 down to 1 example), ten seeds.

# %%
from mlcore.encoders import digits_domain, encode_images, tiny_clip  # noqa: E402

enc = tiny_clip(device="cpu")
domain = digits_domain("downstream")
features = (encode_images(enc, domain.images) * enc.logit_scale).numpy()
train, test = long_tailed_split(domain.labels, 50, n_test_per_class=20, random_state=0)
print("training class sizes:", np.bincount(domain.labels[train]))
clip_study = partial_label_study(
    features[train],
    domain.labels[train],
    features[test],
    domain.labels[test],
    methods=("clapor", "logit_adjustment", "proden"),
    seeds=range(10),
    epochs=30,
)
print(clip_study.summary())
clip_study.plot()
plt.show()

# %% [markdown]
# ## One run: the prior estimate over the epochs
#
# The estimate starts from the raw candidate frequencies (nearly flat after flipping) and
# moves towards the long tail as the targets disambiguate.

# %%
s = partial_label_candidates(y, 10, q=0.3, eta=0.2, random_state=0)
run = train_partial_label_classifier(
    X, s, method="clapor", epochs=20, eval_features=Xt, eval_labels=yt, random_state=0
)
print(run.summary().tables["classes"].round(3))
run.plot("priors")
plt.show()
