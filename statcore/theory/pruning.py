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

and three predict-and-simulate models, whose ``simulate`` returns a results object that sets the
theory against Monte Carlo estimates with intervals: :class:`MagnitudePruning`,
:class:`ConditionalPerceptron`, :class:`PrunedReLUNetwork` (whose ``predict(tau)`` and
``simulate(tau=...)`` also give the early-exit law of a deep conditional network: the
single-neuron ``E(tau; rho)`` at ``rho = c_l``).

Fidelity
--------
Only the paper's abstract could be read (ICML 2026 poster 63550; no full text, no authors'
code). The abstract fixes the objects (one-shot magnitude pruning of a single neuron with a
concentration theorem, the conditional perceptron whose excess error decays as a power of the
compute gap with an exponent that grows without bound as the alignment tends to one, the
accumulation of pruning distortion with depth under an NNGP model). Every formula here is a
*reconstruction* derived for statcore and checked by simulation, not the paper's statement:
Gaussian weights (Laplace and uniform offered as alternatives), the compute gap as the saved
fraction ``(1 - kappa) g``, the excess error as the disagreement with the full neuron, the
ReLU arc-cosine recursion for the depth, and the deep early exit from a calibrated readout of
the pruned network (the paper's frozen-backbone construction is not known).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import integrate, optimize, special, stats

from statcore.base import Estimator
from statcore.results import Results
from statcore.results.plotting import get_ax, panel_axes
from statcore.validation import (
    as_float_array,
    check_alpha,
    check_option,
    check_positive_int,
    check_random_state,
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
    tau, scalar = _check_tau(tau)
    rho = float(_check_rho(rho)[0][0])
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
    kappa = float(_check_kappa(kappa)[0][0])
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
    tau, scalar = _check_tau(tau)
    rho = float(_check_rho(rho)[0][0])
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
    tau, scalar = _check_tau(tau)
    rho = float(_check_rho(rho)[0][0])
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
    rho = float(_check_rho(rho)[0][0])
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
    w = as_float_array(weights, name="weights", ndim=(1, 2))
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


# --- results ------------------------------------------------------------------------------------


def _plot_theory(results, ax=None, alpha=0.05, quantities=None, **kwargs):
    """Theory curves (lines) against Monte Carlo means with ``1 - alpha`` intervals (points),
    one panel per quantity; dashed: the theory at the realised alignments."""
    table = results.tidy(alpha)
    quantities = list(table["term"].unique()) if quantities is None else list(quantities)
    axes = panel_axes(len(quantities), ax)
    grid = results.grid_name
    for panel, name in zip(axes, quantities, strict=True):
        rows = table[table["term"] == name]
        theory = results.theory
        panel.plot(theory[grid], theory[name], color="C0", lw=1.5, label="theory")
        if rows["theory_realised"].notna().any():
            panel.plot(
                rows[grid],
                rows["theory_realised"],
                "--",
                color="C2",
                lw=1,
                label="theory, realised rho",
            )
        errors = np.vstack(
            [rows["estimate"] - rows["conf_low"], rows["conf_high"] - rows["estimate"]]
        )
        panel.errorbar(
            rows[grid],
            rows["estimate"],
            yerr=errors,
            fmt="o",
            ms=4,
            color="C3",
            capsize=2,
            label=f"simulation ({1 - alpha:.0%} MC interval)",
            **kwargs,
        )
        panel.set_xlabel(grid)
        panel.set_title(name.replace("_", " "))
    axes[-1].legend(frameon=False, fontsize="small")
    return axes


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class TheoryCheckResults(Results):
    """A theory's curve set against Monte Carlo replicates of the experiment.

    Attributes
    ----------
    grid_name : str
        The variable the curve runs over (``"kappa"``, ``"tau"``, ``"layer"``).
    theory : DataFrame
        One row per grid value: the grid column and one column per predicted quantity.
    replicates : DataFrame
        Long table ``rep, <grid_name>, quantity, value, theory_realised``: one simulated value
        per replicate, grid value and quantity; ``theory_realised`` is the prediction at that
        replicate's realised alignment (NaN where it does not apply).
    n_reps : int
        Independent replicates (fresh weights and inputs each).
    settings : dict
        The sizes of the experiment (``d``, ``width``, ``n_inputs``, ``weight_law``, ...).
    """

    grid_name: str
    theory: pd.DataFrame
    replicates: pd.DataFrame
    n_reps: int
    settings: dict

    _plots: ClassVar[dict] = {"theory": _plot_theory}

    def tidy(self, alpha: float = 0.05) -> pd.DataFrame:
        """One row per grid value and quantity: ``<grid>, term, theory, theory_realised,
        estimate, std_error, statistic, p_value, conf_low, conf_high``.

        ``estimate`` is the mean over replicates and ``std_error`` its Monte Carlo standard
        error (replicate standard deviation / sqrt(n_reps)); the interval is Student's t one
        with ``n_reps - 1`` degrees of freedom at level ``1 - alpha`` (honest with the few
        replicates that costly experiments allow); ``statistic`` and ``p_value`` test
        ``estimate = theory`` on the same t law (NaN where the replicates do not vary). The
        theory is asymptotic (d or width -> inf), so with many replicates finite-size bias, not
        a wrong formula, can make the test reject: compare with ``theory_realised`` too.
        """
        alpha = check_alpha(alpha)
        grid = self.grid_name
        groups = self.replicates.groupby([grid, "quantity"], sort=False)
        frame = groups.agg(
            estimate=("value", "mean"),
            sd=("value", "std"),
            theory_realised=("theory_realised", "mean"),
        ).reset_index()
        frame = frame.rename(columns={"quantity": "term"})
        long = self.theory.melt(id_vars=grid, var_name="term", value_name="theory")
        frame = frame.merge(long, on=[grid, "term"], how="left")
        frame["std_error"] = frame.pop("sd") / np.sqrt(self.n_reps)
        spread = frame["std_error"].where(frame["std_error"] > 0)
        frame["statistic"] = (frame["estimate"] - frame["theory"]) / spread
        law = stats.t(df=self.n_reps - 1)
        frame["p_value"] = 2 * law.sf(np.abs(frame["statistic"]))
        half = law.isf(alpha / 2) * frame["std_error"]
        frame["conf_low"] = frame["estimate"] - half
        frame["conf_high"] = frame["estimate"] + half
        columns = [grid, "term", "theory", "theory_realised", "estimate", "std_error",
                   "statistic", "p_value", "conf_low", "conf_high"]  # fmt: skip
        return frame[columns]

    def glance(self) -> pd.DataFrame:
        row = super().glance().iloc[0].to_dict()
        row.update(n_reps=self.n_reps, **self.settings)
        return pd.DataFrame([row])

    def _repr_lines(self) -> list[str]:
        table = self.tidy()
        worst = (table["estimate"] - table["theory"]).abs().max()
        return [f"  {len(table)} (grid, quantity) cells; max |simulation - theory| = {worst:.3g}"]


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class PruningAlignmentResults(TheoryCheckResults):
    """:meth:`MagnitudePruning.simulate`: realised ``rho^2`` and sign disagreement against
    ``m(kappa)`` and ``arccos(sqrt(m)) / pi``, over a grid of ``kappa``."""


def _plot_tradeoff(results, ax=None, alpha=0.05, **kwargs):
    """Excess error against compute gap on log-log axes, with the limit slope
    ``1 / (1 - rho^2)`` drawn through the last theory point."""
    ax = get_ax(ax)
    theory = results.theory
    ax.loglog(theory["compute_gap"], theory["excess_error"], color="C0", lw=1.5, label="theory")
    sims = results.tidy(alpha).pivot(index="tau", columns="term", values="estimate")
    ok = (sims["excess_error"] > 0) & (sims["compute_gap"] > 0)
    ax.loglog(
        sims.loc[ok, "compute_gap"],
        sims.loc[ok, "excess_error"],
        "o",
        color="C3",
        ms=4,
        label="simulation",
        **kwargs,
    )
    slope = results.settings["exponent"]
    x_end, y_end = theory["compute_gap"].iloc[-1], theory["excess_error"].iloc[-1]
    x = np.geomspace(x_end, theory["compute_gap"].iloc[0], 20)
    ax.loglog(
        x, y_end * (x / x_end) ** slope, ":", color="0.4", label=f"slope 1/(1-rho^2) = {slope:.2f}"
    )
    ax.set_xlabel("compute gap (1 - kappa) g(tau)")
    ax.set_ylabel("excess error E(tau)")
    ax.set_title(f"conditional perceptron, rho = {results.settings['rho']:.3f}")
    ax.legend(frameon=False)
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class EarlyExitResults(TheoryCheckResults):
    """:meth:`ConditionalPerceptron.simulate`: early-exit mass, compute gap and excess error
    over a grid of thresholds ``tau``, theory against simulation."""

    _plots: ClassVar[dict] = {"theory": _plot_theory, "tradeoff": _plot_tradeoff}

    def exponent(self, tau_min: float = 0.0, *, source: str = "simulation") -> float:
        """Fitted power-law exponent: slope of ``log E`` on ``log Delta`` over ``tau >= tau_min``.

        Parameters
        ----------
        tau_min : float
            Smallest threshold used (the power law is a large-``tau`` statement).
        source : {"simulation", "theory"}
            Fit the Monte Carlo means (grid points with a positive estimate) or the theory.
        """
        tau_min = check_scalar(tau_min, name="tau_min", low=0.0)
        source = check_option(source, name="source", options=("simulation", "theory"))
        if source == "theory":
            table = self.theory
        else:
            table = self.tidy().pivot(index="tau", columns="term", values="estimate").reset_index()
        table = table[(table["tau"] >= tau_min) & (table["excess_error"] > 0)]
        if len(table) < 2:
            raise ValueError(
                f"`tau_min`={tau_min:g} leaves fewer than 2 thresholds with a positive excess "
                "error; lower it or simulate more inputs"
            )
        return fit_exponent(table["compute_gap"], table["excess_error"])


def _plot_layers(results, ax=None, alpha=0.05, **kwargs):
    """Dense-pruned correlation per layer: recursion (line), width-N simulation (points with
    intervals) and the fixed point ``c*`` (dotted)."""
    ax = _plot_theory(results, ax=ax, alpha=alpha, **kwargs)[0]
    ax.axhline(results.settings["fixed_point"], ls=":", color="0.4", label="fixed point c*")
    ax.legend(frameon=False, fontsize="small")
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class DepthResults(TheoryCheckResults):
    """:meth:`PrunedReLUNetwork.simulate`: per-layer correlation of dense and pruned
    pre-activations against the NNGP recursion."""

    _plots: ClassVar[dict] = {"layers": _plot_layers}


# --- models -------------------------------------------------------------------------------------


class _TheoryModel(Estimator):
    """A theory's specification: ``predict`` gives its curve, ``simulate`` runs the experiment.

    Nothing is fitted, so there are no observations; ``simulate``'s keyword options are
    recorded on its results as ``fit_options``.
    """

    @property
    def nobs(self):
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_spec()})"

    def _simulation_fields(self, random_state) -> dict:
        seed = random_state if isinstance(random_state, numbers.Integral) else None
        return {"model": self, "random_state_used": seed}


