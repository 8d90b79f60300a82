"""Long-tailed sampling and partial / unreliable candidate sets, for CLAPOR's experiments."""

from __future__ import annotations

import numpy as np

from statcore.validation import (
    check_positive,
    check_positive_int,
    check_random_state,
    check_scalar,
)


def long_tailed_counts(n_max: int, n_classes: int, imbalance_ratio: float) -> np.ndarray:
    r"""Class sizes of an exponential long tail: :math:`n_c = \lfloor n_\max\, \rho^{-c/(C-1)}
    \rfloor`, from ``n_max`` (class 0, the head) down to ``n_max / imbalance_ratio``.

    The profile of long-tailed CIFAR (Cao et al. 2019), used by SoLar and RECORDS.

    Parameters
    ----------
    n_max : int
    n_classes : int >= 2
    imbalance_ratio : float >= 1
        :math:`\rho = n_0 / n_{C-1}`.

    Returns
    -------
    ndarray of int (C,), each at least 1.

    References
    ----------
    Cao, K., Wei, C., Gaidon, A., Arechiga, N. and Ma, T. (2019). Learning imbalanced
    datasets with label-distribution-aware margin loss. *NeurIPS 2019*.
    """
    n_max = check_positive_int(n_max, name="n_max")
    n_classes = check_positive_int(n_classes, name="n_classes", minimum=2)
    ratio = check_scalar(imbalance_ratio, name="imbalance_ratio", low=1.0)
    sizes = np.floor(n_max * ratio ** (-np.arange(n_classes) / (n_classes - 1)))
    return np.maximum(sizes.astype(np.int64), 1)


