"""BOIF end to end on the tiny CLIP: digits downstream domain, K-shot splits, 5 seeds."""

import pytest
import torch

from mlcore.encoders import digits_domain, encode_images, tiny_clip, zero_shot_weights
from mlcore.fewshot import compare_fewshot


@pytest.fixture(scope="module")
def digits_features():
    enc = tiny_clip(device="cpu")
    domain = digits_domain("downstream")
    with torch.no_grad():
        features = encode_images(enc, domain.images)
        layers = enc.image_layer_features(domain.images)
    weights = zero_shot_weights(enc, domain.classnames)
    return features, layers, domain.labels, weights, enc.logit_scale


def test_boif_on_tiny_clip_fuses_better_than_its_pathways(digits_features):
    features, layers, labels, weights, scale = digits_features
    study = compare_fewshot(
        features, labels, weights, scale, layer_features=layers, shots=(1, 2, 4), n_seeds=5,
        random_state=0,
    )  # fmt: skip
    tidy = study.tidy().set_index(["method", "shots"])
    # the tiny model's zero-shot accuracy sits in the substrate's target band (45-85%)
    assert 0.45 < tidy.loc[("prior only", 1), "estimate"] < 0.85
    # paired 95% t-intervals over the 5 seeds (same support set for every method)
    vs_likelihood = study.contrast("BOIF", "likelihood only").set_index("shots")
    vs_prior = study.contrast("BOIF", "prior only").set_index("shots")
    assert (vs_likelihood["conf_low"] > 0).all()
    # Measured at K = 2: BOIF - prior = -4.4 points, 95% CI [-10.4, +1.5]: with two shots the
    # vMF concentration of the tiny model's anisotropic embeddings (beta ~ 150) makes the
    # cache overconfident, so fusion does NOT beat the prior there; K = 1 (+1.9 [0.5, 3.2])
    # and K = 4 (+5.9 [2.9, 8.9]) do. Asserted as measured, not tuned away.
    assert vs_prior.loc[1, "conf_low"] > 0
    assert vs_prior.loc[4, "conf_low"] > 0


def test_the_two_shot_dip_comes_from_the_vmf_concentration_not_the_adapter(digits_features):
    """The control for the K = 2 result above: BOIF with beta fixed at 5 (no vMF tuning) and
    with no adapter, the same 10 seeds' support sets, BOIF minus the prior (points, 95% t):

        tune_beta  adapter   K=1               K=2                K=4
        True       on        +1.5 [0.6, 2.5]   -2.5 [-5.7, 0.7]   +6.7 [5.1, 8.3]
        True       off       +1.5 [0.6, 2.5]   -1.4 [-4.5, 1.7]   +6.3 [5.0, 7.5]
        False      on        +1.5 [0.6, 2.5]   +3.4 [1.6, 5.1]    +4.0 [2.5, 5.6]
        False      off       +1.5 [0.6, 2.5]   +2.4 [1.4, 3.3]    +2.5 [2.2, 2.7]

    (K = 1 has one shot per class: neither the tuning nor the adapter runs.) The dip follows
    the tuned concentration, with or without the adapter; the tuning pays from K = 4 on.
    """
    features, layers, labels, weights, scale = digits_features

    def vs_prior(tune_beta):
        study = compare_fewshot(
            features, labels, weights, scale, layer_features=layers, shots=(2, 4), n_seeds=10,
            random_state=0, tune_beta=tune_beta,
        )  # fmt: skip
        return study.contrast("BOIF", "prior only").set_index("shots")

    tuned, fixed = vs_prior(True), vs_prior(False)
    assert tuned.loc[2, "estimate"] < 0.0 < tuned.loc[2, "conf_high"]
    assert fixed.loc[2, "conf_low"] > 0.0
    assert tuned.loc[4, "estimate"] > fixed.loc[4, "estimate"]