class MagnitudePruning(_TheoryModel):
    """One-shot magnitude pruning of a single neuron with ``d`` inputs.

    Parameters
    ----------
    d : int
        Input dimension (weights per neuron), >= 2.
    weight_law : {"gaussian", "laplace", "uniform"}
        Law of the i.i.d. weights.

    Examples
    --------
    >>> model = MagnitudePruning(d=2000)
    >>> model.predict([0.1, 0.3, 0.5])["alignment"].round(4).tolist()
    [0.4393, 0.7833, 0.9287]

    References
    ----------
    See the module's ``REFERENCE``; the Fidelity section of :func:`pruning_alignment`.
    """

    method_name = "One-shot magnitude pruning of a neuron"

    def __init__(self, d: int = 1000, *, weight_law: str = "gaussian"):
        self.d = check_positive_int(d, name="d", minimum=2)
        self.weight_law = check_option(weight_law, name="weight_law", options=WEIGHT_LAWS)

    def _repr_spec(self) -> str:
        return f"d={self.d}, weight_law={self.weight_law!r}"

    def predict(self, kappa) -> pd.DataFrame:
        """The theory over ``kappa``: ``kappa, alignment`` (``rho^2 = m``), ``rho``,
        ``disagreement`` (``arccos(rho) / pi``) and ``alignment_sd`` (the finite-``d``
        standard deviation of the realised ``rho^2``)."""
        kappa, _ = _check_kappa(kappa)
        m = np.atleast_1d(pruning_alignment(kappa, weight_law=self.weight_law))
        return pd.DataFrame(
            {
                "kappa": kappa,
                "alignment": m,
                "rho": np.sqrt(m),
                "disagreement": np.arccos(np.sqrt(m)) / np.pi,
                "alignment_sd": np.atleast_1d(
                    pruning_alignment_sd(kappa, self.d, weight_law=self.weight_law)
                ),
            }
        )

    def simulate(
        self, kappa, *, n_reps: int = 20, n_inputs: int = 4000, random_state=None
    ) -> PruningAlignmentResults:
        """Draw ``n_reps`` neurons, prune each at every ``kappa`` and measure the realised
        ``rho^2`` and, on ``n_inputs`` Gaussian inputs, the sign disagreement.

        Parameters
        ----------
        kappa : float or array_like
            Fractions kept, in (0, 1] (each must keep at least one of the ``d`` weights).
        n_reps : int
            Independent neurons, >= 2 (the intervals need a spread).
        n_inputs : int
            Gaussian inputs per neuron for the disagreement (shared across ``kappa``: common
            random numbers make the curve smooth).
        random_state : None, int, SeedSequence or Generator

        Returns
        -------
        PruningAlignmentResults
        """
        kappa, _ = _check_kappa(kappa)
        n_reps = check_positive_int(n_reps, name="n_reps", minimum=2)
        n_inputs = check_positive_int(n_inputs, name="n_inputs")
        kept = [_kept(k, self.d) for k in kappa]
        rng = check_random_state(random_state)
        rows = []
        for rep in range(n_reps):
            w = _draw_weights(rng, self.weight_law, self.d)
            energy = np.sort(w * w)[::-1]
            x = rng.standard_normal((n_inputs, self.d))
            sign_full = np.sign(x @ w)
            for kap, k in zip(kappa, kept, strict=True):
                m_hat = energy[:k].sum() / energy.sum()
                w_s = _prune_rows(w[None, :], k)[0]
                flips = np.mean(np.sign(x @ w_s) != sign_full)
                rows.append((rep, kap, "alignment", m_hat, np.nan))
                rows.append((rep, kap, "disagreement", flips, np.arccos(np.sqrt(m_hat)) / np.pi))
        theory = self.predict(kappa)[["kappa", "alignment", "disagreement"]]
        return PruningAlignmentResults(
            method=self.method_name,
            grid_name="kappa",
            theory=theory,
            replicates=pd.DataFrame(
                rows, columns=["rep", "kappa", "quantity", "value", "theory_realised"]
            ),
            n_reps=n_reps,
            settings={"d": self.d, "n_inputs": n_inputs, "weight_law": self.weight_law},
            **self._simulation_fields(random_state),
        )


