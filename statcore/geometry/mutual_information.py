"""Mutual information between two samples: the KSG k-nearest-neighbour estimator, its permutation
independence test, and the result that every MI estimator of statcore and mlcore returns.

References
----------
Kraskov, A., Stoegbauer, H. and Grassberger, P. (2004). Estimating mutual information.
*Physical Review E* 69, 066138.
Gao, W., Kannan, S., Oh, S. and Viswanath, P. (2017). Estimating mutual information for
discrete-continuous mixtures. *NeurIPS 2017*.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import special, stats

from statcore import neighbours as K
from statcore.results import Results, TestResult
from statcore.results.plotting import get_ax
from statcore.validation import (
    align_rows,
    as_float_array,
    check_alpha,
    check_option,
    check_positive_int,
    check_random_state,
    check_same_length,
)


def _plot_replicates(results, ax=None, **kwargs):
    """Histogram of the replicates, the estimate and the interval marked."""
    ax = get_ax(ax)
    if results.replicates is not None:
        ax.hist(results.replicates, bins=30, color="0.7", **kwargs)
    ax.axvline(results.estimate, color="k", label="estimate")
    for bound in (results.conf_low, results.conf_high):
        ax.axvline(bound, color="k", linestyle="--")
    ax.set_xlabel("mutual information (nats)")
    ax.legend()
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class MutualInformationResult(Results):
    """An estimate of the mutual information I(X; Y) in nats, with an interval.

    Attributes
    ----------
    estimate : float
        The point estimate (nats).
    std_error : float
        Its standard error (NaN when the interval method gives none).
    conf_low, conf_high : float
        The ``1 - alpha`` interval.
    alpha : float
    interval : str
        How the interval was formed, in words.
    replicates : ndarray, optional
        Bootstrap (or repeated-pass) estimates behind the interval.
    """

    estimate: float
    std_error: float = np.nan
    conf_low: float = np.nan
    conf_high: float = np.nan
    alpha: float = 0.05
    interval: str = ""
    replicates: np.ndarray | None = field(default=None, repr=False)

    _plots: ClassVar[dict] = {"replicates": _plot_replicates}

    @property
    def mi(self) -> float:
        """The estimate (alias, reads better in code)."""
        return self.estimate

    def conf_int(self, alpha: float | None = None) -> pd.DataFrame:
        """``1 - alpha`` interval, one row ``mutual_information``, columns ``lower``, ``upper``.

        ``alpha=None`` (or the stored ``alpha``) gives the stored interval; another level needs
        a standard error and is then normal.
        """
        if alpha is None or check_alpha(alpha) == self.alpha:
            low, high = self.conf_low, self.conf_high
        elif np.isfinite(self.std_error):
            low, high = normal_interval(self.estimate, self.std_error, alpha)
        else:
            raise ValueError(f"this {self.method} result has no standard error for another `alpha`")
        return pd.DataFrame({"lower": [low], "upper": [high]}, index=["mutual_information"])

    def tidy(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "term": ["mutual_information"],
                "estimate": [self.estimate],
                "std_error": [self.std_error],
                "conf_low": [self.conf_low],
                "conf_high": [self.conf_high],
            }
        )


def normal_interval(estimate: float, std_error: float, alpha: float) -> tuple[float, float]:
    """``estimate -/+ z_{1 - alpha/2} std_error``."""
    z = stats.norm.isf(alpha / 2)
    return estimate - z * std_error, estimate + z * std_error


def check_pair(x, y) -> tuple[np.ndarray, np.ndarray]:
    """``x`` and ``y`` as 2-D float copies (a 1-D array is one column) of equal length."""
    x, y = align_rows(x=x, y=y)
    x = as_float_array(x, name="x", ndim=(1, 2), min_rows=4)
    y = as_float_array(y, name="y", ndim=(1, 2), min_rows=4)
    x = x.reshape(len(x), -1)
    y = y.reshape(len(y), -1)
    check_same_length(x=x, y=y)
    for arr, name in ((x, "x"), (y, "y")):
        if arr.shape[1] == 0:
            raise ValueError(f"`{name}` must have at least one column; got shape {arr.shape}")
    return x, y


SCALINGS = ("standardize", "rank", "none")


def rank_gaussianize(a: np.ndarray) -> np.ndarray:
    """Per-column van der Waerden scores ``Phi^{-1}(rank / (n + 1))``, ties given their average
    rank (so atoms stay atoms and the MI of discrete data is kept)."""
    return special.ndtri(stats.rankdata(a, axis=0) / (len(a) + 1))


def _rescale(a: np.ndarray, scale: str) -> np.ndarray:
    if scale == "rank":
        return rank_gaussianize(a)
    if scale == "standardize":
        sd = a.std(axis=0)
        # a constant column carries no information; leave it constant rather than divide by 0
        return (a - a.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return a


def _check_k(k, n: int) -> int:
    k = check_positive_int(k, name="k")
    if k >= n:
        raise ValueError(f"`k` must be smaller than the number of samples ({n}); got {k}")
    return k


def _ksg_terms(x: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """Per-point KSG (algorithm 1) terms ``psi(k_i) - psi(n_x,i + 1) - psi(n_y,i + 1)``.

    ``eps_i`` is the max-norm distance from point ``i`` to its ``k``-th nearest neighbour in the
    joint space; ``n_x,i`` (``n_y,i``) counts the other points strictly closer than ``eps_i`` in
    the ``x`` (``y``) space, and ``k_i = k``. Where ``eps_i = 0`` (at least ``k`` exact copies of
    point ``i``: discrete data) the strict counts are empty and the rule of Gao, Kannan, Oh and
    Viswanath (2017) applies instead: ``k_i`` is the number of copies and ``n_x,i`` (``n_y,i``)
    the number of points equal to ``x_i`` (``y_i``).

    The searches are the shared exact ones (:mod:`statcore.neighbours`): a KD-tree in low
    dimension, as scikit-learn's ``mutual_info_regression``, blocked comparisons above; the
    max-norm is compared exactly on both, so ties stay exact, which the discrete rule needs.
    ``x`` and ``y`` are float (n, d) arrays, checked by the caller.
    """
    joint = np.hstack([x, y])
    eps = K.knn(joint, k, metric="chebyshev", parallel=True)[0][:, -1]
    n_x = K.count_within(x, eps, metric="chebyshev", parallel=True).astype(np.float64)
    n_y = K.count_within(y, eps, metric="chebyshev", parallel=True).astype(np.float64)
    k_i = np.full(len(x), float(k))
    atoms = eps == 0.0
    if atoms.any():
        zero = np.zeros(len(x))
        n_x[atoms] = K.count_within(x, zero, strict=False, parallel=True)[atoms]
        n_y[atoms] = K.count_within(y, zero, strict=False, parallel=True)[atoms]
        k_i[atoms] = K.count_within(joint, zero, strict=False, parallel=True)[atoms]
    return special.digamma(k_i) - special.digamma(n_x + 1.0) - special.digamma(n_y + 1.0)


def ksg_mutual_information(
    x, y, *, k: int = 3, scale: str = "standardize", alpha: float = 0.05
) -> MutualInformationResult:
    """KSG estimate of I(X; Y) in nats (Kraskov, Stoegbauer and Grassberger 2004, estimator 1).

    ``I = psi(k) + psi(n) - < psi(n_x + 1) + psi(n_y + 1) >`` with max-norm neighbourhoods in the
    joint space and strict counts in the marginal spaces.

    Parameters
    ----------
    x : array_like of shape (n,) or (n, d_x)
    y : array_like of shape (n,) or (n, d_y)
        Paired samples. Nothing is modified.
    k : int
        Neighbour order (3 is the paper's recommendation for small bias).
    scale : {"standardize", "rank", "none"}
        Per-coordinate rescaling before the search. The max-norm compares coordinates on their
        own scales, so one wide coordinate decides every neighbourhood: ``"standardize"`` (unit
        variance, as scikit-learn's ``mutual_info_regression``) avoids that; ``"rank"``
        (Gaussian scores of the ranks) also makes the estimate invariant to strictly monotone
        marginal maps; ``"none"`` is the paper's raw-data estimator.
    alpha : float
        Level of the interval.

    Returns
    -------
    MutualInformationResult
        The interval is normal, from the standard deviation of the per-point terms over
        ``sqrt(n)``.

    Notes
    -----
    Where a point has at least ``k`` exact copies (discrete data) its term follows Gao et al.
    (2017): ``k`` becomes the number of copies and the marginal counts count equal values, so the
    estimator stays consistent on discrete and mixed data, where plain KSG is undefined.

    The per-point terms are dependent (they share neighbours), so their standard error is an
    approximation; it is what KSG offers without refitting (a row bootstrap would create copies,
    which the estimator reads as discrete atoms).

    Fidelity: paper (KSG algorithm 1, exact); the tie rule and the interval are additions.

    References
    ----------
    Kraskov, Stoegbauer and Grassberger (2004), Phys. Rev. E 69, 066138, eq. (8).
    Gao, Kannan, Oh and Viswanath (2017), NeurIPS.

    Examples
    --------
    >>> from statcore.geometry.mi_designs import gaussian_copula_sample
    >>> x, y = gaussian_copula_sample(2000, rho=0.8, random_state=0)
    >>> round(ksg_mutual_information(x, y).estimate, 2)
    0.51
    """
    x, y = check_pair(x, y)
    n = len(x)
    k = _check_k(k, n)
    scale = check_option(scale, name="scale", options=SCALINGS)
    alpha = check_alpha(alpha)
    x, y = _rescale(x, scale), _rescale(y, scale)
    terms = _ksg_terms(x, y, k) + special.digamma(n)
    estimate = float(terms.mean())
    se = float(terms.std(ddof=1) / np.sqrt(n))
    low, high = normal_interval(estimate, se, alpha)
    return MutualInformationResult(
        method=f"KSG mutual information (k={k})",
        nobs=n,
        estimate=estimate,
        std_error=se,
        conf_low=low,
        conf_high=high,
        alpha=alpha,
        interval="normal, from the per-point terms",
        fit_options={"k": k, "scale": scale, "alpha": alpha},
    )


def permutation_pvalue(statistic: float, null: np.ndarray) -> float:
    """``(1 + #{null >= statistic}) / (1 + B)``: exact-size permutation p-value."""
    return float((1 + np.sum(null >= statistic)) / (1 + len(null)))


def permutation_independence_result(
    method: str,
    nobs: int,
    statistic: float,
    null: np.ndarray,
    *,
    permuted: str = "permutation",
    statistic_name: str = "MI (nats)",
) -> TestResult:
    """The one-sided permutation test of independence every mutual-information statistic
    reports (KSG, InfoAtlas, trained critics): large values speak against independence.

    Parameters
    ----------
    method : str
        The test's name in the result.
    nobs : int
    statistic : float
        The observed statistic.
    null : ndarray (n_resamples,)
        The statistic on data with ``y`` permuted.
    permuted : str
        What was permuted, for ``distribution`` (``"{permuted} ({n_resamples} draws)"``).
    statistic_name : str

    Returns
    -------
    TestResult
        ``pvalue = (1 + #{null >= statistic}) / (1 + n_resamples)``
        (:func:`permutation_pvalue`), ``alternative="greater"``.
    """
    return TestResult(
        method=method,
        nobs=nobs,
        statistic=statistic,
        pvalue=permutation_pvalue(statistic, null),
        alternative="greater",
        distribution=f"{permuted} ({len(null)} draws)",
        null_distribution=null,
        null_hypothesis="X and Y are independent",
        estimate=statistic,
        n_resamples=len(null),
        statistic_name=statistic_name,
    )


def ksg_independence_test(
    x, y, *, k: int = 3, scale: str = "standardize", n_resamples: int = 199, random_state=None
) -> TestResult:
    """Permutation test of X independent of Y with the KSG estimate as statistic.

    Parameters
    ----------
    x, y, k, scale
        As in :func:`ksg_mutual_information`.
    n_resamples : int
        Number of permutations of ``y``.
    random_state : None, int or Generator

    Returns
    -------
    TestResult
        ``statistic`` is the KSG estimate, ``pvalue`` the permutation p-value (one-sided: large
        MI rejects), ``null_distribution`` the permuted estimates.

    References
    ----------
    Kraskov, Stoegbauer and Grassberger (2004), Phys. Rev. E 69, 066138.
    """
    x, y = check_pair(x, y)
    n = len(x)
    k = _check_k(k, n)
    scale = check_option(scale, name="scale", options=SCALINGS)
    n_resamples = check_positive_int(n_resamples, name="n_resamples")
    rng = check_random_state(random_state)
    x, y = _rescale(x, scale), _rescale(y, scale)
    offset = special.digamma(n)
    statistic = float(_ksg_terms(x, y, k).mean() + offset)
    null = np.array(
        [_ksg_terms(x, y[rng.permutation(n)], k).mean() + offset for _ in range(n_resamples)]
    )
    return permutation_independence_result(
        f"KSG permutation test of independence (k={k})", n, statistic, null
    )
