"""``anova``: Wald tests between quantile regression fits, as R quantreg's ``anova.rq``."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
from scipy import stats

from statcore.quantreg._inference import refit_options
from statcore.quantreg.results import QuantRegResults
from statcore.results import TestResult
from statcore.results._format import format_number
from statcore.validation import check_bool, check_levels, check_option

ANOVA_COV_TYPES = ("nid", "kernel", "iid", "bootstrap")


def anova(res, *others, joint: bool = True, cov_type: str | None = None):
    """Wald tests between quantile regression fits, as R's ``anova.rq`` (``test="Wald"``).

    Equality of slopes across quantile levels: one multi-level fit, ``anova(res)``, or fits of
    the same model at distinct single levels, ``anova(res_a, res_b, ...)`` (refitted together,
    so that the covariance across levels is there). With ``m`` levels and ``k`` slopes (every
    coefficient but the intercept) the joint statistic is
    ``T = (D b)' (D V D')^-1 (D b) / ndf`` with ``D`` the differences of each slope between
    consecutive levels, ``ndf = k (m - 1)`` and R's denominator degrees of freedom
    ``ddf = n m - k (m - 1)``; ``joint=False`` tests each slope alone (``ndf = m - 1``,
    ``ddf = n m - (m - 1)``). Against F(ndf, ddf).

    Nested models at one level, ``anova(res_full, res_reduced)``: the Wald test that the
    coefficients the reduced model leaves out are zero, from the full fit's covariance,
    ``T = b_S' V_SS^-1 b_S / ndf`` against F(ndf, n - p).

    Parameters
    ----------
    res, *others : QuantRegResults
        The fits (on the same data, with the same weights).
    joint : bool
        One joint test of all slopes (default), or one test per slope.
    cov_type : {"nid", "kernel", "iid", "bootstrap"}, optional
        The covariance the tests use. None: the fits' own when they have one, else (a
        ``"rank"`` fit, which has none) ``"nid"``, R's default ``se="nid"``. Another choice
        refits with it (the fit's other options kept).

    Returns
    -------
    TestResult or DataFrame
        The joint test; with ``joint=False`` a frame indexed by slope with columns ``ndf``,
        ``ddf``, ``statistic`` and ``p_value`` (R's table).

    References
    ----------
    Koenker, R. and Bassett, G. (1982). Tests of linear hypotheses and l1 estimation.
    *Econometrica* 50, 1577-1584.
    Koenker, R. (2005). *Quantile Regression*, section 3.3. Cambridge University Press.

    Examples
    --------
    >>> import statcore as sc
    >>> from statcore.quantreg import QuantReg, anova
    >>> engel = sc.datasets.load("engel")
    >>> fits = QuantReg.from_formula("foodexp ~ income", engel, q=[0.25, 0.5, 0.75]).fit()
    >>> round(anova(fits).statistic, 4)
    15.5567
    """
    fits = (res, *others)
    for k, fit in enumerate(fits):
        if not isinstance(fit, QuantRegResults):
            raise TypeError(
                f"anova() takes QuantRegResults; argument {k + 1} is {type(fit).__name__}"
            )
        if fit.model is None:
            raise ValueError(
                f"anova(): argument {k + 1} was stripped of its model; anova refits, so pass "
                "the results as fit() returned them"
            )
    check_bool(joint, name="joint")
    if cov_type is not None:
        check_option(cov_type, name="cov_type", options=ANOVA_COV_TYPES)
    levels = [q for fit in fits for q in fit.q]
    if len(fits) > 1 and len(set(levels)) == 1:
        return _nested(fits, cov_type)
    if len(fits) > 1:
        if any(fit.is_multilevel for fit in fits) or len(set(levels)) != len(levels):
            raise ValueError(
                "anova() across levels takes one multi-level fit, or single-level fits at "
                f"distinct levels; got levels {levels}"
            )
        _check_same_data(fits)
        fit = _refit(fits[0], levels, cov_type)
    else:
        if not res.is_multilevel:
            raise ValueError(
                "anova() of one fit needs several levels (QuantReg(..., q=[...])); for nested "
                "models at one level pass both fits: anova(res_full, res_reduced)"
            )
        fit = _with_covariance(res, cov_type)
    return _equal_slopes(fit, joint)


def _with_covariance(fit, cov_type):
    """``fit`` itself when it has the asked covariance (or any, when none is asked), else a
    refit with it (``"nid"`` for a rank fit)."""
    own = fit.fit_options.get("cov_type")
    if cov_type is None:
        if fit.vcov is not None:
            return fit
        cov_type = "nid"
    if own == cov_type and fit.vcov is not None:
        return fit
    return fit.model.fit(**refit_options(fit.fit_options, cov_type))


def _refit(fit, levels, cov_type):
    """The model of ``fit`` at all ``levels`` at once, fitted with ``fit``'s options."""
    model = copy.copy(fit.model)
    model.q, model._multilevel = check_levels(levels)
    own = fit.fit_options.get("cov_type")
    if cov_type is None:
        cov_type = own if own not in (None, "rank") and fit.vcov is not None else "nid"
    return model.fit(**refit_options(fit.fit_options, cov_type))


def _check_same_data(fits) -> None:
    first = fits[0].model
    for k, fit in enumerate(fits[1:], start=2):
        model = fit.model
        same = (
            model.exog_names == first.exog_names
            and np.array_equal(model._X, first._X)
            and np.array_equal(model._y, first._y)
        )
        if not same:
            raise ValueError(
                f"anova(): fit {k} is not the same model on the same data (and weights) as fit "
                "1; fits at several levels must differ only in their level"
            )


def _equal_slopes(fit, joint):
    spec = fit.design_spec
    names = list(fit.params.index)
    intercept = spec.intercept_term
    if intercept is None or intercept not in names:
        raise ValueError(
            "anova() across levels tests equality of slopes, which needs an intercept in the "
            "model (R refuses the same)"
        )
    slopes = [j for j, name in enumerate(names) if name != intercept]
    p, m = len(names), len(fit.q)
    n = fit.nobs
    b = fit.params.to_numpy().T.ravel()
    V = fit.vcov.to_numpy()
    differences = np.diff(np.eye(m), axis=0)
    levels = ", ".join(f"{q:g}" for q in fit.q)

    def wald(rows):
        D = np.kron(differences, np.eye(p)[rows])
        Db = D @ b
        return float(Db @ np.linalg.solve(D @ V @ D.T, Db)) / D.shape[0]

    if joint:
        ndf = len(slopes) * (m - 1)
        return _f_test(
            "Wald test of equal slopes across quantile levels (R's anova.rq)",
            wald(slopes),
            (ndf, n * m - ndf),
            fit,
            f"every slope is the same at q in {{{levels}}}",
        )
    ndf, ddf = m - 1, n * m - (m - 1)
    rows = []
    for j in slopes:
        statistic = wald([j])
        rows.append(
            {
                "ndf": ndf,
                "ddf": ddf,
                "statistic": statistic,
                "p_value": float(stats.f.sf(statistic, ndf, ddf)),
            }
        )
    return pd.DataFrame(rows, index=pd.Index([names[j] for j in slopes], name="term"))


def _nested(fits, cov_type):
    if len(fits) != 2:
        raise ValueError(
            f"anova() of nested models at one level takes two fits (full, reduced); got {len(fits)}"
        )
    full, reduced = sorted(fits, key=lambda fit: -len(fit.params))
    if full.is_multilevel:
        raise ValueError("anova() of nested models takes single-level fits")
    if not np.array_equal(full.model._y, reduced.model._y):
        raise ValueError("anova(): the nested models must share the response and the weights")
    names, kept = list(full.params.index), list(reduced.params.index)
    if not set(kept) < set(names):
        raise ValueError(
            f"anova(): the models are not nested: {kept} is not a proper subset of {names}"
        )
    full = _with_covariance(full, cov_type)
    tested = [j for j, name in enumerate(names) if name not in kept]
    b = full.params.to_numpy()[tested]
    V = full.vcov.to_numpy()[np.ix_(tested, tested)]
    ndf, ddf = len(tested), full.nobs - len(names)
    return _f_test(
        "Wald test of nested quantile regression models (R's anova.rq)",
        float(b @ np.linalg.solve(V, b)) / ndf,
        (ndf, ddf),
        full,
        f"{', '.join(names[j] for j in tested)} = 0 at q = {full.q[0]:g}",
    )


def _f_test(method, statistic, df, fit, hypothesis) -> TestResult:
    reference = stats.f(*df)
    return TestResult(
        method=method,
        nobs=fit.nobs,
        statistic=statistic,
        pvalue=float(reference.sf(statistic)),
        alternative="greater",
        df=df,
        distribution=f"F({df[0]}, {format_number(df[1])})",
        null_hypothesis=hypothesis,
        reference=reference,
        notes=(f"Covariance: {fit.cov_type}.",),
    )