class ConditionalPerceptron(_TheoryModel):
    """The conditional perceptron: answer ``sign(h_S)`` from the magnitude-pruned partial field
    when ``|h_S| > tau``, else compute the full field ``h`` and answer ``sign(h)``.

    Give the fraction ``kappa`` the partial field uses, or the alignment ``rho`` it should have
    (``kappa`` is then :func:`kappa_for_alignment`).

    Parameters
    ----------
    kappa : float, optional
        Fraction of inputs in the partial field, in (0, 1).
    rho : float, optional
        Alignment of the partial with the full field, in (0, 1); exclusive with ``kappa``.
    d : int
        Input dimension of the simulated neuron.
    weight_law : {"gaussian", "laplace", "uniform"}

    Attributes
    ----------
    kappa, rho : float
        Both, whichever was given.
    exponent : float
        ``1 / (1 - rho^2)``, the limit power of ``E`` in the compute gap.

    References
    ----------
    See the module's ``REFERENCE``; the Fidelity sections of :func:`excess_error` and
    :func:`compute_gap`.
    """

    method_name = "Conditional perceptron (compute-adaptive early exit)"

    def __init__(self, *, kappa=None, rho=None, d: int = 1000, weight_law: str = "gaussian"):
        self.weight_law = check_option(weight_law, name="weight_law", options=WEIGHT_LAWS)
        self.d = check_positive_int(d, name="d", minimum=2)
        if (kappa is None) == (rho is None):
            raise ValueError("give exactly one of `kappa` and `rho`")
        if rho is not None:
            self.rho = float(_check_rho(rho)[0][0])
            self.kappa = kappa_for_alignment(self.rho, weight_law=self.weight_law)
        else:
            kappa = _scalar_kappa(kappa)
            if kappa >= 1.0:
                raise ValueError(
                    "`kappa` must be below 1: with every input kept there is no early exit"
                )
            self.kappa = kappa
            self.rho = float(np.sqrt(pruning_alignment(kappa, weight_law=self.weight_law)))
        self.exponent = 1.0 / (1.0 - self.rho**2)

    def _repr_spec(self) -> str:
        return f"kappa={self.kappa:.4g}, rho={self.rho:.4g}, d={self.d}"

    def predict(self, tau) -> pd.DataFrame:
        """The theory over ``tau``: ``tau, early_exit_mass, compute_gap, excess_error,
        local_exponent`` (``d log E / d log g``, tending to ``exponent``)."""
        tau, _ = _check_tau(tau)
        return pd.DataFrame(
            {
                "tau": tau,
                "early_exit_mass": np.atleast_1d(early_exit_mass(tau, self.rho)),
                "compute_gap": np.atleast_1d(compute_gap(tau, self.rho, self.kappa)),
                "excess_error": np.atleast_1d(excess_error(tau, self.rho)),
                "local_exponent": np.atleast_1d(local_exponent(tau, self.rho)),
            }
        )

    def simulate(
        self,
        tau,
        *,
        n_reps: int = 10,
        n_inputs: int = 100_000,
        random_state=None,
    ) -> EarlyExitResults:
        """Draw ``n_reps`` neurons of dimension ``d``, prune each to ``kappa``, run the
        conditional perceptron on ``n_inputs`` Gaussian inputs and record, per threshold, the
        early-exit rate, the compute saved and the rate of early answers the full field reverses.

        Parameters
        ----------
        tau : float or array_like
            Thresholds, >= 0.
        n_reps : int
            Independent neurons, >= 2.
        n_inputs : int
            Inputs per neuron (drawn in blocks, so memory stays bounded).
        random_state : None, int, SeedSequence or Generator

        Returns
        -------
        EarlyExitResults
            ``theory_realised`` evaluates the theory at each neuron's realised alignment.
        """
        tau, _ = _check_tau(tau)
        n_reps = check_positive_int(n_reps, name="n_reps", minimum=2)
        n_inputs = check_positive_int(n_inputs, name="n_inputs")
        k = _kept(self.kappa, self.d)
        rng = check_random_state(random_state)
        block = max(1, 2_000_000 // self.d)
        rows = []
        for rep in range(n_reps):
            w = _draw_weights(rng, self.weight_law, self.d)
            w /= np.linalg.norm(w)
            w_s = _prune_rows(w[None, :], k)[0]
            rho_hat = float(np.linalg.norm(w_s))
            exits = np.zeros(len(tau))
            flips = np.zeros(len(tau))
            for start in range(0, n_inputs, block):
                x = rng.standard_normal((min(block, n_inputs - start), self.d))
                h_s, h = x @ w_s, x @ w
                early = np.abs(h_s)[:, None] > tau[None, :]
                exits += early.sum(axis=0)
                flips += (early & (np.sign(h_s) != np.sign(h))[:, None]).sum(axis=0)
            g_hat = exits / n_inputs
            realised = (
                early_exit_mass(tau, rho_hat),
                (1 - k / self.d) * early_exit_mass(tau, rho_hat),
                excess_error(tau, rho_hat),
            )
            # the compute saved is counted with the realised kept fraction k / d
            observed = (g_hat, (1 - k / self.d) * g_hat, flips / n_inputs)
            names = ("early_exit_mass", "compute_gap", "excess_error")
            for name, values, theory in zip(names, observed, realised, strict=True):
                rows += [
                    (rep, t, name, v, th) for t, v, th in zip(tau, values, theory, strict=True)
                ]
        theory = self.predict(tau)[["tau", "early_exit_mass", "compute_gap", "excess_error"]]
        return EarlyExitResults(
            method=self.method_name,
            grid_name="tau",
            theory=theory,
            replicates=pd.DataFrame(
                rows, columns=["rep", "tau", "quantity", "value", "theory_realised"]
            ),
            n_reps=n_reps,
            settings={
                "d": self.d,
                "kappa": self.kappa,
                "rho": self.rho,
                "exponent": self.exponent,
                "n_inputs": n_inputs,
                "weight_law": self.weight_law,
            },
            **self._simulation_fields(random_state),
        )


class PrunedReLUNetwork(_TheoryModel):
    """A deep ReLU MLP at random initialisation whose every layer is one-shot magnitude-pruned
    neuron-wise, compared with its dense self.

    Parameters
    ----------
    kappa : float
        Fraction of each neuron's weights kept, in (0, 1].
    depth : int
        Number of hidden layers, >= 1.
    width : int
        Neurons per layer of the simulated network (the theory is its infinite-width limit).
    input_dim : int, optional
        Input dimension (default ``width``).
    weight_law : {"gaussian", "laplace", "uniform"}

    Attributes
    ----------
    fixed_point : float
        ``c*``, the correlation of an infinitely deep pruned network with its dense self.

    References
    ----------
    See the module's ``REFERENCE``; the Fidelity section of :func:`depth_correlations`.
    """

    method_name = "Pruned ReLU network (NNGP depth recursion)"

    def __init__(
        self,
        kappa: float,
        depth: int,
        *,
        width: int = 2000,
        input_dim: int | None = None,
        weight_law: str = "gaussian",
    ):
        self.kappa = _scalar_kappa(kappa)
        self.depth = check_positive_int(depth, name="depth")
        self.width = check_positive_int(width, name="width", minimum=2)
        self.input_dim = (
            self.width
            if input_dim is None
            else check_positive_int(input_dim, name="input_dim", minimum=2)
        )
        self.weight_law = check_option(weight_law, name="weight_law", options=WEIGHT_LAWS)
        _kept(self.kappa, min(self.width, self.input_dim))
        self.fixed_point = depth_fixed_point(self.kappa, weight_law=self.weight_law)

    def _repr_spec(self) -> str:
        return f"kappa={self.kappa:g}, depth={self.depth}, width={self.width}"

    def predict(self, tau=None) -> pd.DataFrame:
        """The recursion per layer: ``layer, correlation, distortion`` (``1 - c_l``) and
        ``exponent`` (``1 / (1 - c_l^2)``); with a threshold ``tau``, also the early-exit mass
        and excess error of a conditional network that exits at layer ``l``.

        Parameters
        ----------
        tau : float, optional
            Exit threshold (>= 0) in units of the dense pre-activation's standard deviation.

        Notes
        -----
        The conditional network answers from the calibrated pruned pre-activation
        ``c (sd(z) / sd(z_pruned)) z_pruned``, the best linear predictor of the dense ``z``,
        when it exceeds ``tau`` in size, and runs the dense network otherwise. In the NNGP
        limit that predictor and ``z`` stand as ``h_S`` and ``h`` do for a single neuron with
        ``rho = c_l``, so ``g = 2 Phi_bar(tau / c_l)`` and ``E = E(tau; c_l)``: the early-exit
        power law's exponent ``1 / (1 - c_l^2)`` falls with depth. Reconstruction: the paper's
        frozen-backbone early exit is not known beyond its abstract.
        """
        c = depth_correlations(self.kappa, self.depth, weight_law=self.weight_law)
        with np.errstate(divide="ignore"):
            exponent = 1.0 / (1.0 - c * c)
        frame = pd.DataFrame(
            {
                "layer": np.arange(1, self.depth + 1),
                "correlation": c,
                "distortion": 1.0 - c,
                "exponent": exponent,
            }
        )
        if tau is not None:
            tau = self._check_exit_tau(tau)
            frame["early_exit_mass"] = [early_exit_mass(tau, cl) for cl in c]
            frame["excess_error"] = [excess_error(tau, cl) for cl in c]
        return frame

    def _check_exit_tau(self, tau) -> float:
        tau = check_scalar(tau, name="tau", low=0.0)
        if self.kappa >= 1.0:
            raise ValueError("`tau` needs kappa < 1: an unpruned network never disagrees")
        return tau

    def simulate(
        self, *, tau=None, n_reps: int = 3, n_inputs: int = 8, random_state=None
    ) -> DepthResults:
        """Draw ``n_reps`` networks (He-scaled weights), prune a copy and measure, at every
        layer, the cosine across neurons of the dense and the pruned pre-activations, averaged
        over ``n_inputs`` Gaussian inputs (pre-activations are centred, so the cosine is the
        correlation the recursion predicts).

        Parameters
        ----------
        tau : float, optional
            Also run the conditional network of :meth:`predict` at this threshold: every
            neuron of layer ``l`` is one output, calibrated with the realised cosine, and the
            early-exit rate and the rate of exits the dense neuron reverses are recorded
            (``theory_realised``: the theory at the realised cosine).
        n_reps : int
            Independent networks, >= 2.
        n_inputs : int
            Inputs pushed through each network.
        random_state : None, int, SeedSequence or Generator

        Returns
        -------
        DepthResults
        """
        n_reps = check_positive_int(n_reps, name="n_reps", minimum=2)
        n_inputs = check_positive_int(n_inputs, name="n_inputs")
        if tau is not None:
            tau = self._check_exit_tau(tau)
        rng = check_random_state(random_state)
        rows = []
        for rep in range(n_reps):
            dense = rng.standard_normal((self.input_dim, n_inputs))
            pruned = dense
            fan_in = self.input_dim
            for layer in range(1, self.depth + 1):
                # He scaling keeps activations O(1); ReLU's homogeneity makes the cosines
                # independent of any scale, including the pruned layers' missing energy
                w = _draw_weights(rng, self.weight_law, (self.width, fan_in))
                w *= np.sqrt(2.0 / (fan_in * np.mean(w * w)))
                z, z_pruned = w @ dense, _prune_rows(w, _kept(self.kappa, fan_in)) @ pruned
                cosine = np.sum(z * z_pruned, axis=0) / (
                    np.linalg.norm(z, axis=0) * np.linalg.norm(z_pruned, axis=0)
                )
                rows.append((rep, layer, "correlation", float(cosine.mean()), np.nan))
                if tau is not None:
                    rows += self._exit_rows(rep, layer, z, z_pruned, cosine, tau)
                dense, pruned = np.maximum(z, 0.0), np.maximum(z_pruned, 0.0)
                fan_in = self.width
        columns = ["layer", "correlation"]
        if tau is not None:
            columns += ["early_exit_mass", "excess_error"]
        return DepthResults(
            method=self.method_name,
            grid_name="layer",
            theory=self.predict(tau)[columns],
            replicates=pd.DataFrame(
                rows, columns=["rep", "layer", "quantity", "value", "theory_realised"]
            ),
            n_reps=n_reps,
            settings={
                "kappa": self.kappa,
                "width": self.width,
                "depth": self.depth,
                "fixed_point": self.fixed_point,
                "n_inputs": n_inputs,
                "weight_law": self.weight_law,
                "tau": tau,
            },
            **self._simulation_fields(random_state),
        )

    @staticmethod
    def _exit_rows(rep, layer, z, z_pruned, cosine, tau) -> list:
        # calibrated partial output in units of sd(z): c * z_pruned / sd(z_pruned), per input
        partial = cosine * z_pruned / np.sqrt(np.mean(z_pruned * z_pruned, axis=0))
        early = np.abs(partial) > tau
        flips = early & (np.sign(partial) != np.sign(z))
        c = float(np.clip(cosine.mean(), 1e-12, 1 - 1e-12))
        return [
            (rep, layer, "early_exit_mass", float(early.mean()), early_exit_mass(tau, c)),
            (rep, layer, "excess_error", float(flips.mean()), excess_error(tau, c)),
        ]


__all__ = [
    "REFERENCE",
    "WEIGHT_LAWS",
    "ConditionalPerceptron",
    "DepthResults",
    "EarlyExitResults",
    "MagnitudePruning",
    "PrunedReLUNetwork",
    "PruningAlignmentResults",
    "TheoryCheckResults",
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
