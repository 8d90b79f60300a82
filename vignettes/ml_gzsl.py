# %% [markdown]
# # PUFE: removing a zero-shot model's seen-class bias as PU learning
#
# A generalised zero-shot (GZSL) model scores test images against the prototypes of seen
# *and* unseen classes, but it was trained on seen classes only, so unseen test images drift
# to seen classes. PUFE (ICML 2026) post-processes the scores: the labelled seen-class
# training embeddings are positives, the test pool is unlabelled, and a dual-head classifier
# in the semantic space estimates the seen-class posterior eta(z) and the labelling
# propensity e(z) by maximum likelihood. A gate then replaces the base model's seen/unseen
# trade-off with the estimated posterior, and confident unseen pseudo-instances pull the
# unseen prototypes towards the test data. The baseline is calibrated stacking (Chao et al.
# 2016): subtract a constant gamma from every seen score, gamma tuned on validation data.
#
# Only the paper's abstract could be read: `mlcore.gzsl.PUFE` is a reconstruction, and its
# docstring says which steps are.

# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from scipy import stats
from sklearn.metrics import roc_auc_score

from mlcore.encoders import digits_domain, encode_images, tiny_clip, zero_shot_weights
from mlcore.encoders.metrics import gzsl_scores
from mlcore.encoders.splits import gzsl_split
from mlcore.gzsl import (
    PUFE,
    CalibratedStacking,
    calibrate_prototypes,
    class_scores,
    ridge_semantic_map,
    simulate_pu,
    stack,
)
from statcore.exceptions import ConvergenceWarning

torch.set_num_threads(1)

# %% [markdown]
# ## 1. The maximum-likelihood propensity on data with a known truth
#
# `simulate_pu` draws z ~ N(0, I), a logistic seen-class posterior, and labels each seen
# example with constant probability c = 0.4 (SCAR). The plain MLE with a logistic eta head
# recovers c and ranks seen membership as well as the true posterior does.

# %%
rows = []
for seed in range(5):
    sim = simulate_pu(5000, c=0.4, random_state=seed)
    fit = PUFE(hidden=None, propensity="scar", random_state=seed).fit(
        sim.z[sim.s == 1], sim.z[sim.s == 0]
    )
    eta, _ = fit.predict_eta(sim.z)
    rows.append(
        {
            "seed": seed,
            "c_hat": fit.label_frequency,
            "auc_eta_hat": roc_auc_score(sim.seen, eta),
            "auc_true_eta": roc_auc_score(sim.seen, sim.eta),
        }  # fmt: skip
    )
print(pd.DataFrame(rows).round(3).to_string(index=False))

# %% [markdown]
# ## 2. End to end on the tiny CLIP
#
# Digits rendered with a domain shift, seen classes 0-6, unseen 7-9. The base GZSL model is a
# ridge map from the tiny CLIP's image features to a semantic space, fitted on seen classes
# (out-of-fold embeddings for the training images, which PUFE takes as its positives). Two
# semantic spaces: the class-name text embeddings, and the digits' 7-segment patterns.
# PUFE sees the whole test pool unlabelled. Calibrated stacking is tuned two ways:
# "stacking (oracle)" gets half of the test pool *with labels*, unseen classes included (an
# optimistic baseline); "stacking (seen-only)" follows Xian et al.'s protocol and tunes gamma
# on the training images alone, two seen classes playing unseen for a base model refitted
# without them. All methods are scored on the other half of the test pool.

# %%
encoder = tiny_clip(device="cpu")
SEEN, UNSEEN = np.arange(7), np.array([7, 8, 9])
seen_mask = np.isin(np.arange(10), SEEN)


