"""One-shot magnitude pruning and compute-adaptive early exit: predictions and the experiments
that check them, from a single neuron at large input dimension to deep ReLU networks.

A neuron's *full* local field is ``h = w . x``; a *partial* one ``h_S = w_S . x`` uses only the
inputs in ``S``. One-shot magnitude pruning keeps the ``kappa d`` largest ``|w_i|`` (static
regime); the *conditional perceptron* answers ``sign(h_S)`` when ``|h_S| > tau`` and computes
the full ``h`` otherwise (adaptive regime, early exit). Everything follows from the alignment
``rho = cos(w_S, w)`` between the partial and the full computation.

Closed forms (Gaussian inputs ``x ~ N(0, I_d)``, ``||w|| = 1``):

=============================  ================================================================
:func:`pruning_alignment`      ``rho^2 = m(kappa)``, the energy the top-``kappa`` magnitudes keep
:func:`pruning_alignment_sd`   its finite-``d`` fluctuation, ``O(d^{-1/2})``
:func:`sign_disagreement`      ``P(sign h_S != sign h) = arccos(rho) / pi``
:func:`early_exit_mass`        ``g(tau) = P(|h_S| > tau) = 2 Phi_bar(tau / rho)``
:func:`compute_gap`            ``Delta(tau) = (1 - kappa) g(tau)``, the compute saved
:func:`excess_error`           ``E(tau) = P(|h_S| > tau, sign h_S != sign h)``
:func:`excess_error_exponent`  ``1 / (1 - rho^2)``: ``E ~ Delta^{1/(1-rho^2)}`` as ``tau -> inf``
:func:`depth_correlations`     dense-pruned correlation per layer of a ReLU net (NNGP recursion)
=============================  ================================================================

and, in :mod:`statcore.theory.pruning_simulators`, three predict-and-simulate models whose
``simulate`` returns a results object that sets the theory against Monte Carlo estimates with
intervals: ``MagnitudePruning``, ``ConditionalPerceptron``, ``PrunedReLUNetwork`` (whose
``predict(tau)`` and
``simulate(tau=...)`` also give the early-exit law of a deep conditional network: the
single-neuron ``E(tau; rho)`` at ``rho = c_l``).

Fidelity
--------
Reconstruction. Only the paper's abstract could be read (ICML 2026 poster 63550; no full text,
no authors' code). The abstract fixes the objects (one-shot magnitude pruning of a single
neuron with a concentration theorem, the conditional perceptron whose excess error decays as a
power of the compute gap with an exponent that grows without bound as the alignment tends to
one, the accumulation of pruning distortion with depth under an NNGP model). Every formula here
is a *reconstruction* derived for statcore and checked by simulation, not the paper's
statement: Gaussian weights (Laplace and uniform offered as alternatives), the compute gap as
the saved fraction ``(1 - kappa) g``, the excess error as the disagreement with the full
neuron, the ReLU arc-cosine recursion for the depth, and the deep early exit from a calibrated
readout of the pruned network (the paper's frozen-backbone construction is not known)."""

from __future__ import annotations

import numbers

import numpy as np
from scipy import integrate, optimize, special, stats

from statcore.validation import (
    as_float_array,
    check_option,
    check_positive_int,
    check_scalar,
    describe,
)

REFERENCE = (
    "Theoretical Guarantees for One-Shot Magnitude Pruning and Compute-Adaptive Early Exit. "
    "ICML 2026, poster 63550 (https://icml.cc/virtual/2026/poster/63550); workshop precursor "
    "https://openreview.net/forum?id=lES1d4ILSR."
)

#: law of |w_i| for each weight law (the energy fraction is scale free, so scales are immaterial)
_ABS_LAWS = {"gaussian": stats.halfnorm, "laplace": stats.expon, "uniform": stats.uniform}
WEIGHT_LAWS = tuple(_ABS_LAWS)


# --- argument checks ----------------------------------------------------------------------------


def _check_grid(values, *, name, low=None, high=None, low_inclusive=True, high_inclusive=True):
    """A scalar or 1-D grid inside a range; returns (1-D float array, whether it was a scalar).

    The message names the argument, the range and the first offending value.
    """
    if isinstance(values, numbers.Real) and not isinstance(values, bool):
        check_scalar(
            values,
            name=name,
            low=low,
            high=high,
            low_inclusive=low_inclusive,
            high_inclusive=high_inclusive,
        )
        return np.array([float(values)]), True
    arr = as_float_array(values, name=name, ndim=(0, 1))
    scalar = arr.ndim == 0
    arr = np.atleast_1d(arr)
    if arr.size == 0:
        raise ValueError(f"`{name}` must hold at least one value; got an empty array")
    below = (
        np.zeros(arr.shape, bool) if low is None else (arr < low if low_inclusive else arr <= low)
    )
    above = (
        np.zeros(arr.shape, bool)
        if high is None
        else (arr > high if high_inclusive else arr >= high)
    )
    bad = below | above
    if bad.any():
        left, right = ("[" if low_inclusive else "("), ("]" if high_inclusive else ")")
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        raise ValueError(
            f"`{name}` must lie in {left}{lo}, {hi}{right}; got {float(arr[bad][0])!r} "
            f"({int(bad.sum())} value(s) outside)"
        )
    return arr, scalar


