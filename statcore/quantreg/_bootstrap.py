"""Bootstrap replicates of quantile regression coefficients: R quantreg's ``boot.rq`` methods.

Each method returns an ``(n_resamples, L * p)`` array of coefficient draws, level-major, whose
covariance is the bootstrap covariance (``summary.rq(se="boot")`` takes ``cov(B)``):

- ``"xy"``: pairs, rows drawn with replacement (Efron's bootstrap; ``boot.rq.xy``).
- ``"wxy"``: every row weighted by an independent Exp(1) draw (the weighted bootstrap of Bose and
  Chatterjee 2003; ``boot.rq.wxy``).
- ``"pwy"``: Parzen, Wei and Ying (1994): the estimating equation perturbed by a resampled score,
  ``W = X'(1{U < tau} - tau)``, solved exactly as R does, by one pseudo-observation
  ``(W / tau, n max|y|)`` appended to the data.
- ``"mcmb"``: the Markov chain marginal bootstrap (He and Hu 2002; Kocherginsky, He and Mu 2005),
  ported from quantreg's C ``bootnp``: in the coordinates ``x A`` (``A = V D^-1 V'`` from the
  SVD of X) each step draws, per coordinate, a sum of n resampled scores and solves that
  coordinate's one-dimensional problem as a weighted quantile; a chain, not independent draws.
- ``"wild"``: the wild bootstrap of Feng, He and Hu (2011) as quantreg writes it: residuals
  corrected by their leverage, ``r + h_ii (tau - 1{r < 0}) / f(0)`` with ``f(0)`` quantreg's
  adaptive kernel density (``akj``), multiplied by two-point weights ``-2 tau`` (probability
  ``tau``) or ``2 (1 - tau)``.

Where several levels are fitted, the same draws (rows, weights, uniforms) serve every level, so
that the replicates carry the covariance across levels; ``"mcmb"`` runs one chain per level
(``QuantReg.fit`` takes it for single-level fits only).
Random numbers come from numpy's Generator, so the draws (not their distribution) differ from R's.
"""

from __future__ import annotations

import numpy as np

METHODS = ("xy", "pwy", "mcmb", "wxy", "wild")
NAMES = {
    "xy": "pairs (xy) bootstrap",
    "wxy": "weighted (wxy, Exp(1) weights) bootstrap",
    "pwy": "Parzen-Wei-Ying (pwy) bootstrap",
    "mcmb": "Markov chain marginal bootstrap (mcmb)",
    "wild": "wild bootstrap (Feng-He-Hu)",
}
#: R's ``bootnp`` stops on a draw that picks the pseudo-point at +-1e17; more retries than this
#: in one chain mean the chain cannot move (a score sum that dwarfs the data).
MCMB_MAX_RETRIES = 100


def replicates(method, X, y, taus, betas, n_resamples, rng, solve_beta, bar):
    """Coefficient draws ``(n_resamples, L p)`` by ``method``, and a list of notes.

    ``solve_beta(X, y, tau)`` is the exact solver; ``betas`` the fitted ``(L, p)`` estimates;
    ``bar`` wraps the replicate range in a progress bar.
    """
    n, p = X.shape
    out = np.full((n_resamples, len(taus) * p), np.nan)
    notes = []
    if method == "mcmb":
        for level, (tau, beta) in enumerate(zip(taus, betas, strict=True)):
            draws, retries = mcmb_chain(X, y, tau, beta, n_resamples, rng, bar)
            out[:, level * p : (level + 1) * p] = draws
            if retries:
                notes.append(
                    f"q={tau:g}: {retries} mcmb step(s) picked the pseudo-observation at "
                    "infinity and were redrawn (R's bootnp stops there)"
                )
        return out, notes
    if method == "wild":
        wild = [_wild_parts(X, y, tau, beta) for tau, beta in zip(taus, betas, strict=True)]
    for b in bar(range(n_resamples)):
        if method == "xy":
            rows = rng.integers(0, n, size=n)
            Xb, yb = np.ascontiguousarray(X[rows]), np.ascontiguousarray(y[rows])
        elif method == "wxy":
            w = rng.exponential(1.0, size=n)
            Xb, yb = np.ascontiguousarray(X * w[:, None]), np.ascontiguousarray(y * w)
        else:
            u = rng.random(n)
        for level, tau in enumerate(taus):
            if method == "pwy":
                Xb, yb = _pwy_problem(X, y, tau, u)
            elif method == "wild":
                fitted, spread = wild[level]
                yb = fitted + np.where(u < tau, -2 * tau, 2 * (1 - tau)) * spread
                Xb = X
            out[b, level * p : (level + 1) * p] = solve_beta(Xb, yb, tau)
    return out, notes


def _pwy_problem(X, y, tau, u):
    """The data plus R's pseudo-observation: row ``W / tau`` with response ``n max|y|``, whose
    residual stays positive, so that the fit solves ``sum x_i psi(r_i) = -W``."""
    score = X.T @ ((u < tau) - tau)
    Xa = np.vstack([X, score / tau])
    ya = np.append(y, len(y) * np.max(np.abs(y)))
    return np.ascontiguousarray(Xa), ya


def _wild_parts(X, y, tau, beta):
    """Fitted values and the leverage-corrected absolute residuals of the wild bootstrap."""
    fitted = X @ beta
    resid = y - fitted
    f0 = akj_density(resid, 0.0)
    corrected = resid + leverage(X) * (tau - (resid < 0)) / f0
    return fitted, np.abs(corrected)


