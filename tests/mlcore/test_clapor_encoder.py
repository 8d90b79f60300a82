"""CLAPOR end to end on the tiny CLIP encoder: long-tailed digit features, partial and
unreliable labels, a linear head, five seeds."""

import numpy as np

from mlcore.encoders import digits_domain, encode_images, tiny_clip
from mlcore.weak import long_tailed_split, partial_label_study


def test_clapor_on_tiny_clip_features_over_five_seeds():
    enc = tiny_clip(device="cpu")
    domain = digits_domain("downstream")
    # CLIP's logit scale puts the unit-norm features on the scale of its own logits
    features = (encode_images(enc, domain.images) * enc.logit_scale).numpy()
    train, test = long_tailed_split(domain.labels, 50, n_test_per_class=20, random_state=0)
    study = partial_label_study(
        features[train],
        domain.labels[train],
        features[test],
        domain.labels[test],
        methods=("clapor", "logit_adjustment", "proden"),
        seeds=range(5),
        q=0.3,
        eta=0.2,
        epochs=30,
    )
    t = study.tidy().set_index(["method", "metric"])
    print(study.summary())
    assert study.per_seed.shape == (15, 6)
    # every learner is well above chance (0.1) on the balanced test set: the partial labels
    # carry the signal through each loss; the 95% interval's lower end must clear 0.2
    for name in ("clapor", "logit_adjustment", "proden"):
        assert t.loc[(name, "balanced_accuracy"), "conf_low"] > 0.2
    assert np.isfinite(t.loc[("clapor - logit_adjustment", "tail_recall"), "std_error"])