def _check_kappa(kappa):
    return _check_grid(kappa, name="kappa", low=0.0, high=1.0, low_inclusive=False)


def _check_rho(rho):
    # rho = 1 leaves nothing to disagree about (the exponent is infinite); rho = 0 never exits
    return _check_grid(
        rho, name="rho", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False
    )


def _check_tau(tau):
    return _check_grid(tau, name="tau", low=0.0)


def _scalar_rho(rho) -> float:
    """A scalar alignment in (0, 1): an array is refused, never reduced to its first entry."""
    if not (isinstance(rho, numbers.Real) and not isinstance(rho, bool)):
        raise TypeError(f"`rho` must be a real number; got {describe(rho)}")
    return float(_check_rho(rho)[0][0])


def _check_tau_rho(tau, rho):
    """The threshold grid (with whether it was a scalar) and the scalar alignment of the
    early-exit formulas."""
    tau, scalar = _check_tau(tau)
    return tau, scalar, _scalar_rho(rho)


def _out(values, scalar):
    return float(values[0]) if scalar else values


def _kept(kappa: float, d: int) -> int:
    """How many of ``d`` weights one-shot pruning at ``kappa`` keeps (at least one)."""
    k = int(round(kappa * d))
    if k < 1:
        raise ValueError(
            f"`kappa`={kappa:g} keeps no weight of `d`={d}; use kappa >= {0.5 / d:g} or a larger d"
        )
    return k


# --- closed forms -------------------------------------------------------------------------------


def pruning_alignment(kappa, *, weight_law: str = "gaussian"):
    """Squared alignment ``m(kappa) = rho^2`` of a neuron with its one-shot magnitude-pruned copy.

    Keeping the ``kappa d`` largest ``|w_i|`` of i.i.d. weights keeps the fraction
    ``m = E[w^2 1{|w| > t}] / E[w^2]`` of the energy, ``t`` the ``1 - kappa`` quantile of
    ``|w|``; since ``w . w_S = ||w_S||^2``, ``cos(w, w_S)^2 = m``. Gaussian weights give
    ``m = kappa + 2 t phi(t)`` with ``t = Phi^{-1}(1 - kappa / 2)``.

    Parameters
    ----------
    kappa : float or array_like
        Fraction of weights kept, in (0, 1].
    weight_law : {"gaussian", "laplace", "uniform"}
        Law of the weights (symmetric; the scale does not matter).

    Returns
    -------
    float or ndarray
        ``m(kappa)`` (0.4393, 0.7833, 0.9287 at kappa = 0.1, 0.3, 0.5 for Gaussian weights).

    References
    ----------
    See the module's ``REFERENCE``.

    Fidelity
    --------
    Reconstruction: the paper's weight law is not known (only its abstract was read); Laplace
    (``m = kappa (t^2 + 2t + 2) / 2``, ``t = -log kappa``) and uniform (``m = 1 - (1-kappa)^3``)
    weights show how much the law matters.
    """
    kappa, scalar = _check_kappa(kappa)
    law = check_option(weight_law, name="weight_law", options=WEIGHT_LAWS)
    if law == "gaussian":
        t = stats.norm.isf(kappa / 2)
        m = kappa + 2 * t * stats.norm.pdf(t)
    elif law == "laplace":
        t = -np.log(kappa)
        m = kappa * (t * t + 2 * t + 2) / 2
    else:
        m = 1 - (1 - kappa) ** 3
    return _out(np.minimum(m, 1.0), scalar)


