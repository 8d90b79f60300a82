"""Intrinsic dimension: per-point (local) estimates from nearest neighbours and global ones.

:class:`LocalID` gives every point a dimension from its own neighbourhood (Levina-Bickel MLE,
a neighbourhood TwoNN or GRIDE) and aggregates them; :class:`GlobalID` gives one number for the
whole cloud (participation ratio, PCA at a variance share, global TwoNN). The paper this area
follows reports that the local estimates, not the global ones, track alignment and
generalisation across models.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from statcore import neighbours as K
from statcore.base import Estimator
from statcore.geometry import _kernels as G
from statcore.results import ResamplingResult, Results
from statcore.results.plotting import get_ax, label_axes
from statcore.validation import (
    as_float_array,
    check_option,
    check_positive_int,
    check_random_state,
    check_same_length,
    check_scalar,
)

REFERENCE = (
    "Yu, Ma, Wei, Zhang, Deng, Deng and Liu (2026). Local intrinsic dimension of "
    "representations predicts alignment and generalization in AI models and human brain. "
    "arXiv:2601.22722."
)
LOCAL_METHODS = ("mle", "twonn", "gride")
AGGREGATES = ("mean", "median", "harmonic")
#: bisection bracket of the GRIDE root: dimensions outside it are not resolvable from kNN data
_GRIDE_BRACKET = (1e-3, 1e4)


def _check_points(X, *, name: str = "X") -> np.ndarray:
    return as_float_array(X, name=name, ndim=2, min_rows=3)


def _unique_rows(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows and, for each input row, the index of its distinct copy.

    Copies carry no information about dimension and give zero neighbour distances (TwoNN's
    ``r2 / r1`` would divide by zero), so estimators run on the distinct points and copies
    inherit their estimate.
    """
    unique, inverse = np.unique(X, axis=0, return_inverse=True)
    return unique, inverse.reshape(-1)


def _check_k(k, n_distinct: int, *, minimum: int = 2) -> int:
    k = check_positive_int(k, name="k", minimum=minimum)
    if k >= n_distinct:
        raise ValueError(
            f"`k` must be smaller than the number of distinct points ({n_distinct}); got {k}"
        )
    return k


