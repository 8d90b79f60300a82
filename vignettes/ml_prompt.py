# %% [markdown]
# # ManiPT: prompt tuning that stays on the pretrained manifold
#
# Prompt tuning (CoOp) adapts a frozen vision-language model by learning a few context vectors
# in the text encoder's word-embedding space. With a handful of labelled images per class it
# fits the training classes and drifts away from what the pretrained model knew, so accuracy
# on classes never trained on ("novel") falls, sometimes below zero-shot. ManiPT (Yang et al.,
# ICML 2026) keeps the adaptation near the pretrained features in two ways:
#
# - **cosine consistency** of the prompted text features $\tilde t_c$ and adapted image
#   features $\tilde v(x)$ to the frozen ones $t_c$, $v(x)$, added to the cross-entropy:
#   $\lambda_T\,\mathrm{mean}_c(1-\cos(\tilde t_c, t_c))$
#   $+ \lambda_I\,\mathrm{mean}_x(1-\cos(\tilde v(x), v(x)))$;
# - an **incremental correction**: the features used for classification are
#   $f = \mathrm{normalize}(f_{frozen} + \beta (f_{prompted} - f_{frozen}))$, a step of size
#   $\beta$ from the pretrained point.
#
# KgCoOp (Yao et al. 2023) is the text-only consistency without fusion; CoOp has neither.
# `mlcore.prompt.ManiPT` (the estimator, which trains a `PromptLearner` module) runs all three
# through one API on any encoder with
# `tokenize` / `token_embedding` / `encode_text_embeddings`. Only ManiPT's abstract and a
# summary could be read: the losses above and the fusion are the reconstruction documented in
# the docstrings (the paper uses MaPLe-style deep prompts; here the image side is a residual
# adapter on the pooled features).
#
# Everything below runs on mlcore's tiny CLIP (`mlcore.encoders.tiny_clip`), trained offline on
# digits and rendered shapes.

# %%
import matplotlib.pyplot as plt
import pandas as pd
import torch

from mlcore.encoders import digits_domain, shapes_dataset, tiny_clip
from mlcore.prompt import ManiPT, base_to_novel

torch.set_num_threads(1)
encoder = tiny_clip("cpu")
data = shapes_dataset(20, random_state=0)
print(data)
print("first classes:", data.classnames[:4], "... last:", data.classnames[-2:])

# %% [markdown]
# ## One learner, in a few lines
#
# `ManiPT(...)` holds the specification; its `fit` computes the frozen image features once and
# trains a new `PromptLearner` (an `nn.Module` holding only the prompt parameters: the encoder
# is held, not registered) with Adam. The result is a `TrainingResult` with the history that
# also carries the trained learner (`history.learner`).

# %%
base = data.classnames[:16]
keep = data.labels < 16
model = ManiPT(encoder, base, method="manipt")
history = model.fit(data.images[keep], data.labels[keep], maxiter=150, random_state=0)
learner = history.learner
print(learner)
history.plot(metrics=["loss", "cross_entropy", "consistency"], lr=False)
plt.show()

# %% [markdown]
# Novel classes are prompted with the same learnt context: `learner(images, classnames=...)`.

# %%
novel = data.classnames[16:]
with torch.no_grad():
    logits = learner(data.images[~keep], classnames=novel)
accuracy = (logits.argmax(1).numpy() + 16 == data.labels[~keep]).mean()
print(f"ManiPT on the 16 novel classes: accuracy {accuracy:.3f}")

# %% [markdown]
# ## Base-to-novel, over seeds
#
# CoOp's protocol: train 4-shot on the first half of the classes (base), test on the other base
# images among base classes and on every novel image among novel classes. All methods share
# each seed's training set; intervals are t-intervals over the seeds, and the paired
# differences to CoOp use the seed pairing.

# %%
study = base_to_novel(
    encoder, data.images, data.labels, data.classnames, shots=4, n_seeds=10, maxiter=150,
    random_state=0,
)  # fmt: skip
print(study.summary())

# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 4), layout="constrained")
study.plot("scores", ax=axes[0])
study.plot("drift", ax=axes[1])
plt.show()

# %% [markdown]
# The same study on the shifted handwritten digits (10 classes: 5 base, 5 novel), with the
# digits' own prompt template.

# %%
digits = digits_domain("downstream", random_state=0)
digit_study = base_to_novel(
    encoder, digits.images, digits.labels, digits.classnames, shots=4, n_seeds=10, maxiter=150,
    template="a photo of the digit {}.", random_state=0,
)  # fmt: skip
print(digit_study.summary().tables["means over seeds"].round(3))
print(digit_study.summary().tables["paired difference to CoOp"].round(3))

# %% [markdown]
# ## Where the gain comes from
#
# ManiPT here differs from CoOp in three ways: the image-side adapter, the consistency terms
# and the fusion step. Switching them off one at a time on the shapes (5 seeds) separates their
# effects. `beta=1` with both penalties at 0 keeps only the adapter; `image_adapter=False`
# keeps only the text-side consistency and fusion.

# %%
variants = {
    "ManiPT (default)": {},
    "no image adapter": {"image_adapter": False},
    "adapter + consistency, no fusion": {"beta": 1.0},
    "adapter only": {"beta": 1.0, "penalty_text": 0.0, "penalty_image": 0.0},
}
rows = {}
for label, opts in variants.items():
    # each method's fits are seeded by the repetition alone: CoOp, the same in every variant,
    # runs once, beside the first
    methods = ["manipt"] if rows else ["coop", "manipt"]
    run = base_to_novel(
        encoder, data.images, data.labels, data.classnames, methods=methods, shots=4,
        n_seeds=5, maxiter=150, options={"manipt": opts}, random_state=0,
    )  # fmt: skip
    if not rows:
        coop = run.scores.query("method == 'coop'")[["base", "novel", "harmonic"]].mean()
    rows[label] = run.scores.query("method == 'manipt'")[["base", "novel", "harmonic"]].mean()
rows["CoOp"] = coop
print(pd.DataFrame(rows).T.round(3))

# %% [markdown]
# ## What the numbers say
#
# - On the shapes, ManiPT's harmonic mean is well above CoOp's on every seed, its novel
#   accuracy a little above, and its text features stay closer to the frozen subspace (lower
#   drift) than CoOp's. KgCoOp also drifts less than CoOp but does not beat it here.
# - The ablation locates the gain: the image-side residual adapter carries it. With the adapter
#   switched off, the text-side consistency and fusion alone score *below* CoOp, and with the
#   adapter on, removing the fusion and then the consistency terms raises accuracy further.
# - On the digits, ManiPT does not beat CoOp: its novel accuracy is lower, its harmonic mean
#   level with CoOp's within the interval.
# - One split of the classes could be lucky. `tests/mlcore/test_manipt_e2e.py` repeats the
#   ablation over 5 base/novel splits (random permutations of the 32 shape classes, 3 seeds
#   each): in every split ManiPT beats CoOp (+0.08 to +0.12 harmonic), the manifold terms
#   without the adapter lose to it (-0.010 to -0.034), and the adapter alone does best
#   (+0.09 to +0.15).
#
# So on this tiny substrate the "stay near the pretrained features" bias costs accuracy rather
# than buying generalisation: CoOp's drift here does not hurt novel classes (it raises them
# above zero-shot). Whether the paper's effect appears needs a real CLIP and the paper's deep
# prompts; the component runs unchanged on one (`HFCLIPEncoder`, `OpenCLIPEncoder`).