def pruning_alignment_sd(kappa, d, *, weight_law: str = "gaussian"):
    """Standard deviation of the realised ``rho^2`` of one neuron with ``d`` i.i.d. weights.

    The realised energy fraction is a ratio of a trimmed sum (above an order statistic) to the
    full sum of ``w_i^2``; its influence function gives the asymptotic standard deviation
    ``sigma(kappa) / sqrt(d)``: the ``O(d^{-1/2})`` concentration rate.

    Parameters
    ----------
    kappa : float or array_like
        Fraction of weights kept, in (0, 1].
    d : int
        Input dimension (number of weights of the neuron), at least 2.
    weight_law : {"gaussian", "laplace", "uniform"}
        Law of the weights.

    Returns
    -------
    float or ndarray

    Fidelity
    --------
    Reconstruction: the paper proves a concentration theorem "with explicit rates" whose
    constants were not read; this is the delta-method standard deviation (checked against
    brute-force simulation), not the paper's bound.
    """
    kappa, scalar = _check_kappa(kappa)
    d = check_positive_int(d, name="d", minimum=2)
    law = _ABS_LAWS[check_option(weight_law, name="weight_law", options=WEIGHT_LAWS)]
    m = np.atleast_1d(pruning_alignment(kappa, weight_law=weight_law))
    energy = law.moment(2)
    upper = law.support()[1]
    out = np.empty(kappa.shape)
    for i, (kap, mi) in enumerate(zip(kappa, m, strict=True)):
        q = law.isf(kap) ** 2

        # influence of one weight |w| = x on the ratio (kept energy) / (total energy),
        # normalised by the mean energy: the trimmed sum moves with its threshold quantile
        def influence_sq(x, q=q, kap=kap, mi=mi):
            u = x * x / energy
            qn = q / energy
            value = (u - qn) * (u > qn) + qn * kap - mi - mi * (u - 1.0)
            return value * value * law.pdf(x)

        t = np.sqrt(q)
        var = integrate.quad(influence_sq, 0.0, t, limit=200)[0]
        if t < upper:
            var += integrate.quad(influence_sq, t, upper, limit=200)[0]
        out[i] = np.sqrt(var / d)
    return _out(out, scalar)


def sign_disagreement(rho):
    """``P(sign h_S != sign h) = arccos(rho) / pi`` for jointly Gaussian fields of correlation
    ``rho`` (Sheppard's formula): how often the pruned neuron flips the full one's sign.

    Parameters
    ----------
    rho : float or array_like
        Correlation of the partial and the full field, in [-1, 1].
    """
    rho, scalar = _check_grid(rho, name="rho", low=-1.0, high=1.0)
    return _out(np.arccos(rho) / np.pi, scalar)


def early_exit_mass(tau, rho):
    """Fraction of inputs on which the conditional perceptron exits early,
    ``g(tau) = P(|h_S| > tau) = 2 Phi_bar(tau / rho)`` with ``h_S ~ N(0, rho^2)``.

    Parameters
    ----------
    tau : float or array_like
        Exit threshold, >= 0.
    rho : float
        Alignment of the partial with the full field, in (0, 1).

    Fidelity
    --------
    Reconstruction (the paper's definitions were not read): unit-norm full weights and Gaussian
    inputs, so that ``h_S`` and ``h - h_S`` are independent centred Gaussians of variances
    ``rho^2`` and ``1 - rho^2``.
    """
    tau, scalar, rho = _check_tau_rho(tau, rho)
    return _out(2 * stats.norm.sf(tau / rho), scalar)


def compute_gap(tau, rho, kappa):
    """Compute saved by the conditional perceptron, ``Delta(tau) = (1 - kappa) g(tau)``, as a
    fraction of the full neuron's cost: the remaining ``(1 - kappa) d`` products are skipped on
    the early-exit mass ``g(tau)``.

    Parameters
    ----------
    tau : float or array_like
        Exit threshold, >= 0.
    rho : float
        Alignment, in (0, 1).
    kappa : float
        Fraction of inputs the partial field uses, in (0, 1].

    Fidelity
    --------
    Reconstruction: the paper's exact definition of the compute gap is not known; this one goes
    to zero with the excess error as ``tau`` grows, as the abstract's power law needs.
    """
    kappa = _scalar_kappa(kappa)
    g = early_exit_mass(tau, rho)
    return (1 - kappa) * g


def _log_integrand(s, rho, sigma):
    return stats.norm.logpdf(s / rho) - np.log(rho) + special.log_ndtr(-s / sigma)


def _log_excess_error(tau: float, rho: float) -> float:
    """``log E(tau)``: the integrand is scaled by its value at ``tau`` so that quad sees O(1)
    numbers even where ``E`` underflows double precision's relative resolution."""
    sigma = np.sqrt(1 - rho * rho)
    top = _log_integrand(tau, rho, sigma)
    value = integrate.quad(
        lambda v: np.exp(_log_integrand(tau + v, rho, sigma) - top), 0.0, np.inf, epsrel=1e-11
    )[0]
    return float(np.log(2.0) + top + np.log(value))


