"""The Manifold Martingale Difference Divergence (MMDD) and its tests; geodesic distance covariance.

For ``Y`` on a manifold with Fréchet mean ``mu`` and Euclidean ``X``,
``MMDD^2(Y | X) = -E[<Log_mu Y, Log_mu Y'>_mu |X - X'|]`` (``(X', Y')`` an independent copy) is
zero exactly when ``E[Log_mu Y | X] = 0``: conditional mean independence. The estimator
U-centres ``a_kl = |X_k - X_l|`` and ``b_kl = -<V_k, V_l>`` with ``V_i = Log_mu(Y_i)`` in
orthonormal tangent coordinates.

Fidelity
--------
Reconstruction: the paper's full text and code were not available (only its abstract), so
every step follows the abstract and the Euclidean and functional precursors (Shao and Zhang
2014; Lee, Zhang and Shao 2020): the population quantity and its U-centred estimator, the
statistic ``T_n = n MMDD^2_n``, the wild bootstrap with Rademacher multipliers by default
(normal and Mammen as options), the degenerate U-statistic limit of ``method="asymptotic"``,
the Fréchet mean as base point, and the geodesic dCov comparator. The estimated Fréchet mean
is treated as known; its effect on the size was measured by simulation and found below the
Monte Carlo error (see :func:`mmdd_test`, Notes), so no correction is applied.
"""

from __future__ import annotations

import numbers
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np
from scipy.spatial import distance

from statcore.distributed import borrowed_backend
from statcore.manifold import _kernels
from statcore.manifold.frechet import _check_manifold, frechet_mean
from statcore.manifold.interface import Manifold
from statcore.results.testing import TestResult
from statcore.validation import (
    as_float_array,
    check_option,
    check_positive_int,
    check_random_state,
    check_same_length,
)

__all__ = ["MMDDTestResult", "dcov_test", "mmdd", "mmdd_test"]

MULTIPLIERS = ("rademacher", "normal", "mammen")

#: Largest number of doubles in one multiplier batch of the bootstrap.
_BLOCK_DOUBLES = 2**22

#: Most doubles of multipliers one bootstrap task holds (its batches share each panel of K).
_TASK_DOUBLES = 2**23

#: Most entries of one float32 panel of rows of K in the general (multi-column ``X``)
#: bootstrap, and the fewest panels (more follow the triangle closer; BLAS keeps its peak down
#: to panels of a few hundred rows).
_PANEL_FLOATS = 2**23
_MIN_PANELS = 8

#: Least work (entries times terms) worth waking numba's thread pool for: below it the
#: kernels run in the calling thread, where they cost tens of microseconds, not milliseconds.
_PARALLEL_WORK = 2**20

#: Most columns of one thread's block in the sorted (scalar ``X``) bootstrap kernel.
_SORTED_WIDTH = 64

#: Sample size above which the eigenvalues of the asymptotic null come from a subsample.
_MAX_EIGEN_N = 1000

#: Largest n for dcov_test, which holds two n x n distance matrices.
_MAX_DCOV_N = 12_000

#: Spread of the points of ``Y``, relative to their largest coordinate, up to which they are one
#: point: computed data carry rounding of about 1e-16 of their scale, which the exact comparison
#: took for variation (and the test then ranked noise against noise).
_CONSTANT_RTOL = 1e-12


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class MMDDTestResult(TestResult):
    """A :class:`~statcore.results.TestResult` that also keeps the base point of the tangent
    space (the Fréchet mean unless one was given) and the manifold.

    Vocabulary
    ----------
    As :class:`~statcore.manifold.interface.Manifold` states it: ``base_point`` is the point
    whose tangent space is used, ``Y`` the points, ``X`` the Euclidean covariate, ``mean`` the
    Fréchet mean, ``n_resamples`` the bootstrap draws, ``random_state`` the seed.
    """

    base_point: np.ndarray | None = field(default=None, repr=False)
    manifold: Any = field(default=None, repr=False)


