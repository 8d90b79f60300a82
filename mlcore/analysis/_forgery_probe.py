"""The linear probes of :mod:`mlcore.analysis.forgery`: L2-penalised logistic regression in numpy.

Probes read pooled unit activations that have already left torch (through
:func:`mlcore.analysis.extract_features`), so they are fitted with scipy's L-BFGS on standardised
columns; a few hundred rows and at most a few hundred units make this a sub-second fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, special
from scipy.stats import rankdata


@dataclass(frozen=True)
class Probe:
    """A fitted multinomial (or binary) logistic probe on standardised columns."""

    coef: np.ndarray  # (d, k) for k classes; k = 1 for a binary probe (class 1's logit)
    intercept: np.ndarray  # (k,)
    mean: np.ndarray
    scale: np.ndarray
    converged: bool

    def standardise(self, X: np.ndarray) -> np.ndarray:
        return (X - self.mean) / self.scale

    def logits(self, X: np.ndarray) -> np.ndarray:
        return self.standardise(X) @ self.coef + self.intercept

    def proba(self, X: np.ndarray) -> np.ndarray:
        """Class-1 probability for a binary probe, else the (n, k) class probabilities."""
        z = self.logits(X)
        if z.shape[1] == 1:
            return special.expit(z[:, 0])
        return special.softmax(z, axis=1)


def fit_probe(X: np.ndarray, y: np.ndarray, *, penalty: float, maxiter: int = 500) -> Probe:
    """Fit ``y`` (integer classes 0..k-1) on ``X`` with an L2 penalty on the coefficients.

    The loss is the mean cross-entropy plus ``penalty / (2 n) * ||W||^2``, i.e. ``penalty`` is the
    inverse of scikit-learn's ``C`` (``C = 1 / penalty``) for the same standardised columns.
    Zero-variance columns get scale 1, so they stay zero after centring and carry no weight.
    """
    n, d = X.shape
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    Z = (X - mean) / scale
    classes = int(y.max()) + 1
    k = 1 if classes == 2 else classes
    onehot = np.eye(classes)[y]

    def loss_grad(theta):
        W = theta[: d * k].reshape(d, k)
        b = theta[d * k :]
        logits = Z @ W + b
        if k == 1:
            z = logits[:, 0]
            loss = np.mean(np.logaddexp(0.0, z) - y * z)
            resid = (special.expit(z) - y)[:, None]
        else:
            lse = special.logsumexp(logits, axis=1)
            loss = np.mean(lse - np.sum(onehot * logits, axis=1))
            resid = np.exp(logits - lse[:, None]) - onehot
        loss += penalty / (2 * n) * np.sum(W * W)
        gW = Z.T @ resid / n + penalty / n * W
        return loss, np.concatenate([gW.ravel(), resid.mean(axis=0)])

    res = optimize.minimize(
        loss_grad,
        np.zeros(d * k + k),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": maxiter},
    )
    return Probe(
        coef=res.x[: d * k].reshape(d, k),
        intercept=res.x[d * k :],
        mean=mean,
        scale=scale,
        converged=bool(res.success),
    )


def auroc(scores: np.ndarray, y: np.ndarray) -> float:
    """Area under the ROC curve of ``scores`` for labels ``y`` in {0, 1} (ties count one half)."""
    ranks = rankdata(scores)
    n1 = int(y.sum())
    n0 = len(y) - n1
    return float((ranks[y == 1].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def stratified_folds(y: np.ndarray, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """A fold index per row, each class dealt round-robin over the folds after a shuffle."""
    folds = np.empty(len(y), dtype=np.int64)
    for label in np.unique(y):
        rows = rng.permutation(np.flatnonzero(y == label))
        folds[rows] = np.arange(len(rows)) % n_folds
    return folds


def cross_validated(
    X: np.ndarray, y: np.ndarray, *, penalty: float, n_folds: int, rng
) -> tuple[float, float]:
    """Held-out accuracy and (binary ``y`` only, else NaN) AUROC of the probe over folds."""
    folds = stratified_folds(y, n_folds, rng)
    binary = y.max() == 1
    hits = np.empty(len(y), dtype=bool)
    scores = np.empty(len(y))
    for fold in range(n_folds):
        test = folds == fold
        probe = fit_probe(X[~test], y[~test], penalty=penalty)
        p = probe.proba(X[test])
        if binary:
            scores[test] = p
            hits[test] = (p > 0.5) == (y[test] == 1)
        else:
            hits[test] = p.argmax(axis=1) == y[test]
    return float(hits.mean()), auroc(scores, y) if binary else np.nan