def excess_error(tau, rho):
    """Excess error of the conditional perceptron over the full neuron,
    ``E(tau) = 2 int_tau^inf rho^{-1} phi(s / rho) Phi_bar(s / sqrt(1 - rho^2)) ds``.

    It is the probability that the perceptron exits early (``|h_S| > tau``) with the sign that
    the full field would have reversed; ``E(0) = arccos(rho) / pi`` and
    ``E(1) = 3.845e-3`` at ``rho = 0.8``. Computed by adaptive quadrature in scaled form
    (accurate far into the tail).

    Parameters
    ----------
    tau : float or array_like
        Exit threshold, >= 0.
    rho : float
        Alignment, in (0, 1).

    Returns
    -------
    float or ndarray

    Fidelity
    --------
    Reconstruction: the excess error is taken against the full neuron as the reference
    (teacher = full neuron); with a different teacher it bounds the excess error from above.
    """
    tau, scalar, rho = _check_tau_rho(tau, rho)
    return _out(np.exp([_log_excess_error(t, rho) for t in tau]), scalar)


def excess_error_exponent(rho):
    """Limit exponent ``1 / (1 - rho^2)`` of ``E ~ Delta^{exponent}`` as ``tau -> inf`` (up to
    polylogarithmic factors); it grows without bound as the alignment tends to one.

    Parameters
    ----------
    rho : float or array_like
        Alignment, in (0, 1).

    Fidelity
    --------
    Reconstruction: derived from the Gaussian tails of ``E`` and ``g``; the abstract states
    the shape (a power law whose exponent diverges as rho -> 1), not this value.
    """
    rho, scalar = _check_rho(rho)
    return _out(1.0 / (1.0 - rho * rho), scalar)


def local_exponent(tau, rho):
    """Local log-log slope ``d log E / d log g = g(tau) Phi_bar(tau / sigma) / E(tau)``, which
    tends to :func:`excess_error_exponent` as ``tau`` grows (faster than ``log E / log g``).

    Parameters
    ----------
    tau : float or array_like
        Exit threshold, >= 0.
    rho : float
        Alignment, in (0, 1).
    """
    tau, scalar, rho = _check_tau_rho(tau, rho)
    sigma = np.sqrt(1 - rho * rho)
    log_g = np.log(2.0) + special.log_ndtr(-tau / rho)
    log_e = np.array([_log_excess_error(t, rho) for t in tau])
    return _out(np.exp(log_g + special.log_ndtr(-tau / sigma) - log_e), scalar)


def fit_exponent(gap, error) -> float:
    """Least-squares slope of ``log error`` on ``log gap``: the fitted power-law exponent.

    Parameters
    ----------
    gap, error : array_like
        Compute gaps (or early-exit masses) and excess errors, positive, at least 2 points.
    """
    gap = as_float_array(gap, name="gap", ndim=1, min_rows=2)
    error = as_float_array(error, name="error", ndim=1, min_rows=2)
    if len(gap) != len(error):
        raise ValueError(
            f"`gap` and `error` must have the same length; got {len(gap)} and {len(error)}"
        )
    for name, values in (("gap", gap), ("error", error)):
        if (values <= 0).any():
            raise ValueError(f"`{name}` must be positive to fit a power law; got {values.min()!r}")
    return float(np.polyfit(np.log(gap), np.log(error), 1)[0])


def relu_correlation(c):
    """Arc-cosine map of ReLU, ``k(c) = (sqrt(1 - c^2) + (pi - arccos c) c) / pi``: the
    correlation of ``relu(u), relu(v)`` normalised by their second moments, for centred jointly
    Gaussian ``u, v`` of correlation ``c`` (Cho and Saul, 2009).

    Parameters
    ----------
    c : float or array_like
        Correlation in [-1, 1].
    """
    c, scalar = _check_grid(c, name="c", low=-1.0, high=1.0)
    return _out((np.sqrt(1 - c * c) + (np.pi - np.arccos(c)) * c) / np.pi, scalar)


