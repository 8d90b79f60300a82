"""``QuantizedNVMM``: maximum likelihood from quantized data under NVMM laws, by ECM."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pandas as pd

from statcore.base import Estimator
from statcore.compat import renamed_keywords
from statcore.quantized import _boxes, _ecm
from statcore.quantized._common import (
    BOOTSTRAP_TOL,
    MULTIVARIATE_FAMILIES,
    IdentifiabilityWarning,
    check_cells,
    check_cov_type,
    check_fix,
    check_named,
    check_start,
    dedup_cells,
    formula_columns,
    is_log_scale,
    n_finite_edges,
)
from statcore.quantized.mixing import FAMILIES, MIXING_PARAMS, MIXING_START, SKEWED
from statcore.quantized.quantizer import check_quantizer, midpoint_impute
from statcore.quantized.results import QuantizedNVMMResults
from statcore.results import ResamplingResult
from statcore.validation import (
    as_float_array,
    check_n_rows,
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
)

# --- the model ----------------------------------------------------------------------------------


class QuantizedNVMM(Estimator):
    """Maximum likelihood for NVMM laws observed through a quantizer (scalar cells or boxes).

    ``X = mu + W gamma + sqrt(W) Sigma^{1/2} Z`` is observed only through the cell (box)
    ``[lower, upper)`` it falls in. The exact observed log-likelihood
    ``sum_i log P(cell_i)`` is maximised by ECM with the unquantized signal and the mixing
    variable W as latent data: closed-form E-step moments for the Gaussian and t, one outer
    quadrature over W for the GH members, closed-form CM steps for location, skew and scale,
    and a CM step for the mixing parameters from the E-step averages of ``1/W``, ``W`` and
    ``log W`` (:func:`statcore.quantized.mixing.mixing_cm_step`: closed form for the NIG, one
    monotone scalar equation for the t, skew t and VG, a concave Newton solve for the GH).
    Identical cells are computed once, with their counts as weights.

    Parameters
    ----------
    lower, upper : array_like of shape (n,) or (n, d)
        Cell edges (``-inf``/``inf`` allowed); ``lower < upper`` everywhere.
    family : {"gaussian", "t", "skew_t", "nig", "vg", "gh"}
        The NVMM member; multivariate boxes take ``"gaussian"`` or ``"t"``.
    names : sequence of str, optional
        Labels of the coordinates, used in the parameter names (``mu[x1]``,
        ``Sigma[x2,x1]``) and, for a single coordinate, in the method's description.
        ``from_codes`` and ``from_formula`` take them from the columns of a data frame.

    Notes
    -----
    Fidelity: reconstruction. The paper's full text was not available (only its abstract: "by
    designing suitable surrogate functions, the ECM algorithm ensures that all model parameters
    can be updated in closed form"). Reconstructed: the quantizer formalisation, the E-step (one
    quadrature over W, closed form for the t), the CM steps for location, skew and scale (the
    standard NVMM ECM), and the mixing CM steps (closed form for the NIG, a monotone scalar
    root for the t, skew t and VG, a bounded numerical maximisation of the data-free expected
    complete-data log-likelihood for the GH, all parameter-expanded when the scale is free;
    :func:`statcore.quantized.mixing.mixing_cm_step`). Boxes (d > 1) support the Gaussian and
    the t only.

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

    method_name = "Quantized NVMM"

    def __init__(self, lower, upper, *, family: str = "gaussian", names=None, _dithered=None):
        self.family = check_option(family, name="family", options=FAMILIES)
        lo, hi = check_cells(lower, upper)
        # one cell cannot identify a location and a scale (the ECM would "converge" on it)
        check_n_rows(lo.shape[0], name="lower")
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
        self.n_dims = 1 if lo.ndim == 1 else lo.shape[1]
        if self.multivariate and self.n_dims > max(_boxes.BOX_NODES):
            raise NotImplementedError(
                f"multivariate boxes are supported up to d = {max(_boxes.BOX_NODES)}; "
                f"got d = {self.n_dims}"
            )
        self.names = self._check_names(names)
        self._lower_u, self._upper_u, self._counts_u, _ = dedup_cells(lo, hi)
        if not self.multivariate:
            self._lower_u, self._upper_u = self._lower_u[:, 0], self._upper_u[:, 0]
        self._dithered = (len(self._counts_u) > 0.5 * self.nobs) if _dithered is None else _dithered
        self._n_dropped = 0
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

    def _check_names(self, names):
        if names is None:
            return None
        names = tuple(str(name) for name in names)
        if len(names) != self.n_dims:
            raise ValueError(
                f"`names` must have one label per coordinate ({self.n_dims}); got {len(names)}"
            )
        return names

    @classmethod
    def from_codes(cls, codes, quantizer, *, family: str = "gaussian", dither=None, **kwargs):
        """Build the model from integer codes and the :class:`Quantizer` that produced them.

        A DataFrame's column labels (a Series' name) become the coordinates' ``names``.
        """
        if "names" not in kwargs and isinstance(codes, pd.DataFrame | pd.Series):
            labels = codes.columns if isinstance(codes, pd.DataFrame) else [codes.name]
            kwargs["names"] = None if labels[0] is None else [str(c) for c in labels]
        lower, upper = check_quantizer(quantizer).cells(codes, dither)
        return cls(lower, upper, family=family, _dithered=dither is not None, **kwargs)

    @classmethod
    def from_formula(cls, formula: str, data, *, quantizer, missing: str = "raise", **kwargs):
        """Build the model from the columns of codes a one-sided formula names.

        ``QuantizedNVMM.from_formula("~ x", data, quantizer=q, family="t")`` fits the codes in
        column ``x``; ``"~ x1 + x2"`` the boxes of two coordinates. The codes are the columns'
        values and their labels name the parameters. Rows with a missing code raise, or are
        dropped (``missing="drop"``, counted in the results' notes). Remaining keyword
        arguments (``family``, ``dither``, ...) go to :meth:`from_codes`.
        """
        codes, n_dropped = formula_columns(formula, data, missing=missing)
        model = cls.from_codes(codes, quantizer, **kwargs)
        model._n_dropped = n_dropped
        return model

    @property
    def nobs(self) -> int:
        return self.lower.shape[0]

    def _repr_spec(self) -> str:
        shape = f", d={self.n_dims}" if self.multivariate else ""
        return f"family={self.family!r}{shape}, unique_cells={len(self._counts_u)}"

    def _result_fields(self) -> dict:
        notes = ()
        if self._n_dropped:
            notes = (f"{self._n_dropped} row(s) with missing codes were dropped.",)
        return {**super()._result_fields(), "notes": notes}

    # --- parameter bookkeeping ----------------------------------------------------------------

    @property
    def _skew(self):
        return self.family in SKEWED

    @property
    def param_names(self) -> list[str]:
        if self.multivariate:
            labels = self.names or [str(j) for j in range(self.n_dims)]
            return _boxes.box_param_names(labels, self.family)
        return (
            ["mu", "sigma"] + (["gamma"] if self._skew else []) + list(MIXING_PARAMS[self.family])
        )

    def _model_fix(self) -> dict:
        """Parameters the model itself holds known (none; ``QuantizedCovariance``: ``mu = 0``)."""
        return {}

    # --- fit ----------------------------------------------------------------------------------

    @renamed_keywords(se="cov_type")
    def fit(
        self,
        *,
        maxiter: int = 2000,
        tol: float = 1e-8,
        start=None,
        fix=None,
        cov_type: str | None = "louis",
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
            Starting values by name (default: midpoint-imputed moments, ``nu = 5``); for
            multivariate fits ``"mu"``, ``"Sigma"`` and ``"nu"``.
        fix : dict, optional
            Parameters held known, e.g. ``{"nu": 4}`` or ``{"sigma": 1.0}``; for multivariate
            fits ``"mu"`` (a vector) and the mixing parameters.
        cov_type : {"louis", "hessian", "bootstrap", None}
            Standard errors from Louis's identity (univariate; multivariate fits use the
            Hessian), the numerical Hessian of the exact log-likelihood, a nonparametric
            bootstrap over observations (``n_resamples``, ``random_state``; the replicates are
            kept in ``resampling``, failed refits skipped and counted in the notes), or none.
            Formerly ``se=`` (still accepted, with a ``FutureWarning``).
        accelerate : bool
            SQUAREM extrapolation, kept only when it does not lower the likelihood.
        progress : bool
            A progress bar over iterations.
        n_resamples : int
            Bootstrap replicates (``cov_type="bootstrap"``).
        random_state : int or Generator, optional
            Seeds the bootstrap.

        Returns
        -------
        QuantizedNVMMResults
            ``iterations`` records how the ECM stopped; a fit that reaches ``maxiter`` warns
            :class:`~statcore.exceptions.ConvergenceWarning`.
        """
        maxiter = check_positive_int(maxiter, name="maxiter")
        tol = check_positive(tol, name="tol")
        cov_type = check_cov_type(cov_type)
        n_resamples = check_positive_int(n_resamples, name="n_resamples")
        rng = check_random_state(random_state)
        if self.multivariate:
            d = self.n_dims
            fix = check_fix(fix, ["mu", "nu"], family=self.family, shapes={"mu": (d,)})
            start = check_start(
                start,
                ["mu", "Sigma", "nu"],
                family=self.family,
                shapes={"mu": (d,), "Sigma": (d, d)},
            )
        else:
            fix = check_fix(fix, self.param_names, family=self.family)
            start = check_start(start, self.param_names, family=self.family)
        fix = {**self._model_fix(), **fix}
        options = dict(maxiter=maxiter, tol=tol, start=start, fix=fix, accelerate=accelerate)
        if self.multivariate:
            fit = _boxes.fit_boxes(self, progress=progress, **options)
        else:
            fit = self._fit_cells(progress=progress, **options)
        return QuantizedNVMMResults.from_fit(
            fit,
            names=self.param_names,
            family=self.family,
            cov_type=cov_type,
            fields=self._result_fields(),
            bootstrap=lambda: self._bootstrap(fit, n_resamples, rng, maxiter),
            method=self._method(),
        )

    def _method(self) -> str:
        if self.multivariate:
            return f"{self.method_name} ({self.family}, d = {self.n_dims}) by ECM"
        of = f" of {self.names[0]}" if self.names else ""
        return f"{self.method_name} ({self.family}){of} by ECM"

    def _fit_cells(self, *, start, fix, **options) -> _ecm.EcmFit:
        """The ECM over scalar cells, in the parameters' unconstrained coordinates."""
        names = self.param_names
        free = [p for p in names if p not in fix]
        self._check_identified(free)
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

        def loglik_th(th):
            mix = {k: th[k] for k in MIXING_PARAMS[fam]}
            return _ecm.scalar_loglik(
                lo, hi, th["mu"], th["sigma"], th.get("gamma", 0.0), fam, mix, counts
            )

        def step(x):
            new = self._ecm_step(unpack(x), free, mix_free, loglik_th)
            return pack(new), new["_llf_in"]

        def finish(x):
            th = unpack(x)
            estimates = {p: th[p] for p in names}
            estimates.setdefault("gamma", 0.0)
            return {
                "values": {p: th[p] for p in names},
                "free": free,
                "estimates": estimates,
                "restart": {p: th[p] for p in free},
                "information": lambda cov_type: self._information(th, free, cov_type, loglik_th),
            }

        return _ecm.ecm_fit(
            step,
            lambda x: loglik_th(unpack(x)),
            pack(theta),
            finish,
            name=f"{type(self).__name__}.fit",
            fix=fix,
            **options,
        )

    def _positive(self, name):
        return is_log_scale(self.family, name)

    def _check_identified(self, free):
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
        theta.update(start)
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
        logp, out = _ecm.scalar_estep(
            lo, hi, th["mu"], th["sigma"], gamma, fam, mix, closed_form=not mix_free
        )
        # the t's quadrature E-step (for E[log W]) would report a likelihood a hair off the
        # closed form that SQUAREM and the stopping rule compare it with
        llf_in = loglik_th(th) if fam == "t" and mix_free else float(counts @ logp)
        bar = counts @ out / n  # delta, eta, xi, a, b, S, x2
        delta, eta, xi, a, b, S, _ = bar
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
        expand = "sigma" in free and ("gamma" in free or new["gamma"] == 0.0)
        _ecm.mixing_update(new, mix_free, fam, (delta, eta, xi), expand=expand)
        new["_llf_in"] = llf_in
        return new

    # --- inference ----------------------------------------------------------------------------

    def _information(self, theta, free, cov_type, loglik_th):
        """Observed information over ``free``: Louis's identity or the numerical Hessian."""
        if cov_type == "hessian":

            def f(x):
                th = dict(theta)
                th.update(dict(zip(free, x, strict=True)))
                return loglik_th(th)

            info = -_ecm.numerical_hessian(f, np.array([theta[p] for p in free]))
            return info, "numerical Hessian", ()
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
        keep = [order.index(p) for p in self.param_names if p in free]
        return info[np.ix_(keep, keep)], "Louis observed information", ()

    def _bootstrap(self, fit, n_resamples, rng, maxiter) -> ResamplingResult:
        """Nonparametric bootstrap over observations: refits on multinomial redraws of the cell
        counts, started at the estimate. Refits that fail (a redraw that no longer identifies
        the model) are skipped and counted in the notes."""
        counts = self._counts_u
        n = counts.sum()
        replicates = []
        for _ in range(n_resamples):
            draw = rng.multinomial(int(n), counts / n)
            keep = draw > 0
            sub = copy.copy(self)
            sub._lower_u, sub._upper_u = self._lower_u[keep], self._upper_u[keep]
            sub._counts_u = draw[keep].astype(float)
            with warnings.catch_warnings():
                # a replicate's ECM record is not the user's fit: its warnings would mislead
                warnings.simplefilter("ignore")
                try:
                    res = sub.fit(
                        start=fit.restart,
                        fix=fit.fix,
                        cov_type=None,
                        tol=BOOTSTRAP_TOL,
                        maxiter=maxiter,
                    )
                except (ValueError, np.linalg.LinAlgError):
                    continue
            replicates.append(res.params[fit.free].to_numpy())
        failed = n_resamples - len(replicates)
        notes = (f"{failed} of {n_resamples} bootstrap refits failed and were skipped.",)
        return ResamplingResult(
            method=f"{self._method()}: bootstrap",
            nobs=self.nobs,
            estimate=pd.Series([fit.values[p] for p in fit.free], index=fit.free, dtype=float),
            replicates=pd.DataFrame(replicates, columns=fit.free, dtype=float),
            scheme="nonparametric bootstrap over observations",
            notes=notes if failed else (),
        )

    def loglike(self, params) -> float:
        """Exact observed log-likelihood at ``params`` (a dict, or a vector ordered as
        ``param_names``)."""
        names = self.param_names
        if not isinstance(params, dict):
            values = as_float_array(params, name="params", ndim=1)
            if len(values) != len(names):
                raise ValueError(
                    f"`params` must have {len(names)} entries ({', '.join(names)}); got "
                    f"{len(values)}"
                )
            params = dict(zip(names, values, strict=True))
        if not self.multivariate:
            absent = [k for k in names if k not in params]
            if absent:
                raise ValueError(f"`params` lacks {absent}")
            params = check_named(params, names, name="params", family=self.family)
        if self.multivariate:
            return _boxes.box_loglik_params(self, params)
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


__all__ = ["IdentifiabilityWarning", "QuantizedNVMM", "QuantizedNVMMResults"]
