# %% [markdown]
# # DNA: the few units of a frozen network that notice generated images
#
# DNA (Dou et al. 2026, arXiv:2601.22515) argues that a trained vision backbone already holds
# forgery knowledge in a sparse set of intermediate units. It finds the layers where real and
# generated images separate while the content signal fades, scores every unit of those layers
# by a fusion of discriminability, attribution and semantic invariance, cuts the sorted scores
# at their knee, and detects generated images with a linear probe on those units alone.
#
# Here: a small CNN trained to classify scikit-learn's digits (real images: bilinear 2x
# upsamplings of the 8x8 digits); "generated" digits come from a transposed-convolution
# upsampler whose kernel leaves a faint checkerboard, the classic decoder trace. With 16 shots
# per class we compare the DNA probe with probes on random units and on the last layer, and
# zero the selected units inside the network. (Only the paper's abstract could be read:
# `mlcore.analysis.forgery` is a reconstruction, documented in its docstrings.)

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from mlcore import seed_everything
from mlcore.analysis.forgery import ForgeryDetector, ForgeryUnits
from mlcore.analysis.simulate import digit_backbone, upsampled_digits

torch.set_num_threads(1)
seed_everything(0)
real, fake, labels = upsampled_digits()
print(f"mean |fake - real| per pixel: {float((fake - real).abs().mean()):.3f} (pixels in [0, 1])")

fig, axes = plt.subplots(2, 4, figsize=(7, 3.6))
for j in range(4):
    axes[0, j].imshow(real[j, 0], cmap="gray_r")
    axes[1, j].imshow(fake[j, 0], cmap="gray_r")
    axes[0, j].set_axis_off()
    axes[1, j].set_axis_off()
axes[0, 0].set_title("real", loc="left")
axes[1, 0].set_title("generated", loc="left")
plt.show()

# %% [markdown]
# The backbone: trained on real digits only, never told about generated images.

# %%
net, train, pool = digit_backbone(real, labels, random_state=0)
print(net)
target = torch.as_tensor(labels)
with torch.no_grad():
    print(
        f"digit accuracy: {float((net(real[pool]).argmax(1) == target[pool]).float().mean()):.3f}"
    )

# %% [markdown]
# ## Localise, score, truncate
# Sixteen real and sixteen generated images (different digits), with their digit labels so
# that content dominance and semantic invariance can be measured.

# %%
rng = np.random.default_rng(0)
shots = rng.choice(pool, 32, replace=False)
ir, i_f = shots[:16], shots[16:]
rest = rng.permutation(np.setdiff1d(pool, shots))
held_real, held_fake = real[rest[:200]], fake[rest[200:400]]
layers = ["1", "3", "6", "9"]
res = ForgeryUnits(
    net, real[ir], fake[i_f], layers=layers, real_labels=labels[ir], fake_labels=labels[i_f]
).fit(random_state=0)
print(res.summary())

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), layout="constrained")
res.plot("layers", ax=axes[0])
res.plot("scores", ax=axes[1])
plt.show()

# %% [markdown]
# ## The detector reads only the selected units
# Against probes on the same number of random units of the critical layer, on the whole
# layer, and on the last layer (the class logits), all fitted on the same 32 images.

# %%
layer = res.critical_layers[0]
width = int(res.layer_profile.loc[layer, "n_units"])
k = res.n_selected


def accuracy(result, **kw):
    return float(result.evaluate(held_real, held_fake, n_resamples=200, **kw).params["accuracy"])


dna = res.detector()
random_acc = [
    accuracy(
        ForgeryDetector(
            net, real[ir], fake[i_f], units={layer: rng.choice(width, k, replace=False)}
        ).fit()
    )
    for _ in range(10)
]
whole = ForgeryDetector(net, real[ir], fake[i_f], units={layer: None}).fit()
last = ForgeryDetector(net, real[ir], fake[i_f], units={"9": None}).fit()
print(f"DNA probe on {k} units:        {accuracy(dna):.3f}")
print(f"{k} random units (10 draws):   {np.mean(random_acc):.3f} +- {np.std(random_acc):.3f}")
print(f"whole layer ({width} units):        {accuracy(whole):.3f}")
print(f"last layer (10 logits):        {accuracy(last):.3f}")
print(dna.evaluate(held_real, held_fake, random_state=0).summary())

# %% [markdown]
# ## Ablation: zero the selected units inside the network
# The whole-layer probe keeps its weights; only the units it reads are switched off.

# %%
others = np.setdiff1d(np.arange(width), res.units[layer])
print(f"whole-layer probe AUROC, intact:         {whole.auroc(held_real, held_fake):.3f}")
print(
    "  selected units zeroed:                "
    f"{whole.auroc(held_real, held_fake, ablate=res.units):.3f}"
)
random_zeroed = [
    whole.auroc(held_real, held_fake, ablate={layer: rng.choice(others, k, replace=False)})
    for _ in range(5)
]
print(f"  as many other units zeroed (5 draws):  {np.mean(random_zeroed):.3f}")
print(f"  accuracy, selected units zeroed:       {accuracy(whole, ablate=res.units):.3f}")

# %% [markdown]
# On this backbone the checkerboard is easy: the critical layer has only 8 channels, the whole
# layer's probe is as good as the selected units' (both near the ceiling), so this page cannot
# show the paper's claim that the few units *beat* the whole layer. The claim needs a wide
# layer whose trace sits in few units; `planted_units` simulates one (256 units, content
# factors shared by both groups, the trace a 1.5-sd shift of 8 units) and, as the control,
# the same squared shift spread over all 256 units, where the claim should fail.

# %%
import pandas as pd  # noqa: E402
from torch import nn  # noqa: E402

from mlcore.analysis.simulate import planted_units  # noqa: E402

identity = nn.Sequential(nn.Identity())
rows = []
for spread in ("sparse", "dense"):
    for seed in range(5):
        r, f, rl, fl = planted_units(516, 516, spread=spread, random_state=seed)
        fit = ForgeryUnits(
            identity, r[:16], f[:16], layers=["0"], real_labels=rl[:16], fake_labels=fl[:16]
        ).fit(random_state=0)
        chosen = fit.units["0"]
        whole_probe = ForgeryDetector(identity, r[:16], f[:16], units={"0": None}).fit()
        rows.append(
            {
                "trace": spread,
                "seed": seed,
                "selected": len(chosen),
                "planted found": np.isin(np.arange(8), chosen).mean(),
                "DNA AUROC": fit.detector().auroc(r[16:], f[16:]),
                "whole-layer AUROC": whole_probe.auroc(r[16:], f[16:]),
            }
        )
planted = pd.DataFrame(rows)
planted["DNA - whole"] = planted["DNA AUROC"] - planted["whole-layer AUROC"]
print(
    planted.groupby("trace")[["selected", "planted found", "DNA - whole"]]
    .agg(["mean", "min", "max"])
    .round(3)
)
planted.round(3)

# %% [markdown]
# Measured: with a sparse trace the knee keeps 24-47 of 256 units (most of the 8 planted ones)
# and their probe beats the whole layer's in every seed (by +0.03 to +0.15 AUROC, 16 shots a
# group); with the dense control the whole layer wins in every seed (by 0.08-0.14). So the
# selection helps exactly when the premise (a sparse trace in a wide layer) holds, and the
# study could have shown otherwise. Whether real detectors' layers are like the sparse case is
# the paper's empirical claim, not tested here.