def depth_correlations(kappa, depth, *, weight_law: str = "gaussian"):
    """Correlation ``c_l`` of the dense and the magnitude-pruned pre-activations at layers
    ``l = 1..depth`` of a wide ReLU network (every layer pruned at random initialisation).

    ``c_1 = sqrt(m)``, ``c_{l+1} = sqrt(m) k(c_l)``, ``m = m(kappa)``: each pruned layer keeps
    the fraction ``m`` of each neuron's energy and the ReLU map ``k`` propagates the incoming
    correlation. The distortion ``1 - c_l`` grows with depth to ``1 - c*``, ``c*`` the fixed
    point (:func:`depth_fixed_point`).

    Parameters
    ----------
    kappa : float
        Fraction of each neuron's weights kept, in (0, 1].
    depth : int
        Number of layers, >= 1.
    weight_law : {"gaussian", "laplace", "uniform"}
        Law of the weights.

    Returns
    -------
    ndarray of shape (depth,)

    Fidelity
    --------
    Reconstruction of the paper's deep extension (NNGP limit, masks independent of the
    activations because each layer's weights are): the recursion is derived here.
    """
    depth = check_positive_int(depth, name="depth")
    root_m = np.sqrt(pruning_alignment(_scalar_kappa(kappa), weight_law=weight_law))
    out = np.empty(depth)
    c = root_m
    for layer in range(depth):
        out[layer] = c
        c = root_m * relu_correlation(min(c, 1.0))
    return out


def depth_fixed_point(kappa, *, weight_law: str = "gaussian") -> float:
    """Fixed point ``c* = sqrt(m) k(c*)`` that the depth recursion approaches (1 when nothing
    is pruned): the distortion of an infinitely deep pruned ReLU network.

    Parameters
    ----------
    kappa : float
        Fraction kept, in (0, 1].
    weight_law : {"gaussian", "laplace", "uniform"}
    """
    root_m = np.sqrt(pruning_alignment(_scalar_kappa(kappa), weight_law=weight_law))
    if root_m >= 1.0:
        return 1.0
    # sqrt(m) k(0) > 0 and sqrt(m) k(1) - 1 < 0, and k is convex: one root in (0, 1)
    return float(optimize.brentq(lambda c: root_m * relu_correlation(c) - c, 0.0, 1.0, xtol=1e-14))


def _scalar_kappa(kappa) -> float:
    if not (isinstance(kappa, numbers.Real) and not isinstance(kappa, bool)):
        raise TypeError(f"`kappa` must be a real number; got {describe(kappa)}")
    return check_scalar(kappa, name="kappa", low=0.0, high=1.0, low_inclusive=False)


def kappa_for_alignment(rho, *, weight_law: str = "gaussian") -> float:
    """The fraction ``kappa`` whose magnitude pruning gives alignment ``rho``
    (inverse of ``sqrt(m(kappa))``).

    Parameters
    ----------
    rho : float
        Target alignment, in (0, 1).
    weight_law : {"gaussian", "laplace", "uniform"}
    """
    rho = _scalar_rho(rho)
    target = rho * rho
    # m is increasing from 0 (kappa -> 0) to 1 (kappa = 1)
    return float(
        optimize.brentq(
            lambda k: pruning_alignment(k, weight_law=weight_law) - target, 1e-300, 1.0, xtol=1e-15
        )
    )


def magnitude_prune(weights, kappa):
    """One-shot neuron-wise magnitude pruning: keep the ``round(kappa * n_in)`` largest
    ``|w|`` of each row (neuron) and zero the rest.

    Parameters
    ----------
    weights : array_like of shape (n_in,) or (n_out, n_in)
        One neuron's weights or a layer's weight matrix (rows are neurons).
    kappa : float
        Fraction kept per neuron, in (0, 1].

    Returns
    -------
    ndarray
        A pruned copy (the input is not modified); ties at the threshold are all kept.
    """
    w = as_float_array(weights, name="weights", ndim=(1, 2), min_rows=1)
    if w.shape[-1] == 0:
        raise ValueError("`weights` has no inputs (its last axis is empty)")
    kappa = _scalar_kappa(kappa)
    return _prune_rows(np.atleast_2d(w), _kept(kappa, w.shape[-1])).reshape(w.shape)


def _prune_rows(w: np.ndarray, k: int) -> np.ndarray:
    n_in = w.shape[1]
    if k >= n_in:
        return w.copy()
    mag = np.abs(w)
    threshold = np.partition(mag, n_in - k, axis=1)[:, n_in - k]
    return np.where(mag >= threshold[:, None], w, 0.0)


def _draw_weights(rng, law: str, size) -> np.ndarray:
    if law == "gaussian":
        return rng.standard_normal(size)
    if law == "laplace":
        return rng.laplace(size=size)
    return rng.uniform(-1.0, 1.0, size=size)


__all__ = [
    "REFERENCE",
    "WEIGHT_LAWS",
    "compute_gap",
    "depth_correlations",
    "depth_fixed_point",
    "early_exit_mass",
    "excess_error",
    "excess_error_exponent",
    "fit_exponent",
    "kappa_for_alignment",
    "local_exponent",
    "magnitude_prune",
    "pruning_alignment",
    "pruning_alignment_sd",
    "relu_correlation",
    "sign_disagreement",
]
