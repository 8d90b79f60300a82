"""The pruning and early-exit experiments: a single magnitude-pruned neuron, the conditional
perceptron and a deep pruned ReLU network, each with its theory (``predict``) and the Monte Carlo
experiment that checks it (``simulate``).

References
----------
See ``statcore.theory.pruning_closed_forms.REFERENCE`` and the Fidelity sections there.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from statcore.base import Estimator
from statcore.compat import renamed_attribute, renamed_keywords
from statcore.theory.pruning_closed_forms import (
    WEIGHT_LAWS,
    _check_kappa,
    _check_tau,
    _draw_weights,
    _kept,
    _prune_rows,
    _scalar_kappa,
    _scalar_rho,
    compute_gap,
    depth_correlations,
    depth_fixed_point,
    early_exit_mass,
    excess_error,
    kappa_for_alignment,
    local_exponent,
    pruning_alignment,
    pruning_alignment_sd,
)
from statcore.theory.pruning_results import (
    DepthResults,
    EarlyExitResults,
    PruningAlignmentResults,
)
from statcore.validation import check_option, check_positive_int, check_random_state, check_scalar


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

    def _check_results(
        self, results_class, grid_name, theory, rows, n_reps, settings, random_state
    ):
        """The experiment's results: the theory beside the long table of replicate rows
        ``(rep, <grid_name>, quantity, value, theory_realised)``."""
        seed = random_state if isinstance(random_state, numbers.Integral) else None
        return results_class(
            method=self.method_name,
            grid_name=grid_name,
            theory=theory,
            replicates=pd.DataFrame(
                rows, columns=["rep", grid_name, "quantity", "value", "theory_realised"]
            ),
            n_reps=n_reps,
            settings=settings,
            model=self,
            random_state_used=seed,
        )


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
    See ``REFERENCE``; the Fidelity
    section of :func:`pruning_alignment`.
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
        settings = {"d": self.d, "n_inputs": n_inputs, "weight_law": self.weight_law}
        return self._check_results(
            PruningAlignmentResults, "kappa", theory, rows, n_reps, settings, random_state
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
    See ``REFERENCE``; the Fidelity
    sections of :func:`excess_error` and
    :func:`compute_gap`.
    """

    method_name = "Conditional perceptron (compute-adaptive early exit)"

    def __init__(self, *, kappa=None, rho=None, d: int = 1000, weight_law: str = "gaussian"):
        self.weight_law = check_option(weight_law, name="weight_law", options=WEIGHT_LAWS)
        self.d = check_positive_int(d, name="d", minimum=2)
        if (kappa is None) == (rho is None):
            raise ValueError("give exactly one of `kappa` and `rho`")
        if rho is not None:
            self.rho = _scalar_rho(rho)
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
        settings = {
            "d": self.d,
            "kappa": self.kappa,
            "rho": self.rho,
            "exponent": self.exponent,
            "n_inputs": n_inputs,
            "weight_law": self.weight_law,
        }
        return self._check_results(
            EarlyExitResults, "tau", theory, rows, n_reps, settings, random_state
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
    d : int, optional
        Input dimension (default ``width``), as ``d`` of :class:`MagnitudePruning`; its old
        spelling ``input_dim=`` (and the attribute ``input_dim``) warns ``FutureWarning``.
    weight_law : {"gaussian", "laplace", "uniform"}

    Attributes
    ----------
    fixed_point : float
        ``c*``, the correlation of an infinitely deep pruned network with its dense self.

    References
    ----------
    See ``REFERENCE``; the Fidelity
    section of :func:`depth_correlations`.
    """

    method_name = "Pruned ReLU network (NNGP depth recursion)"

    input_dim = renamed_attribute("input_dim", "d")

    @renamed_keywords(input_dim="d")
    def __init__(
        self,
        kappa: float,
        depth: int,
        *,
        width: int = 2000,
        d: int | None = None,
        weight_law: str = "gaussian",
    ):
        self.kappa = _scalar_kappa(kappa)
        self.depth = check_positive_int(depth, name="depth")
        self.width = check_positive_int(width, name="width", minimum=2)
        self.d = self.width if d is None else check_positive_int(d, name="d", minimum=2)
        self.weight_law = check_option(weight_law, name="weight_law", options=WEIGHT_LAWS)
        _kept(self.kappa, min(self.width, self.d))
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
            dense = rng.standard_normal((self.d, n_inputs))
            pruned = dense
            fan_in = self.d
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
        settings = {
            "kappa": self.kappa,
            "d": self.d,
            "width": self.width,
            "depth": self.depth,
            "fixed_point": self.fixed_point,
            "n_inputs": n_inputs,
            "weight_law": self.weight_law,
            "tau": tau,
        }
        return self._check_results(
            DepthResults, "layer", self.predict(tau)[columns], rows, n_reps, settings, random_state
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


__all__ = ["ConditionalPerceptron", "MagnitudePruning", "PrunedReLUNetwork"]
