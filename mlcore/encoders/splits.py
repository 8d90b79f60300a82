"""The splits every encoder adaptation is evaluated on: K-shot support sets, generalised
zero-shot (seen/unseen) splits, and CoOp's base-to-novel class split.

Indices, not copies of the data: a split is applied with ``images[split.train]``, so one
split serves images, features and labels alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from statcore.validation import (
    as_class_labels,
    check_positive_int,
    check_probability,
    check_random_state,
    describe,
)

__all__ = ["GZSLSplit", "base_novel_split", "gzsl_split", "kshot_split"]


def _class_subset(values, labels: np.ndarray, *, name: str) -> np.ndarray:
    """Classes named by the caller, each of which must occur in ``labels``."""
    classes = np.unique(as_class_labels(np.atleast_1d(values), name=name))
    missing = np.setdiff1d(classes, labels)
    if missing.size:
        raise ValueError(
            f"`{name}` names classes with no example in `labels`: {missing.tolist()}; "
            f"the labels hold {np.unique(labels).tolist()}"
        )
    return classes


def kshot_split(labels, k, *, classes=None, random_state=None):
    """A K-shot support set and the query set of the remaining examples.

    Parameters
    ----------
    labels : array_like of int, shape (n,)
        Class label of every example.
    k : int
        Shots per class, drawn without replacement.
    classes : array_like of int, optional
        Classes to draw from (default: every class in ``labels``); examples of other classes
        are in neither set.
    random_state : None, int or numpy Generator

    Returns
    -------
    support, query : ndarray of int
        Indices into ``labels``. ``support`` lists the classes in increasing order, ``k``
        indices each; ``query`` holds the other examples of those classes, in increasing order.

    Raises
    ------
    ValueError
        When a class has fewer than ``k`` examples, naming the class and its count.
    """
    labels = as_class_labels(labels, name="labels")
    k = check_positive_int(k, name="k")
    rng = check_random_state(random_state)
    chosen = (
        np.unique(labels) if classes is None else _class_subset(classes, labels, name="classes")
    )
    support = []
    for c in chosen:
        members = np.flatnonzero(labels == c)
        if members.size < k:
            raise ValueError(
                f"`k` = {k} shots is more than class {int(c)} has: {members.size} example(s)"
            )
        support.append(rng.choice(members, size=k, replace=False))
    support = np.concatenate(support)
    in_classes = np.isin(labels, chosen)
    in_classes[support] = False
    return support, np.flatnonzero(in_classes)


@dataclass(frozen=True)
class GZSLSplit:
    """A generalised zero-shot split (Xian et al. 2018's protocol).

    Attributes
    ----------
    train : ndarray of int
        Training examples, of seen classes only.
    test_seen, test_unseen : ndarray of int
        Held-out examples of the seen classes, and every example of the unseen classes.
    seen, unseen : ndarray of int
        The class labels of each group.
    """

    train: np.ndarray
    test_seen: np.ndarray
    test_unseen: np.ndarray
    seen: np.ndarray
    unseen: np.ndarray

    @property
    def test(self) -> np.ndarray:
        """Every test example, seen classes first."""
        return np.concatenate([self.test_seen, self.test_unseen])


def gzsl_split(labels, unseen, *, test_fraction=0.2, random_state=None) -> GZSLSplit:
    """Split examples for generalised zero-shot learning.

    Every example of an ``unseen`` class goes to the test set; of each seen class, a
    ``test_fraction`` share (at least one example, at least one left to train on) is held out
    too, so the test set asks the model to tell seen from unseen classes.

    Parameters
    ----------
    labels : array_like of int, shape (n,)
    unseen : array_like of int
        Classes kept out of training. Must be a non-empty proper subset of the classes.
    test_fraction : float in (0, 1)
        Share of each seen class held out for testing (Xian et al. 2018 hold out 20%).
    random_state : None, int or numpy Generator

    Returns
    -------
    GZSLSplit
    """
    labels = as_class_labels(labels, name="labels")
    test_fraction = check_probability(test_fraction, name="test_fraction")
    rng = check_random_state(random_state)
    unseen = _class_subset(unseen, labels, name="unseen")
    seen = np.setdiff1d(np.unique(labels), unseen)
    if seen.size == 0:
        raise ValueError("`unseen` names every class in `labels`; at least one class must be seen")
    train, test_seen = [], []
    for c in seen:
        members = rng.permutation(np.flatnonzero(labels == c))
        if members.size < 2:
            raise ValueError(
                f"seen class {int(c)} has {members.size} example; it needs 2 (one to train on, "
                "one to test)"
            )
        n_test = min(max(1, round(test_fraction * members.size)), members.size - 1)
        test_seen.append(members[:n_test])
        train.append(members[n_test:])
    return GZSLSplit(
        train=np.sort(np.concatenate(train)),
        test_seen=np.sort(np.concatenate(test_seen)),
        test_unseen=np.flatnonzero(np.isin(labels, unseen)),
        seen=seen,
        unseen=unseen,
    )


def base_novel_split(classes: Sequence, *, n_base=None):
    """CoOp's base-to-novel split: the first ``ceil(C / 2)`` classes are base, the rest novel.

    Parameters
    ----------
    classes : sequence
        Class names or labels, in the dataset's order (the split follows this order, as in
        Zhou et al. 2022's ``subsample_classes``).
    n_base : int, optional
        Number of base classes (default ``ceil(C / 2)``); between 1 and ``C - 1``.

    Returns
    -------
    base, novel : list
        The two groups, as lists of the given entries.
    """
    if isinstance(classes, str) or not isinstance(classes, Sequence | np.ndarray):
        raise TypeError(
            f"`classes` must be a sequence of class names or labels; got {describe(classes)}"
        )
    classes = list(classes)
    if len(classes) < 2:
        raise ValueError(f"`classes` must hold at least 2 classes; got {len(classes)}")
    if len(set(map(repr, classes))) != len(classes):
        raise ValueError("`classes` must not repeat a class")
    if n_base is None:
        n_base = math.ceil(len(classes) / 2)
    n_base = check_positive_int(n_base, name="n_base")
    if n_base >= len(classes):
        raise ValueError(f"`n_base` must be less than the {len(classes)} classes; got {n_base}")
    return classes[:n_base], classes[n_base:]