def seen_only_gamma(features, labels, train, protos, seed):
    """Calibrated stacking tuned without unseen labels: two seen classes act as unseen."""
    rng = np.random.default_rng(seed)
    pseudo_unseen = rng.choice(SEEN, size=2, replace=False)
    inner = np.isin(labels[train], pseudo_unseen)
    held = rng.random(train.size) < 0.3
    fit_rows = train[~inner & ~held]
    val_rows = train[inner | held]
    _, z_val = ridge_semantic_map(
        features[fit_rows], labels[fit_rows], protos[SEEN], features[val_rows],
        random_state=seed,
    )  # fmt: skip
    scores = class_scores(
        torch.as_tensor(z_val), torch.as_tensor(protos[SEEN]), metric="cosine", scale=10.0
    ).numpy()
    mask = ~np.isin(SEEN, pseudo_unseen)
    return CalibratedStacking().fit(scores, labels[val_rows], seen_mask=mask).gamma


def one_split(seed, space):
    domain = digits_domain("downstream", random_state=seed)
    features = encode_images(encoder, domain.images).double().numpy()
    if space == "text":
        protos = zero_shot_weights(encoder, domain.classnames, domain.templates).double().numpy()
    else:
        protos = domain.attributes.astype(float)
    split = gzsl_split(domain.labels, UNSEEN, test_fraction=0.3, random_state=seed)
    test = np.concatenate([split.test_seen, split.test_unseen])
    y_test = domain.labels[test]
    z_train, z_test = ridge_semantic_map(
        features[split.train], domain.labels[split.train], protos, features[test],
        random_state=seed,
    )  # fmt: skip
    # a split whose L-BFGS fit stops at maxiter warns; the study records it in a column instead
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = PUFE(random_state=seed).fit(z_train, z_test, prototypes=protos, seen_mask=seen_mask)
        argmax_fit = PUFE(random_state=seed, assign="argmax").fit(
            z_train, z_test, prototypes=protos, seen_mask=seen_mask
        )
    validation = np.random.default_rng(seed).random(y_test.size) < 0.5
    stacking = CalibratedStacking().fit(
        fit.base_scores[validation], y_test[validation], seen_mask=seen_mask
    )
    seen_only = stack(
        fit.base_scores,
        seen_mask,
        seen_only_gamma(features, domain.labels, split.train, protos, seed),
    )
    # the calibration's controls: its own pseudo-instances with the labels shuffled, and the
    # true labels of the confident unseen test examples (a ceiling no assignment can pass)
    pseudo = fit.pseudo_labels
    chosen = np.flatnonzero(pseudo >= 0)
    shuffled = pseudo.copy()
    shuffled[chosen] = np.random.default_rng(seed).permutation(pseudo[chosen])
    confident = 1.0 - fit.seen_posterior >= fit.model.tau
    true_labels = np.where(confident & np.isin(y_test, UNSEEN), y_test, -1)

    def gated_with(pseudo_labels):
        moved, _ = calibrate_prototypes(
            z_test, protos, seen_mask, 1.0 - fit.seen_posterior, pseudo_labels=pseudo_labels
        )
        scores = class_scores(
            torch.as_tensor(z_test), torch.as_tensor(moved), metric="cosine", scale=10.0
        )
        return fit.calibrated_scores(scores.numpy())

    held_out = ~validation
    out = {"space": space, "seed": seed, "c_hat": fit.label_frequency, "converged": fit.converged,
           "c_true": split.train.size / (split.train.size + split.test_seen.size)}  # fmt: skip
    for name, scores in [
        ("base", fit.base_scores),
        ("gate only", fit.calibrated_scores(fit.base_scores)),
        ("PUFE", fit.scores),
        ("PUFE (argmax labels)", argmax_fit.scores),
        ("PUFE (shuffled labels)", gated_with(shuffled)),
        ("PUFE (true labels)", gated_with(true_labels)),
        ("stacking (oracle)", stacking.calibrated_scores(fit.base_scores)),
        ("stacking (seen-only)", seen_only),
    ]:
        acc = gzsl_scores(y_test[held_out], scores[held_out].argmax(1), SEEN, UNSEEN)
        for metric in ("seen", "unseen", "harmonic"):
            out[f"{name}:{metric}"] = acc[metric]
    return out, fit


