"""``QuantizedNVMM``: maximum likelihood from quantized data under NVMM laws, by ECM."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import optimize, special

from statcore._validation import (
    as_float_array,
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
)
from statcore.quantized import _ecm, _kernels
from statcore.quantized.mixing import (
    FAMILIES,
    MIXING_BOUNDS,
    MIXING_PARAMS,
    MIXING_START,
    SKEWED,
    gig_params,
    mixing_nodes,
)
from statcore.quantized.quantizer import midpoint_impute
from statcore.results import LikelihoodResults
from statcore.results._plotting import get_ax, plot_coefficients

SE_METHODS = ("louis", "hessian", "bootstrap")
MULTIVARIATE_FAMILIES = ("gaussian", "t")
#: Gauss-Legendre nodes per conditioning level of a d-dimensional box, and W nodes for boxes
BOX_NODES = {2: 32, 3: 12, 4: 6}
BOX_W_NODES = 20


class IdentifiabilityWarning(UserWarning):
    """The quantized data do not identify every parameter (e.g. 1-bit codes, one threshold)."""


# --- input checks -------------------------------------------------------------------------------


def check_cells(lower, upper):
    """Cell edges as float arrays of matching shape; refuses NaN, empty data and lower >= upper."""
    lo = as_float_array(lower, name="lower", ndim=(1, 2), allow_inf=True)
    hi = as_float_array(upper, name="upper", ndim=(1, 2), allow_inf=True)
    if lo.shape != hi.shape:
        raise ValueError(
            f"`lower` and `upper` must have the same shape; got {lo.shape} and {hi.shape}"
        )
    if lo.shape[0] == 0:
        raise ValueError("`lower` is empty: there is nothing to fit")
    bad = ~(lo < hi)
    if bad.any():
        first = np.argwhere(bad)[0]
        raise ValueError(
            f"every cell needs lower < upper; found {int(bad.sum())} cell(s) with lower >= upper "
            f"(first at index {tuple(first.tolist())}: lower={lo[tuple(first)]}, "
            f"upper={hi[tuple(first)]})"
        )
    if np.isposinf(lo).any() or np.isneginf(hi).any():
        raise ValueError("`lower` must be < +inf and `upper` > -inf")
    return lo, hi


def dedup_cells(lo, hi):
    """Unique cells (rows) and their counts."""
    stacked = np.concatenate([lo.reshape(len(lo), -1), hi.reshape(len(hi), -1)], axis=1)
    uniq, inverse, counts = np.unique(stacked, axis=0, return_inverse=True, return_counts=True)
    d = stacked.shape[1] // 2
    return (
        np.ascontiguousarray(uniq[:, :d]),
        np.ascontiguousarray(uniq[:, d:]),
        counts.astype(float),
        inverse.ravel(),
    )


def n_finite_edges(lo, hi):
    edges = np.concatenate([lo[np.isfinite(lo)], hi[np.isfinite(hi)]])
    return len(np.unique(edges))


def check_fix(fix, allowed):
    fix = {} if fix is None else dict(fix)
    unknown = set(fix) - set(allowed)
    if unknown:
        raise ValueError(
            f"`fix` may hold {', '.join(allowed)}; got unknown name(s) {sorted(unknown)}"
        )
    return {k: float(v) if np.ndim(v) == 0 else np.asarray(v, dtype=float) for k, v in fix.items()}


# --- results ------------------------------------------------------------------------------------


def is_log_scale(family, name):
    """Whether a parameter is positive, and so optimised on the log scale."""
    return name in ("sigma", "nu", "alpha_bar") or (family == "vg" and name == "lam")


def free_vcov(sub, names, free):
    """The covariance over all ``names``: ``sub`` on the free parameters, NaN where held fixed."""
    full = np.full((len(names), len(names)), np.nan)
    idx = [names.index(p) for p in free]
    full[np.ix_(idx, idx)] = sub
    return pd.DataFrame(full, index=names, columns=names)


def fixed_note(fix):
    def show(v):
        return f"{v:g}" if np.ndim(v) == 0 else str(np.round(v, 6))

    return "Held fixed: " + ", ".join(f"{k} = {show(v)}" for k, v in fix.items()) + "."


def plot_density(results, ax=None, bins=None, **kwargs):
    """Fitted density over the histogram of the cells (univariate fits)."""
    model = results.model
    if model is None or results.Sigma is not None:
        raise ValueError("the density plot needs a univariate fit that still holds its model")
    ax = get_ax(ax)
    lo, hi, counts = model._lower_u, model._upper_u, model._counts_u
    n = counts.sum()
    finite = np.isfinite(lo) & np.isfinite(hi)
    if model._dithered:
        mids = midpoint_impute(model.lower, model.upper)
        ax.hist(mids, bins=bins or 40, density=True, color="0.8", label="midpoints")
    else:
        ax.bar(
            lo[finite],
            counts[finite] / (n * (hi[finite] - lo[finite])),
            width=(hi - lo)[finite],
            align="edge",
            color="0.8",
            edgecolor="0.5",
            label="cell histogram",
        )
    span = np.concatenate([lo[np.isfinite(lo)], hi[np.isfinite(hi)]])
    scale = results.sigma
    left = min(span.min(), results.mu - 4 * scale) if span.size else results.mu - 4 * scale
    right = max(span.max(), results.mu + 4 * scale) if span.size else results.mu + 4 * scale
    grid = np.linspace(left, right, 400)
    ax.plot(grid, results.pdf(grid), color="C0", label=f"fitted {results.family}", **kwargs)
    ax.set_xlabel("x")
    ax.set_ylabel("density")
    ax.legend(frameon=False)
    ax.set_title(f"{results.method}")
    return ax


def plot_history(results, ax=None, **kwargs):
    """Log-likelihood per ECM iteration."""
    ax = get_ax(ax)
    ax.plot(np.arange(len(results.history)), results.history, marker=".", **kwargs)
    ax.set_xlabel("iteration")
    ax.set_ylabel("log-likelihood")
    ax.set_title("ECM history")
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class QuantizedNVMMResults(LikelihoodResults):
    """Results of a quantized-data NVMM fit.

    Beyond :class:`~statcore.results.LikelihoodResults`: ``family``, ``history`` (the exact
    observed log-likelihood per ECM iteration, non-decreasing), the estimates as attributes
    (``mu``, ``sigma`` for univariate fits or ``Sigma`` for multivariate ones, ``gamma``, ``nu``
    or ``lam, chi, psi``) and ``fixed`` (the parameters held known).
    """

    family: str = "gaussian"
    history: np.ndarray = field(default_factory=lambda: np.zeros(0))
    estimates: dict = field(default_factory=dict)
    fixed: tuple = ()

    _plots: ClassVar[dict] = {
        "density": plot_density,
        "coef": plot_coefficients,
        "history": plot_history,
    }

    @property
    def mu(self):
        return self.estimates.get("mu")

    @property
    def sigma(self):
        """Scale of a univariate fit (a standard deviation); None for multivariate fits."""
        return self.estimates.get("sigma")

    @property
    def Sigma(self):
        """Scatter matrix of a multivariate fit; None for univariate fits."""
        return self.estimates.get("Sigma")

    @property
    def gamma(self):
        return self.estimates.get("gamma", 0.0)

    @property
    def nu(self):
        return self.estimates.get("nu")

    @property
    def lam(self):
        gig = self._gig
        return None if gig is None else gig[0]

    @property
    def chi(self):
        gig = self._gig
        return None if gig is None else gig[1]

    @property
    def psi(self):
        gig = self._gig
        return None if gig is None else gig[2]

    @property
    def _gig(self):
        mix = {k: self.estimates[k] for k in MIXING_PARAMS[self.family]}
        return gig_params(self.family, mix)

    def pdf(self, x):
        """Fitted density of the latent (unquantized) variable (univariate fits)."""
        x = np.asarray(x, dtype=float)
        mix = {k: self.estimates[k] for k in MIXING_PARAMS[self.family]}
        w, logwt = mixing_nodes(self.family, mix)
        m = self.mu + w * self.gamma
        s = self.sigma * np.sqrt(w)
        z = (x[..., None] - m) / s
        logf = logwt - 0.5 * z**2 - np.log(s) - 0.5 * np.log(2 * np.pi)
        return np.exp(special.logsumexp(logf, axis=-1))

    def _repr_lines(self):
        return ["", f"family: {self.family}", *super()._repr_lines()[1:]]


# --- the model ----------------------------------------------------------------------------------


class QuantizedNVMM:
    """Maximum likelihood for NVMM laws observed through a quantizer (scalar cells or boxes).

    ``X = mu + W gamma + sqrt(W) Sigma^{1/2} Z`` is observed only through the cell (box)
    ``[lower, upper)`` it falls in. The exact observed log-likelihood
    ``sum_i log P(cell_i)`` is maximised by ECM with the unquantized signal and the mixing
    variable W as latent data: closed-form E-step moments for the Gaussian and t, one outer
    quadrature over W for the GH members, closed-form CM steps for location, skew and scale,
    and an ECME step (direct maximisation of the observed likelihood) for the mixing
    parameters. Identical cells are computed once, with their counts as weights.

    Parameters
    ----------
    lower, upper : array_like of shape (n,) or (n, d)
        Cell edges (``-inf``/``inf`` allowed); ``lower < upper`` everywhere.
    family : {"gaussian", "t", "skew_t", "nig", "vg", "gh"}
        The NVMM member; multivariate boxes take ``"gaussian"`` or ``"t"``.

    See Also
    --------
    statcore.quantized.mixing : the mixing laws and their parameterisation.

    References
    ----------
    Inference from quantized data under the normal variance-mean mixture (NVMM) framework
    (ICML 2026). Meng, X.-L. and Rubin, D. B. (1993), Maximum likelihood estimation via the ECM
    algorithm, Biometrika 80. Louis, T. A. (1982), Finding the observed information matrix when
    using the EM algorithm, JRSS B 44. Varadhan, R. and Roland, C. (2008), SQUAREM, Scand. J.
    Stat. 35.
    """

    def __init__(self, lower, upper, *, family: str = "gaussian", _dithered=None):
        self.family = check_option(family, name="family", options=FAMILIES)
        lo, hi = check_cells(lower, upper)
        if lo.ndim == 2 and lo.shape[1] == 1:
            lo, hi = lo[:, 0], hi[:, 0]
        self.multivariate = lo.ndim == 2
        if self.multivariate and self.family not in MULTIVARIATE_FAMILIES:
            raise NotImplementedError(
                f"multivariate boxes support family 'gaussian' or 't'; got {family!r}"
            )
        self.lower, self.upper = lo, hi
        self.lower.setflags(write=False)
        self.upper.setflags(write=False)
        self.nobs = lo.shape[0]
        self.n_dims = 1 if lo.ndim == 1 else lo.shape[1]
        if self.multivariate and self.n_dims > max(BOX_NODES):
            raise NotImplementedError(
                f"multivariate boxes are supported up to d = {max(BOX_NODES)}; "
                f"got d = {self.n_dims}"
            )
        self._lower_u, self._upper_u, self._counts_u, _ = dedup_cells(lo, hi)
        if not self.multivariate:
            self._lower_u, self._upper_u = self._lower_u[:, 0], self._upper_u[:, 0]
        self._dithered = (len(self._counts_u) > 0.5 * self.nobs) if _dithered is None else _dithered
        self._n_edges = (
            n_finite_edges(lo, hi)
            if not self.multivariate
            else min(n_finite_edges(lo[:, j], hi[:, j]) for j in range(self.n_dims))
        )
        if self._n_edges < 2:
            warnings.warn(
                "the cells share a single finite threshold (1-bit data without dither): only "
                "(threshold - mu) / sigma is identified. Fit with fix={'sigma': ...} or quantize "
                "with a known dither.",
                IdentifiabilityWarning,
                stacklevel=2,
            )

    @classmethod
    def from_codes(cls, codes, quantizer, *, family: str = "gaussian", dither=None):
        """Build the model from integer codes and the :class:`Quantizer` that produced them."""
        lower, upper = quantizer.cells(codes, dither)
        return cls(lower, upper, family=family, _dithered=dither is not None)

    def __repr__(self):
        shape = f"d={self.n_dims}, " if self.multivariate else ""
        return (
            f"QuantizedNVMM(family={self.family!r}, {shape}nobs={self.nobs}, "
            f"unique_cells={len(self._counts_u)})"
        )

    # --- parameter bookkeeping (univariate) ---------------------------------------------------

    @property
    def _skew(self):
        return self.family in SKEWED

    @property
    def param_names(self) -> list[str]:
        if self.multivariate:
            d = self.n_dims
            names = [f"mu[{j}]" for j in range(d)]
            names += [f"Sigma[{j},{k}]" for j in range(d) for k in range(j + 1)]
            return names + list(MIXING_PARAMS[self.family])
        return (
            ["mu", "sigma"] + (["gamma"] if self._skew else []) + list(MIXING_PARAMS[self.family])
        )

    def _bounds(self, name):
        lo, hi = MIXING_BOUNDS[name]
        if self.family == "vg" and name == "lam":
            lo = 1e-3
        if self.family == "skew_t" and name == "nu":
            lo = 2.05  # E[W | cell] must be finite for the skew update
        return lo, hi

    def _positive(self, name):
        return is_log_scale(self.family, name)

    # --- fit ----------------------------------------------------------------------------------

    def fit(
        self,
        *,
        maxiter: int = 2000,
        tol: float = 1e-8,
        start=None,
        fix=None,
        se: str | None = "louis",
        accelerate: bool = True,
        progress: bool = False,
        n_resamples: int = 200,
        random_state=None,
    ) -> QuantizedNVMMResults:
        """Maximum likelihood by ECM.

        Parameters
        ----------
        maxiter : int
            Most ECM iterations (ghyp's default, 2000).
        tol : float
            Relative change of the log-likelihood at which to stop (ghyp's reltol, 1e-8); the
            largest change of an (unconstrained) parameter must also be below ``tol ** 0.75``.
        start : dict, optional
            Starting values by name (default: midpoint-imputed moments, ``nu = 5``).
        fix : dict, optional
            Parameters held known, e.g. ``{"nu": 4}`` or ``{"sigma": 1.0}``; for multivariate
            fits ``"mu"`` (a vector) and the mixing parameters.
        se : {"louis", "hessian", "bootstrap", None}
            Standard errors from Louis's identity (univariate; multivariate fits use the
            Hessian), the numerical Hessian of the exact log-likelihood, a nonparametric
            bootstrap over observations (``n_resamples``, ``random_state``), or none.
        accelerate : bool
            SQUAREM extrapolation, kept only when it does not lower the likelihood.
        progress : bool
            A tqdm bar over iterations.
        """
        maxiter = check_positive_int(maxiter, name="maxiter")
        tol = check_positive(tol, name="tol")
        if se is not None:
            check_option(se, name="se", options=SE_METHODS)
        if self.multivariate:
            from statcore.quantized.covariance import fit_boxes

            return fit_boxes(
                self,
                maxiter=maxiter,
                tol=tol,
                start=start,
                fix=fix,
                se=se,
                accelerate=accelerate,
                progress=progress,
                n_resamples=n_resamples,
                random_state=random_state,
            )
        names = self.param_names
        fix = check_fix(fix, names)
        free = [p for p in names if p not in fix]
        self._check_identified(free, fix)
        theta = self._start(start, fix)
        lo, hi, counts = self._lower_u, self._upper_u, self._counts_u
        fam = self.family
        mix_free = [p for p in MIXING_PARAMS[fam] if p in free]

        def pack(th):
            return np.array([np.log(th[p]) if self._positive(p) else th[p] for p in free])

        def unpack(x):
            th = dict(theta)
            th.update(fix)
            for p, v in zip(free, x, strict=True):
                th[p] = float(np.exp(v)) if self._positive(p) else float(v)
            return th

        def mix_of(th):
            return {k: th[k] for k in MIXING_PARAMS[fam]}

        def loglik_th(th):
            return _ecm.scalar_loglik(
                lo, hi, th["mu"], th["sigma"], th.get("gamma", 0.0), fam, mix_of(th), counts
            )

        def step(x):
            th = unpack(x)
            new = self._ecm_step(th, free, mix_free, loglik_th)
            return pack(new), new["_llf_in"]

        def loglik(x):
            return loglik_th(unpack(x))

        x, llf, history, converged, n_iter = _ecm.run_ecm(
            step,
            loglik,
            pack(theta),
            maxiter=maxiter,
            tol=tol,
            accelerate=accelerate,
            progress=progress,
            name="QuantizedNVMM",
        )
        theta = unpack(x)
        return self._results(
            theta,
            free,
            fix,
            llf,
            history,
            converged,
            n_iter,
            se,
            n_resamples,
            random_state,
            loglik_th,
        )

    def _check_identified(self, free, fix):
        if self._n_edges < 2 and "sigma" in free:
            raise ValueError(
                "1-bit data with a single threshold and no dither do not identify the scale: "
                "fit with fix={'sigma': ...} (a known scale) or quantize with a known dither"
            )
        if not self._dithered:
            dof = len(self._counts_u) - 1
            if len(free) > dof:
                raise ValueError(
                    f"family {self.family!r} has {len(free)} free parameters ({', '.join(free)}) "
                    f"but the data fall in only {len(self._counts_u)} distinct cells "
                    f"({dof} degrees of freedom): use more quantization levels or `fix=`"
                )

    def _start(self, start, fix):
        mids = midpoint_impute(self.lower, self.upper)
        theta = {"mu": float(np.mean(mids)), "sigma": float(np.std(mids)) or 1.0, "gamma": 0.0}
        if self.family in ("t", "skew_t"):
            theta["sigma"] *= 0.8
        for p in MIXING_PARAMS[self.family]:
            theta[p] = MIXING_START[p]
        if self._skew:
            theta["gamma"] = 0.0
        if start:
            unknown = set(start) - set(self.param_names)
            if unknown:
                raise ValueError(f"`start` has unknown name(s) {sorted(unknown)}")
            theta.update({k: float(v) for k, v in start.items()})
        theta.update(fix)
        if not self._skew:
            theta["gamma"] = 0.0
        return theta

    def _ecm_step(self, th, free, mix_free, loglik_th):
        lo, hi, counts = self._lower_u, self._upper_u, self._counts_u
        n = counts.sum()
        fam = self.family
        mix = {k: th[k] for k in MIXING_PARAMS[fam]}
        gamma = th.get("gamma", 0.0)
        logp, out = _ecm.scalar_estep(lo, hi, th["mu"], th["sigma"], gamma, fam, mix)
        llf_in = float(counts @ logp)
        bar = counts @ out / n  # delta, eta, xi, a, b, S, x2
        delta, eta, _, a, b, S, _ = bar
        new = dict(th)
        mu = th["mu"]
        if self._skew and "gamma" in free:
            if "mu" in free:
                mu = (eta * b - a) / (delta * eta - 1.0)
            gamma = (a - mu) / eta
        elif "mu" in free:
            mu = (b - gamma) / delta
        new["mu"], new["gamma"] = float(mu), float(gamma)
        if "sigma" in free:
            s2 = S - 2 * mu * b + mu**2 * delta
            if self._skew:
                s2 += -2 * gamma * (a - mu) + gamma**2 * eta
            new["sigma"] = float(np.sqrt(max(s2, 1e-300)))
        if mix_free:
            new.update(self._mixing_step(new, mix_free, loglik_th))
        new["_llf_in"] = llf_in
        return new

    def _mixing_step(self, th, mix_free, loglik_th):
        """ECME: maximise the observed likelihood over the free mixing parameters."""
        current = loglik_th(th)

        def to_x(v, p):
            return np.log(v) if self._positive(p) else v

        def from_x(x, p):
            return float(np.exp(x)) if self._positive(p) else float(x)

        def negll(xs):
            trial = dict(th)
            for p, xv in zip(mix_free, np.atleast_1d(xs), strict=True):
                trial[p] = from_x(xv, p)
            try:
                val = loglik_th(trial)
            except (ValueError, FloatingPointError, ZeroDivisionError):
                return np.inf
            return -val if np.isfinite(val) else np.inf

        if len(mix_free) == 1:
            p = mix_free[0]
            lo, hi = (to_x(b, p) for b in self._bounds(p))
            res = optimize.minimize_scalar(
                negll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10}
            )
            best = np.atleast_1d(res.x)
        else:
            x0 = np.array([to_x(th[p], p) for p in mix_free])
            res = optimize.minimize(
                negll,
                x0,
                method="Nelder-Mead",
                options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 400},
            )
            best = res.x
            bounds = [tuple(to_x(b, p) for b in self._bounds(p)) for p in mix_free]
            best = np.array([np.clip(v, lo, hi) for v, (lo, hi) in zip(best, bounds, strict=True)])
        if -negll(best) >= current:
            return {p: from_x(v, p) for p, v in zip(mix_free, best, strict=True)}
        return {p: th[p] for p in mix_free}

    # --- inference ----------------------------------------------------------------------------

    def _information(self, theta, free, se, loglik_th):
        names = self.param_names
        if se == "hessian":

            def f(x):
                th = dict(theta)
                th.update(dict(zip(free, x, strict=True)))
                return loglik_th(th)

            return -_ecm.numerical_hessian(f, np.array([theta[p] for p in free]))
        mix_free = [p for p in MIXING_PARAMS[self.family] if p in free]
        mix = {k: theta[k] for k in MIXING_PARAMS[self.family]}
        info = _ecm.louis_information(
            self._lower_u,
            self._upper_u,
            np.full(len(self._counts_u), theta["mu"]),
            np.ones((len(self._counts_u), 1)),
            self._counts_u,
            theta["sigma"],
            theta.get("gamma", 0.0),
            self.family,
            mix,
            skew=self._skew,
            mix_free=mix_free,
        )
        order = ["mu", "sigma"] + (["gamma"] if self._skew else []) + mix_free
        keep = [order.index(p) for p in names if p in free]
        return info[np.ix_(keep, keep)]

    def _bootstrap(self, theta, free, fix, n_resamples, random_state):
        rng = check_random_state(random_state)
        counts = self._counts_u
        reps = []
        for _ in range(check_positive_int(n_resamples, name="n_resamples")):
            draw = rng.multinomial(int(counts.sum()), counts / counts.sum())
            keep = draw > 0
            sub = QuantizedNVMM.__new__(QuantizedNVMM)
            sub.__dict__.update(self.__dict__)
            sub._lower_u, sub._upper_u = self._lower_u[keep], self._upper_u[keep]
            sub._counts_u = draw[keep].astype(float)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    res = sub.fit(start={p: theta[p] for p in free}, fix=fix, se=None, tol=1e-7)
                    reps.append([res.estimates[p] for p in free])
                except (ValueError, np.linalg.LinAlgError):
                    continue
        return np.asarray(reps)

    def _results(
        self,
        theta,
        free,
        fix,
        llf,
        history,
        converged,
        n_iter,
        se,
        n_resamples,
        random_state,
        loglik_th,
    ):
        names = self.param_names
        params = pd.Series([theta[p] for p in names], index=names, name="estimate", dtype=float)
        vcov = None
        notes = []
        cov_type = "none"
        resampling = None
        if se in ("louis", "hessian"):
            info = self._information(theta, free, se, loglik_th)
            sub = np.linalg.pinv(info)
            if np.linalg.eigvalsh(info).min() <= 0:
                notes.append(
                    "The observed information is not positive definite: standard "
                    "errors are unreliable."
                )
            cov_type = "Louis observed information" if se == "louis" else "numerical Hessian"
        elif se == "bootstrap":
            reps = self._bootstrap(theta, free, fix, n_resamples, random_state)
            sub = np.cov(reps, rowvar=False).reshape(len(free), len(free))
            cov_type = f"bootstrap ({len(reps)} resamples)"
        if se is not None:
            vcov = free_vcov(sub, names, free)
        if fix:
            notes.append(fixed_note(fix))
        estimates = {p: theta[p] for p in names}
        estimates.setdefault("gamma", 0.0)
        return QuantizedNVMMResults(
            method=f"Quantized NVMM ({self.family}) by ECM",
            nobs=self.nobs,
            model=self,
            params=params,
            vcov=vcov,
            llf=float(llf),
            converged=bool(converged),
            n_iter=int(n_iter),
            cov_type=cov_type,
            resampling=resampling,
            df_model=len(free),
            notes=tuple(notes),
            family=self.family,
            history=history,
            estimates=estimates,
            fixed=tuple(fix),
        )

    def loglike(self, params) -> float:
        """Exact observed log-likelihood at ``params`` (a dict, or a vector ordered as
        ``param_names``)."""
        if not isinstance(params, dict):
            params = dict(zip(self.param_names, np.asarray(params, dtype=float), strict=True))
        if self.multivariate:
            from statcore.quantized.covariance import box_loglik_params

            return box_loglik_params(self, params)
        mix = {k: params[k] for k in MIXING_PARAMS[self.family]}
        return _ecm.scalar_loglik(
            self._lower_u,
            self._upper_u,
            params["mu"],
            params["sigma"],
            params.get("gamma", 0.0),
            self.family,
            mix,
            self._counts_u,
        )


__all__ = ["IdentifiabilityWarning", "QuantizedNVMM", "QuantizedNVMMResults", "_kernels"]
