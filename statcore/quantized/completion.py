"""``QuantizedMatrixCompletion``: a low-rank matrix seen through a quantizer, with missing cells.

The latent matrix is ``X = M + E`` with ``rank M <= r`` and i.i.d. errors ``E_ij`` from a
symmetric NVMM (Gaussian, or Student t as a scale mixture ``E = sqrt(W) sigma Z``); only the
cells ``Q(X_ij)`` of the observed entries ``(i, j)`` in Omega are recorded. The exact observed
log-likelihood ``sum_Omega log P(cell_ij)`` is maximised by ECM:

* E-step: per observed entry, ``delta = E[1/W | cell]``, ``b = E[X/W | cell]`` and
  ``s = E[X^2/W | cell]`` (``delta = 1`` for the Gaussian), from the univariate E-step kernels
  of ``_ecm``.
* CM-step for M: the Q-function is ``-(2 sigma^2)^-1 sum_Omega delta (M - b / delta)^2``, a
  weighted rank-r fit. Its Hessian is bounded by ``L = max delta``, so
  ``M <- P_r(M + P_Omega(b - delta M) / L)`` (``P_r``: rank-r truncated SVD) never raises the
  weighted loss: a majorise-minimise step, one per E-step (more per E-step cost SVDs without
  saving as many iterations). For the Gaussian it is one hard-impute step with the cells'
  conditional means on Omega, i.e. the EM step that treats the missing entries as latent too.
* CM-step for sigma in closed form, then for the t an ECME step on ``nu``: a safeguarded
  Newton step on the observed log-likelihood in ``log nu``, kept only when it raises it.

Every step is a generalized-EM step, so the recorded log-likelihood never decreases.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from statcore.base import Estimator
from statcore.quantized import _ecm
from statcore.quantized._common import IdentifiabilityWarning, check_start
from statcore.quantized.mixing import MIXING_START
from statcore.quantized.quantizer import midpoint_impute
from statcore.quantized.results import QuantizedResults, plot_history
from statcore.quantized.structured import (
    STRUCTURED_FAMILIES,
    check_scalar_quantizer,
    nu_step,
    spectral_svd,
    structured_estep,
    structured_loglik,
)
from statcore.results.plotting import get_ax, label_axes
from statcore.validation import (
    as_float_array,
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
    describe,
)

# --- results -----------------------------------------------------------------------------------


def balanced_factors(U, s, Vt):
    """``(U s^1/2, V s^1/2)`` flattened, each singular pair's sign fixed so that the largest
    entry of its left vector is positive: the factors then move smoothly between iterations,
    which SQUAREM's extrapolation needs."""
    flip = np.sign(U[np.argmax(np.abs(U), axis=0), np.arange(U.shape[1])])
    flip[flip == 0] = 1.0
    root = np.sqrt(s) * flip
    return (U * root).ravel(), (Vt.T * root).ravel()


def plot_singular_values(results, ax=None, **kwargs):
    """Singular values of the fitted M (all of rank r nonzero) beside those of the start."""
    ax = get_ax(ax)
    s = np.linalg.svd(results.M, compute_uv=False)
    k = min(len(s), 3 * results.rank + 5)
    ax.plot(np.arange(1, k + 1), s[:k], marker="o", **kwargs)
    return label_axes(ax, "index", "singular value", f"rank-{results.rank} fit")


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class QuantizedMatrixCompletionResults(QuantizedResults):
    """Results of :class:`QuantizedMatrixCompletion`.

    ``params`` holds the noise scale ``sigma`` (and ``nu`` for the t); the low-rank estimate is
    ``M`` (also ``completed``, and ``predict()``), with its factors ``U, s, Vt``. ``history`` is
    the exact observed log-likelihood per ECM iteration (non-decreasing). No standard errors
    are computed (``cov_type = "none"``).
    """

    M: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    factors: tuple = ()
    rank: int = 0
    mask: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))

    _plots: ClassVar[dict] = {"history": plot_history, "singular_values": plot_singular_values}

    @property
    def completed(self) -> np.ndarray:
        """The completed matrix: the fitted low-rank mean ``M`` at every entry (a copy)."""
        return self.M.copy()

    @property
    def U(self):
        return self.factors[0]

    @property
    def s(self):
        return self.factors[1]

    @property
    def Vt(self):
        return self.factors[2]

    def predict(self, newdata=None):
        """Latent means: the whole matrix ``M`` or, for ``newdata = (rows, cols)``, its entries."""
        if newdata is None:
            return self.completed
        if not (isinstance(newdata, tuple) and len(newdata) == 2):
            raise ValueError(
                f"`newdata` must be None or a pair (rows, cols) of index arrays; got "
                f"{describe(newdata)}"
            )
        rows = np.asarray(newdata[0])
        cols = np.asarray(newdata[1])
        if rows.dtype.kind not in "iu" or cols.dtype.kind not in "iu":
            raise TypeError("`newdata` must hold integer row and column indices")
        if rows.shape != cols.shape:
            raise ValueError(
                f"`newdata` rows and cols must have the same shape; got {rows.shape} and "
                f"{cols.shape}"
            )
        n1, n2 = self.M.shape
        if rows.size and (
            rows.min() < -n1 or rows.max() >= n1 or cols.min() < -n2 or cols.max() >= n2
        ):
            raise IndexError(f"`newdata` indices out of range for a {n1} x {n2} matrix")
        return self.M[rows, cols]

    def _repr_lines(self):
        n1, n2 = self.M.shape
        return [
            "",
            f"family: {self.family}, rank {self.rank}, {n1} x {n2}, "
            f"{int(self.mask.sum())} observed",
            *super()._repr_lines()[2:],
        ]


