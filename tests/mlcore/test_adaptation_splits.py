"""Splits and metrics shared by the encoder adaptations (mlcore.encoders.splits / .metrics)."""

import numpy as np
import pandas as pd
import pytest
import torch

from mlcore.encoders._inputs import check_class_indices
from mlcore.encoders.metrics import (
    ausuc,
    base_novel_scores,
    gzsl_scores,
    harmonic_mean,
    per_class_accuracy,
)
from mlcore.encoders.splits import base_novel_split, gzsl_split, kshot_split

LABELS = np.repeat(np.arange(5), [6, 7, 8, 9, 10])


def test_kshot_split_draws_k_per_class_and_queries_the_rest():
    support, query = kshot_split(LABELS, 3, random_state=0)
    assert np.array_equal(np.bincount(LABELS[support]), [3] * 5)
    assert np.intersect1d(support, query).size == 0
    assert np.array_equal(np.sort(np.concatenate([support, query])), np.arange(LABELS.size))
    again, _ = kshot_split(LABELS, 3, random_state=0)
    assert np.array_equal(support, again)


def test_kshot_split_restricts_to_classes():
    support, query = kshot_split(LABELS, 2, classes=[1, 3], random_state=1)
    assert set(LABELS[support]) == {1, 3} and set(LABELS[query]) == {1, 3}
    assert query.size == 7 + 9 - 4


def test_kshot_split_refuses_k_beyond_a_class():
    with pytest.raises(ValueError, match="class 0 has: 6"):
        kshot_split(LABELS, 7)
    with pytest.raises(ValueError, match="`classes` names classes with no example"):
        kshot_split(LABELS, 1, classes=[9])
    with pytest.raises(ValueError, match="integer class labels"):
        kshot_split(LABELS + 0.5, 1)
    with pytest.raises(TypeError, match="`labels`"):
        kshot_split(["a", "b"], 1)


def test_gzsl_split_protocol():
    split = gzsl_split(LABELS, [3, 4], test_fraction=0.2, random_state=0)
    assert np.array_equal(split.seen, [0, 1, 2]) and np.array_equal(split.unseen, [3, 4])
    assert not np.isin(LABELS[split.train], [3, 4]).any()
    assert np.array_equal(split.test_unseen, np.flatnonzero(LABELS >= 3))
    # round(0.2 * n_c) held out per seen class: 1, 1, 2 for sizes 6, 7, 8.
    assert np.array_equal(np.bincount(LABELS[split.test_seen]), [1, 1, 2])
    assert np.intersect1d(split.train, split.test).size == 0
    with pytest.raises(ValueError, match="at least one class must be seen"):
        gzsl_split(LABELS, range(5))
    with pytest.raises(ValueError, match="test_fraction"):
        gzsl_split(LABELS, [4], test_fraction=1.0)


def test_base_novel_split_follows_coop():
    assert base_novel_split(list("abcde")) == (list("abc"), list("de"))
    assert base_novel_split(list("abcd"), n_base=1) == (["a"], list("bcd"))
    with pytest.raises(ValueError, match="less than the 4 classes"):
        base_novel_split(list("abcd"), n_base=4)
    with pytest.raises(ValueError, match="repeat"):
        base_novel_split(["a", "a"])


def test_gzsl_scores_are_per_class_means():
    y_true = np.array([0, 0, 0, 0, 1, 2, 2])
    y_pred = np.array([0, 0, 0, 0, 0, 0, 2])
    out = gzsl_scores(y_true, y_pred, seen=[0, 1], unseen=[2])
    # Class 0: 4/4, class 1: 0/1 -> S = 0.5 (per-sample would be 0.8); unseen: 1/2.
    assert out["seen"] == pytest.approx(0.5) and out["unseen"] == pytest.approx(0.5)
    assert out["harmonic"] == pytest.approx(0.5)
    assert harmonic_mean(0.0, 0.0) == 0.0 and harmonic_mean(0.2, 0.8) == pytest.approx(0.32)
    with pytest.raises(ValueError, match="must not share"):
        gzsl_scores(y_true, y_pred, seen=[0, 1], unseen=[1, 2])
    acc = per_class_accuracy(y_true, y_pred, classes=[0, 1, 2, 3])
    assert np.isnan(acc[3]) and acc[2] == 0.5


