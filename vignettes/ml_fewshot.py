# %% [markdown]
# # BOIF: few-shot adaptation as prior logits plus likelihood logits
#
# BOIF (ICML 2026) reads a pretrained dual encoder's zero-shot head as a *prior* and the few
# labelled shots as a *likelihood*: under conditional independence the log-posterior is the sum
# of the two, so the two pathways are computed apart and their logits added,
# `fused = s·f·w_c + alpha · likelihood_c`. The likelihood comes from a cache of the shots
# (here a von Mises-Fisher class prototype), optionally on features enriched by a multi-level
# adapter of intermediate layers. Tip-Adapter (training-free) is the baseline.
#
# Only the abstract of the paper could be read: the additive decomposition is the paper's; the
# cache, the adapter and their training are reconstructions (see the docstrings of
# `mlcore.fewshot`). Tip-Adapter's logits follow its published code exactly.
#
# Plan: (1) the exact-Bayes case, where fusion *is* the posterior; (2) a synthetic task with a
# noisy "text" prior; (3) the tiny CLIP of `mlcore.encoders` on the digits domain, 1 to 16 shots
# over 8 seeds.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch
from scipy.special import log_softmax

from mlcore.encoders import digits_domain, encode_images, tiny_clip, zero_shot_weights
from mlcore.encoders.splits import kshot_split
from mlcore.fewshot import (
    BOIF,
    MultiLevelAdapter,
    TipAdapterClassifier,
    compare_fewshot,
    simulate_fewshot,
)

torch.set_num_threads(1)

# %% [markdown]
# ## 1. Exact Bayes
# Two independent Gaussian evidence sources: `x1 | y ~ N(w_y, s1² I)` goes to the prior head,
# `x2 | y ~ N(m_y, s2² I)` to the cache (one shot per class at the true mean). With
# `logit_scale = 1/s1²` and `beta = 1/s2²` both heads are exact log-densities, so the fused
# log-softmax equals the analytic posterior.

# %%
rng = np.random.default_rng(0)
C, d, n, s1, s2 = 5, 8, 500, 0.9, 0.7
unit = lambda a: a / np.linalg.norm(a, axis=1, keepdims=True)  # noqa: E731
w, m = unit(rng.standard_normal((C, d))), unit(rng.standard_normal((C, d)))
y = rng.integers(0, C, n)
x1 = w[y] + s1 * rng.standard_normal((n, d))
x2 = m[y] + s2 * rng.standard_normal((n, d))


class SecondSource(torch.nn.Module):
    def forward(self, features, layer_features):
        return layer_features[0]


model = BOIF(torch.tensor(w), 1 / s1**2, beta=1 / s2**2, adapter=SecondSource())
fit = model.fit(
    torch.zeros(C, d, dtype=torch.float64), np.arange(C), layer_features=[torch.tensor(m)]
)
head = fit.head  # the fitted BOIFHead, a torch module
fused = torch.log_softmax(head(torch.tensor(x1), [torch.tensor(x2)]), 1).numpy()
log_joint = -((x1[:, None] - w) ** 2).sum(2) / (2 * s1**2) - ((x2[:, None] - m) ** 2).sum(2) / (
    2 * s2**2
)
print("max |fused log-softmax - posterior| =", np.abs(fused - log_softmax(log_joint, 1)).max())

# %% [markdown]
# ## 2. A synthetic task
# Gaussian class embeddings, text prototypes = the true directions plus noise (zero-shot
# accuracy about 0.6), and two layers of extra noisy views for the adapter.

# %%
task = simulate_fewshot(random_state=0)
synthetic = compare_fewshot(
    task.features, task.labels, task.text_weights, task.logit_scale,
    layer_features=task.layer_features, shots=(1, 2, 4, 8, 16), n_seeds=8, random_state=0,
)  # fmt: skip
print(synthetic.summary())