def leverage(X: np.ndarray) -> np.ndarray:
    """Diagonal of the hat matrix ``X (X'X)^-1 X'`` (R's ``hat(x, intercept = FALSE)``)."""
    Q, _ = np.linalg.qr(X)
    return np.einsum("ij,ij->i", Q, Q)


def akj_density(x, z: float, *, alpha: float = 0.5, kappa: float = 0.9, block: int = 2048):
    """quantreg's ``akj(x, z)$dens``: Silverman's adaptive Gaussian kernel density at ``z``.

    Bandwidth ``h = kappa min(sd, IQR / 1.34) / n^(1/5)`` (quartiles as the first order
    statistic whose cumulative weight reaches 1/4, and the mirror for 3/4); pilot densities
    ``f_i`` at the data with ``h``; local bandwidths ``h (f_i / g)^(-alpha)`` with ``g`` the
    geometric mean of the ``f_i``. Ported from the Fortran ``sakj``, with its single-precision
    constants (pi as 3.141593; 1.34 and ``g`` in float32), so that the density matches R's to
    rounding. The pilot costs O(n^2), done in blocks of ``block`` rows.
    """
    x = np.sort(np.asarray(x, dtype=float))
    n = len(x)
    con = 1.0 / np.sqrt(2.0 * 3.141593)
    sd = np.sqrt(max(np.mean(x * x) - np.mean(x) ** 2, 0.0))
    spread = min(sd, _akj_iqr(x) / float(np.float32(1.34)))
    h = kappa * spread / n**0.2
    pilot = np.empty(n)
    for start in range(0, n, block):
        d = (x[start : start + block, None] - x[None, :]) / h
        pilot[start : start + block] = np.exp(-0.5 * d * d).sum(axis=1) / (n * h)
    pilot *= con
    g = float(np.float32(np.exp(np.mean(np.log(pilot)))))
    inverse_width = (1.0 / h) * (pilot * float(np.float32(1.0 / g))) ** alpha
    u = (z - x) * inverse_width
    return float(con * np.mean(np.exp(-0.5 * u * u) * inverse_width))


def _akj_iqr(x) -> float:
    """sakj's interquartile range of sorted ``x``: the quartiles where running sums of the
    weights 1/n, from below and from above, pass 1/4 and 3/4 (the Fortran's loops, in order,
    so that the rounding of the sums is the same)."""
    n = len(x)
    total, lower = 0.0, x[n - 2]
    for i in range(n - 1):
        total += 1.0 / n
        if total >= 0.25:
            lower = x[i]
            break
    total, upper = 1.0, x[0]
    for i in range(n - 1, -1, -1):
        total -= 1.0 / n
        if total <= 0.75:
            upper = x[i]
            break
    return upper - lower


def mcmb_chain(X, y, tau, beta, n_resamples, rng, bar):
    """``n_resamples`` steps of the MCMB chain from ``beta``; returns draws and redraw count."""
    n, p = X.shape
    _, d, Vt = np.linalg.svd(X, full_matrices=False)
    A = Vt.T @ np.diag(1 / d) @ Vt
    Xt = X @ A
    if (np.abs(Xt) <= 1e-15).any():
        raise ValueError(
            "bootstrap_method='mcmb' needs every entry of the transformed design x A to be "
            "non-zero (quantreg's bootnp refuses the same); use another bootstrap_method"
        )
    theta = Vt.T @ np.diag(d) @ Vt @ beta
    resid = y - X @ beta
    psi = np.where(resid > 0, tau, np.where(resid < 0, tau - 1, 0.0))
    scores = Xt * psi[:, None]
    col_sum, col_abs = Xt.sum(axis=0), np.abs(Xt).sum(axis=0)
    scale = np.sqrt(n) / np.sqrt(n - p)
    draws = np.empty((n_resamples, p))
    retries = 0
    cols = np.arange(p)[:, None]
    for k in bar(range(n_resamples)):
        while True:
            s = scale * scores[rng.integers(0, n, size=(p, n)), cols].sum(axis=1)
            step = theta.copy()
            if all(
                _mcmb_coordinate(Xt, y, tau, step, j, s[j], col_sum[j], col_abs[j])
                for j in range(p)
            ):
                break
            retries += 1
            if retries > MCMB_MAX_RETRIES:
                raise RuntimeError(
                    f"the mcmb chain at q={tau:g} picked the pseudo-observation at infinity "
                    f"more than {MCMB_MAX_RETRIES} times; use another bootstrap_method"
                )
        theta = step
        draws[k] = A @ theta
    return draws, retries


def _mcmb_coordinate(Xt, y, tau, theta, j, s, col_sum, col_abs) -> bool:
    """Update ``theta[j]`` in place to bootnp's weighted ``taustar`` quantile of the partial
    roots; False when that picks the pseudo-point at infinity (R stops there)."""
    xj = Xt[:, j]
    extra = -s / tau
    total = col_abs + abs(extra)
    roots = (y - Xt @ theta + theta[j] * xj) / xj
    points = np.append(roots, 1e17 * np.sign(extra))
    weights = np.append(np.abs(xj), abs(extra)) / total
    level = (tau - 0.5) * (col_sum + extra) / total + 0.5
    order = np.argsort(points, kind="stable")
    cumulative = np.cumsum(weights[order][: len(y)])
    pick = min(int(np.searchsorted(cumulative, level, side="right")), len(y) - 1)
    value = points[order][pick]
    if abs(value) > 1e16:
        return False
    theta[j] = value
    return True
