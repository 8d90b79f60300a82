"""PUFE end to end on the tiny CLIP: digits, seen {0..6}, unseen {7, 8, 9}, over 5 seeds."""

import numpy as np
import pytest
from scipy import stats

from mlcore.encoders import digits_domain, encode_images, tiny_clip, zero_shot_weights
from mlcore.encoders.metrics import gzsl_scores
from mlcore.encoders.splits import gzsl_split
from mlcore.gzsl import PUFE, CalibratedStacking, ridge_semantic_map

SEEN, UNSEEN = np.arange(7), np.array([7, 8, 9])


def _one_split(encoder, seed):
    """Base model: a ridge map from image features to the class-name text embeddings, fitted
    on seen classes only; PUFE on its test pool; calibrated stacking tuned on half of the test
    pool with labels (optimistic for the baseline), everything scored on the other half."""
    domain = digits_domain("downstream", random_state=seed)
    features = encode_images(encoder, domain.images).double().numpy()
    text = zero_shot_weights(encoder, domain.classnames, domain.templates).double().numpy()
    split = gzsl_split(domain.labels, UNSEEN, test_fraction=0.3, random_state=seed)
    test = np.concatenate([split.test_seen, split.test_unseen])
    y_test = domain.labels[test]
    z_train, z_test = ridge_semantic_map(
        features[split.train], domain.labels[split.train], text, features[test], random_state=seed
    )
    seen_mask = np.isin(np.arange(10), SEEN)
    result = PUFE(random_state=seed, maxiter=2000).fit(
        z_train, z_test, prototypes=text, seen_mask=seen_mask
    )
    validation = np.random.default_rng(seed).random(y_test.size) < 0.5
    stacking = CalibratedStacking().fit(
        result.base_scores[validation], y_test[validation], seen_mask=seen_mask
    )
    held_out = ~validation

    def harmonic(scores):
        pred = scores[held_out].argmax(axis=1)
        return gzsl_scores(y_test[held_out], pred, SEEN, UNSEEN)["harmonic"]

    return {
        "base": harmonic(result.base_scores),
        "pufe": harmonic(result.scores),
        "stacking": harmonic(stacking.calibrated_scores(result.base_scores)),
    }


@pytest.fixture(scope="module")
def encoder():
    return tiny_clip(device="cpu")


def test_pufe_raises_the_harmonic_mean_over_the_base_model(encoder):
    rows = [_one_split(encoder, seed) for seed in range(5)]
    base = np.array([r["base"] for r in rows])
    pufe = np.array([r["pufe"] for r in rows])
    gain = pufe - base
    half = stats.t.ppf(0.975, gain.size - 1) * gain.std(ddof=1) / np.sqrt(gain.size)
    # Measured: base H 0.109, PUFE 0.454 (gain 0.345 +- 0.093), and calibrated stacking tuned
    # with labelled unseen validation data 0.574 (PUFE - stacking = -0.120 +- 0.045): a
    # tentative "within 1 point of tuned stacking" does not hold here and is not asserted.
    # The check is the direction with its 95% t-interval: the lower end above 0.
    assert gain.mean() - half > 0.0, (base, pufe)
    # The base model's seen bias, which PUFE removes: its H stays under 0.25 in every split.
    assert base.max() < 0.25