# --- the model --------------------------------------------------------------------------------


class QuantizedMatrixCompletion(Estimator):
    """Rank-r matrix completion from quantized, partly missing entries, by ECM.

    ``X_ij = M_ij + eps_ij`` with ``rank M = r`` and NVMM errors; the code ``Q(X_ij)`` is
    recorded for the observed entries. The fit maximises the exact likelihood of the observed
    cells over (M, sigma, nu) (see the module docstring for the ECM steps).

    Parameters
    ----------
    codes : array_like of shape (n1, n2)
        Integer codes of the quantizer; NaN marks a missing entry (unless ``mask`` says which
        entries are observed).
    quantizer : Quantizer
        The scalar quantizer that produced the codes.
    rank : int
        Rank r of M, ``1 <= r < min(n1, n2)``.
    family : {"gaussian", "t"}
        Error law.
    mask : array_like of bool, shape (n1, n2), optional
        True where the entry is observed. Without it, the non-NaN codes are the observed ones.
    dither : array_like of shape (n1, n2), optional
        A known dither added before quantization (``Q(X + u)``).

    Notes
    -----
    The majorised M-step is the weighted form of hard-impute (Mazumder, Hastie and Tibshirani
    2010), with the E-step's conditional means in place of the entries. Rows or columns with
    fewer than ``rank`` observed entries are not identified (an :class:`IdentifiabilityWarning`
    says so); their entries of M follow from the start. With coarse cells (2 bits) and few
    entries per row or column the likelihood can also keep rising as a row's entries move out
    into the saturated cells (separation, as in probit regression): the fit then does not
    converge, and says so. A known dither (``dither=``) or more levels restore the information.

    References
    ----------
    Quantized Maximum Likelihood Estimation under Normal Mean-Variance Mixture Model
    (ICML 2026). Meng, X.-L. and Rubin, D. B. (1993), Maximum likelihood estimation via the ECM
    algorithm, Biometrika 80. Liu, C. and Rubin, D. B. (1994), The ECME algorithm, Biometrika
    81. Mazumder, R., Hastie, T. and Tibshirani, R. (2010), Spectral regularization algorithms
    for learning large incomplete matrices, JMLR 11.
    """

    method_name = "Quantized matrix completion"

    def __init__(self, codes, quantizer, rank, *, family: str = "gaussian", mask=None, dither=None):
        self.family = check_option(family, name="family", options=STRUCTURED_FAMILIES)
        self.quantizer = check_scalar_quantizer(quantizer)
        arr = as_float_array(codes, name="codes", ndim=2, allow_nan=True)
        n1, n2 = arr.shape
        if n1 < 2 or n2 < 2:
            raise ValueError(
                f"`codes` must be a matrix with at least 2 rows and columns; got shape {arr.shape}"
            )
        if mask is None:
            observed = ~np.isnan(arr)
        else:
            observed = np.array(mask, copy=True)
            if observed.dtype != bool:
                raise TypeError(
                    f"`mask` must be a boolean array (True = observed); got dtype {observed.dtype}"
                )
            if observed.shape != arr.shape:
                raise ValueError(
                    f"`mask` must have the shape of `codes` {arr.shape}; got {observed.shape}"
                )
            bad = observed & np.isnan(arr)
            if bad.any():
                first = tuple(np.argwhere(bad)[0].tolist())
                raise ValueError(
                    f"`codes` is NaN at {int(bad.sum())} entries that `mask` marks observed "
                    f"(first at index {first})"
                )
        if not observed.any():
            raise ValueError("`codes` has no observed entry: there is nothing to fit")
        rank = check_positive_int(rank, name="rank")
        if rank >= min(n1, n2):
            raise ValueError(
                f"`rank` must be below min(n1, n2) = {min(n1, n2)} for a {n1} x {n2} matrix; got "
                f"{rank}"
            )
        self.rank = rank
        self.shape = (n1, n2)
        u = None
        if dither is not None:
            d = as_float_array(dither, name="dither", ndim=2)
            if d.shape != arr.shape:
                raise ValueError(
                    f"`dither` must have the shape of `codes` {arr.shape}; got {d.shape}"
                )
            u = d[observed]
        self.codes = self.quantizer.check_codes(arr[observed])
        self.lower, self.upper = self.quantizer.cells(self.codes, u)
        self.mask = observed
        self.mask.setflags(write=False)
        self._rows, self._cols = np.nonzero(observed)
        few = (observed.sum(axis=1) < rank).sum() + (observed.sum(axis=0) < rank).sum()
        if few:
            warnings.warn(
                f"{int(few)} row(s)/column(s) have fewer than rank = {rank} observed entries: "
                "their part of M is not identified by the data",
                IdentifiabilityWarning,
                stacklevel=2,
            )

    @property
    def nobs(self) -> int:
        """Number of observed entries."""
        return len(self._rows)

    def _repr_spec(self) -> str:
        n1, n2 = self.shape
        return f"family={self.family!r}, shape=({n1}, {n2}), rank={self.rank}"

    @property
    def param_names(self):
        return ["sigma"] + (["nu"] if self.family == "t" else [])

    def _start(self, rng):
        mids = midpoint_impute(self.lower, self.upper)
        Z = np.full(self.shape, mids.mean())
        Z[self._rows, self._cols] = mids
        U, s, Vt = spectral_svd(Z, self.rank, rng)
        M = (U * s) @ Vt
        resid = mids - M[self._rows, self._cols]
        sigma = float(np.sqrt(np.mean(resid**2))) or 1.0
        if self.family == "t":
            sigma *= 0.8
        return M, sigma, MIXING_START["nu"]

    def fit(
        self,
        *,
        maxiter: int = 1000,
        tol: float = 1e-8,
        start=None,
        accelerate: bool = True,
        random_state=None,
        progress: bool = False,
    ) -> QuantizedMatrixCompletionResults:
        """Maximum likelihood by ECM.

        Parameters
        ----------
        maxiter : int
            Most ECM iterations.
        tol : float
            Stop when the relative change of the log-likelihood is below ``tol`` and no entry
            of the balanced factors of M (nor ``log sigma``, ``log nu``) moves by more than
            ``tol ** 0.75``.
        start : dict, optional
            Starting ``M`` (an n1 x n2 array, projected to rank r), ``sigma``, ``nu``. Default:
            the rank-r SVD of the midpoint-imputed codes, missing entries at their mean.
        accelerate : bool
            SQUAREM extrapolation on the balanced factors ``(U s^1/2, V s^1/2)`` of M (so an
            extrapolated M keeps rank r), kept only when it does not lower the likelihood.
        random_state : int or Generator, optional
            Seeds the start vectors of the ARPACK truncated SVD used when the smaller
            dimension is at least ``SVDS_MIN_DIM`` (smaller matrices use a full SVD and no
            randomness).
        progress : bool
            A tqdm bar over iterations.
        """
        maxiter = check_positive_int(maxiter, name="maxiter")
        tol = check_positive(tol, name="tol")
        rng = check_random_state(random_state)
        M0, sigma0, nu0 = self._start(rng)
        start = check_start(
            start, ("M", "sigma", "nu"), family=self.family, shapes={"M": self.shape}
        )
        M0 = start.get("M", M0)
        sigma0, nu0 = start.get("sigma", sigma0), start.get("nu", nu0)
        U0, s0, Vt0 = spectral_svd(M0, self.rank, rng)
        step, loglik, pack, unpack = self._ecm_map(rng)
        x, llf, history, record = _ecm.run_ecm(
            step,
            loglik,
            pack(U0, s0, Vt0, sigma0, nu0),
            maxiter=maxiter,
            tol=tol,
            accelerate=accelerate,
            progress=progress,
            name="QuantizedMatrixCompletion.fit",
        )
        A, B, sigma, nu = unpack(x)
        M = A @ B.T
        factors = spectral_svd(M, self.rank, rng)
        M.setflags(write=False)
        return self._results(M, factors, sigma, nu, float(llf), history, record)

    def _ecm_map(self, rng):
        """``(step, loglik, pack, unpack)`` of the ECM over the balanced factors of M, log sigma
        and log nu (see the module docstring for the steps)."""
        fam = self.family
        n1, n2 = self.shape
        rows, cols = self._rows, self._cols
        lo, hi = self.lower, self.upper
        r = self.rank
        k = (n1 + n2) * r
        cache = {}

        def unpack(x):
            A = x[: n1 * r].reshape(n1, r)
            B = x[n1 * r : k].reshape(n2, r)
            nu = float(np.exp(x[k + 1])) if fam == "t" else None
            return A, B, float(np.exp(x[k])), nu

        def pack(U, sv, Vt, sigma, nu):
            tail = [np.log(sigma)] + ([np.log(nu)] if fam == "t" else [])
            return np.concatenate([*balanced_factors(U, sv, Vt), tail])

        def step(x):
            A, B, sigma, nu = unpack(x)
            M = A @ B.T
            logp, delta, b, s = structured_estep(lo, hi, M[rows, cols], sigma, fam, nu)
            llf = float(np.sum(logp))
            L = float(delta.max())
            G = M.copy()
            G[rows, cols] += (b - delta * M[rows, cols]) / L
            U, sv, Vt = spectral_svd(G, r, rng)
            M = (U * sv) @ Vt
            m = M[rows, cols]
            s2 = np.mean(s - 2 * m * b + delta * m**2)
            sigma = float(np.sqrt(max(s2, 1e-300)))
            if fam == "t":
                f0 = structured_loglik(lo, hi, m, sigma, fam, nu)
                t, f = nu_step(
                    np.log(nu), f0, lambda t: structured_loglik(lo, hi, m, sigma, fam, np.exp(t))
                )
                nu = float(np.exp(t))
                x_new = pack(U, sv, Vt, sigma, nu)
                cache.clear()
                cache[x_new.tobytes()] = f
            else:
                x_new = pack(U, sv, Vt, sigma, nu)
            return x_new, llf

        def loglik(x):
            key = x.tobytes()
            if key in cache:
                return cache[key]
            A, B, sigma, nu = unpack(x)
            m = np.einsum("ij,ij->i", A[rows], B[cols])
            return structured_loglik(lo, hi, m, sigma, fam, nu)

        return step, loglik, pack, unpack

    def _results(self, M, factors, sigma, nu, llf, history, record):
        fam = self.family
        n1, n2 = self.shape
        r = self.rank
        estimates = {"sigma": sigma, "gamma": 0.0}
        if fam == "t":
            estimates["nu"] = nu
        names = self.param_names
        params = pd.Series([estimates[k] for k in names], index=names, name="estimate", dtype=float)
        missing = 1.0 - self.nobs / (n1 * n2)
        notes = (
            f"Rank-{r} fit of a {n1} x {n2} matrix from {self.nobs} observed entries "
            f"({100 * missing:.1f}% missing); df_model counts the r(n1 + n2 - r) free entries "
            "of M.",
            "No standard errors: cov_type none.",
        )
        return QuantizedMatrixCompletionResults(
            method=f"{self.method_name} ({fam} errors) by ECM",
            params=params,
            vcov=None,
            llf=llf,
            iterations=record,
            cov_type="none",
            null_value=None,
            k_params=r * (n1 + n2 - r) + len(names),
            notes=notes,
            family=fam,
            history=history,
            estimates=estimates,
            M=M,
            factors=factors,
            rank=r,
            mask=self.mask,
            **self._result_fields(),
        )

    def loglike(self, M, sigma, nu=None) -> float:
        """Exact observed log-likelihood of the observed cells at ``(M, sigma, nu)``."""
        M = as_float_array(M, name="M", ndim=2)
        if M.shape != self.shape:
            raise ValueError(f"`M` must have shape {self.shape}; got {M.shape}")
        sigma = check_positive(sigma, name="sigma")
        if self.family == "t":
            nu = check_positive(nu, name="nu")
        return structured_loglik(
            self.lower, self.upper, M[self._rows, self._cols], sigma, self.family, nu
        )


__all__ = ["QuantizedMatrixCompletion", "QuantizedMatrixCompletionResults"]