def _plot_pointwise(results, ax=None, **kwargs):
    """Histogram of the per-point estimates with the aggregates marked."""
    ax = get_ax(ax)
    values = results.pointwise[np.isfinite(results.pointwise)]
    kwargs.setdefault("bins", 50)
    kwargs.setdefault("color", "0.75")
    ax.hist(values, **kwargs)
    for colour, (name, value) in zip(("C3", "C0", "C2"), results.estimates.items(), strict=True):
        ax.axvline(value, color=colour, lw=1.5, label=f"{name} {value:.2f}")
    ax.legend(frameon=False)
    return label_axes(ax, "local intrinsic dimension", "points", results.method)


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class LocalIDResults(Results):
    """Per-point intrinsic dimensions and their aggregates.

    Attributes
    ----------
    pointwise : ndarray of shape (n,)
        One estimate per input row (copies share their distinct row's value; NaN where a
        neighbourhood held no usable distance).
    estimates : Series
        ``mean``, ``median`` and ``harmonic`` (MacKay and Ghahramani's: the inverse of the mean
        inverse estimate) of the finite per-point values.
    bootstrap : ResamplingResult or None
        Replicates of the three aggregates over points resampled with replacement (None when
        ``n_resamples=0``).
    k : int
        Neighbourhood size.
    estimator : str
        ``"mle"``, ``"twonn"`` or ``"gride"``.
    n_duplicates : int
        Rows that repeat an earlier row.
    """

    pointwise: np.ndarray
    estimates: pd.Series
    bootstrap: ResamplingResult | None = None
    k: int = 20
    estimator: str = "mle"
    n_duplicates: int = 0

    _plots: ClassVar[dict] = {"hist": _plot_pointwise}

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Percentile bootstrap intervals of the aggregates (needs ``n_resamples > 0``)."""
        if self.bootstrap is None:
            raise ValueError("this fit has no bootstrap; refit with n_resamples > 0")
        return self.bootstrap.conf_int(alpha)

    def tidy(self, alpha: float = 0.05) -> pd.DataFrame:
        """One row per aggregate: ``term, estimate, std_error, conf_low, conf_high``."""
        frame = pd.DataFrame({"term": self.estimates.index, "estimate": self.estimates.values})
        if self.bootstrap is not None:
            ci = self.conf_int(alpha)
            frame["std_error"] = self.bootstrap.bse.to_numpy()
            frame["conf_low"] = ci["lower"].to_numpy()
            frame["conf_high"] = ci["upper"].to_numpy()
        return frame

    def glance(self) -> pd.DataFrame:
        row = super().glance().iloc[0].to_dict()
        row.update(
            estimator=self.estimator,
            k=self.k,
            lid=float(self.estimates["mean"]),
            n_duplicates=self.n_duplicates,
        )
        return pd.DataFrame([row])

    def _repr_lines(self) -> list[str]:
        shown = ", ".join(f"{key} {value:.3f}" for key, value in self.estimates.items())
        return [f"  {self.estimator} (k={self.k}): {shown}"]


def _aggregates(values: np.ndarray) -> np.ndarray:
    finite = values[np.isfinite(values) & (values > 0)]
    return np.array([finite.mean(), np.median(finite), 1.0 / np.mean(1.0 / finite)])


def _ratio_logs(dist: np.ndarray, n1: int, n2: int) -> np.ndarray:
    """``log(r_{n2} / r_{n1})`` per point; NaN where ``r_{n1}`` is 0 (never a division by 0)."""
    r1, r2 = dist[:, n1 - 1], dist[:, n2 - 1]
    out = np.full(len(dist), np.nan)
    ok = r1 > 0
    out[ok] = np.log(r2[ok] / r1[ok])
    return out


class _PointCloud(Estimator):
    """One point cloud, checked and frozen: the shared constructor of the ID estimators."""

    def __init__(self, X):
        self.X = _check_points(X)
        self.X.setflags(write=False)

    @property
    def nobs(self) -> int:
        return self.X.shape[0]

    def _repr_spec(self) -> str:
        return f"p={self.X.shape[1]}"


class LocalID(_PointCloud):
    """Local (per-point) intrinsic dimension of a point cloud.

    Parameters
    ----------
    X : array_like of shape (n, p)
        The points (rows), e.g. a model's embeddings of ``n`` stimuli. Nothing is modified.

    Notes
    -----
    Each point's neighbours come from one exact Euclidean kNN search (the clustering area's
    blocked kernel) on the centred, de-duplicated points; copies of a row get the estimate of
    their distinct row. The estimators, with ``T_j(x)`` the distance from ``x`` to its j-th
    nearest neighbour:

    - ``"mle"``: Levina and Bickel (2005), ``m(x) = [(k-1)^-1 sum_{j<k} log(T_k(x) / T_j(x))]^-1``;
    - ``"twonn"``: the maximum-likelihood TwoNN (Facco et al. 2017) of the point and its ``k``
      neighbours: ``m(x) = (k + 1) / sum_j log(T_2(x_j) / T_1(x_j))`` over those ``k + 1`` points,
      the localised TwoNN of Ruppik et al. (2025);
    - ``"gride"``: the GRIDE likelihood (Denti et al. 2022) of the ratios
      ``T_{2 n1} / T_{n1}`` over the same ``k + 1`` points, maximised by bisection; ``n1 = 1``
      is TwoNN, larger ``n1`` looks at a larger scale and is less sensitive to noise.

    The aggregates are the mean, the median and MacKay and Ghahramani's (2005) harmonic mean
    (the inverse of the mean of ``1 / m(x)``, which they show is the better pooled MLE). Their
    bootstrap resamples the per-point values with the neighbourhoods fixed; neighbouring points
    share neighbours, so the interval is a lower bound on the estimate's sampling spread.
    All estimates are unchanged by rotations, translations and global scaling of ``X``.

    Like every kNN estimator they are biased downwards when the dimension is high relative to
    ``log n`` (d = 10 from 4,000 points reads about 8.7); compare models at the same ``n`` and
    ``k``, as the paper does.

    Fidelity: reconstruction. The paper (arXiv:2601.22722; only its abstract was available)
    does not state which local estimator, neighbourhood size or aggregate it uses; the
    estimators are the published ones cited here, and the choice of the Levina-Bickel MLE at
    ``k = 20`` with the mean as the default is ours.

    References
    ----------
    Yu, Ma, Wei, Zhang, Deng, Deng and Liu (2026). Local intrinsic dimension of representations
    predicts alignment and generalization in AI models and human brain. arXiv:2601.22722.

    Levina, E. and Bickel, P. (2005). Maximum likelihood estimation of intrinsic dimension.
    *NeurIPS 17*. MacKay, D. and Ghahramani, Z. (2005). Comments on Levina and Bickel.

    Facco, E., d'Errico, M., Rodriguez, A. and Laio, A. (2017). Estimating the intrinsic
    dimension of datasets by a minimal neighborhood information. *Sci. Rep.* 7, 12140.

    Denti, F., Doimo, D., Laio, A. and Mira, A. (2022). The generalized ratios intrinsic
    dimension estimator. *Sci. Rep.* 12, 20005.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(2000, 2)) @ rng.normal(size=(2, 10))
    >>> res = LocalID(X).fit(k=20, n_resamples=0)
    >>> bool(abs(res.estimates["median"] - 2) < 0.15)
    True
    """

    method_name = "Local intrinsic dimension"

    def fit(
        self,
        *,
        method: str = "mle",
        k: int = 20,
        n1: int = 2,
        n_resamples: int = 200,
        random_state=None,
    ) -> LocalIDResults:
        """Estimate every point's dimension.

        Parameters
        ----------
        method : {"mle", "twonn", "gride"}
            The local estimator (see the class Notes).
        k : int
            Neighbourhood size: neighbours per point for ``"mle"`` (at least 2); neighbours
            pooled with the point for ``"twonn"`` and ``"gride"``. Smaller than the number of
            distinct points.
        n1 : int
            GRIDE's scale: the ratio of the ``2 n1``-th to the ``n1``-th neighbour distance
            (``"gride"`` only).
        n_resamples : int
            Bootstrap replicates of the aggregates (0: none).
        random_state : None, int, SeedSequence or Generator
            Seeds the bootstrap.

        Returns
        -------
        LocalIDResults
        """
        method = check_option(method, name="method", options=LOCAL_METHODS)
        n1 = check_positive_int(n1, name="n1")
        n_resamples = check_scalar(n_resamples, name="n_resamples", kind=numbers.Integral, low=0)
        rng = check_random_state(random_state)
        distinct, inverse = _unique_rows(self.X)
        k = _check_k(k, len(distinct))
        points = K.centred(distinct)
        if method == "mle":
            dist, _ = K.knn(points, k, parallel=True)
            values = G.levina_bickel(dist, k)
            label = "Levina-Bickel MLE"
        else:
            scale = 1 if method == "twonn" else n1
            need = max(k, 2 * scale)
            if need >= len(distinct):
                raise ValueError(
                    f"`n1`={n1} needs {2 * scale} neighbours per point; only "
                    f"{len(distinct) - 1} exist"
                )
            dist, idx = K.knn(points, need, parallel=True)
            logs = _ratio_logs(dist, scale, 2 * scale)
            values = G.neighbourhood_ratio_mle(logs, idx, k, scale, 2 * scale, *_GRIDE_BRACKET)
            label = "neighbourhood TwoNN" if method == "twonn" else f"GRIDE (n1={scale})"
        pointwise = values[inverse]
        estimates = pd.Series(_aggregates(pointwise), index=list(AGGREGATES), name="estimate")
        bootstrap = None
        if n_resamples:
            n = len(pointwise)
            reps = np.array(
                [_aggregates(pointwise[rng.integers(0, n, n)]) for _ in range(n_resamples)]
            )
            bootstrap = ResamplingResult(
                method="Local intrinsic dimension: point bootstrap",
                nobs=n,
                estimate=estimates,
                replicates=pd.DataFrame(reps, columns=estimates.index),
                scheme="bootstrap over points (neighbourhoods fixed)",
            )
        n_dup = self.nobs - len(distinct)
        notes = (f"{n_dup} duplicate row(s) share their copy's estimate",) if n_dup else ()
        return LocalIDResults(
            method=f"Local intrinsic dimension ({label}, k={k})",
            pointwise=pointwise,
            estimates=estimates,
            bootstrap=bootstrap,
            k=k,
            estimator=method,
            n_duplicates=n_dup,
            notes=notes,
            **self._result_fields(),
        )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class GlobalIDResults(Results):
    """Global intrinsic dimension estimates of one point cloud.

    Attributes
    ----------
    estimates : Series
        ``participation_ratio``, ``pca`` (components reaching ``variance_share``) and
        ``twonn``.
    eigenvalues : ndarray
        Covariance eigenvalues, descending.
    variance_share : float
    """

    estimates: pd.Series
    eigenvalues: np.ndarray
    variance_share: float = 0.9

    def tidy(self) -> pd.DataFrame:
        return pd.DataFrame({"term": self.estimates.index, "estimate": self.estimates.values})


def twonn_dimension(r1: np.ndarray, r2: np.ndarray, discard_fraction: float = 0.1) -> float:
    """TwoNN's linear-fit dimension from each point's first two neighbour distances.

    Points with ``r1 = 0`` (copies) are dropped; of the remaining ``N`` ratios ``mu = r2 / r1``
    the largest ``discard_fraction`` are discarded, and the slope of ``-log(1 - i / N)`` on
    ``log mu_(i)`` through the origin is returned (Facco et al. 2017; scikit-dimension's
    ``TwoNN`` does the same).
    """
    r1 = as_float_array(r1, name="r1", ndim=1, min_rows=2)
    r2 = as_float_array(r2, name="r2", ndim=1, min_rows=2)
    check_same_length(r1=r1, r2=r2)
    if (r1 < 0).any():
        raise ValueError(f"`r1` must hold distances (>= 0); got minimum {r1.min():g}")
    if (r2 < r1).any():
        i = int(np.argmax(r2 < r1))
        raise ValueError(
            f"`r2` must hold second-neighbour distances, each >= its `r1`; got r2[{i}] = "
            f"{r2[i]:g} < r1[{i}] = {r1[i]:g}"
        )
    discard_fraction = check_scalar(
        discard_fraction, name="discard_fraction", low=0.0, high=1.0, high_inclusive=False
    )
    ok = r1 > 0
    mu = np.sort(r2[ok] / r1[ok])
    N = len(mu)
    keep = int(N * (1 - discard_fraction))
    if keep < 2:
        raise ValueError(
            f"TwoNN needs at least 2 points with distinct neighbours after `discard_fraction` = "
            f"{discard_fraction:g}; got {keep} of {N}"
        )
    x = np.log(mu[:keep])
    if not (x > 0).any():
        raise ValueError("`r2` equals `r1` for every kept point: TwoNN's slope is undefined")
    y = -np.log(1.0 - np.arange(1, keep + 1) / N)
    return float(x @ y / (x @ x))


class GlobalID(_PointCloud):
    """Global intrinsic dimension: participation ratio, PCA count and TwoNN.

    Parameters
    ----------
    X : array_like of shape (n, p)
        The points. Nothing is modified.

    Notes
    -----
    - participation ratio ``(sum lambda)^2 / sum lambda^2`` of the covariance eigenvalues
      (Gao et al. 2017), a linear, continuous count;
    - ``pca``: the number of principal components that explain ``variance_share`` of the
      variance;
    - ``twonn``: Facco et al.'s (2017) linear fit over all points, the top ``discard_fraction``
      of ratios discarded; equal to scikit-dimension's ``TwoNN`` (copies are dropped, as there).

    Fidelity: reconstruction. The paper (arXiv:2601.22722, abstract only) contrasts local
    with "global dimension measures" without naming them; these three are the usual ones.

    References
    ----------
    Yu et al. (2026), arXiv:2601.22722. Facco et al. (2017), *Sci. Rep.* 7, 12140.
    Gao, P., Trautmann, E., Yu, B. et al. (2017). A theory of multineuronal dimensionality,
    dynamics and measurement. bioRxiv 214262.
    """

    method_name = "Global intrinsic dimension"

    def fit(self, *, variance_share: float = 0.9, discard_fraction: float = 0.1):
        """Compute the three global estimates.

        Parameters
        ----------
        variance_share : float in (0, 1)
            Share of variance the PCA count must reach.
        discard_fraction : float in [0, 1)
            Share of the largest TwoNN ratios left out of the fit.

        Returns
        -------
        GlobalIDResults
        """
        variance_share = check_scalar(
            variance_share, name="variance_share", low=0, high=1, low_inclusive=False
        )
        discard_fraction = check_scalar(
            discard_fraction, name="discard_fraction", low=0, high=1, high_inclusive=False
        )
        points = K.centred(self.X)
        lam = np.clip(np.linalg.eigvalsh(points.T @ points / (len(points) - 1))[::-1], 0, None)
        if lam.sum() <= 0:
            raise ValueError("`X` has no variance: all rows are equal")
        pr = lam.sum() ** 2 / (lam**2).sum()
        share = np.cumsum(lam) / lam.sum()
        pca = int(np.searchsorted(share, variance_share - 1e-12) + 1)
        distinct, _ = _unique_rows(self.X)
        dist, _ = K.knn(K.centred(distinct), 2, parallel=True)
        twonn = twonn_dimension(dist[:, 0], dist[:, 1], discard_fraction)
        return GlobalIDResults(
            method=self.method_name,
            estimates=pd.Series(
                {"participation_ratio": pr, "pca": float(pca), "twonn": twonn}, name="estimate"
            ),
            eigenvalues=lam,
            variance_share=variance_share,
            **self._result_fields(),
        )