@dataclass(frozen=True)
class _Centred:
    """What the kernels need to form ``c(a)_kl c(b)_kl`` on the fly; for a scalar ``X`` also the
    points sorted by ``X`` (the O(n) per multiplier vector route)."""

    X: np.ndarray
    V: np.ndarray
    a_row: np.ndarray
    a_tot: float
    b_row: np.ndarray
    b_tot: float
    c1: float
    c2: float
    keep_diag: bool
    x_sorted: np.ndarray | None = None
    order: np.ndarray | None = None
    #: ``A V`` (``A_kl = |X_k - X_l|``) when ``X`` has several columns, else None
    a_times: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.X)

    def centred_times(self, Z, AZ) -> np.ndarray:
        """``c(a) Z`` from ``AZ = A Z``: ``AZ - c1 (a_row 1'Z + 1 a_row'Z) + c2 a_.. 1 1'Z``,
        less the diagonal of the formula when U-centring leaves it out."""
        out = (
            AZ
            - self.c1 * (np.outer(self.a_row, Z.sum(axis=0)) + self.a_row @ Z)
            + self.c2 * self.a_tot * Z.sum(axis=0)
        )
        if not self.keep_diag:
            out -= (-2.0 * self.c1 * self.a_row + self.c2 * self.a_tot)[:, None] * Z
        return out

    def args(self):
        """The arguments of the general kernels (``X`` and ``V`` transposed)."""
        return (
            np.ascontiguousarray(self.X.T),
            np.ascontiguousarray(self.V.T),
            self.a_row,
            self.a_tot,
            self.b_row,
            self.b_tot,
            self.c1,
            self.c2,
            self.keep_diag,
        )

    def diagonal(self) -> np.ndarray:
        """``c(a)_kk c(b)_kk`` of the centring formula, which U-centring zeroes (0 when kept)."""
        if self.keep_diag:
            return np.zeros(self.n)
        diag_a = -2.0 * self.c1 * self.a_row + self.c2 * self.a_tot
        diag_b = (
            -np.einsum("ij,ij->i", self.V, self.V)
            - 2.0 * self.c1 * self.b_row
            + self.c2 * self.b_tot
        )
        return diag_a * diag_b

    def sorted_args(self):
        """The arguments of :func:`~statcore.manifold._kernels.sorted_quadratic_forms` before
        the multipliers and the block width."""
        o = self.order
        return (
            self.x_sorted,
            o,
            np.ascontiguousarray(self.V[o]),
            self.a_row[o],
            self.b_row[o],
            self.diagonal()[o],
            self.c1,
            self.c2,
            self.a_tot,
            self.b_tot,
        )


@contextmanager
def _threads_for(work):
    """One numba thread for the calls inside when ``work`` is small (thread-local; every
    kernel gives the same numbers for any number of threads)."""
    if work >= _PARALLEL_WORK:
        yield
        return
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def _sorted_matmul(x_sorted, Z):
    """``A Z`` for sorted scalar ``x`` (``Z`` in the same order): row ``k`` is
    ``x_k (P_k - S_k) - (Q_k - R_k)``, ``P, S`` the sums of ``z_l`` below and above ``k`` and
    ``Q, R`` those of ``x_l z_l`` (tied neighbours add 0 on either side)."""
    xz = x_sorted[:, None] * Z
    below = np.cumsum(Z, axis=0) - Z
    above = Z.sum(axis=0) - below - Z
    x_below = np.cumsum(xz, axis=0) - xz
    x_above = xz.sum(axis=0) - x_below - xz
    return x_sorted[:, None] * (below - above) - (x_below - x_above)


