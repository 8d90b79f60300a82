"""``SelfDistilledRidgeResults``: teacher and student coefficients, xi, risk estimates, plots."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from statcore.results import EstimationResults
from statcore.results.plotting import get_ax, label_axes
from statcore.validation import as_float_array


def _risk_columns(curve: pd.DataFrame) -> tuple[str, str, str]:
    if np.isfinite(curve["teacher"]).any():
        return "teacher", "optimal_student", "excess risk (noise excluded)"
    return "teacher_mse", "optimal_student_mse", "prediction risk (noise included)"


def plot_risk(results, ax=None, **kwargs):
    """Estimated teacher risk and optimally mixed student risk over the penalty (log scale)."""
    ax = get_ax(ax)
    curve = results.risk_curve
    teacher, student, label = _risk_columns(curve)
    lam = curve.index.to_numpy()
    ax.plot(lam, curve[teacher], color="C0", label="teacher (ridge)", **kwargs)
    ax.plot(lam, curve[student], color="C3", label="student at xi_hat", **kwargs)
    fitted = np.atleast_1d(np.asarray(results.penalty, dtype=float))
    ax.plot(fitted, np.interp(fitted, lam, curve[teacher]), "o", color="C0", ms=4, label="fitted")
    ax.set_xscale("log")
    ax.set_xlabel("penalty (lambda)")
    ax.set_ylabel(f"estimated {label}")
    ax.set_title(f"{results.method}")
    ax.legend(frameon=False)
    return ax


def plot_xi(results, ax=None, **kwargs):
    """The one-shot ``xi_hat`` over the penalty, with the zero line (its sign flips at the
    teacher's optimum: positive when under-, negative when over-regularised)."""
    ax = get_ax(ax)
    curve = results.risk_curve
    ax.plot(curve.index, curve["xi_hat"], color="C2", **kwargs)
    ax.axhline(0.0, color="grey", lw=0.8, ls="--")
    ax.set_xscale("log")
    return label_axes(ax, "penalty (lambda)", "xi_hat", "One-shot optimal mixing weight")


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class SelfDistilledRidgeResults(EstimationResults):
    """Result of :meth:`SelfDistilledRidge.fit`.

    ``params`` are the student's coefficients by term (a DataFrame with one column per penalty
    for a path). There is no null hypothesis and no covariance: ``null_value=None``.

    Parameters
    ----------
    teacher_params : Series or DataFrame
        Ridge (teacher) coefficients, shaped like ``params``.
    distilled_params : Series or DataFrame
        The pure-distilled student (``xi = 1``), ``(Sigma_hat + lambda)^-1 Sigma_hat
        beta_lambda``.
    penalty : float or Series
        The ridge penalties.
    xi : float or Series
        Mixing weight used by the student.
    xi_hat : float or Series
        The one-shot estimate of the optimal mixing weight (NaN where the estimated risk
        curvature in ``xi`` is not positive).
    xi_method : str
        ``"cross_gcv"`` or ``"paper"``.
    risk_estimate : Series or DataFrame
        Estimated excess prediction risk of ``teacher`` and ``student`` (by penalty for a path).
    risk_curve : DataFrame
        By penalty: ``xi_hat``, ``xi``, excess risks ``teacher``, ``student``,
        ``optimal_student``, ``pure_distilled``, the same risks with noise (``*_mse``), and the
        quadratic's coefficients ``risk_slope`` and ``risk_curvature``: the estimated student
        prediction risk at any ``xi`` is ``teacher_mse + 2 xi risk_slope + xi^2
        risk_curvature`` (see :meth:`risk_surface`).
    noise_variance : float
        The noise variance subtracted to give excess risks (NaN when unknown).

    Vocabulary
    ----------
    One name per quantity across :mod:`statcore.ridge`: ``penalty`` is the ridge ``lambda``,
    ``xi`` the student's mixing weight (``xi_hat`` its one-shot estimate, ``xi_star`` its
    asymptotic optimum), ``noise_variance`` ``sigma^2`` (``sigma2``, its old spelling, warns
    ``FutureWarning``), ``gamma`` the aspect ratio ``p / n``, ``spectrum`` the covariance's
    eigenvalues and ``signal`` the coordinates of ``beta`` in its eigenbasis; ``teacher``,
    ``student``, ``optimal_student`` and ``pure_distilled`` name the same four risks
    everywhere.

    References
    ----------
    Dang, H., Patil, P. and Rinaldo, A. (2026). Optimal unconstrained self-distillation in ridge
    regression: strict improvements, precise asymptotics, and one-shot tuning. arXiv:2602.17565.
    """

    teacher_params: pd.Series | pd.DataFrame
    distilled_params: pd.Series | pd.DataFrame
    penalty: float | pd.Series
    xi: float | pd.Series
    xi_hat: float | pd.Series
    xi_method: str
    risk_estimate: pd.Series | pd.DataFrame
    risk_curve: pd.DataFrame
    noise_variance: float

    _plots: ClassVar[dict] = {"risk": plot_risk, "xi": plot_xi}

    def risk_surface(self, xi) -> pd.DataFrame:
        """Estimated excess risk of the student over ``risk_curve``'s penalties (rows) and the
        mixing weights ``xi`` (columns), from the quadratic in ``xi``: no refit."""
        weights = as_float_array(xi, name="xi", ndim=(0, 1)).reshape(-1)
        c = self.risk_curve
        values = (
            c["teacher_mse"].to_numpy()[:, None]
            + 2.0 * weights[None, :] * c["risk_slope"].to_numpy()[:, None]
            + weights[None, :] ** 2 * c["risk_curvature"].to_numpy()[:, None]
            - self.noise_variance
        )
        return pd.DataFrame(values, index=c.index, columns=pd.Index(weights, name="xi"))

    def oracle_risk(self, beta, test_covariance) -> pd.DataFrame:
        """Exact conditional risks given the true coefficients, for simulations.

        With ``e = beta_lambda - beta`` and ``delta = beta_pd - beta_lambda``, the student's
        risk is ``||e + xi delta||^2_Sigma0``, minimised at ``xi* = -<e, delta> / ||delta||^2``:
        the paper's optimal weight for any squared risk, in- or out-of-distribution.

        Parameters
        ----------
        beta : array_like of shape (p,)
            True coefficients of the penalised terms (the intercept excluded).
        test_covariance : array_like of shape (p, p)
            Covariance of the test features.

        Returns
        -------
        DataFrame
            By penalty: ``teacher``, ``student`` (at ``xi``), ``xi_star``, ``optimal_student``,
            ``pure_distilled`` (excess risks, noise excluded).
        """
        teacher = self._penalized_block(self.teacher_params)
        p = teacher.shape[0]
        beta = as_float_array(beta, name="beta", ndim=1)
        if len(beta) != p:
            raise ValueError(f"`beta` must have {p} entries (the penalised terms); got {len(beta)}")
        cov = as_float_array(test_covariance, name="test_covariance", ndim=2)
        if cov.shape != (p, p):
            raise ValueError(f"`test_covariance` must be {p} x {p}; got {cov.shape}")
        err = teacher - beta[:, None]
        delta = self._penalized_block(self.distilled_params) - teacher
        xi = np.atleast_1d(np.asarray(self.xi, dtype=float))
        risk = np.einsum("ik,ij,jk->k", err, cov, err)
        cross = np.einsum("ik,ij,jk->k", err, cov, delta)
        curv = np.einsum("ik,ij,jk->k", delta, cov, delta)
        return pd.DataFrame(
            {
                "teacher": risk,
                "student": risk + 2 * xi * cross + xi**2 * curv,
                "xi_star": -cross / curv,
                "optimal_student": risk - cross**2 / curv,
                "pure_distilled": risk + 2 * cross + curv,
            },
            index=pd.Index(np.atleast_1d(np.asarray(self.penalty, dtype=float)), name="penalty"),
        )

    def _penalized_block(self, params) -> np.ndarray:
        block = (
            params.drop(index=self.design_spec.intercept_term) if self._has_intercept else params
        )
        values = block.to_numpy(dtype=float)
        return values[:, None] if values.ndim == 1 else values

    @property
    def _has_intercept(self) -> bool:
        # the model's centring rule (an intercept column of ones is left unpenalised), not a
        # second reading of it: a user's constant of another value is penalised there
        return bool(getattr(self.model, "_has_intercept", False))

    def glance(self) -> pd.DataFrame:
        """The estimation facts plus ``penalty``, ``xi``, ``xi_hat`` and the estimated risks
        (for a single penalty; the path's are in ``risk_curve``)."""
        row = super().glance()
        if np.ndim(self.penalty) == 0:
            row["penalty"] = self.penalty
            row["xi"] = self.xi
            row["xi_hat"] = self.xi_hat
            row["teacher_risk"] = self.risk_estimate["teacher"]
            row["student_risk"] = self.risk_estimate["student"]
        else:
            row["n_penalties"] = len(self.penalty)
        row["xi_method"] = self.xi_method
        return row

    def _repr_lines(self) -> list[str]:
        if np.ndim(self.penalty) == 0:
            head = f"penalty={self.penalty:.4g}, xi={self.xi:.4g}, xi_hat={self.xi_hat:.4g}"
        else:
            head = (
                f"{len(self.penalty)} penalties from {self.penalty.min():.4g} to "
                f"{self.penalty.max():.4g}"
            )
        return [head, *super()._repr_lines()]
