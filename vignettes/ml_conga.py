# %% [markdown]
# # CONGA: a test-time-adaptation learning rate that stays in its interval
#
# Test-time adaptation (TTA) updates a trained model on the unlabelled test stream. Tent
# minimises the predictions' entropy through the normalisation layers' affine parameters; how
# far it gets, or how badly it collapses, depends on its learning rate. CONGA (ICML 2026) is an
# LR *scheduler* that keeps the LR inside an interval set by the batch: a lower bound from the
# fraction of confident samples, an upper bound from the gradients' signal-to-noise ratio, and a
# cosine decay in the adaptation progress between them.
#
# Here: a small BatchNorm network trained on scikit-learn's digits, adapted with Tent to a
# stream of noisy digits, with a constant LR and with CONGA, over a grid of base LRs.
# (The paper's text was not available: `mlcore.tta.CONGA` implements a reconstruction from the
# abstract, documented in its docstring.)

# %%
import copy

import matplotlib.pyplot as plt
import torch

from mlcore import seed_everything
from mlcore.tta import CONGA, Tent, corrupt_images, digits_source_model, digits_split

torch.set_num_threads(1)
seed_everything(0)
images, labels, train, test = digits_split(1000, random_state=0)
x_train = torch.tensor(images[train], dtype=torch.float32)
y_train, y_test = torch.tensor(labels[train]), torch.tensor(labels[test])
x_test = torch.tensor(
    corrupt_images(images[test], "gaussian_noise", severity=2.0, random_state=0),
    dtype=torch.float32,
)

net = digits_source_model(x_train, y_train, random_state=0)
with torch.no_grad():
    source_acc = float((net(x_test).argmax(1) == y_test).float().mean())
print(f"source model on noisy digits: accuracy {source_acc:.3f}")

# %% [markdown]
# ## Plugging CONGA into Tent
#
# `Tent(model, lr=..., scheduler=...)` takes a factory for the scheduler. A scheduler with an
# `observe` method is fed each batch's logits after `backward()`, then stepped before the
# optimizer, so the LR of a batch depends on that batch.

# %%
order = torch.randperm(len(y_test), generator=torch.Generator().manual_seed(0))


def online_accuracy(tent):
    correct = sum(int((tent(x_test[i]).argmax(1) == y_test[i]).sum()) for i in order.split(32))
    return correct / len(y_test)


base_lrs = [1e-3, 1e-2, 1e-1, 1.0, 3.0, 10.0, 30.0]
constant = [online_accuracy(Tent(copy.deepcopy(net), lr=lr)) for lr in base_lrs]
conga = []
for lr in base_lrs:
    tent = Tent(copy.deepcopy(net), lr=lr, scheduler=lambda o: CONGA(o))
    conga.append(online_accuracy(tent))
    if lr == 10.0:
        trace = tent.scheduler.result()
for lr, a, b in zip(base_lrs, constant, conga, strict=True):
    print(f"base lr {lr:>6g}: constant {a:.3f}   CONGA {b:.3f}")

# %% [markdown]
# ## Accuracy against the base learning rate
#
# Both agree at small LRs; the constant LR collapses as the base LR grows, CONGA does not.

# %%
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.semilogx(base_lrs, constant, "o-", label="Tent, constant LR")
ax.semilogx(base_lrs, conga, "s-", label="Tent + CONGA")
ax.axhline(source_acc, color="grey", ls="--", label="source model")
ax.set_xlabel("base learning rate")
ax.set_ylabel("online accuracy")
ax.legend(frameon=False)
plt.show()

# %% [markdown]
# ## The schedule's trace
#
# `CONGA.result()` is a `TrainingResult`: per step the LR, the interval's bounds, the progress,
# the confident fraction and the gradient SNR. At base LR 10 the SNR bound cuts the LR by an
# order of magnitude as soon as the gradients turn noisy.

# %%
print(trace.summary())
# the learning rate gets its own panel under the two bounds
curves, lr_axis = trace.plot(metrics=["eta_lo", "eta_hi"])
curves.set_yscale("log")
plt.show()