def long_tailed_indices(
    labels, imbalance_ratio: float, *, n_max: int | None = None, order=None, random_state=None
) -> np.ndarray:
    """Indices of a long-tailed subsample of a labelled set (without replacement).

    Parameters
    ----------
    labels : array_like of int (n,)
        Class labels ``0..C-1``.
    imbalance_ratio : float >= 1
    n_max : int, optional
        Size of the head class (default: the smallest class size, so every class can supply
        its share).
    order : array_like of int, optional
        Classes from head to tail (default ``0, 1, ..., C-1``).
    random_state : None, int or Generator

    Returns
    -------
    ndarray of int, sorted.

    Raises
    ------
    ValueError
        When a class has fewer examples than its long-tailed size.
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer) or labels.size == 0:
        raise ValueError("`labels` must be a non-empty 1-D array of integer class labels")
    classes, sizes = np.unique(labels, return_counts=True)
    if order is None:
        order = classes
    order = np.asarray(order)
    if sorted(order.tolist()) != classes.tolist():
        raise ValueError(
            f"`order` must be a permutation of the classes in `labels` {classes.tolist()}"
        )
    if n_max is None:
        n_max = int(sizes.min())
    counts = long_tailed_counts(n_max, len(order), imbalance_ratio)
    rng = check_random_state(random_state)
    picked = []
    for c, k in zip(order, counts, strict=True):
        pool = np.flatnonzero(labels == c)
        if k > pool.size:
            raise ValueError(
                f"class {c} has {pool.size} examples but its long-tailed size is {k}; lower `n_max`"
            )
        picked.append(rng.choice(pool, size=k, replace=False))
    return np.sort(np.concatenate(picked))


def partial_label_candidates(
    labels, n_classes: int, *, q: float, eta: float = 0.0, random_state=None
) -> np.ndarray:
    """Unreliable partial-label candidate sets from true labels.

    Each wrong label joins the set independently with probability ``q`` (uniform flipping, as
    in PRODEN/PiCO); then the true label is dropped with probability ``eta`` (unreliable
    sets). A set left empty receives one wrong label drawn uniformly, so every example keeps
    a candidate.

    Parameters
    ----------
    labels : array_like of int (n,)
    n_classes : int
    q : float in [0, 1]
        Flipping probability of each wrong label.
    eta : float in [0, 1]
        Probability that the true label is missing from the set.
    random_state : None, int or Generator

    Returns
    -------
    ndarray of bool (n, C)

    Notes
    -----
    Fidelity: reconstruction of the usual unreliable-PLL generator (UPLLRS, ALIM); the
    refilling of empty sets is this package's choice.

    References
    ----------
    Lv, J. et al. (2020). PRODEN. *ICML 2020*. Xu, M. et al. (2023). ALIM: adjusting label
    importance mechanism for noisy partial label learning. *NeurIPS 2023*.
    """
    n_classes = check_positive_int(n_classes, name="n_classes", minimum=2)
    labels = np.asarray(labels)
    if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer) or not labels.size:
        raise ValueError(
            "`labels` must be a non-empty 1-D array of integer class labels; got dtype "
            f"{labels.dtype}, shape {labels.shape}"
        )
    if labels.min() < 0 or labels.max() >= n_classes:
        raise ValueError(f"`labels` must lie in 0..{n_classes - 1}")
    q = check_scalar(q, name="q", low=0.0, high=1.0)
    eta = check_scalar(eta, name="eta", low=0.0, high=1.0)
    rng = check_random_state(random_state)
    n = labels.size
    rows = np.arange(n)
    candidates = rng.random((n, n_classes)) < q
    candidates[rows, labels] = rng.random(n) >= eta
    empty = np.flatnonzero(~candidates.any(axis=1))
    # a wrong label uniformly: offset 1..C-1 from the true one
    fill = (labels[empty] + rng.integers(1, n_classes, size=empty.size)) % n_classes
    candidates[empty, fill] = True
    return candidates


def long_tailed_mixture(
    *,
    n_classes: int = 10,
    n_max: int = 500,
    imbalance_ratio: float = 100.0,
    n_features: int = 16,
    separation: float = 2.5,
    n_test_per_class: int = 200,
    random_state=None,
):
    """A long-tailed Gaussian mixture: class means on a random sphere, unit noise.

    Parameters
    ----------
    n_classes, n_max, imbalance_ratio
        Training sizes from :func:`long_tailed_counts`.
    n_features : int
    separation : float > 0
        Norm of every class mean (unit isotropic noise).
    n_test_per_class : int
        A balanced test set from the same mixture.
    random_state : None, int or Generator

    Returns
    -------
    X_train, y_train, X_test, y_test : ndarray
        float32 features and int64 labels; class 0 is the head.

    Notes
    -----
    The synthetic benchmark of the CLAPOR spec (mlcore_batch_a §6); the class sizes follow
    Cao et al. (2019).

    References
    ----------
    Cao, K. et al. (2019). Learning imbalanced datasets with label-distribution-aware margin
    loss. *NeurIPS 2019*.
    """
    n_features = check_positive_int(n_features, name="n_features")
    separation = check_positive(separation, name="separation")
    n_test = check_positive_int(n_test_per_class, name="n_test_per_class")
    counts = long_tailed_counts(n_max, n_classes, imbalance_ratio)
    rng = check_random_state(random_state)
    means = rng.standard_normal((n_classes, n_features))
    means *= separation / np.linalg.norm(means, axis=1, keepdims=True)

    def draw(sizes):
        y = np.repeat(np.arange(n_classes), sizes)
        x = means[y] + rng.standard_normal((y.size, n_features))
        return x.astype(np.float32), y.astype(np.int64)

    X_train, y_train = draw(counts)
    X_test, y_test = draw(np.full(n_classes, n_test))
    return X_train, y_train, X_test, y_test


def long_tailed_split(
    labels, imbalance_ratio: float, *, n_test_per_class: int, random_state=None
) -> tuple[np.ndarray, np.ndarray]:
    """A balanced test set of ``n_test_per_class`` per class, and a long-tailed training
    subsample of the rest (:func:`long_tailed_indices`, head size the smallest remaining
    class).

    Parameters
    ----------
    labels : array_like of int (n,)
    imbalance_ratio : float >= 1
    n_test_per_class : int
    random_state : None, int or Generator

    Returns
    -------
    train_idx, test_idx : ndarray of int

    References
    ----------
    Cao, K. et al. (2019). Learning imbalanced datasets with label-distribution-aware margin
    loss. *NeurIPS 2019* (the long-tailed profile; balanced test sets as in long-tailed
    CIFAR).
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer) or labels.size == 0:
        raise ValueError("`labels` must be a non-empty 1-D array of integer class labels")
    n_test = check_positive_int(n_test_per_class, name="n_test_per_class")
    rng = check_random_state(random_state)
    test = []
    for c in np.unique(labels):
        pool = np.flatnonzero(labels == c)
        if pool.size <= n_test:
            raise ValueError(
                f"class {c} has {pool.size} examples, not more than n_test_per_class={n_test}"
            )
        test.append(rng.choice(pool, size=n_test, replace=False))
    test = np.sort(np.concatenate(test))
    rest = np.setdiff1d(np.arange(labels.size), test)
    train = rest[long_tailed_indices(labels[rest], imbalance_ratio, random_state=rng)]
    return train, test
