# %% [markdown]
# # SparseSSM: one-shot pruning of Mamba's state matrix
#
# SparseSSM (Tuo and Wang; arXiv 2506.09613, ICML 2026) extends optimal-brain-surgeon pruning to
# the selective state-space module of Mamba. With a diagonal Hessian, removing state entry
# (d, n) at step t costs about Ā_t[d, n]² · E[h_{t-1}[d, n]²]; the per-step saliencies are
# aggregated with time weights (by default ∝ 1/(t+1)) and the lowest-scored entries of `A` are
# cut. `mlcore.pruning.sparsessm_prune` follows the authors' code (CFinTech/SparseSSM): a
# pure-torch reference scan collects Ā_t and h_{t-1} on calibration sequences.
#
# Here a two-layer Mamba language model is trained for a few seconds on the characters of
# Python's own `argparse.py`, and its SSMs are pruned at increasing sparsity with SparseSSM, by
# |A_log| magnitude and at random.

# %%
import argparse
import copy

import matplotlib.pyplot as plt
import torch
from torch.nn import functional as F

from mlcore import seed_everything
from mlcore.nn import MambaLM
from mlcore.pruning import apply_ssm_mask, magnitude_prune, sparsessm_prune

torch.set_num_threads(1)
seed_everything(0)
VOCAB, LENGTH = 128, 32
corpus = torch.tensor([min(b, VOCAB - 1) for b in open(argparse.__file__, "rb").read()])
split = int(0.9 * len(corpus))
train, held_out = corpus[:split], corpus[split:]


def windows(source, n, seed):
    gen = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, len(source) - LENGTH - 1, (n,), generator=gen)
    return torch.stack([source[i : i + LENGTH + 1] for i in idx])


lm = MambaLM(VOCAB, 16, 2, d_state=8)
opt = torch.optim.AdamW(lm.parameters(), lr=3e-3)
for step in range(250):
    batch = windows(train, 16, step)
    loss = F.cross_entropy(lm(batch[:, :-1]).reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
val, calib = windows(held_out, 64, 123), windows(train, 32, 7)[:, :-1]


def perplexity(model):
    with torch.no_grad():
        logits = model(val[:, :-1])
        return float(torch.exp(F.cross_entropy(logits.reshape(-1, VOCAB), val[:, 1:].reshape(-1))))


dense = perplexity(lm)
print(f"dense model: validation perplexity {dense:.3f}")

# %% [markdown]
# ## One layer at a time
#
# Each mixer is pruned in turn, calibrated on its inputs in the already-pruned model (as the
# authors do). `sparsessm_prune` modifies the mixer in place and returns a `PruningResult`.


# %%
def prune(model, method, sparsity):
    results = []
    for i, mixer in enumerate(model.mixers):
        if method == "SparseSSM":
            with torch.no_grad():
                hidden = model(calib, return_hidden=True)[1][i]
            results.append(sparsessm_prune(mixer, hidden, sparsity))
        elif method == "magnitude":
            results.append(magnitude_prune(mixer, sparsity))
        else:
            gen = torch.Generator().manual_seed(i)
            keep = torch.rand(mixer.A_log.shape, generator=gen).flatten()
            cut = keep.argsort()[: round(sparsity * keep.numel())]
            mask = torch.ones_like(keep, dtype=torch.bool)
            mask[cut] = False
            apply_ssm_mask(mixer, mask.view_as(mixer.A_log))
    return results


pruned = copy.deepcopy(lm)
results = prune(pruned, "SparseSSM", 0.5)
print(results[0].summary())
results[0].plot()
plt.show()

# %% [markdown]
# ## Perplexity against SSM sparsity

# %%
sparsities = [0.1, 0.3, 0.5, 0.7, 0.9]
curves = {}
for method in ["SparseSSM", "magnitude", "random"]:
    curves[method] = []
    for s in sparsities:
        model = copy.deepcopy(lm)
        prune(model, method, s)
        curves[method].append(perplexity(model) - dense)
    print(method, [f"{v:+.3f}" for v in curves[method]])

fig, ax = plt.subplots(figsize=(5.5, 3.5))
for method, values in curves.items():
    ax.plot(sparsities, values, "o-", label=method)
ax.axhline(0, color="grey", lw=0.8)
ax.set_xlabel("fraction of A removed (every layer)")
ax.set_ylabel("perplexity increase")
ax.legend(frameon=False)
plt.show()

# %% [markdown]
# SparseSSM removes the entries whose transition has already decayed (Ā ≈ 0) or whose state
# carries little energy, and the model barely notices. Magnitude pruning of `A_log` does *worse*
# than random here: the entries with the smallest |A_log| are the slowest-decaying states
# (A ≈ -1), the model's longest memory.
