"""PUFE end to end on the tiny CLIP: digits, seen {0..6}, unseen {7, 8, 9}, over 10 seeds.

The paper claims two steps, the gate and the prototype calibration; the calibration's claim is
tested against the gate alone, with a control that could refute it (the same pseudo-instances
with their labels shuffled) and a ceiling (true labels for the confident unseen examples).
"""

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from mlcore.encoders import digits_domain, encode_images, tiny_clip, zero_shot_weights
from mlcore.encoders.metrics import gzsl_scores
from mlcore.encoders.splits import gzsl_split
from mlcore.gzsl import (
    PUFE,
    CalibratedStacking,
    calibrate_prototypes,
    class_scores,
    ridge_semantic_map,
)

SEEN, UNSEEN = np.arange(7), np.array([7, 8, 9])
SEEN_MASK = np.isin(np.arange(10), SEEN)


def _one_split(encoder, seed):
    """Base model: a ridge map from image features to the class-name text embeddings, fitted
    on seen classes only; PUFE on its test pool; calibrated stacking tuned on half of the test
    pool with labels (optimistic for the baseline). The PUFE variants are scored on the whole
    test pool, stacking and its comparison on the other half."""
    domain = digits_domain("downstream", random_state=seed)
    features = encode_images(encoder, domain.images).double().numpy()
    text = zero_shot_weights(encoder, domain.classnames, domain.templates).double().numpy()
    split = gzsl_split(domain.labels, UNSEEN, test_fraction=0.3, random_state=seed)
    test = np.concatenate([split.test_seen, split.test_unseen])
    y_test = domain.labels[test]
    z_train, z_test = ridge_semantic_map(
        features[split.train], domain.labels[split.train], text, features[test], random_state=seed
    )
    fit = {
        assign: PUFE(random_state=seed, maxiter=2000, assign=assign).fit(
            z_train, z_test, prototypes=text, seen_mask=SEEN_MASK
        )
        for assign in ("balanced", "argmax")
    }
    result = fit["balanced"]
    validation = np.random.default_rng(seed).random(y_test.size) < 0.5
    stacking = CalibratedStacking().fit(
        result.base_scores[validation], y_test[validation], seen_mask=SEEN_MASK
    )

    def harmonic(scores, rows=slice(None)):
        return gzsl_scores(y_test[rows], scores[rows].argmax(axis=1), SEEN, UNSEEN)["harmonic"]

    def gated_with(pseudo_labels):
        protos, _ = calibrate_prototypes(
            z_test, text, SEEN_MASK, 1.0 - result.seen_posterior, pseudo_labels=pseudo_labels
        )
        scores = class_scores(
            torch.as_tensor(z_test), torch.as_tensor(protos), metric="cosine", scale=10.0
        )
        return result.calibrated_scores(scores.numpy())

    pseudo = result.pseudo_labels
    chosen = np.flatnonzero(pseudo >= 0)
    shuffled = pseudo.copy()
    shuffled[chosen] = np.random.default_rng(seed).permutation(pseudo[chosen])
    confident = 1.0 - result.seen_posterior >= result.model.tau
    oracle = np.where(confident & np.isin(y_test, UNSEEN), y_test, -1)
    gate = result.calibrated_scores(result.base_scores)
    return {
        "base": harmonic(result.base_scores),
        "gate": harmonic(gate),
        "pufe": harmonic(result.scores),
        "argmax": harmonic(fit["argmax"].scores),
        "shuffled": harmonic(gated_with(shuffled)),
        "oracle": harmonic(gated_with(oracle)),
        "purity": float(np.mean(pseudo[chosen] == y_test[chosen])),
        "pufe (held out)": harmonic(result.scores, ~validation),
        "stacking (held out)": harmonic(
            stacking.calibrated_scores(result.base_scores), ~validation
        ),
    }


@pytest.fixture(scope="module")
def study():
    encoder = tiny_clip(device="cpu")
    return pd.DataFrame([_one_split(encoder, seed) for seed in range(10)])


def _lower_bound(diff) -> float:
    """Lower end of the paired 95% t-interval of a mean difference over the seeds."""
    diff = np.asarray(diff)
    return diff.mean() - stats.t.ppf(0.975, diff.size - 1) * diff.std(ddof=1) / np.sqrt(diff.size)


def test_pufe_raises_the_harmonic_mean_over_the_base_model(study):
    # Measured: base H 0.085, PUFE 0.507 (paired gain 0.42); calibrated stacking tuned with
    # labelled unseen validation data stays ahead on the held-out half (0.57 against 0.51): a
    # tentative "within 1 point of tuned stacking" does not hold here and is not asserted.
    assert _lower_bound(study["pufe"] - study["base"]) > 0.0, study
    # The base model's seen bias, which PUFE removes: its H stays under 0.25 in every split.
    assert study["base"].max() < 0.25


def test_calibration_adds_to_the_gate_only_with_balanced_pseudo_labels(study):
    """The calibration claim against the gate alone, with the controls that could refute it.

    Measured over seeds 0-9 (H, paired against the gate alone, mean 0.469):
    balanced +0.037 (sd 0.016, 10/10 seeds up); argmax -0.035 (0/10 up: it piles the
    pseudo-instances onto classes 8 and 9); the balanced pseudo-instances with shuffled labels
    -0.030 (4/10 up); true labels for the confident unseen examples +0.088 (10/10).
    """
    gain = study["pufe"] - study["gate"]
    assert _lower_bound(gain) > 0.0, study
    # the gain comes from the pseudo-labels' content, not from moving prototypes at all: the
    # same instances under shuffled labels do worse than the balanced labels in most seeds
    assert _lower_bound(study["pufe"] - study["shuffled"]) > 0.0, study
    # the plain argmax is the negative result that the balanced assignment fixes
    assert (study["argmax"] - study["gate"]).mean() < 0.0, study
    # pseudo-labels are right for 53-64% of the instances (3 classes: chance is a third);
    # the true labels bound what any assignment could add
    assert study["purity"].min() > 0.4
    assert (study["oracle"] >= study["pufe"]).all(), study