def test_per_class_accuracy_matches_a_loop_over_classes():
    rng = np.random.default_rng(0)
    y_true, y_pred = rng.integers(0, 7, 200), rng.integers(0, 7, 200)
    # classes unsorted, one absent from y_true (NaN), some of y_true's classes left out
    classes = [9, 4, 1, 6]
    want = [(y_pred[y_true == c] == c).mean() if (y_true == c).any() else np.nan for c in classes]
    got = per_class_accuracy(y_true, y_pred, classes)
    assert list(got.index) == sorted(classes)
    np.testing.assert_array_equal(got.loc[classes].to_numpy(), want)
    assert per_class_accuracy(y_true, y_pred).index.tolist() == list(range(7))


def test_check_class_indices_reads_tensors_and_whole_floats_and_refuses_the_rest():
    out = check_class_indices(torch.tensor([0, 2, 1]), name="y", n=3, n_classes=3)
    assert out.dtype == np.int64 and out.tolist() == [0, 2, 1]
    assert check_class_indices([0.0, 1.0], name="y", n=2, n_classes=2).tolist() == [0, 1]
    with pytest.raises(ValueError, match=r"`y` must index the 3 classnames \(0..2\)"):
        check_class_indices([0, 3], name="y", n=2, n_classes=3, of="classnames")
    with pytest.raises(ValueError, match="`y` must have 3 entries"):
        check_class_indices([0, 1], name="y", n=3, n_classes=3)
    with pytest.raises(ValueError, match="integer class labels"):
        check_class_indices([0.5, 1.0], name="y", n=2, n_classes=3)
    with pytest.raises(TypeError, match="booleans"):
        check_class_indices(np.array([True, False]), name="y", n=2, n_classes=3)


def _brute_force_ausuc(scores, y_true, seen, unseen):
    """The curve traced on a dense grid of gamma values through the same predictions."""
    seen_mask = np.isin(np.arange(scores.shape[1]), seen)
    best_s = scores[:, seen_mask].max(1)
    best_u = scores[:, ~seen_mask].max(1)
    gaps = np.sort(best_s - best_u)
    mids = np.concatenate([[gaps[0] - 1], (gaps[1:] + gaps[:-1]) / 2, [gaps[-1] + 1]])
    curve = []
    for gamma in mids:
        pred = np.argmax(scores - gamma * seen_mask, axis=1)
        s = gzsl_scores(y_true, pred, seen, unseen)
        curve.append((s["unseen"], s["seen"]))
    u, s = np.array(curve).T
    return np.trapezoid(s, u)


def test_ausuc_matches_a_brute_force_sweep():
    rng = np.random.default_rng(3)
    y_true = rng.integers(0, 6, size=300)
    scores = rng.normal(size=(300, 6)) + 1.5 * np.eye(6)[y_true]
    scores[:, :4] += 0.7  # a seen-class bias, as GZSL models have
    exact = ausuc(scores, y_true, seen=[0, 1, 2, 3], unseen=[4, 5])
    # Continuous scores have distinct gaps, so the grid of midpoints visits every corner
    # of the curve: the two agree to rounding.
    assert exact == pytest.approx(
        _brute_force_ausuc(scores, y_true, [0, 1, 2, 3], [4, 5]), abs=1e-12
    )
    assert 0 < exact < 1
    # Perfect scores trace the corner (0, 1) -> (1, 1) -> (1, 0): area 1.
    assert ausuc(np.eye(6)[y_true], y_true, [0, 1, 2, 3], [4, 5]) == pytest.approx(1.0)


def test_ausuc_refuses_mismatched_columns():
    with pytest.raises(ValueError, match="together be the classes 0..3"):
        ausuc(np.zeros((2, 4)), [0, 1], seen=[0, 1], unseen=[2])


def test_base_novel_scores():
    out = base_novel_scores(0.8, 0.6)
    assert isinstance(out, pd.Series)
    assert out["harmonic"] == pytest.approx(2 * 0.8 * 0.6 / 1.4)
    with pytest.raises(ValueError, match="novel_accuracy"):
        base_novel_scores(0.8, 1.2)
