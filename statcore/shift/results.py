"""``DataShiftsResults`` (the two shifts) and ``ShiftBoundResults`` (the target-error bound)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from statcore.ot.costs import plan_gradient_directions
from statcore.results import EstimationResults, ResamplingResult
from statcore.results.plotting import get_ax
from statcore.validation import as_float_array, check_option, check_positive, describe

BOUND_TERMS = ["source_error", "covariate_term", "concept_term", "bound"]


def _plot_shifts(results, ax=None, alpha=0.05, **kwargs):
    """The covariate and concept shifts as bars, with bootstrap intervals when resampled."""
    ax = get_ax(ax)
    frame = results.tidy(alpha=alpha)
    positions = np.arange(len(frame))
    ax.bar(positions, frame["estimate"], color=["tab:blue", "tab:orange"], **kwargs)
    if results.resampling is not None:
        err = [frame["estimate"] - frame["conf_low"], frame["conf_high"] - frame["estimate"]]
        ax.errorbar(positions, frame["estimate"], yerr=err, fmt="none", color="k", capsize=4)
    ax.set_xticks(positions, ["covariate shift", "concept shift"])
    ax.set_ylabel(f"shift ({results.x_metric} / {results.y_metric} units)")
    ax.set_title(
        "shift decomposition"
        + (f" ({100 * (1 - alpha):g}% intervals)" if results.resampling is not None else "")
    )
    return ax


def _plot_bound(results, ax=None, **kwargs):
    """The bound as one stacked bar of its three terms, beside the observed target error."""
    ax = get_ax(ax)
    left = 0.0
    labels = {
        "source_error": "source error",
        "covariate_term": r"$L_h L'_\ell S_{\mathrm{cov}}$",
        "concept_term": r"$L_\ell S_{\mathrm{cpt}}$",
    }
    for term, label in labels.items():
        value = float(results.params[term])
        ax.barh([0], [value], left=left, label=label, **kwargs)
        left += value
    if results.target_error is not None:
        ax.axvline(results.target_error, color="k", ls="--", label="observed target error")
    ax.set_yticks([])
    ax.set_xlabel("target error")
    ax.set_title("target-error bound")
    ax.legend(frameon=False, loc="lower right")
    return ax


def _lipschitz_pair(lipschitz_loss) -> tuple[float, float]:
    if isinstance(lipschitz_loss, numbers.Real):
        value = check_positive(lipschitz_loss, name="lipschitz_loss", strict=False)
        return value, value
    try:
        label, prediction = lipschitz_loss
    except (TypeError, ValueError):
        raise TypeError(
            "`lipschitz_loss` must be a number or a pair (label constant, prediction constant); "
            f"got {describe(lipschitz_loss)}"
        ) from None
    return (
        check_positive(label, name="lipschitz_loss[0]", strict=False),
        check_positive(prediction, name="lipschitz_loss[1]", strict=False),
    )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class DataShiftsResults(EstimationResults):
    """Covariate shift and gamma*-concept shift, with bootstrap intervals when resampled.

    ``params`` holds ``covariate_shift`` and ``concept_shift`` (``null_value=None``: no tests);
    ``conf_int`` gives Bayesian-bootstrap percentile intervals when ``n_resamples > 0``.

    Parameters
    ----------
    components : DataFrame
        Every OT term behind the estimates (value, marginal error, iterations, convergence).
    epsilon : float
        The entropic regularisation used, absolute (in cost units).
    relative_epsilon : float
        ``epsilon / cost_scale``.
    cost_scale : float
        The median within-domain cost that ``epsilon="auto"`` is relative to.
    tol : float
        The L1 marginal tolerance every OT problem was solved to.
    potentials : (ndarray, ndarray)
        Dual potentials of the full source-target problem (the coupling gamma*).
    x_metric, y_metric : str
        The metrics' names.
    n_source, n_target : int
        Sample sizes (all points are used).
    marginal_error : float
        Largest L1 marginal error over the OT problems.

    References
    ----------
    Chen, H. and Xia, L. C. (2025). General and estimable learning bound unifying covariate and
    concept shifts. arXiv:2506.12829.
    """

    components: pd.DataFrame
    epsilon: float
    relative_epsilon: float
    cost_scale: float
    tol: float
    potentials: tuple
    x_metric: str
    y_metric: str
    n_source: int
    n_target: int
    marginal_error: float

    _plots: ClassVar[dict] = {"shifts": _plot_shifts}
    _table_name: ClassVar[str] = "shifts"

    @property
    def covariate_shift(self) -> float:
        """Debiased entropic estimate of the covariate W1 distance."""
        return float(self.params["covariate_shift"])

    @property
    def concept_shift(self) -> float:
        """gamma*-concept shift: label distance averaged over the entropic coupling."""
        return float(self.params["concept_shift"])

    def bound(
        self,
        source_error,
        lipschitz_h,
        lipschitz_loss=1.0,
        *,
        target_error=None,
        gradients=None,
    ):
        """The paper's bound ``eps_B(h) <= eps_A(h) + L_h L'_l S_cov + L_l S_cpt``.

        Parameters
        ----------
        source_error : float
            The hypothesis' error on the source domain, ``E_A l(Y, h(X))`` (>= 0).
        lipschitz_h : float or "gradients"
            Lipschitz constant of the hypothesis ``h`` with respect to ``x_metric`` (>= 0), or
            ``"gradients"``: the factor ``L_h L'_l`` of the covariate term estimated from the
            per-sample gradients of the loss with respect to x, as the authors' package does
            (``grad1``, ``grad2``). With ``u_ij`` the unit direction from target point j to
            source point i and ``dir_ij = max(|grad_i . u_ij|, |grad'_j . u_ij|)``, the factor
            is ``max_ij dir_ij`` for a metric (p = 1) and ``(sum_ij P_ij dir_ij^2)^(1/2)`` over
            the fitted coupling for ``x_metric="sqeuclidean"`` (p = 2). It already holds the
            loss's prediction constant, so ``lipschitz_loss`` then enters only through
            ``L_l``. Only Euclidean covariate costs have these directions.
        lipschitz_loss : float or (float, float)
            Lipschitz constants of the loss in the label (``L_l``) and in the prediction
            (``L'_l``); one number for both (each >= 0).
        target_error : float, optional
            An observed target error (>= 0), shown beside the bound in the plot.
        gradients : callable or (array_like or None, array_like or None), optional
            With ``lipschitz_h="gradients"``: ``gradients(x)`` returning the ``(len(x), d)``
            loss gradients at covariate points (called on each sample), or the gradients at
            the source and at the target points (one side may be None).

        Notes
        -----
        The gradient factor is an empirical maximum over the sample pairs, not a certified
        Lipschitz constant (the authors' ``covariate_factor``; DataShifts/datashifts
        ``core.py``).

        Returns
        -------
        ShiftBoundResults
            ``params``: ``source_error``, ``covariate_term``, ``concept_term``, ``bound``, with
            bootstrap intervals of the shift terms carried over when this fit has them.
        """
        # errors are expected losses, never negative
        source_error = check_positive(source_error, name="source_error", strict=False)
        label, prediction = _lipschitz_pair(lipschitz_loss)
        if isinstance(lipschitz_h, str):
            check_option(lipschitz_h, name="lipschitz_h", options=("gradients",))
            lipschitz_h, prediction = self._gradient_factor(gradients), 1.0
            how = f"L_h L'_l = {lipschitz_h:g} (estimated from loss gradients)"
        else:
            if gradients is not None:
                raise ValueError("`gradients` goes with lipschitz_h='gradients'")
            lipschitz_h = check_positive(lipschitz_h, name="lipschitz_h", strict=False)
            how = f"L_h = {lipschitz_h:g}, L'_l = {prediction:g} (prediction)"
        if target_error is not None:
            target_error = check_positive(target_error, name="target_error", strict=False)

        def combine(cov, cpt):
            cov_term = lipschitz_h * prediction * cov
            cpt_term = label * cpt
            return np.stack(
                np.broadcast_arrays(
                    source_error, cov_term, cpt_term, source_error + cov_term + cpt_term
                ),
                axis=-1,
            )

        params = pd.Series(combine(self.covariate_shift, self.concept_shift), index=BOUND_TERMS)
        resampling = None
        if self.resampling is not None:
            reps = self.resampling.replicates
            resampling = ResamplingResult(
                method=self.resampling.method,
                estimate=params,
                replicates=pd.DataFrame(
                    combine(reps["covariate_shift"].to_numpy(), reps["concept_shift"].to_numpy()),
                    columns=BOUND_TERMS,
                ),
                scheme=self.resampling.scheme,
            )
        return ShiftBoundResults(
            method="DataShifts target-error bound",
            nobs=self.nobs,
            params=params,
            inference="bootstrap" if resampling is not None else "normal",
            cov_type=self.cov_type,
            resampling=resampling,
            null_value=None,
            iterations=self.iterations,
            notes=(f"{how}, L_l = {label:g} (label).",),
            target_error=target_error,
        )

    def _gradient_factor(self, gradients) -> float:
        model = self.model
        if model.x_metric not in ("euclidean", "sqeuclidean"):
            raise ValueError(
                "lipschitz_h='gradients' needs Euclidean directions: x_metric='euclidean' or "
                f"'sqeuclidean'; this fit used x_metric={self.x_metric!r}"
            )
        if gradients is None:
            raise ValueError("lipschitz_h='gradients' needs `gradients` (a callable or a pair)")
        sides = []
        for x, name in ((model.x_source, "source"), (model.x_target, "target")):
            if callable(gradients):
                value = gradients(x.copy())
            else:
                try:
                    source, target = gradients
                except (TypeError, ValueError):
                    raise TypeError(
                        "`gradients` must be a callable or a pair (source, target) of arrays; "
                        f"got {describe(gradients)}"
                    ) from None
                value = source if name == "source" else target
            if value is None:
                sides.append(None)
                continue
            value = as_float_array(value, name=f"gradients ({name})", ndim=(1, 2))
            value = value[:, None] if value.ndim == 1 else value
            if value.shape != x.shape:
                raise ValueError(
                    f"`gradients` at the {name} points must have shape {x.shape}; got {value.shape}"
                )
            sides.append(np.ascontiguousarray(value))
        if sides[0] is None and sides[1] is None:
            raise ValueError("`gradients` gives no gradients on either side")
        gx = np.zeros_like(model.x_source) if sides[0] is None else sides[0]
        gy = np.zeros_like(model.x_target) if sides[1] is None else sides[1]
        f, g = self.potentials
        with np.errstate(divide="ignore"):
            fa = f + self.epsilon * np.log(model.weights_source)
            gb = g + self.epsilon * np.log(model.weights_target)
        out = plan_gradient_directions(
            model.x_source, model.x_target, gx, gy, fa, gb, self.epsilon, metric=model.x_metric
        )
        if model.x_metric == "euclidean":
            return float(out[:, 0].max())
        return float(np.sqrt(out[:, 1].sum() / out[:, 2].sum()))

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row["n_source"] = self.n_source
        row["n_target"] = self.n_target
        row["epsilon"] = self.epsilon
        row["relative_epsilon"] = self.relative_epsilon
        row["x_metric"] = self.x_metric
        row["y_metric"] = self.y_metric
        row["marginal_error"] = self.marginal_error
        return row

    def summary(self, alpha: float = 0.05):
        base = super().summary(alpha)
        tables = dict(base.tables)
        tables["ot terms"] = self.components
        return type(base)(title=base.title, info=base.info, tables=tables, notes=base.notes)


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class ShiftBoundResults(EstimationResults):
    """The target-error bound and its components (``null_value=None``).

    Parameters
    ----------
    target_error : float, optional
        An observed target error to compare the bound with.

    References
    ----------
    Chen, H. and Xia, L. C. (2025). General and estimable learning bound unifying covariate and
    concept shifts. arXiv:2506.12829.
    """

    target_error: float | None = None

    _plots: ClassVar[dict] = {"bound": _plot_bound}
    _table_name: ClassVar[str] = "bound"

    def __float__(self) -> float:
        return float(self.params["bound"])
