# %% [markdown]
# # HFM: flow matching on the Lorentz model, against its Euclidean baseline FMA
#
# FMA (Jiang, Wang & Chen 2025) adapts a frozen vision-language model by *transporting* each
# image feature to its class text feature with a learned velocity field, then classifying the
# transported feature by cosine. HFM (ICML 2026) moves the flow to hyperbolic space: features
# are lifted to the Lorentz model (text roots near the origin, image leaves toward the
# boundary), the flow follows geodesics, a step-wise classification loss keeps each trajectory
# in its class corridor, and a diameter rule stops a trajectory once it is inside its root's
# ball.
#
# FMA is built from the authors' code; HFM is a reconstruction from the abstract (see the
# `HyperbolicFlowMatcher` docstring for which steps). Both share one API:
# `fit(image_feats, labels, text_feats)` and `predict(image_feats, labels, steps=..., stop=...)`.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from mlcore.adapt import FlowMatchingAdapter, HyperbolicFlowMatcher, entangled_features
from mlcore.adapt import lorentz as L
from mlcore.encoders import digits_domain, encode_images, tiny_clip, zero_shot_weights
from mlcore.encoders.splits import kshot_split

torch.set_num_threads(1)

# %% [markdown]
# ## The geometry, in float64
# A geodesic point a fraction t of the way has distance exactly t·d from the start, and the
# maps invert each other.

# %%
k = 1.0
gen = torch.Generator().manual_seed(0)
x = L.expmap0(0.5 * torch.randn(5, 4, generator=gen, dtype=torch.float64), k)
y = L.expmap0(0.5 * torch.randn(5, 4, generator=gen, dtype=torch.float64), k)
z = L.geodesic(x, y, torch.full((5, 1), 0.3, dtype=torch.float64), k)
print("constraint error :", float((L.inner(z, z) + 1 / k).abs().max()))
print("d(x,z) - 0.3 d(x,y):", float((L.dist(x, z, k) - 0.3 * L.dist(x, y, k)).abs().max()))
print("exp(log) error   :", float((L.expmap(x, L.logmap(x, y, k), k) - y).abs().max()))

# %% [markdown]
# ## The entangled synthetic set, 5 seeds
# Class prototypes on the sphere are the text features; image features are a prototype plus a
# shared modality-gap offset plus anisotropic noise that makes the classes overlap. We report
# accuracy after the full flow (10 Euler steps, t = 1), the best fixed number of steps (an
# oracle: it reads the query labels), the diameter rule, and the number of different-class
# trajectory pairs coming closer than half the smallest root separation.

# %%
rows = []
start = time.perf_counter()
for seed in range(5):
    task = entangled_features(n_shot=8, overlap=1.5, n_query=40, random_state=seed)
    zero = np.mean((task.query_feats @ task.text_feats.T).argmax(1).numpy() == task.query_labels)
    for name, model in [
        ("FMA", FlowMatchingAdapter(epochs=100, random_state=seed)),
        ("HFM", HyperbolicFlowMatcher(epochs=100, random_state=seed)),
    ]:
        fit = model.fit(task.support_feats, task.support_labels, task.text_feats)
        fixed = fit.predict(task.query_feats, task.query_labels, steps=10)
        diam = fit.predict(task.query_feats, task.query_labels, steps=10, stop="diameter")
        rows.append({"seed": seed, "method": name, "zero-shot": zero, "t=1": fixed.accuracy,
                     "best fixed": fixed.step_accuracy.max(), "diameter": diam.accuracy,
                     "diameter steps": diam.mean_steps,
                     "crossings": fixed.crossing_pairs(0.5)})  # fmt: skip
synthetic = pd.DataFrame(rows)
print(synthetic.groupby("method").mean(numeric_only=True).drop(columns="seed").round(3))
print(f"({time.perf_counter() - start:.0f} s)")

# %%
fixed.plot("steps")
plt.show()

# %% [markdown]
# ## On the tiny CLIP's downstream digits
# Few-shot (8 per class) image features of the shipped tiny CLIP, the class text features of
# its zero-shot classifier; the queries are the remaining downstream digits.

# %%
enc = tiny_clip(device="cpu")
domain = digits_domain("downstream")
feats = encode_images(enc, domain.images)
text = zero_shot_weights(enc, domain.classnames)
support, query = kshot_split(domain.labels, 8, random_state=0)
zero_shot = np.mean((feats[query] @ text.T).argmax(1).numpy() == domain.labels[query])
print(f"zero-shot accuracy: {zero_shot:.3f}")
digits_rows = []
for name, model in [
    ("FMA", FlowMatchingAdapter(epochs=100, random_state=0)),
    ("HFM", HyperbolicFlowMatcher(epochs=100, random_state=0)),
]:
    fit = model.fit(feats[support], domain.labels[support], text)
    fixed = fit.predict(feats[query], domain.labels[query], steps=10)
    diam = fit.predict(feats[query], domain.labels[query], steps=10, stop="diameter")
    digits_rows.append({"method": name, "t=1": fixed.accuracy,
                        "best fixed": fixed.step_accuracy.max(),
                        "best steps": int(fixed.step_accuracy.argmax()),
                        "diameter": diam.accuracy, "diameter steps": diam.mean_steps})  # fmt: skip
print(pd.DataFrame(digits_rows).round(3))

# %%
print(diam.summary())
diam.plot("trajectories")
plt.show()
