# %% [markdown]
# # IMDM: a random, infinite-state mask makes few-step masked diffusion possible
#
# A masked diffusion model (MDM) unmasks several tokens at once from one deterministic state, so
# within a step it samples them independently: on data whose tokens depend on each other, few
# steps must fail (the factorisation error). IMDM (arXiv 2605.10518, ICML 2026) gives every
# masked position its own random vector ε, added to the mask embedding through a small,
# zero-initialised network (so IMDM starts as exactly the MDM it inherits). Trained on the ELBO
# alone it *is* still the MDM, because ε carries no information about the data; after
# distillation on rectified (ε, x0) couplings, ε decides the sample and one step suffices.
#
# The paper's synthetic task: pairs (a, a), a uniform over K = 8 tokens.

# %%
import copy
import math

import matplotlib.pyplot as plt
import torch

from mlcore import seed_everything
from mlcore.diffusion import (
    IMDMSampler,
    distill_on_couplings,
    rectified_couplings,
)
from mlcore.diffusion.synthetic import (
    marginal_entropy,
    pair_validity,
    train_paired_denoiser,
)

torch.set_num_threads(1)
seed_everything(0)
K = 8
model = train_paired_denoiser(K, random_state=0)  # 600 Adam steps on the ELBO, batches of 256
mdm = copy.deepcopy(model)
mdm.embedding.as_mdlm = True

# %% [markdown]
# ## Validity against the number of sampling steps (ELBO training only)

# %%
steps_grid = [1, 2, 4, 8, 16]
valid = {"MDM (MDLM)": [], "IMDM, ELBO only": []}
for steps in steps_grid:
    for name, net in (("MDM (MDLM)", mdm), ("IMDM, ELBO only", model)):
        draws = IMDMSampler(net, steps).sample(20_000, 2, random_state=1)
        valid[name].append(pair_validity(draws))
for name, values in valid.items():
    print(name, [f"{v:.3f}" for v in values])

# %% [markdown]
# ## Distillation on rectified couplings
#
# A 16-step teacher draws a sample from each of 16,384 initial ε; the student (a copy of the
# ELBO-trained IMDM) learns the one-step map from ε to that sample.

# %%
teacher = IMDMSampler(model, 16)
eps, x0 = rectified_couplings(teacher, 16_384, 2, random_state=2)
student = copy.deepcopy(model)
record = distill_on_couplings(student, eps, x0, steps=3000, lr=3e-3, random_state=3)
print(record.summary())
one_step = IMDMSampler(student, 1, greedy=True).sample(20_000, 2, random_state=4)
print(
    f"distilled one-step IMDM: validity {pair_validity(one_step):.3f}, marginal entropy "
    f"{marginal_entropy(one_step, K):.3f} (log K = {math.log(K):.3f})"
)
distilled = [
    pair_validity(IMDMSampler(student, s, greedy=True).sample(20_000, 2, random_state=4))
    for s in steps_grid
]

# %%
fig, ax = plt.subplots(figsize=(5.5, 3.5))
for name, values in valid.items():
    ax.semilogx(steps_grid, values, "o-", base=2, label=name)
ax.semilogx(steps_grid, distilled, "s-", base=2, label="IMDM, distilled (greedy)")
ax.axhline(1 / K, color="grey", ls="--", label="1/K")
ax.set_xlabel("sampling steps")
ax.set_ylabel("validity")
ax.legend(frameon=False)
plt.show()