study = []
for space in ("text", "attributes"):
    for seed in range(8):
        row, last_fit = one_split(seed, space)
        study.append(row)
study = pd.DataFrame(study)


def interval(values):
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return f"{values.mean():.3f} +- {half:.3f}"


table = {
    space: {col: interval(group[col]) for col in group.columns if col.endswith(":harmonic")}
    for space, group in study.groupby("space")
}
print("harmonic mean H, mean +- 95% t-interval over 8 splits")
print(pd.DataFrame(table).to_string())
print("paired against the gate alone, mean +- 95% t-interval (seeds up of 8)")
controls = ["PUFE", "PUFE (argmax labels)", "PUFE (shuffled labels)", "PUFE (true labels)"]
paired = {
    space: {
        name: f"{interval(diff)} ({int((diff > 0).sum())})"
        for name in controls
        for diff in [group[f"{name}:harmonic"] - group["gate only:harmonic"]]
    }
    for space, group in study.groupby("space")
}
print(pd.DataFrame(paired).to_string())
print(study.groupby("space")[["c_hat", "c_true"]].mean().round(3).to_string())
print(
    "PUFE fits that met their tolerance within maxiter:",
    study.groupby("space")["converged"].sum().to_dict(),
)

# %% [markdown]
# ## 3. What one fit reports

# %%
print(last_fit.summary())
fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), layout="constrained")
long = study.melt(
    id_vars=["space", "seed"], value_vars=[c for c in study if c.endswith("harmonic")]
)
long["method"] = long["variable"].str.split(":").str[0]
for ax, (space, group) in zip(axes, long.groupby("space"), strict=True):
    means = group.groupby("method", sort=False)["value"].agg(["mean", "std", "count"])
    half = stats.t.ppf(0.975, means["count"] - 1) * means["std"] / np.sqrt(means["count"])
    ax.bar(means.index, means["mean"], yerr=half, capsize=4, color="0.7")
    ax.set_title(f"semantic space: {space}")
    ax.set_ylabel("harmonic mean H (95% t-interval)")
    ax.tick_params(axis="x", labelrotation=30)
plt.show()

# %% [markdown]
# **Reading the numbers** (8 splits, mean and 95% t-interval of H on the held-out half). With
# text embeddings as the semantic space the ridge base model is strongly seen-biased (H 0.09,
# unseen accuracy near 0); PUFE's gate lifts H to 0.48 without a single unseen label, about
# level with calibrated stacking tuned by Xian et al.'s seen-only protocol (0.42, with a wide
# interval), and below stacking tuned on labelled unseen test data (0.58), which PUFE does not
# reach (0.52). With the 7-segment attributes the base model is hardly biased (H 0.42); the
# gate leaves H where it was, the calibration adds about 6 points, and the seen-only tuning
# of stacking fails (0.10).
#
# **Does the calibration add to the gate?** Only with class-balanced pseudo-labels, the
# default `assign="balanced"`. The plain argmax over the unseen prototypes lets the base
# model's bias among the unseen classes decide: it put a handful of the confident "7"s in
# class 7 and the rest in 8 and 9, and the calibration then pulled H *below* the gate's
# (the paired table: -0.033 with text, 0/8 splits up). The controls: with text embeddings the
# same pseudo-instances with their labels shuffled do worse than the gate (-0.056), so the
# gain there (+0.041, 8/8) comes from what the labels say; with the attributes the shuffled
# labels still gain 0.026 of the 0.061 (8/8), so part of that gain comes from moving the
# unseen prototypes towards the test pool at all, whatever the labels. The true labels of
# the confident unseen examples bound what any assignment could add (+0.07 to +0.08).
# The estimated propensity c tracks the true share of labelled seen examples (0.73 against
# 0.70).