def _centred(X, V, statistic: str, fast: bool = True) -> _Centred:
    """Row sums and centring constants; those of ``b = -<V_k, V_l>`` are closed form, those of
    ``a`` too when ``X`` is scalar (``fast``), else one pass over the triangle of distances,
    O(n^2 (p + m)), that also gives ``A V`` (the statistic).

    Both centrings annihilate ``f_k + f_l`` terms, so ``V`` is centred first: the same matrices,
    without the cancellation a base point far from the data would cause.
    """
    n = len(X)
    V = V - V.mean(axis=0)
    x_sorted = order = a_times = None
    if fast and X.shape[1] == 1:
        x = X[:, 0] - np.median(X[:, 0])
        order = np.argsort(x, kind="stable")
        x_sorted = np.ascontiguousarray(x[order])
        a_row = np.empty(n)
        a_row[order] = _sorted_matmul(x_sorted, np.ones((n, 1)))[:, 0]
    else:
        with _threads_for(n * n * (X.shape[1] + V.shape[1] + 1)):
            sums = _kernels.dist_matmul(np.ascontiguousarray(X.T), np.vstack([np.ones(n), V.T]))
        a_row, a_times = sums[:, 0], sums[:, 1:]
    S = V.sum(axis=0)
    sq = np.einsum("ij,ij->i", V, V)
    if statistic == "u":
        # zero diagonal: b_k. = -<V_k, S> + |V_k|^2
        b_row = -(V @ S) + sq
        b_tot = float(-(S @ S) + sq.sum())
        c1, c2, keep = 1.0 / (n - 2), 1.0 / ((n - 1) * (n - 2)), False
    else:
        b_row = -(V @ S)
        b_tot = float(-(S @ S))
        c1, c2, keep = 1.0 / n, 1.0 / n**2, True
    return _Centred(
        X, V, a_row, float(a_row.sum()), b_row, b_tot, c1, c2, keep, x_sorted, order, a_times
    )


def _statistic(c: _Centred, statistic: str) -> float:
    """MMDD^2: the U-statistic ``sum_{k!=l} / (n (n-3))`` or the V-statistic ``sum / n^2``.

    A centred matrix is orthogonal to row, column and constant terms, so
    ``sum c(a) o c(b) = sum c(a) o b = -sum_j v_j' c(a) v_j``: for several columns of ``X`` the
    sum comes from ``A V`` of the row-sum pass, with no second pass over the distances.
    """
    n = c.n
    if c.order is not None:
        total = float(_quadratic_forms(c, np.ones((n, 1)))[0])
    else:
        total = -float(np.sum(c.V * c.centred_times(c.V, c.a_times)))
    return total / (n * (n - 3)) if statistic == "u" else total / n**2


