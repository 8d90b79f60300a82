"""Results of the pruning and early-exit experiments: a theory curve set against Monte Carlo
replicates, with Student-t intervals, and the plots that draw the two together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from statcore.results import Results
from statcore.results.plotting import get_ax, panel_axes
from statcore.theory.pruning_closed_forms import fit_exponent
from statcore.validation import check_alpha, check_option, check_scalar


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

    Vocabulary
    ----------
    One name per quantity across the pruning tools of :mod:`statcore.theory`: ``d`` is the input
    dimension of a neuron (``input_dim``, its old name on
    :class:`~statcore.theory.pruning_simulators.PrunedReLUNetwork`, warns ``FutureWarning``),
    ``kappa`` the fraction of weights kept, ``rho`` the alignment of the pruned with the dense
    field, ``tau`` the exit threshold, ``n_reps`` the independent Monte Carlo replicates,
    ``n_inputs`` the inputs per replicate, ``theory`` the predicted curve (``theory_realised``
    at a replicate's realised alignment), ``estimate`` the Monte Carlo mean.
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
    ``m(kappa)`` and ``arccos(sqrt(m)) / pi``, over a grid of ``kappa``.

    Vocabulary: as :class:`TheoryCheckResults`.
    """


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
    over a grid of thresholds ``tau``, theory against simulation.

    Vocabulary: as :class:`TheoryCheckResults`.
    """

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
    pre-activations against the NNGP recursion.

    Vocabulary: as :class:`TheoryCheckResults`.
    """

    _plots: ClassVar[dict] = {"layers": _plot_layers}


__all__ = ["DepthResults", "EarlyExitResults", "PruningAlignmentResults", "TheoryCheckResults"]
