"""``QuantizedCompressedSensing``: a sparse signal from quantized linear measurements, by ECM.

``y_i = Q(a_i' x + eps_i)``, ``i = 1..n``, with ``x`` in R^p sparse (``p > n`` allowed) and
symmetric NVMM errors (Gaussian, or Student t ``eps = sqrt(W) sigma Z``). The fit maximises
the L1-penalised exact log-likelihood of the cells

    ``ell(x, sigma, nu) - n lam ||x||_1 / sigma``,

with the penalty in units of the noise scale (Stadler, Buhlmann and van de Geer 2010), so that
``lam`` does not depend on the units of the data. ECM:

* E-step: per measurement ``delta = E[1/W | cell]``, ``b = E[X/W | cell]``,
  ``s = E[X^2/W | cell]`` (``delta = 1`` for the Gaussian).
* CM-step for x: with sigma fixed, the Q-function is a weighted lasso,
  ``(2n)^-1 sum delta (b/delta - a'x)^2 + lam sigma ||x||_1``; its smooth part has Lipschitz
  gradient with ``L = max(delta) ||A||_2^2 / n``, so monotone FISTA steps (Beck and Teboulle
  2009) with step ``1/L`` and soft-thresholding never raise it.
* CM-step for sigma in closed form: ``sigma^2 - lam ||x||_1 sigma - S/n = 0`` with
  ``S = sum(s - 2 b a'x + delta (a'x)^2)``; for the t an ECME step on ``nu``.

Each step is a generalized-EM step, so the penalised criterion never decreases. For the
Gaussian with fine cells the x-step at the fixed point is the lasso of scikit-learn's
``Lasso(alpha = lam * sigma)`` (objective ``(2n)^-1 ||y - A x||^2 + alpha ||x||_1``).
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy.sparse.linalg import svds

from statcore.base import Estimator
from statcore.compat import renamed_attribute, renamed_keywords, renamed_method
from statcore.progress import progress as progress_bar
from statcore.quantized import _ecm
from statcore.quantized._common import IdentifiabilityWarning, check_start
from statcore.quantized.mixing import MIXING_START
from statcore.quantized.quantizer import midpoint_impute
from statcore.quantized.results import QuantizedResults, plot_history
from statcore.quantized.structured import (
    STRUCTURED_FAMILIES,
    SVDS_MIN_DIM,
    check_scalar_quantizer,
    nu_step,
    structured_estep,
    structured_loglik,
)
from statcore.results.plotting import get_ax, label_axes
from statcore.results.summary import Summary
from statcore.validation import (
    as_float_array,
    check_option,
    check_positive,
    check_positive_int,
    check_probability,
    check_random_state,
    check_scalar,
    describe,
)

#: most monotone-FISTA steps for x per E-step
FISTA_STEPS = 200


# --- penalty ------------------------------------------------------------------------------------


def parse_penalty(penalty):
    """``(lam, grid)``: a fixed ``lam`` (grid None), or ``lam`` None and a grid (None: default).

    Accepted: a number ``lam >= 0``; ``("l1", lam)``; ``"bic"`` or ``("l1", "bic")`` (a default
    grid); ``("l1", array)`` (BIC over the given values).
    """
    value = penalty
    if isinstance(penalty, tuple):
        if len(penalty) != 2 or penalty[0] != "l1":
            raise ValueError(
                f"`penalty` as a tuple must be ('l1', lam), ('l1', 'bic') or ('l1', grid); got "
                f"{describe(penalty)}"
            )
        value = penalty[1]
    if isinstance(value, str):
        check_option(value, name="penalty", options=("bic",))
        return None, None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return check_scalar(value, name="penalty (lam)", low=0.0), None
    grid = as_float_array(value, name="penalty (lambda grid)", ndim=1)
    if grid.size == 0:
        raise ValueError("`penalty` grid is empty")
    if (grid < 0).any():
        raise ValueError(f"`penalty` grid values (lam) must be >= 0; got min {grid.min():g}")
    return None, np.sort(grid)[::-1]


def soft_threshold(v, k):
    return np.sign(v) * np.maximum(np.abs(v) - k, 0.0)


# --- results ------------------------------------------------------------------------------------


def plot_signal(results, ax=None, **kwargs):
    """Stem plot of the estimated coefficients."""
    ax = get_ax(ax)
    x = results.x
    idx = np.arange(len(x))
    ax.vlines(idx, 0, x, color="C0", lw=1)
    nz = x != 0
    ax.plot(idx[nz], x[nz], "o", color="C0", ms=4, **kwargs)
    ax.axhline(0, color="grey", lw=0.8)
    title = f"{int(nz.sum())} of {len(x)} nonzero (penalty = {results.penalty:.3g})"
    return label_axes(ax, "coordinate", "estimate", title)


def plot_path(results, ax=None, **kwargs):
    """BIC against the penalty over the grid, the chosen value marked."""
    if results.path is None:
        raise ValueError("this fit used a fixed penalty: there is no BIC path to plot")
    ax = get_ax(ax)
    path = results.path
    ax.plot(path["penalty"], path["bic"], marker=".", **kwargs)
    ax.axvline(results.penalty, color="grey", ls="--", lw=0.8)
    ax.set_xscale("log")
    return label_axes(ax, "penalty", "BIC", "penalty chosen by BIC")


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class QuantizedCompressedSensingResults(QuantizedResults):
    """Results of :class:`QuantizedCompressedSensing`.

    ``params`` holds the p coefficients, ``sigma`` and (t) ``nu``; ``x`` (also ``coef``) the
    coefficients as an array and ``support`` their nonzero positions. ``llf`` is the exact
    (unpenalised) log-likelihood of the cells at the estimate, ``objective`` the penalised
    criterion ``llf - n lam ||x||_1 / sigma`` at the L1 weight ``penalty`` (``lam``), and
    ``history`` that criterion per ECM iteration (non-decreasing). ``path`` (BIC selection
    only) has one row per grid value: ``penalty, df, llf, bic, converged, n_iter``. No standard
    errors (``cov_type = "none"``).
    """

    penalty: float = 0.0
    objective: float = np.nan
    path: pd.DataFrame | None = None
    n_coef: int = 0

    _plots: ClassVar[dict] = {"coef": plot_signal, "history": plot_history, "path": plot_path}

    @property
    def x(self) -> np.ndarray:
        return self.params.iloc[: self.n_coef].to_numpy()

    coef = x
    lam = renamed_attribute("lam", "penalty")

    @property
    def support(self) -> np.ndarray:
        """Positions of the nonzero coefficients."""
        return np.flatnonzero(self.x)

    def predict(self, newdata=None):
        """Latent means ``A x``: on the fitted design (``newdata`` None) or on a new ``A``."""
        if newdata is None:
            if self.model is None:
                raise ValueError("this result was stripped of its model; pass `newdata`")
            A = self.model.A
        else:
            A = as_float_array(newdata, name="newdata", ndim=2)
            if A.shape[1] != self.n_coef:
                raise ValueError(f"`newdata` must have {self.n_coef} columns; got shape {A.shape}")
        return A @ self.x

    def summary(self, alpha: float = 0.05) -> Summary:
        """As for other estimates, with the zero coefficients left out of the table."""
        full = super().summary(alpha)
        (name, table), *_ = full.tables.items()
        keep = np.r_[self.x != 0, np.ones(len(table) - self.n_coef, dtype=bool)]
        zeros = self.n_coef - int((self.x != 0).sum())
        return Summary(
            title=full.title,
            info=full.info,
            tables={name: table[keep]},
            notes=(f"{zeros} of {self.n_coef} coefficients are zero (not shown).", *full.notes),
        )

    def _repr_lines(self):
        nz = self.params.iloc[: self.n_coef]
        shown = pd.concat([nz[nz != 0], self.params.iloc[self.n_coef :]])
        return [
            "",
            f"family: {self.family}, penalty = {self.penalty:.4g}, {len(self.support)} of "
            f"{self.n_coef} nonzero",
            "",
            "Nonzero coefficients and scale:",
            shown.to_string(float_format=lambda v: f"{v:.4g}"),
        ]


# --- the model --------------------------------------------------------------------------------


class QuantizedCompressedSensing(Estimator):
    """Sparse recovery from quantized linear measurements ``y = Q(A x + eps)``, by ECM.

    Parameters
    ----------
    codes : array_like of int, shape (n,)
        Codes of the scalar quantizer.
    quantizer : Quantizer
        The quantizer that produced them.
    A : array_like of shape (n, p)
        Measurement (design) matrix; ``p > n`` is allowed. A DataFrame's column names label the
        coefficients. No intercept is added (include a column of ones, penalised like the rest,
        or centre the quantizer with ``offset``).
    penalty : float, tuple or "bic"
        The L1 weight ``lam >= 0`` of the criterion ``ell - n lam ||x||_1 / sigma``: a number
        or ``("l1", lam)``; ``"bic"`` (the default) or ``("l1", "bic")`` chooses it by BIC over
        a geometric grid from ``lam_max`` (where x = 0) down, ``("l1", grid)`` over the given
        values. BIC counts the nonzero coefficients (Zou, Hastie and Tibshirani 2007).
    family : {"gaussian", "t"}
        Error law.
    dither : array_like of shape (n,), optional
        A known dither added before quantization.

    Notes
    -----
    The penalty divided by sigma keeps the criterion equivariant under rescaling the data, and
    its theory-driven size is ``lam ~ sqrt(2 log(p) / n)`` for columns of ``A`` with unit mean
    square. With the Gaussian and fine cells the fixed point is scikit-learn's
    ``Lasso(alpha=lam * sigma_hat, fit_intercept=False)`` on the unquantized data.

    The penalised sigma solves ``sigma^2 - lam ||x||_1 sigma - S/n = 0`` and so exceeds the
    noise scale by up to ``lam ||x||_1``; the lasso's shrinkage bias ``A (x - x_hat)`` also
    enters the residuals, which then look Gaussian, so with ``family="t"`` the penalised fit's
    ``nu`` tends to run up and it nearly coincides with the Gaussian one. ``fit(refit=True)``
    re-estimates x, sigma and nu on the selected support without penalty; that is where the
    t's robustness to heavy-tailed noise shows.

    References
    ----------
    Quantized Maximum Likelihood Estimation under Normal Mean-Variance Mixture Model
    (ICML 2026). Beck, A. and Teboulle, M. (2009), Fast gradient-based algorithms for
    constrained total variation image denoising and deblurring problems, IEEE TIP 18 (monotone
    FISTA). Stadler, N., Buhlmann, P. and van de Geer, S. (2010), l1-penalization for mixture
    regression models, Test 19. Liu, C. and Rubin, D. B. (1994), The ECME algorithm,
    Biometrika 81.
    """

    method_name = "Quantized compressed sensing"

    def __init__(
        self, codes, quantizer, A, *, penalty="bic", family: str = "gaussian", dither=None
    ):
        self.family = check_option(family, name="family", options=STRUCTURED_FAMILIES)
        self.quantizer = check_scalar_quantizer(quantizer)
        self.penalty, self.penalty_grid = parse_penalty(penalty)
        names = None
        if isinstance(A, pd.DataFrame):
            names = [str(c) for c in A.columns]
        self.A = as_float_array(A, name="A", ndim=2)
        self.A.setflags(write=False)
        raw = np.asarray(codes)
        if raw.ndim != 1:
            raise ValueError(
                f"`codes` must be 1-D (one code per measurement); got shape {raw.shape}"
            )
        n, p = self.A.shape
        if len(raw) != n:
            raise ValueError(
                f"`A` must have one row per code: `codes` has {len(raw)} entries but `A` has "
                f"shape {self.A.shape}"
            )
        if p < 1:
            raise ValueError("`A` has no columns")
        self.codes = self.quantizer.check_codes(raw)
        u = None
        if dither is not None:
            u = as_float_array(dither, name="dither", ndim=1)
            if len(u) != n:
                raise ValueError(f"`dither` must have {n} entries; got {len(u)}")
        self.lower, self.upper = self.quantizer.cells(self.codes, u)
        self.n_coef = p
        self.coef_names = names or [f"x[{j}]" for j in range(p)]
        if self.penalty == 0.0 and p >= n:
            warnings.warn(
                f"penalty = 0 with p = {p} >= n = {n}: the unpenalised likelihood does not "
                "identify x (and the scale can collapse)",
                IdentifiabilityWarning,
                stacklevel=2,
            )

    lam = renamed_attribute("lam", "penalty")
    grid = renamed_attribute("grid", "penalty_grid")

    @property
    def nobs(self) -> int:
        """Number of measurements."""
        return len(self.codes)

    def _repr_spec(self) -> str:
        pen = "bic" if self.penalty is None else f"{self.penalty:g}"
        return f"family={self.family!r}, p={self.n_coef}, penalty={pen}"

    @property
    def param_names(self):
        return self.coef_names + ["sigma"] + (["nu"] if self.family == "t" else [])

    def penalty_max(self):
        """About the smallest penalty at which x = 0 (from the midpoints): the top of the BIC
        grid.

        At x = 0 the KKT condition is ``||A' b||_inf / n <= lam sigma`` with the null fit's
        ``b = E[X/W | cell]`` and sigma, which the midpoints and their root mean square
        approximate.
        """
        z = midpoint_impute(self.lower, self.upper)
        sigma = float(np.sqrt(np.mean(z**2))) or 1.0
        return float(np.max(np.abs(self.A.T @ z)) / (self.nobs * sigma))

    def _norm2(self, rng):
        if min(self.A.shape) < SVDS_MIN_DIM:
            return float(np.linalg.norm(self.A, 2) ** 2)
        s = svds(
            self.A,
            k=1,
            v0=rng.standard_normal(min(self.A.shape)),
            tol=0,
            return_singular_vectors=False,
        )
        return float(s[0] ** 2)

    @renamed_keywords(n_lambdas="n_penalties", lambda_min_ratio="penalty_min_ratio")
    def fit(
        self,
        *,
        maxiter: int = 2000,
        tol: float = 1e-8,
        start=None,
        n_penalties: int = 20,
        penalty_min_ratio: float = 0.02,
        refit: bool = False,
        random_state=None,
        progress: bool = False,
    ) -> QuantizedCompressedSensingResults:
        """Penalised maximum likelihood by ECM (over the BIC grid when the penalty asks).

        Parameters
        ----------
        maxiter : int
            Most ECM iterations (per grid value).
        tol : float
            Stop when the relative change of the penalised criterion is below ``tol`` and no
            coefficient (nor ``log sigma``, ``log nu``) moves by more than ``tol ** 0.75``.
        start : dict, optional
            Starting ``x``, ``sigma``, ``nu`` (default: x = 0, the midpoints' root mean square,
            ``nu = 5``); with BIC, the start of the first (largest) penalty.
        n_penalties, penalty_min_ratio : int, float
            The default BIC grid: ``n_penalties`` geometric values from ``penalty_max()`` down
            to ``penalty_min_ratio * penalty_max()``. The path is fitted downwards with warm
            starts and stops early once more than n/2 coefficients are nonzero. Formerly
            ``n_lambdas`` and ``lambda_min_ratio`` (still accepted, with a ``FutureWarning``).
        refit : bool
            After selection, refit the unpenalised quantized regression on the selected
            support (a relaxed lasso with full relaxation): this removes the lasso's shrinkage
            of x and the penalty's inflation of sigma. ``penalty``, ``path`` and the support
            are those of the penalised fit; ``params``, ``llf`` and ``history`` those of the
            refit.
        random_state : int or Generator, optional
            Seeds the ARPACK start vector for ``||A||_2`` when the smaller dimension of ``A``
            is at least ``SVDS_MIN_DIM`` (otherwise an exact SVD, no randomness).
        progress : bool
            A progress bar over iterations (a single penalty) or over the grid.

        Returns
        -------
        QuantizedCompressedSensingResults
            ``iterations`` records the ECM of the chosen penalty (of the refit with
            ``refit=True``); the grid's fits are in ``path``.
        """
        maxiter = check_positive_int(maxiter, name="maxiter")
        tol = check_positive(tol, name="tol")
        rng = check_random_state(random_state)
        state = self._start(start)
        norm2 = self._norm2(rng)
        path = None
        if self.penalty is not None:
            best = self._fit_one(self.A, self.penalty, state, norm2, maxiter, tol, progress)
        else:
            grid = self.penalty_grid
            if grid is None:
                n_penalties = check_positive_int(n_penalties, name="n_penalties", minimum=2)
                ratio = check_probability(penalty_min_ratio, name="penalty_min_ratio")
                grid = self.penalty_max() * np.geomspace(1.0, ratio, n_penalties)
            best, path = self._bic_path(grid, state, norm2, maxiter, tol, progress)
        if refit:
            best = self._refit(best, maxiter, tol, progress)
        return self._results(best, path, refit)

    def _start(self, start):
        """Starting ``(x, sigma, nu)``: zero, the midpoints' root mean square, 5; or ``start``."""
        p = self.n_coef
        z = midpoint_impute(self.lower, self.upper)
        start = check_start(start, ("x", "sigma", "nu"), family=self.family, shapes={"x": (p,)})
        x0 = start.get("x", np.zeros(p))
        sigma0 = start.get("sigma", float(np.sqrt(np.mean(z**2))) or 1.0)
        return x0, sigma0, start.get("nu", MIXING_START["nu"])

    def _bic_path(self, grid, state, norm2, maxiter, tol, progress):
        """Fits down the grid with warm starts; the one of least BIC and the path's table."""
        n = self.nobs
        rows, best = [], None
        desc = "QuantizedCompressedSensing.fit (BIC path)"
        with progress_bar(len(grid), enabled=progress, desc=desc) as bar:
            for penalty in grid:
                fit = self._fit_one(
                    self.A, float(penalty), state, norm2, maxiter, tol, False, warn=False
                )
                state = (fit["x"], fit["sigma"], fit["nu"])
                df = int((fit["x"] != 0).sum()) + 1 + (self.family == "t")
                fit["bic"] = -2 * fit["llf"] + df * np.log(n)
                rows.append(
                    {
                        "penalty": float(penalty),
                        "df": df,
                        "llf": fit["llf"],
                        "bic": fit["bic"],
                        "converged": fit["record"].converged,
                        "n_iter": fit["record"].n_iter,
                    }
                )
                if best is None or fit["bic"] < best["bic"]:
                    best = fit
                bar.update(1)
                if (fit["x"] != 0).sum() > n / 2:
                    break
        path = pd.DataFrame(rows)
        # the chosen fit reports as a fit of its own; the others are in `path`
        best["record"].warn("raise `maxiter`, loosen `tol`, or start nearer the optimum (`start=`)")
        return best, path

    def _refit(self, fit, maxiter, tol, progress):
        support = np.flatnonzero(fit["x"])
        if len(support) >= self.nobs:
            raise ValueError(
                f"`refit` needs fewer selected coefficients ({len(support)}) than measurements "
                f"({self.nobs}); raise the penalty"
            )
        sub = np.ascontiguousarray(self.A[:, support])
        state = (fit["x"][support], fit["sigma"], fit["nu"])
        new = self._fit_one(sub, 0.0, state, None, maxiter, tol, progress)
        x = np.zeros(self.n_coef)
        x[support] = new["x"]
        new.update(x=x, penalty=fit["penalty"], penalised_objective=fit["objective"])
        return new

    def _fit_one(self, A, penalty, state, norm2, maxiter, tol, progress, warn=True):
        n, p = A.shape
        fam = self.family
        lo, hi = self.lower, self.upper
        inner_tol = 0.1 * tol**0.75
        cache = {}

        def unpack(v):
            nu = float(np.exp(v[p + 1])) if fam == "t" else None
            return v[:p], float(np.exp(v[p])), nu

        def pack(x, sigma, nu):
            return np.concatenate([x, [np.log(sigma)], [np.log(nu)] if fam == "t" else []])

        def criterion(llf, x, sigma):
            return llf - n * penalty * np.abs(x).sum() / sigma

        def step(v):
            x, sigma, nu = unpack(v)
            loc = A @ x
            logp, delta, b, s = structured_estep(lo, hi, loc, sigma, fam, nu)
            obj_in = criterion(float(np.sum(logp)), x, sigma)
            if penalty == 0.0:
                # unpenalised (the refit on a support smaller than n): the exact weighted
                # least-squares CM step of QuantizedRegression
                x = np.linalg.solve((A * delta[:, None]).T @ A, A.T @ b)
            else:
                x = self._x_step(
                    A, x, delta, b, penalty * sigma, norm2 * delta.max() / n, inner_tol
                )
            loc = A @ x
            S = float(np.sum(s - 2 * loc * b + delta * loc**2))
            l1 = penalty * np.abs(x).sum()
            sigma = float(0.5 * (l1 + np.sqrt(l1**2 + 4 * max(S, 0.0) / n)))
            if fam == "t":
                f0 = structured_loglik(lo, hi, loc, sigma, fam, nu)
                t, f = nu_step(
                    np.log(nu), f0, lambda t: structured_loglik(lo, hi, loc, sigma, fam, np.exp(t))
                )
                nu = float(np.exp(t))
                v_new = pack(x, sigma, nu)
                cache.clear()
                cache[v_new.tobytes()] = criterion(f, x, sigma)
            else:
                v_new = pack(x, sigma, nu)
            return v_new, obj_in

        def objective(v):
            key = v.tobytes()
            if key in cache:
                return cache[key]
            x, sigma, nu = unpack(v)
            return criterion(structured_loglik(lo, hi, A @ x, sigma, fam, nu), x, sigma)

        x0, sigma0, nu0 = state
        v, obj, history, record = _ecm.run_ecm(
            step,
            objective,
            pack(x0, sigma0, nu0 if nu0 is not None else MIXING_START["nu"]),
            maxiter=maxiter,
            tol=tol,
            accelerate=False,
            progress=progress,
            name="QuantizedCompressedSensing.fit",
            criterion_name="penalised loglik",
            warn=warn,
        )
        x, sigma, nu = unpack(v)
        llf = structured_loglik(lo, hi, A @ x, sigma, fam, nu)
        return {
            "penalty": penalty,
            "x": x.copy(),
            "sigma": sigma,
            "nu": nu,
            "llf": float(llf),
            "objective": float(obj),
            "history": history,
            "record": record,
        }

    def _x_step(self, A, x, delta, b, kappa, L, inner_tol):
        """Monotone FISTA on ``(2n)^-1 sum(delta (a'x)^2 - 2 b a'x) + kappa ||x||_1``."""
        n = self.nobs

        def value(v, Av):
            return (delta @ Av**2 - 2 * b @ Av) / (2 * n) + kappa * np.abs(v).sum()

        fx = value(x, A @ x)
        y, t = x.copy(), 1.0
        for _ in range(FISTA_STEPS):
            grad = A.T @ (delta * (A @ y) - b) / n
            z = soft_threshold(y - grad / L, kappa / L)
            fz = value(z, A @ z)
            accepted = fz <= fx
            x_new, f_new = (z, fz) if accepted else (x, fx)
            t_new = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
            y = x_new + (t / t_new) * (z - x_new) + ((t - 1) / t_new) * (x_new - x)
            moved = np.max(np.abs(x_new - x))
            x, fx, t = x_new, f_new, t_new
            if accepted and moved <= inner_tol:
                break
        return x

    def _results(self, fit, path, refit):
        fam = self.family
        x, sigma, nu = fit["x"], fit["sigma"], fit["nu"]
        values = [*x, sigma] + ([nu] if fam == "t" else [])
        params = pd.Series(values, index=self.param_names, name="estimate", dtype=float)
        estimates = {"sigma": sigma, "gamma": 0.0}
        if fam == "t":
            estimates["nu"] = nu
        nnz = int((x != 0).sum())
        how = "fixed" if path is None else f"chosen by BIC over {len(path)} values"
        if refit:
            first = (
                f"Support selected by the L1 penalty {fit['penalty']:.4g} ({how}); "
                f"coefficients and scale refitted without penalty on its {nnz} coefficients.",
            )
        else:
            first = (
                f"L1 penalty {fit['penalty']:.4g} ({how}); criterion llf - n penalty ||x||_1 / "
                f"sigma = {fit['objective']:.6g}; df_model counts the {nnz} nonzero "
                "coefficients.",
            )
        if path is not None and not path["converged"].all():
            failed = int((~path["converged"]).sum())
            first += (f"{failed} of {len(path)} grid fits stopped short of tol (see `path`).",)
        notes = (*first, "No standard errors: cov_type none.")
        return QuantizedCompressedSensingResults(
            method=f"{self.method_name} ({fam} errors, L1{', refitted' if refit else ''}) by ECM",
            params=params,
            vcov=None,
            llf=fit["llf"],
            iterations=fit["record"],
            cov_type="none",
            null_value=None,
            k_params=nnz + 1 + (fam == "t"),
            notes=notes,
            family=fam,
            history=fit["history"],
            estimates=estimates,
            penalty=fit["penalty"],
            objective=fit["objective"],
            path=path,
            n_coef=self.n_coef,
            **self._result_fields(),
        )


renamed_method(QuantizedCompressedSensing, "lam_max", "penalty_max")

__all__ = ["QuantizedCompressedSensing", "QuantizedCompressedSensingResults"]
