"""Synthetic designs with known truth for PUFE, and the ridge semantic map used as base model."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit

from mlcore.encoders._inputs import check_class_indices
from statcore.validation import (
    as_float_array,
    check_positive,
    check_positive_int,
    check_probability,
    check_random_state,
    check_scalar,
)


@dataclass(frozen=True)
class PUSimulation:
    """A PU pool with known truth: ``z``, labels ``s``, seen membership and its posterior.

    Attributes
    ----------
    z : ndarray (n, dim)
    s : ndarray of int (n,)
        1 for the labelled examples (all of them seen-class).
    seen : ndarray of bool (n,)
        True seen-class membership.
    eta : ndarray (n,)
        The true seen posterior ``P(seen | z)``.
    c : float
        The mean labelling propensity of the seen examples.
    propensity : ndarray (n,)
        The true propensity e(z).
    """

    z: np.ndarray
    s: np.ndarray
    seen: np.ndarray
    eta: np.ndarray
    c: float
    propensity: np.ndarray


def simulate_pu(n: int = 5000, *, c: float = 0.4, dim: int = 5, slope: float = 3.0,
                intercept: float = 0.5, propensity_slope: float = 0.0,
                random_state=None) -> PUSimulation:  # fmt: skip
    """PU data: ``z ~ N(0, I)``, seen with logistic probability, labelled with propensity e(z).

    ``eta(z) = expit(intercept + slope u'z)`` for a random unit vector ``u``; a seen example is
    labelled (``s = 1``) with probability ``e(z) = expit(logit(c) + propensity_slope v'z)``,
    ``v`` a unit vector orthogonal to ``u``. ``propensity_slope = 0`` is Elkan and Noto
    (2008)'s selected-completely-at-random design (constant c); otherwise the labelling is
    selected at random given z (SAR, Bekker, Robberechts and Davis 2019).

    Parameters
    ----------
    n : int
    c : float in (0, 1)
    dim : int
    slope : float > 0
        Steepness of eta along ``u``; steeper posteriors make c easier to identify.
    intercept : float
    propensity_slope : float
        Steepness of the propensity along ``v`` (0: SCAR).
    random_state : None, int or Generator

    Returns
    -------
    PUSimulation
        ``c`` is the mean propensity of the seen examples (the given c under SCAR).
    """
    n = check_positive_int(n, name="n", minimum=2)
    c = check_probability(c, name="c")
    dim = check_positive_int(dim, name="dim")
    slope = check_positive(slope, name="slope")
    intercept = check_scalar(intercept, name="intercept")
    propensity_slope = check_scalar(propensity_slope, name="propensity_slope")
    if propensity_slope and dim < 2:
        raise ValueError("`propensity_slope` needs `dim` >= 2 (a direction orthogonal to eta's)")
    rng = check_random_state(random_state)
    basis, _ = np.linalg.qr(rng.standard_normal((dim, min(dim, 2))))
    z = rng.standard_normal((n, dim))
    eta = expit(intercept + slope * z @ basis[:, 0])
    seen = rng.random(n) < eta
    propensity = expit(logit(c) + propensity_slope * z @ basis[:, -1])
    s = (seen & (rng.random(n) < propensity)).astype(np.int64)
    return PUSimulation(z=z, s=s, seen=seen, eta=eta, c=float(np.mean(propensity[seen])),
                        propensity=propensity)  # fmt: skip


@dataclass(frozen=True)
class GZSLSimulation:
    """Features of classes described by binary attributes, ``x = W a_c + noise``.

    Attributes
    ----------
    x : ndarray (n, dim)
    labels : ndarray of int (n,)
    attributes : ndarray (n_classes, n_attributes)
        Each class's 0/1 attribute vector (distinct rows).
    weights : ndarray (dim, n_attributes)
        The map ``W``.
    seen_mask : ndarray of bool (n_classes,)
        The first ``n_classes - n_unseen`` classes are seen.
    """

    x: np.ndarray
    labels: np.ndarray
    attributes: np.ndarray
    weights: np.ndarray
    seen_mask: np.ndarray


def simulate_gzsl(n_per_class: int = 200, *, n_classes: int = 10, n_unseen: int = 3,
                  n_attributes: int = 12, dim: int = 32, noise: float = 1.0,
                  random_state=None) -> GZSLSimulation:  # fmt: skip
    """The synthetic GZSL design of the PUFE notes: random binary attributes, ``x = W a_c + e``.

    Parameters
    ----------
    n_per_class : int
    n_classes, n_unseen : int
        Classes ``n_classes - n_unseen, ..., n_classes - 1`` are unseen.
    n_attributes : int
        Attributes per class, each on with probability 1/2 (rows redrawn until distinct).
    dim : int
        Feature dimension.
    noise : float >= 0
        Standard deviation of the isotropic Gaussian noise.
    random_state : None, int or Generator

    Returns
    -------
    GZSLSimulation
    """
    n_per_class = check_positive_int(n_per_class, name="n_per_class")
    n_classes = check_positive_int(n_classes, name="n_classes", minimum=2)
    n_unseen = check_scalar(n_unseen, name="n_unseen", kind=int, low=1, high=n_classes - 1)
    n_attributes = check_positive_int(n_attributes, name="n_attributes")
    if 2**n_attributes < n_classes:
        raise ValueError(
            f"`n_attributes` = {n_attributes} cannot give {n_classes} distinct classes"
        )
    dim = check_positive_int(dim, name="dim")
    noise = check_positive(noise, name="noise", strict=False)
    rng = check_random_state(random_state)
    while True:
        attributes = (rng.random((n_classes, n_attributes)) < 0.5).astype(float)
        if len(np.unique(attributes, axis=0)) == n_classes:
            break
    weights = rng.standard_normal((dim, n_attributes))
    labels = np.repeat(np.arange(n_classes), n_per_class)
    x = attributes[labels] @ weights.T + noise * rng.standard_normal((labels.size, dim))
    seen_mask = np.arange(n_classes) < n_classes - n_unseen
    return GZSLSimulation(x=x, labels=labels, attributes=attributes, weights=weights,
                          seen_mask=seen_mask)  # fmt: skip


def ridge_semantic_map(x_train, y_train, attributes, x_test, *, penalty: float = 1.0,
                       n_folds: int = 5, random_state=None):  # fmt: skip
    """A ridge map from features to the semantic space fitted on seen classes (the base model).

    Each training example is mapped to its class's attribute vector; the map is a ridge
    regression with an intercept. Seen-only training is what makes the base model biased
    towards seen classes.

    Parameters
    ----------
    x_train : array_like (n, p)
        Features of labelled seen-class examples.
    y_train : array_like of int (n,)
        Their classes (rows of ``attributes``).
    attributes : array_like (C, d)
        Class prototypes in the semantic space.
    x_test : array_like (m, p)
    penalty : float >= 0
        Ridge penalty.
    n_folds : int >= 2
        Folds of the cross-fitted training embeddings.
    random_state : None, int or Generator
        Fold assignment.

    Returns
    -------
    z_train : ndarray (n, d)
        Out-of-fold embeddings of the training examples (what PUFE's labelled positives should
        be: in-sample ones sit closer to their prototypes than test embeddings do).
    z_test : ndarray (m, d)
        Embeddings of ``x_test`` from the map fitted on all training examples.
    """
    a = as_float_array(attributes, name="attributes", ndim=2, min_rows=1)
    x = as_float_array(x_train, name="x_train", ndim=2, min_rows=2)
    y = check_class_indices(y_train, name="y_train", n=x.shape[0], n_classes=a.shape[0])
    xt = as_float_array(x_test, name="x_test", ndim=2, min_rows=1)
    if xt.shape[1] != x.shape[1]:
        raise ValueError(f"`x_test` must have {x.shape[1]} columns; got {xt.shape[1]}")
    penalty = check_positive(penalty, name="penalty", strict=False)
    n_folds = check_scalar(n_folds, name="n_folds", kind=int, low=2, high=x.shape[0])
    rng = check_random_state(random_state)

    def fit_map(rows):
        mean_x, mean_a = x[rows].mean(axis=0), a[y[rows]].mean(axis=0)
        xc = x[rows] - mean_x
        gram = xc.T @ xc + penalty * np.eye(x.shape[1])
        coef = np.linalg.solve(gram, xc.T @ (a[y[rows]] - mean_a))
        return lambda new: (new - mean_x) @ coef + mean_a

    folds = rng.permutation(x.shape[0]) % n_folds
    z_train = np.empty((x.shape[0], a.shape[1]))
    for f in range(n_folds):
        z_train[folds == f] = fit_map(folds != f)(x[folds == f])
    return z_train, fit_map(np.arange(x.shape[0]))(xt)
