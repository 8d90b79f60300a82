"""Accuracy summaries of encoder adaptations: per-class accuracy, the generalised zero-shot
seen/unseen/harmonic triple and its calibration curve (AUSUC), and CoOp's base-to-novel
harmonic mean.

All accuracies are per-class means (Xian et al. 2018's protocol), so a frequent class
cannot hide a neglected one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from statcore.validation import as_class_labels, as_float_array, check_scalar

__all__ = ["ausuc", "base_novel_scores", "gzsl_scores", "harmonic_mean", "per_class_accuracy"]


def harmonic_mean(a, b) -> float:
    """``2ab / (a + b)``, 0 when both are 0: the GZSL and base-to-novel summary."""
    a = check_scalar(a, name="a", low=0.0)
    b = check_scalar(b, name="b", low=0.0)
    return 0.0 if a + b == 0 else 2.0 * a * b / (a + b)


def _group(values, name: str) -> np.ndarray:
    return np.unique(as_class_labels(np.atleast_1d(values), name=name))


def per_class_accuracy(y_true, y_pred, classes=None) -> pd.Series:
    """Top-1 accuracy of each class's examples.

    Parameters
    ----------
    y_true, y_pred : array_like of int, shape (n,)
    classes : array_like of int, optional
        Classes to report (default: those in ``y_true``). A class without examples is
        reported as NaN, so a mean over classes skips it rather than counting it as 0 or 1.

    Returns
    -------
    pandas Series indexed by class.
    """
    y_true = as_class_labels(y_true, name="y_true")
    y_pred = as_class_labels(y_pred, name="y_pred", n=y_true.size)
    classes = np.unique(y_true) if classes is None else _group(classes, "classes")
    # each example's row in the sorted ``classes``; examples of other classes drop out
    pos = np.searchsorted(classes, y_true)
    keep = pos < classes.size
    keep[keep] = classes[pos[keep]] == y_true[keep]
    sizes = np.bincount(pos[keep], minlength=classes.size)
    hits = np.bincount(pos[keep], weights=(y_pred == y_true)[keep], minlength=classes.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = hits / sizes
    return pd.Series(accuracy, index=pd.Index(classes, name="class"), name="accuracy")


def _check_groups(seen, unseen) -> tuple[np.ndarray, np.ndarray]:
    seen, unseen = _group(seen, "seen"), _group(unseen, "unseen")
    both = np.intersect1d(seen, unseen)
    if both.size:
        raise ValueError(f"`seen` and `unseen` must not share classes; both hold {both.tolist()}")
    return seen, unseen


def _group_accuracy(y_true, y_pred, group: np.ndarray, name: str) -> float:
    present = group[np.isin(group, y_true)]
    if present.size == 0:
        raise ValueError(f"`y_true` has no example of the {name} classes {group.tolist()}")
    return float(per_class_accuracy(y_true, y_pred, present).mean())


def gzsl_scores(y_true, y_pred, seen, unseen) -> pd.Series:
    """Seen accuracy S, unseen accuracy U and their harmonic mean H (Xian et al. 2018).

    Predictions range over seen and unseen classes together: a test example of an unseen
    class that is assigned to a seen class counts as wrong, which is the bias GZSL measures.

    Parameters
    ----------
    y_true, y_pred : array_like of int, shape (n,)
    seen, unseen : array_like of int
        The two disjoint class groups; each must have test examples.

    Returns
    -------
    pandas Series with entries ``seen``, ``unseen``, ``harmonic``.
    """
    seen, unseen = _check_groups(seen, unseen)
    y_true = as_class_labels(y_true, name="y_true")
    y_pred = as_class_labels(y_pred, name="y_pred", n=y_true.size)
    outside = np.setdiff1d(y_true, np.union1d(seen, unseen))
    if outside.size:
        raise ValueError(
            f"`y_true` holds classes in neither `seen` nor `unseen`: {outside.tolist()}"
        )
    s = _group_accuracy(y_true, y_pred, seen, "seen")
    u = _group_accuracy(y_true, y_pred, unseen, "unseen")
    return pd.Series({"seen": s, "unseen": u, "harmonic": harmonic_mean(s, u)}, name="gzsl")


def ausuc(scores, y_true, seen, unseen) -> float:
    """Area under the seen-unseen accuracy curve (Chao et al. 2016).

    Calibrated stacking predicts ``argmax_c scores[:, c] - gamma * [c is seen]``; sweeping
    ``gamma`` over the real line traces seen accuracy against unseen accuracy, from
    everything predicted seen to everything predicted unseen. The sweep is exact: each
    example switches from its best seen class to its best unseen class at one ``gamma``
    (the gap between the two best scores), so the curve's corners are those gaps.

    Parameters
    ----------
    scores : array_like, shape (n, C)
        Scores of every class; column ``c`` belongs to class ``c``.
    y_true : array_like of int, shape (n,)
    seen, unseen : array_like of int
        Disjoint groups that together cover the ``C`` columns.

    Returns
    -------
    float in [0, 1]
        The area, with per-class mean accuracies on both axes.
    """
    scores = as_float_array(scores, name="scores", ndim=2, min_rows=1)
    y_true = as_class_labels(y_true, name="y_true", n=scores.shape[0])
    seen, unseen = _check_groups(seen, unseen)
    n_classes = scores.shape[1]
    if not np.array_equal(np.union1d(seen, unseen), np.arange(n_classes)):
        raise ValueError(
            f"`seen` and `unseen` must together be the classes 0..{n_classes - 1} of the "
            f"{n_classes} score columns; got {seen.tolist()} and {unseen.tolist()}"
        )
    if not np.isin(y_true, np.arange(n_classes)).all():
        raise ValueError(f"`y_true` must hold classes 0..{n_classes - 1}")
    best_seen = seen[np.argmax(scores[:, seen], axis=1)]
    best_unseen = unseen[np.argmax(scores[:, unseen], axis=1)]
    rows = np.arange(scores.shape[0])
    switch = scores[rows, best_seen] - scores[rows, best_unseen]
    is_seen = np.isin(y_true, seen)
    for group, name in ((seen, "seen"), (unseen, "unseen")):
        if not np.isin(group, y_true).any():
            raise ValueError(f"`y_true` has no example of the {name} classes {group.tolist()}")
    counts = np.bincount(y_true, minlength=n_classes)
    groups_present = np.where(is_seen, np.isin(seen, y_true).sum(), np.isin(unseen, y_true).sum())
    weight = 1.0 / (counts[y_true] * groups_present)
    seen_gain = np.where(is_seen & (best_seen == y_true), weight, 0.0)
    unseen_gain = np.where(~is_seen & (best_unseen == y_true), weight, 0.0)
    # An example predicts its best seen class while gamma < switch; walk gamma upwards through
    # the distinct switch points, moving every example at a point across together.
    points, first = np.unique(switch, return_inverse=True)
    seen_lost = np.bincount(first, weights=seen_gain, minlength=points.size)
    unseen_won = np.bincount(first, weights=unseen_gain, minlength=points.size)
    seen_acc = np.concatenate([[seen_gain.sum()], seen_gain.sum() - np.cumsum(seen_lost)])
    unseen_acc = np.concatenate([[0.0], np.cumsum(unseen_won)])
    return float(np.trapezoid(seen_acc, unseen_acc))


def base_novel_scores(base_accuracy, novel_accuracy) -> pd.Series:
    """CoOp's base-to-novel summary: base accuracy, novel accuracy and their harmonic mean.

    Parameters
    ----------
    base_accuracy, novel_accuracy : float in [0, 1]

    Returns
    -------
    pandas Series with entries ``base``, ``novel``, ``harmonic``.
    """
    base = check_scalar(base_accuracy, name="base_accuracy", low=0.0, high=1.0)
    novel = check_scalar(novel_accuracy, name="novel_accuracy", low=0.0, high=1.0)
    return pd.Series(
        {"base": base, "novel": novel, "harmonic": harmonic_mean(base, novel)}, name="base_novel"
    )