def _quadratic_forms(c: _Centred, E: np.ndarray) -> np.ndarray:
    """``e_b' K e_b`` for every column ``e_b`` of ``E`` (n, B), ``K = c(a) o c(b)``.

    Scalar ``X``: O(n m) per column by
    :func:`~statcore.manifold._kernels.sorted_quadratic_forms` (the low rank of ``c(b)``), in
    double precision. Otherwise panels of rows of the upper triangle of ``K`` are formed once
    per call (entries in double precision, stored as float32) and multiplied into ``E`` by
    single-precision BLAS, ``e' K e = 2 sum_panels e_rows' (P e)``: about
    ``(1/2 + 1/(2 _MIN_PANELS)) n^2 B`` multiply-adds at twice the double-precision rate, and
    O(_PANEL_FLOATS) memory besides ``E``. Each partial product carries a relative rounding of
    about 6e-8, so a draw is off by about 1e-6 of the draws' spread (measured), which moves a
    p-value only when a draw lies that close to the statistic.
    """
    n, q = E.shape
    if c.order is not None:
        E = np.ascontiguousarray(E, dtype=np.float64)
        width = -(-q // (4 * numba.get_num_threads()))
        width = int(min(_SORTED_WIDTH, max(8, width)))
        with _threads_for(n * q * (c.V.shape[1] + 2)):
            return _kernels.sorted_quadratic_forms(*c.sorted_args(), E, width)
    E = np.ascontiguousarray(E, dtype=np.float32)
    args = c.args()
    # panels of at most _PANEL_FLOATS entries, and at least _MIN_PANELS of them so that the
    # zeros left of the diagonal cost little
    side = max(1, min(-(-n // _MIN_PANELS), _PANEL_FLOATS // n))
    panel = np.empty(side * n, dtype=np.float32)
    out = np.zeros(q)
    for r0 in range(0, n, side):
        rows = min(n, r0 + side) - r0
        P = panel[: rows * (n - r0)].reshape(rows, n - r0)
        with _threads_for(rows * (n - r0) * (c.X.shape[1] + c.V.shape[1])):
            _kernels.centred_product_panel(*args, r0, P)
        out += np.einsum("ib,ib->b", E[r0 : r0 + rows], P @ E[r0:], dtype=np.float64)
    return 2.0 * out


def _multipliers(rng: np.random.Generator, kind: str, shape, dtype=np.float64) -> np.ndarray:
    """Draws of the multiplier law, as ``dtype`` (the float64 draws rounded, for float32)."""
    if kind == "rademacher":
        # Signs from bits 31 and 63 of each raw 64-bit word, in order. numpy's bounded
        # integers on {0, 1} take the top bit of each 32-bit half, low half first, with no
        # rejection, so these are the draws of ``2 rng.integers(0, 2, shape) - 1`` whenever the
        # generator holds no buffered half word (a fresh one, as in every bootstrap batch), made
        # in a tenth of the time.
        size = int(np.prod(shape))
        raw = rng.bit_generator.random_raw((size + 1) // 2)
        return _kernels.signs_from_bits(raw, np.empty(size, dtype)).reshape(shape)
    if kind == "normal":
        return rng.standard_normal(shape).astype(dtype, copy=False)
    # Mammen's two-point law: mean 0, variance 1, third moment 1
    s5 = np.sqrt(5.0)
    low = rng.random(shape) < (s5 + 1) / (2 * s5)
    return np.where(low, -(s5 - 1) / 2, (s5 + 1) / 2).astype(dtype, copy=False)


@dataclass(frozen=True)
class _BootstrapBatch:
    """Batches of wild-bootstrap draws, each from its own seed (a picklable task for every
    backend); the batches of one task go through the kernels together."""

    centred: _Centred
    multiplier: str

    def __call__(self, task) -> np.ndarray:
        n = self.centred.n
        # the general route multiplies in single precision (see _quadratic_forms); signs are
        # exact in it
        dtype = np.float64 if self.centred.order is not None else np.float32
        if len(task) == 1:
            ((seed, size),) = task
            E = _multipliers(np.random.default_rng(seed), self.multiplier, (n, size), dtype)
        else:
            # filled batch by batch, so that at most one batch is held twice
            E = np.empty((n, sum(size for _, size in task)), dtype)
            start = 0
            for seed, size in task:
                E[:, start : start + size] = _multipliers(
                    np.random.default_rng(seed), self.multiplier, (n, size), dtype
                )
                start += size
        return _quadratic_forms(self.centred, E) / (n - 3)


def _wild_bootstrap(c: _Centred, n_resamples, multiplier, rng, backend, progress):
    n = c.n
    # batches depend on n, m and n_resamples only, so the draws do not depend on the backend
    width = 1 if c.order is None else c.V.shape[1] + 1
    size = max(1, min(n_resamples, _BLOCK_DOUBLES // (n * width)))
    sizes = [min(size, n_resamples - s) for s in range(0, n_resamples, size)]
    seeds = np.random.SeedSequence(int(rng.integers(2**63))).spawn(len(sizes))
    # the general route forms all of K once per task: group batches; the sorted route has no
    # such cost, and its gathers from E stay in cache with one batch at a time
    per_task = 1 if c.order is not None else max(1, _TASK_DOUBLES // (n * size))
    batches = list(zip(seeds, sizes, strict=True))
    tasks = [tuple(batches[i : i + per_task]) for i in range(0, len(batches), per_task)]
    with borrowed_backend(backend) as runner:
        parts = runner.map(
            _BootstrapBatch(c, multiplier),
            tasks,
            progress=progress,
            desc="MMDD wild bootstrap",
        )
    return np.concatenate(parts)


def _null_eigenvalues(X, V, rng) -> tuple[np.ndarray, int]:
    """Eigenvalues of the integral operator of ``h = c(a) c(b)`` estimated by those of the
    double-centred ``K / n`` (on a random subsample of ``_MAX_EIGEN_N`` points when n is larger:
    the estimates are consistent either way, and O(n^3) work is avoided)."""
    n = len(X)
    if n > _MAX_EIGEN_N:
        keep = np.sort(rng.choice(n, _MAX_EIGEN_N, replace=False))
        X, V = X[keep], V[keep] - V[keep].mean(axis=0)
        n = _MAX_EIGEN_N
    c = _centred(X, V, "v", fast=False)
    K = _kernels.centred_product_block(*c.args(), 0, 0, np.empty((n, n)))
    lam = np.linalg.eigvalsh(0.5 * (K + K.T)) / n
    # K is a Schur product of two positive semi-definite matrices: negative values are rounding
    return lam[lam > 1e-12 * max(lam.max(), 1e-300)], n


def _check_sample(Y, X, manifold, *, purpose: str = ""):
    """The manifold, ``Y`` on it and ``X`` as an (n, p) array, with at least 4 rows each."""
    manifold = _check_manifold(manifold)
    X = as_float_array(X, name="X", ndim=(1, 2))
    if X.ndim == 1:
        X = X[:, None]
    Y = manifold.check_points(Y, name="Y")
    n = check_same_length(Y=Y, X=X)
    if n < 4:
        raise ValueError(f"`Y` and `X` need at least 4 rows{purpose}; got {n}")
    return Y, X, manifold


def _constant_input(Y, X) -> str | None:
    """The reason the tests cannot apply, or None: ``X`` constant, or ``Y`` one point up to
    rounding (``X`` is the user's data as given, compared exactly)."""
    if np.ptp(X, axis=0).max() == 0:
        return "`X` is constant"
    spread = float(np.max(np.abs(Y - Y[0])))
    if spread <= _CONSTANT_RTOL * np.max(np.abs(Y)):
        return (
            "`Y` is constant: its points are equal up to rounding (largest coordinate "
            f"difference {spread:.1g}, relative tolerance {_CONSTANT_RTOL:g})"
        )
    return None


def _prepare(Y, X, manifold, base_point):
    """Validated arrays, the base point and the tangent coordinates ``V_i = Log_mu Y_i``."""
    Y, X, manifold = _check_sample(Y, X, manifold, purpose=" for the U-statistic")
    if base_point is None:
        base_point = frechet_mean(Y, manifold).mean
    else:
        base_point = manifold.check_point(base_point, name="base_point")
    V = np.ascontiguousarray(manifold.log_coords(base_point, Y, check=False), dtype=np.float64)
    return Y, np.ascontiguousarray(X), manifold, base_point, V


def mmdd(Y, X, manifold: Manifold, base_point=None, statistic: str = "u") -> float:
    """The estimated squared Manifold Martingale Difference Divergence ``MMDD^2(Y | X)``.

    With ``V_i = Log_mu(Y_i)`` in orthonormal coordinates of the tangent space at the Fréchet
    mean ``mu``, ``a_kl = |X_k - X_l|`` and ``b_kl = -<V_k, V_l>``:
    ``"u"`` gives ``[n (n-3)]^-1 sum_{k != l} A~_kl B~_kl`` with U-centred ``A~, B~`` (unbiased
    for a known base point), ``"v"`` gives ``n^-2 sum_kl A^_kl B^_kl`` with double centring.
    Computed in O(n^2 (p + m)) time and O(n) memory; for a scalar ``X`` in O(n (log n + m))
    time.

    Parameters
    ----------
    Y : array_like, shape ``(n, *manifold.point_shape)``
        Points on the manifold.
    X : array_like or DataFrame, shape (n,) or (n, p)
        Euclidean predictors.
    manifold : Manifold
    base_point : array_like, optional
        Base point of the tangent space; default the Fréchet mean of ``Y``.
    statistic : {"u", "v"}

    Returns
    -------
    float

    References
    ----------
    Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
    manifold-valued data. *ICML 2026*.

    Shao, X. and Zhang, J. (2014). Martingale difference correlation and its use in
    high-dimensional variable screening. *JASA* 109(507), 1302-1318.
    """
    statistic = check_option(statistic, name="statistic", options=("u", "v"))
    _, X, _, _, V = _prepare(Y, X, manifold, base_point)
    return _statistic(_centred(X, V, statistic), statistic)


def _seed_used(random_state):
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(random_state)
    return None


def mmdd_test(
    Y,
    X,
    manifold: Manifold,
    *,
    method: str = "wild_bootstrap",
    n_resamples: int = 999,
    multiplier: str = "rademacher",
    base_point=None,
    random_state=None,
    backend=None,
    progress: bool = False,
) -> MMDDTestResult:
    """Test of conditional mean independence ``E[Log_mu Y | X] = 0`` by MMDD.

    The statistic is ``T_n = n MMDD^2_n`` (U-statistic, see :func:`mmdd`); large values reject.

    ``method="wild_bootstrap"`` draws ``T*_b = (n-3)^-1 sum_{k != l} e_k A~_kl B~_kl e_l`` with
    i.i.d. multipliers ``e`` (mean 0, variance 1), batched over replicates and mapped over
    ``backend``. For a scalar ``X`` each draw costs O(n m): ``B~`` is a rank-``m`` Gram matrix
    plus row, column and constant terms, so ``e' (A~ o B~) e`` reduces to ``m + 2`` forms
    ``z' A~ w``, each one pass of running sums over the sorted ``X``. Otherwise panels of rows
    of the upper triangle of ``A~ o B~`` are formed once per batch of draws (one pass over the
    distances gives the row sums and the statistic before) and multiplied into the multipliers
    by single-precision BLAS: O(n^2) per draw, never an n x n matrix; a draw then carries a
    relative rounding of about 1e-6 of the draws' spread, far below the bootstrap's Monte Carlo
    error (the statistic itself is computed in double precision). ``method="asymptotic"``
    uses the degenerate U-statistic limit ``sum_j lambda_j (Z_j^2 - 1)``, ``lambda_j`` the
    eigenvalues of the double-centred kernel matrix over n, simulated ``n_resamples`` times.
    The p-value is ``(1 + #{T* >= T_n}) / (n_resamples + 1)``.

    Parameters
    ----------
    Y : array_like, shape ``(n, *manifold.point_shape)``
        Points on the manifold (``(n, k, k)`` for SPD and SO3).
    X : array_like or DataFrame, shape (n,) or (n, p)
    manifold : Manifold
    method : {"wild_bootstrap", "asymptotic"}
    n_resamples : int
        Bootstrap replicates, or draws of the asymptotic null.
    multiplier : {"rademacher", "normal", "mammen"}
        Law of the wild-bootstrap multipliers.
    base_point : array_like, optional
        Base point of the tangent space; default the Fréchet mean of ``Y``.
    random_state : None, int, SeedSequence or Generator
    backend : None, str, Backend or dask Client
        Where the bootstrap batches run (:func:`statcore.distributed.get_backend`).
    progress : bool
        tqdm progress bar over bootstrap batches.

    Returns
    -------
    MMDDTestResult
        ``statistic`` (``n MMDD^2``), ``pvalue``, ``null_distribution`` (the draws),
        ``estimate`` (``MMDD^2``), ``base_point``; ``alternative="greater"``. NaN with the
        reason in ``notes`` (and a ``NotApplicableWarning``) when ``X`` is constant or the
        points of ``Y`` agree up to rounding (a relative spread of at most 1e-12).

    Notes
    -----
    The null distribution treats the estimated Fréchet mean as known. In a curved space,
    ``mu^ - mu = O_p(n^-1/2)`` moves each ``V_i`` by the curvature part of the derivative of
    ``Log`` in its base point, a term that depends on ``Y_i`` (in a flat space the shift is
    common to all ``V_i`` and the centring removes it), and the bootstrap leaves it out. Its
    effect on the size was measured by simulation with fixed seeds, pairing the test at the
    estimated mean with the oracle test at the true mean ``mu0`` on the same data and
    multipliers: on the heteroscedastic nulls of :mod:`~statcore.manifold.simulate` on S^2,
    SPD(2) (affine-invariant) and H^2, at n = 30, 50 and 100 and at one and two times the
    design's tangent spread (R = 1000, B = 199), the two rejection rates at level 0.05 differ
    by at most 0.005, below the Monte Carlo error (sd 0.007 of either rate); with four times
    the spread or skewed mean-zero noise (R = 500) by at most 0.014, in the direction the
    curvature predicts (the sphere's statistic slightly larger, those of the negatively
    curved spaces smaller). So no correction is applied; were one needed, the remedy would
    be a bootstrap that carries the linearised influence of the mean estimate (or
    re-estimates the mean per replicate). Whether the paper's limit includes this term is
    not known: this part of the method is a reconstruction from the abstract and the
    MDD/FMDD literature.

    References
    ----------
    Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
    manifold-valued data. *ICML 2026*.

    Lee, C. E., Zhang, X. and Shao, X. (2020). Testing conditional mean independence for
    functional data. *Biometrika* 107(2), 331-346 (the wild bootstrap).
    """
    method = check_option(method, name="method", options=("wild_bootstrap", "asymptotic"))
    multiplier = check_option(multiplier, name="multiplier", options=MULTIPLIERS)
    n_resamples = check_positive_int(n_resamples, name="n_resamples")
    rng = check_random_state(random_state)
    given = base_point is not None
    Y, X, manifold, base_point, V = _prepare(Y, X, manifold, base_point)
    n = len(X)
    name = "MMDD test of conditional mean independence"
    null = "E[Log_mu(Y) | X] = 0 (conditional mean independence)"
    common = dict(
        nobs=n,
        alternative="greater",
        null_hypothesis=null,
        base_point=base_point,
        manifold=manifold,
        random_state_used=_seed_used(random_state),
    )
    reason = _constant_input(Y, X)
    if reason is not None:
        return MMDDTestResult.not_applicable(name, reason, **common)
    c = _centred(X, V, "u")
    estimate = _statistic(c, "u")
    statistic = n * estimate
    notes = (f"base point: {'given' if given else 'the Fréchet mean of Y'}",)
    if method == "wild_bootstrap":
        draws = _wild_bootstrap(c, n_resamples, multiplier, rng, backend, progress)
        distribution = f"wild bootstrap ({multiplier} multipliers)"
    else:
        lam, used = _null_eigenvalues(X, V, rng)
        chi = rng.standard_normal((n_resamples, lam.size)) ** 2 - 1.0
        draws = chi @ lam
        distribution = f"asymptotic: sum of lambda_j (Z_j^2 - 1), {lam.size} eigenvalues"
        if used < n:
            notes += (f"eigenvalues estimated on a random subsample of {used} points",)
    pvalue = (1.0 + np.count_nonzero(draws >= statistic)) / (n_resamples + 1.0)
    return MMDDTestResult(
        method=name,
        statistic=float(statistic),
        pvalue=float(pvalue),
        distribution=distribution,
        null_distribution=draws,
        estimate=float(estimate),
        n_resamples=n_resamples,
        notes=notes,
        **common,
    )


def _double_centre(D):
    return D - D.mean(axis=0) - D.mean(axis=1)[:, None] + D.mean()


def _pairwise(manifold: Manifold, Y) -> np.ndarray:
    """The geodesic distance matrix, in row blocks through the manifold's batched ``dist``."""
    n = len(Y)
    size = int(np.prod(Y.shape[1:]))
    rows = max(1, _BLOCK_DOUBLES // (n * size))
    D = np.empty((n, n))
    for r0 in range(0, n, rows):
        r1 = min(n, r0 + rows)
        a = np.repeat(Y[r0:r1], n, axis=0)
        b = np.tile(Y, (r1 - r0,) + (1,) * (Y.ndim - 1))
        D[r0:r1] = np.asarray(manifold.dist(a, b, check=False)).reshape(r1 - r0, n)
    np.fill_diagonal(D, 0.0)
    return 0.5 * (D + D.T)


def dcov_test(Y, X, manifold: Manifold, *, n_resamples: int = 999, random_state=None) -> TestResult:
    """Permutation test of independence of ``Y`` and ``X`` by geodesic distance covariance.

    The statistic is ``n dCov^2_n = n^-1 sum_kl A^_kl D^_kl`` with double-centred Euclidean
    distances of ``X`` and geodesic distances of ``Y`` (Székely, Rizzo and Bakirov 2007; Lyons
    2013 for metric spaces), calibrated by permuting ``X``. It tests full independence, so it
    rejects when only the spread of ``Y`` depends on ``X``: the comparator the MMDD paper
    contrasts with. Holds two n x n matrices (n up to 12,000).

    Parameters
    ----------
    Y : array_like, shape ``(n, *manifold.point_shape)``
    X : array_like or DataFrame, shape (n,) or (n, p)
    manifold : Manifold
    n_resamples : int
        Number of permutations.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    TestResult
        ``alternative="greater"``, permutation draws in ``null_distribution``. NaN with the
        reason, as in :func:`mmdd_test`, when ``X`` or ``Y`` is constant.

    References
    ----------
    Zeng, M., You, J., Liu, J. and Wang, S. (2026). On testing conditional mean independence for
    manifold-valued data. *ICML 2026* (the dCov comparator).

    Székely, G. J., Rizzo, M. L. and Bakirov, N. K. (2007). Measuring and testing dependence by
    correlation of distances. *Annals of Statistics* 35(6), 2769-2794.

    Lyons, R. (2013). Distance covariance in metric spaces. *Annals of Probability* 41(5),
    3284-3305.
    """
    n_resamples = check_positive_int(n_resamples, name="n_resamples")
    rng = check_random_state(random_state)
    Y, X, manifold = _check_sample(Y, X, manifold)
    n = len(X)
    if n > _MAX_DCOV_N:
        raise ValueError(
            f"dcov_test holds n x n distance matrices; n={n} exceeds {_MAX_DCOV_N}: test a "
            "random subsample"
        )
    name = "Geodesic distance covariance permutation test"
    common = dict(
        nobs=n,
        alternative="greater",
        null_hypothesis="Y and X are independent",
        random_state_used=_seed_used(random_state),
    )
    reason = _constant_input(Y, X)
    if reason is not None:
        return TestResult.not_applicable(name, reason, **common)
    A = _double_centre(distance.cdist(X, X))
    B = _double_centre(_pairwise(manifold, Y))
    statistic = float(np.sum(A * B) / n)
    perms = np.ascontiguousarray(rng.permuted(np.tile(np.arange(n), (n_resamples, 1)), axis=1))
    draws = _kernels.permuted_product_sums(A, B, perms) / n
    pvalue = (1.0 + np.count_nonzero(draws >= statistic * (1 - 1e-12))) / (n_resamples + 1.0)
    return TestResult(
        method=name,
        statistic=statistic,
        pvalue=float(pvalue),
        distribution="permutation",
        null_distribution=draws,
        n_resamples=n_resamples,
        estimate=statistic / n,
        **common,
    )
