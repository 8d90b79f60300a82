"""Confidence bands over quantile levels and the non-crossing rearrangement.

Two pieces of inference on a quantile regression *process* (estimates on a grid of levels):

* :func:`conf_band`: pointwise or uniform-in-level bands for the coefficient curves. The stacked
  estimates at the levels are asymptotically jointly normal with the covariance across levels
  that ``vcov`` already holds (blocks ``(min(t, t') - t t') G_t J G_t' / n``): the
  finite-dimensional distributions of the limiting Gaussian process. The uniform critical value
  is the ``1 - alpha`` quantile of the supremum of the standardised process over the grid,
  simulated from that covariance (or, for a bootstrap fit, read off the replicates: the
  sup-t bootstrap band).
* :func:`rearrange`: sorting a curve over the ascending levels, the increasing rearrangement of
  Chernozhukov, Fernandez-Val and Galichon (2010) on the grid. It turns crossing quantile curves
  into monotone ones, leaves monotone ones unchanged and never moves a curve further (in any
  ``l_p`` norm on the grid) from a monotone truth; applied to the two ends of a band it keeps the
  band's coverage of a monotone truth.

:func:`predict_band` gives the same bands for the predicted conditional quantile curves
``x' beta(t)`` at new rows, where monotonicity in ``t`` does hold and rearrangement applies.

References
----------
Chernozhukov, V., Fernandez-Val, I. and Galichon, A. (2010). Quantile and probability curves
without crossing. *Econometrica* 78, 1093-1125.
Koenker, R. and Xiao, Z. (2002). Inference on the quantile regression process. *Econometrica*
70, 1583-1612.
Montiel Olea, J. L. and Plagborg-Moller, M. (2019). Simultaneous confidence bands: theory,
implementation, and an application to SVARs. *Journal of Applied Econometrics* 34, 1-17 (the
sup-t band).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from statcore.compat import renamed_keywords
from statcore.results.plotting import term_axes
from statcore.validation import check_alpha, check_option, check_positive_int, check_random_state

BAND_KINDS = ("uniform", "pointwise")
BAND_SCOPES = ("term", "all")
#: default number of Gaussian draws for a critical value: its Monte Carlo error is about
#: sqrt(a (1 - a) / n) / f(c) in the level a = alpha, i.e. ~0.01 in c at alpha = 0.05
DEFAULT_DRAWS = 20_000


def rearrange(values, levels=None, axis: int = -1):
    """Increasing rearrangement over the quantile levels (Chernozhukov et al. 2010).

    On a grid of levels the rearrangement (with respect to the uniform measure on the grid
    points) is the sorted curve: the ``j``-th smallest level gets the ``j``-th smallest value.
    It is monotone by construction, is the identity on monotone curves, and for every
    non-decreasing ``f`` and ``p >= 1``, ``||sort(v) - f||_p <= ||v - f||_p`` (the discrete
    rearrangement inequality, Proposition 1 of the paper on a grid).

    Parameters
    ----------
    values : array_like or DataFrame
        Curves over the levels along ``axis``; a DataFrame has the levels as its columns.
    levels : sequence of float, optional
        The levels of ``values`` along ``axis`` in their order (default: the DataFrame's
        columns, or ascending order for arrays). Unsorted levels are handled: the output keeps
        the input's order, monotone along the ascending levels.
    axis : int
        The axis of levels (arrays only; a DataFrame's columns).

    Returns
    -------
    ndarray or DataFrame
        Same shape (and labels) as ``values``; the input is not modified.

    Notes
    -----
    The paper rearranges a curve over a continuum of levels; on a grid with unequal spacing this
    is the rearrangement with respect to the counting measure on the grid, which keeps the
    three properties above on the grid itself.
    """
    if isinstance(values, pd.DataFrame):
        grid = values.columns.to_numpy(dtype=float) if levels is None else levels
        out = rearrange(values.to_numpy(dtype=float), grid, axis=1)
        return pd.DataFrame(out, index=values.index, columns=values.columns)
    arr = np.asarray(values, dtype=float)
    if levels is None:
        return np.sort(arr, axis=axis)
    levels = np.asarray(levels, dtype=float)
    if levels.ndim != 1 or len(levels) != arr.shape[axis]:
        raise ValueError(
            f"`levels` must give one level per entry along axis {axis} ({arr.shape[axis]}); "
            f"got {levels.shape}"
        )
    order = np.argsort(levels, kind="stable")
    moved = np.moveaxis(arr, axis, -1)
    out = np.empty_like(moved)
    out[..., order] = np.sort(moved[..., order], axis=-1)
    return np.moveaxis(out, -1, axis)


def sup_critical_value(cov, alpha: float, *, n_draws: int = DEFAULT_DRAWS, random_state=0):
    """``1 - alpha`` quantile of ``max_i |Z_i| / sd_i`` for ``Z ~ N(0, cov)``.

    Entries with zero variance are left out (they add nothing to the supremum). With one entry
    the normal quantile is returned exactly; with perfectly correlated entries the simulated
    value tends to it.
    """
    cov = np.asarray(cov, dtype=float)
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    keep = sd > 0
    if keep.sum() <= 1:
        return float(stats.norm.ppf(1 - alpha / 2))
    corr = cov[np.ix_(keep, keep)] / np.outer(sd[keep], sd[keep])
    # eigh rather than Cholesky: the covariance of a process over a fine grid is often
    # singular up to rounding
    eigval, eigvec = np.linalg.eigh((corr + corr.T) / 2)
    root = eigvec * np.sqrt(np.clip(eigval, 0.0, None))
    rng = check_random_state(random_state)
    draws = rng.standard_normal((n_draws, len(eigval))) @ root.T
    return float(np.quantile(np.abs(draws).max(axis=1), 1 - alpha))


def _bootstrap_critical_value(deviations, se, alpha):
    """Sup-t bootstrap: the ``1 - alpha`` quantile of ``max_i |theta*_i - theta_i| / se_i``."""
    keep = se > 0
    return float(np.quantile(np.abs(deviations[:, keep] / se[keep]).max(axis=1), 1 - alpha))


def flat_positions(results, levels, names) -> np.ndarray:
    """Positions of the ``(level, term)`` pairs (level-major) in the stacked estimates.

    Arithmetic on the two plain indexes rather than MultiIndex look-ups, which dominate the
    cost of a band otherwise; ``levels`` is ignored for a single-level fit.
    """
    terms = results.params.index
    rows = terms.get_indexer(names)
    if not results.is_multilevel:
        return rows
    cols = results.params.columns.get_indexer(levels)
    return (cols[:, None] * len(terms) + rows[None, :]).ravel()


def _require_joint_covariance(results, what: str):
    results._require_inference(what)
    if results.inference != "bootstrap" and results.vcov is None:
        raise ValueError(
            f"`{what}` needs the covariance across levels; this fit has intervals only "
            "(cov_type='rank'): refit with cov_type='nid', 'kernel', 'iid' or 'bootstrap'"
        )


def _check_band_options(alpha, kind, scope, n_draws):
    alpha = check_alpha(alpha)
    check_option(kind, name="kind", options=BAND_KINDS)
    check_option(scope, name="scope", options=BAND_SCOPES)
    n_draws = check_positive_int(n_draws, name="n_draws", minimum=100)
    return alpha, n_draws


def prediction_band_options(alpha, kind, rearrange, n_draws, random_state) -> dict:
    """The checked options of a band over predicted curves, as keywords of
    :func:`process_band`."""
    alpha, n_draws = _check_band_options(alpha, kind, "term", n_draws)
    return {
        "alpha": alpha,
        "kind": kind,
        "rearrange": bool(rearrange),
        "n_draws": n_draws,
        "random_state": random_state,
    }


@renamed_keywords(rearrange_band="rearrange")
def conf_band(
    results,
    alpha: float = 0.05,
    *,
    kind: str = "uniform",
    terms=None,
    scope: str = "term",
    rearrange: bool = False,
    n_draws: int = DEFAULT_DRAWS,
    random_state=0,
) -> pd.DataFrame:
    """Pointwise or uniform-in-level confidence bands for the coefficient curves.

    Also the ``conf_band`` method of multi-level quantile regression results. The uniform
    critical value is the ``1 - alpha`` quantile of the sup over levels of the standardised
    Gaussian process whose covariance across levels is ``vcov`` (``n_draws`` draws seeded by
    ``random_state``), or of the sup-t statistic over bootstrap replicates for a bootstrap fit.

    Parameters
    ----------
    results : QuantRegResults or FederatedQuantRegResults
        A multi-level fit with a joint covariance across levels (or bootstrap replicates).
    alpha : float
        ``1 - alpha`` is the band's (pointwise or uniform) coverage.
    kind : {"uniform", "pointwise"}
        ``"uniform"``: the band covers the whole curve over the levels with probability
        ``1 - alpha``; ``"pointwise"``: each level's Wald interval.
    terms : sequence of str, optional
        The terms (default: all).
    scope : {"term", "all"}
        ``"term"``: each term's band is uniform over the levels; ``"all"``: one critical value
        for all the chosen terms and levels together.
    rearrange : bool
        Rearrange the estimate and both ends of the band over the levels (see
        :func:`rearrange`); only meaningful for curves known to be monotone in the level.
        Formerly ``rearrange_band=`` (still accepted, with a ``FutureWarning``).
    n_draws : int
        Gaussian draws for the uniform critical value.
    random_state : None, int or Generator
        Seeds those draws (fixed by default, so a band is reproducible).

    Returns
    -------
    DataFrame
        Columns ``term, level, estimate, std_error, conf_low, conf_high, critical_value``.

    References
    ----------
    Chernozhukov, V., Fernandez-Val, I. and Galichon, A. (2010). *Econometrica* 78,
    1093-1125 (``rearrange=True``).
    """
    alpha, n_draws = _check_band_options(alpha, kind, scope, n_draws)
    if not results.is_multilevel:
        raise ValueError("`conf_band` needs a fit at several quantile levels (`q` a sequence)")
    _require_joint_covariance(results, "conf_band")
    levels = list(results.params.columns)
    names = list(results.params.index) if terms is None else [str(t) for t in terms]
    unknown = [t for t in names if t not in results.params.index]
    if unknown:
        raise ValueError(f"`terms` {unknown} are not terms of the fit {list(results.params.index)}")
    flat = results._flat
    est_all, se_all = flat.to_numpy(), np.asarray(results._flat_bse)
    bootstrap = results.inference == "bootstrap"
    if bootstrap:
        deviations = results.resampling.replicates.to_numpy() - est_all
    else:
        cov = results.vcov.to_numpy()
    where = {t: flat_positions(results, levels, [t]) for t in names}

    def critical(pos):
        if kind == "pointwise":
            # the fit's own reference (normal or t), so that the band is ``conf_int``
            return float(results._reference.ppf(1 - alpha / 2))
        if bootstrap:
            return _bootstrap_critical_value(deviations[:, pos], se_all[pos], alpha)
        block = cov[np.ix_(pos, pos)]
        return sup_critical_value(block, alpha, n_draws=n_draws, random_state=random_state)

    if scope == "all":
        everything = critical(np.concatenate([where[t] for t in names]))
    rows = []
    for term in names:
        pos = where[term]
        c = everything if scope == "all" else critical(pos)
        est, se = est_all[pos], se_all[pos]
        low, high = est - c * se, est + c * se
        if rearrange:
            est, low, high = (_monotone(v, levels) for v in (est, low, high))
        rows.append(
            pd.DataFrame(
                {
                    "term": term,
                    "level": levels,
                    "estimate": est,
                    "std_error": se,
                    "conf_low": low,
                    "conf_high": high,
                    "critical_value": c,
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


@renamed_keywords(rearrange_band="rearrange")
def process_band(
    coef,
    cov,
    exog,
    levels,
    alpha,
    *,
    kind,
    rearrange,
    n_draws,
    random_state,
    index=None,
    reference=stats.norm,
):
    """Bands for the predicted curves ``x' theta(t)`` of the rows of ``exog``.

    ``coef`` is (L, q), ``cov`` the (L q, L q) covariance of the stacked (level-major)
    coefficients and ``exog`` (m, q). Each row gets its own critical value (uniform over the
    levels for that row), from common Gaussian draws for all rows; the pointwise one is
    ``reference``'s quantile.
    """
    L, q = coef.shape
    exog = np.asarray(exog, dtype=float)
    fitted = exog @ coef.T
    # the covariance across levels of every row at once: x' C(a, b) x for all (a, b)
    blocks = cov.reshape(L, q, L, q)
    pred_cov = np.einsum("mi,aibj,mj->mab", exog, blocks, exog)
    se = np.sqrt(np.clip(np.einsum("maa->ma", pred_cov), 0.0, None))
    if kind == "pointwise":
        crit = np.full(len(exog), reference.ppf(1 - alpha / 2))
    else:
        eigval, eigvec = np.linalg.eigh((cov + cov.T) / 2)
        root = eigvec * np.sqrt(np.clip(eigval, 0.0, None))
        rng = check_random_state(random_state)
        draws = (rng.standard_normal((n_draws, L * q)) @ root.T).reshape(n_draws, L, q)
        crit = np.empty(len(exog))
        safe = np.where(se > 0, se, np.inf)
        for start in range(0, len(exog), 64):
            part = slice(start, start + 64)
            z = np.einsum("dlq,mq->dml", draws, exog[part]) / safe[part]
            crit[part] = np.quantile(np.abs(z).max(axis=2), 1 - alpha, axis=0)
    low, high = fitted - crit[:, None] * se, fitted + crit[:, None] * se
    if rearrange:
        fitted, low, high = (_monotone(v, levels, axis=1) for v in (fitted, low, high))
    index = pd.RangeIndex(len(exog)) if index is None else index
    frame = pd.DataFrame(
        {
            "row": np.repeat(np.asarray(index), L),
            "level": np.tile(np.asarray(levels, dtype=float), len(exog)),
            "estimate": fitted.ravel(),
            "std_error": se.ravel(),
            "conf_low": low.ravel(),
            "conf_high": high.ravel(),
            "critical_value": np.repeat(crit, L),
        }
    )
    return frame


def _stacked(results, names):
    """Coefficients (L, q) of ``names`` and their joint covariance across levels."""
    levels = list(results.params.columns)
    coef = results.params.loc[names, levels].to_numpy(dtype=float).T
    pos = flat_positions(results, levels, names)
    vcov = results.resampling.vcov if results.inference == "bootstrap" else results.vcov
    return coef, vcov.to_numpy()[np.ix_(pos, pos)]


@renamed_keywords(rearrange_band="rearrange")
def predict_band(
    results,
    newdata,
    alpha: float = 0.05,
    *,
    kind: str = "uniform",
    rearrange: bool = False,
    n_draws: int = DEFAULT_DRAWS,
    random_state=0,
) -> pd.DataFrame:
    """Bands for the conditional quantile curves ``Q(t | x)`` of a ``QuantRegResults``.

    ``newdata`` goes through the fit's design (formula or array columns). Returns one row per
    (new row, level): ``row, level, estimate, std_error, conf_low, conf_high,
    critical_value``; with ``kind="uniform"`` each new row's curve is covered over all levels
    with probability ``1 - alpha``. ``rearrange=True`` (formerly ``rearrange_band=``) makes the
    estimate and both ends monotone in the level (Chernozhukov et al. 2010, Proposition 5: the
    rearranged band covers a monotone curve whenever the original band does). Also the
    ``predict_band`` method of multi-level quantile regression results.
    """
    band = prediction_band_options(alpha, kind, rearrange, n_draws, random_state)
    if not results.is_multilevel:
        raise ValueError("`predict_band` needs a fit at several quantile levels (`q` a sequence)")
    _require_joint_covariance(results, "predict_band")
    spec = results._require_spec()
    exog, index = spec.exog(newdata)
    coef, cov = _stacked(results, list(spec.x_names))
    levels = list(results.params.columns)
    return process_band(coef, cov, exog, levels, index=index, reference=results._reference, **band)


@renamed_keywords(rearrange_band="rearrange")
def plot_band(results, ax=None, alpha=0.05, terms=None, rearrange=False, **kwargs):
    """One panel per term: estimate over the levels, uniform band (light) and pointwise band
    (dark). ``ax`` may be a sequence of Axes (one per term). Returns the Axes."""
    names = list(results.params.index) if terms is None else list(terms)
    uniform, pointwise = (
        conf_band(results, alpha, kind=kind, terms=names, rearrange=rearrange)
        for kind in BAND_KINDS
    )
    axes = term_axes(len(names), ax)
    pct = f"{100 * (1 - alpha):g}%"
    for panel, term in zip(axes, names, strict=True):
        u = uniform[uniform["term"] == term]
        pw = pointwise[pointwise["term"] == term]
        lv = u["level"].to_numpy(dtype=float)
        panel.fill_between(lv, u["conf_low"], u["conf_high"], color="0.85", label=f"{pct} uniform")
        panel.fill_between(
            lv, pw["conf_low"], pw["conf_high"], color="0.65", label=f"{pct} pointwise"
        )
        panel.plot(lv, u["estimate"], "o-", color="k", ms=3, **kwargs)
        panel.set_title(str(term))
        panel.set_xlabel("quantile level")
    axes[0].legend(frameon=False, fontsize="small")
    return axes if len(axes) > 1 else axes[0]


class QuantileProcessMixin:
    """Bands over the levels and rearranged predictions for multi-level quantile fits."""

    conf_band = conf_band
    predict_band = predict_band

    def predict(self, newdata=None, which: str = "mean", *, rearrange: bool = False):
        """Fitted conditional quantiles (see ``EstimationResults.predict``); ``rearrange=True``
        sorts each row over the levels, so that the quantile curves never cross (Chernozhukov,
        Fernandez-Val and Galichon 2010)."""
        fitted = super().predict(newdata, which=which)
        if rearrange and self.is_multilevel:
            return _monotone(fitted)
        return fitted


#: the module function, under a name the ``rearrange`` keywords do not hide
_monotone = rearrange