# %%
fig, ax = plt.subplots(figsize=(7, 4))
synthetic.plot(ax=ax)
ax.set_title("synthetic task: query accuracy (mean, 95% t-interval, 8 seeds)")
plt.show()

# %% [markdown]
# Paired differences (same support set per seed): fusion against each pathway.

# %%
for baseline in ("prior only", "likelihood only", "Tip-Adapter", "BOIF without adapter"):
    print(baseline)
    print(synthetic.contrast("BOIF", baseline).round(3).to_string(index=False))

# %% [markdown]
# ## 3. The tiny CLIP on the digits domain
# Image embeddings and the four per-layer features (`image_layer_features`) of the whole
# downstream pool, once; every split then works on indices.

# %%
enc = tiny_clip(device="cpu")
domain = digits_domain("downstream")
with torch.no_grad():
    features = encode_images(enc, domain.images)
    layers = enc.image_layer_features(domain.images)
weights = zero_shot_weights(enc, domain.classnames)
print("layers:", enc.image_layer_names, [h.shape[1] for h in layers])

study = compare_fewshot(
    features, domain.labels, weights, enc.logit_scale, layer_features=layers,
    shots=(1, 2, 4, 8, 16), n_seeds=8, random_state=0,
)  # fmt: skip
print(study.summary())

# %%
fig, ax = plt.subplots(figsize=(7, 4))
study.plot(ax=ax)
ax.set_title("tiny CLIP, digits: query accuracy (mean, 95% t-interval, 8 seeds)")
plt.show()

# %%
for baseline in ("prior only", "likelihood only", "Tip-Adapter", "BOIF without adapter"):
    print(baseline)
    print(study.contrast("BOIF", baseline).round(3).to_string(index=False))

# %% [markdown]
# ## 4. One fitted head: what it reports
# A 4-shot support set; `BOIF(...).fit` returns a result that carries the fitted head
# (`fit.head`, a torch module) and scores new images with `fit.evaluate`. The query result
# carries the three pathways' accuracies, the fusion weights (alpha, the vMF concentration beta
# estimated from the shots, the adapter's gate and layer weights) and the adapter's training
# history.

# %%
support, query = kshot_split(domain.labels, 4, random_state=1)
adapter = MultiLevelAdapter([h.shape[1] for h in layers], enc.embed_dim, random_state=1)
model = BOIF(weights, enc.logit_scale, adapter=adapter, classnames=domain.classnames)
fit = model.fit(
    features[support], domain.labels[support], layer_features=[h[support] for h in layers],
    tune_beta=True, random_state=1,
)  # fmt: skip
res = fit.evaluate(features[query], domain.labels[query], layer_features=[h[query] for h in layers])
print(res.summary())
tip = TipAdapterClassifier(weights, enc.logit_scale).fit(features[support], domain.labels[support])
print(tip.evaluate(features[query], domain.labels[query]).tidy())

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
res.plot("pathways", ax=axes[0])
fit.history.plot(ax=axes[1], lr=False)
plt.show()

# %% [markdown]
# ## Reading the numbers
# The figures above are measured, not tuned: on the synthetic task fusion beats both pathways
# at 1-2 shots and matches the likelihood from 4 shots on; on the tiny CLIP it beats both at
# 1 and 4 shots but falls below the prior at 2 shots, where the shots' vMF concentration of
# the tiny model's anisotropic embeddings makes the cache overconfident. The control that
# pins the cause (`tests/mlcore/test_boif_tiny.py`, 10 seeds): with `beta` fixed at 5
# instead of tuned, BOIF beats the prior at 2 shots (+3.4 points [1.6, 5.1]; tuned: -2.5
# [-5.7, 0.7]), with or without the adapter; the tuning pays from 4 shots on (+6.7 against
# +4.0). So at 2 shots pass `tune_beta=False` to `BOIF.fit`. Tip-Adapter runs at
# its published starting values (beta = 1, alpha = 1) without the validation search of its
# paper, which no K-shot split here provides.
