"""ManiPT vs CoOp vs KgCoOp vs zero-shot, base-to-novel on the tiny CLIP's shapes, 5 seeds.

The one end-to-end test of mlcore.prompt (about 30-60 s on one core). The vignette
vignettes/ml_prompt.py runs the study with more seeds, on digits too, with an ablation.
"""

import numpy as np

from mlcore.encoders import shapes_dataset, tiny_clip
from mlcore.prompt import base_to_novel


def test_manipt_beats_coop_base_to_novel_with_less_text_drift():
    # built inside the test, not in a module fixture, so that conftest's one-thread setting
    # applies to it
    data = shapes_dataset(12, random_state=0)
    study = base_to_novel(
        tiny_clip("cpu"), data.images, data.labels, data.classnames, shots=4, n_seeds=5,
        maxiter=60, random_state=0,
    )  # fmt: skip
    scores = study.scores
    assert sorted(scores["method"].unique()) == ["coop", "kgcoop", "manipt", "zero_shot"]
    assert scores["seed"].nunique() == 5
    # the claim: ManiPT's harmonic mean beats CoOp's. Paired over seeds (same training
    # images), the 95% t-interval of the difference must exclude 0, not just the mean be ahead.
    harmonic = study.contrast("manipt", "coop", "harmonic")
    assert harmonic["conf_low"] > 0
    novel = study.contrast("manipt", "coop", "novel")
    assert novel["estimate"] > 0
    # the spec's drift check: ManiPT's fused text features leave the frozen PCA subspace less
    # than CoOp's, on average over seeds and on every seed
    wide = scores.pivot(index="seed", columns="method", values="drift_text")
    assert (wide["manipt"] < wide["coop"]).all()
    # KgCoOp's text anchor also keeps it nearer the frozen subspace than CoOp
    assert (wide["kgcoop"] < wide["coop"]).all()
    t = study.tidy().set_index(["method", "metric"])
    lows, highs = t["conf_low"].to_numpy(), t["conf_high"].to_numpy()
    assert np.all(lows <= t["estimate"].to_numpy()) and np.all(t["estimate"].to_numpy() <= highs)
    text = study.summary().as_text()
    assert "paired difference to CoOp" in text and "t-intervals" in text
    assert set(study.histories) == {(m, s) for m in ("coop", "kgcoop", "manipt")
                                    for s in scores["seed"].unique()}  # fmt: skip
