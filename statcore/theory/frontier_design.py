"""A simulation design for the frontier learners: models on a curved two-benchmark frontier plus
a dominated interior, and a squared-loss target task; ``predict`` gives the aggregates'
oracle-inequality scale, ``simulate`` the learners' Monte Carlo excess target risks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from statcore.base import Estimator
from statcore.results import Results
from statcore.results.plotting import get_ax
from statcore.theory.frontier_selector import (
    PRIORS,
    _comparison_scale,
    _cover_choice,
    _exponential_weights,
    _mixed_prior,
)
from statcore.theory.pareto_masks import _cover_path, _frontier_mask
from statcore.validation import (
    as_float_array,
    check_option,
    check_positive_int,
    check_random_state,
    check_scalar,
    describe,
)


def _plot_rates(results, ax=None, **kwargs):
    """Mean excess target risk against n (log-log) per learner, with Monte Carlo intervals and
    the aggregates' oracle-inequality scale ``beta log(1 / pi_j*) / n`` dashed."""
    ax = get_ax(ax)
    for i, (name, block) in enumerate(results.table.groupby("learner", sort=False)):
        colour = f"C{i}"
        ax.errorbar(
            block["n"],
            block["mean_excess"],
            yerr=1.96 * block["std_error"],
            marker="o",
            ms=3,
            capsize=2,
            color=colour,
            label=name,
            **kwargs,
        )
    for j, column in enumerate(results.theory.columns):
        ax.plot(
            results.theory.index,
            results.theory[column],
            ls="--",
            lw=1,
            color=f"C{7 + j}",
            label=f"bound: {column}",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("target samples n")
    ax.set_ylabel("excess target risk")
    ax.legend(frameon=False, fontsize="small")
    ax.set_title(results.method)
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class FrontierSimulationResults(Results):
    """Monte Carlo excess target risks of the frontier learners over a grid of ``n``.

    Attributes
    ----------
    table : DataFrame
        ``n, learner, mean_excess, std_error, conf_low, conf_high`` (95 % normal intervals of
        the Monte Carlo mean).
    theory : DataFrame
        The aggregates' oracle-inequality scale ``beta log(1 / pi_j*) / n`` per prior, indexed
        by ``n`` (from :meth:`FrontierDesign.predict`).
    draws : DataFrame
        Every replicate's excess risk (``rep, n, learner, excess``).
    n_reps : int

    Vocabulary: as :class:`~statcore.theory.frontier_selector.FrontierResults`.
    """

    table: pd.DataFrame
    theory: pd.DataFrame
    draws: pd.DataFrame
    n_reps: int = 0

    _plots: ClassVar[dict] = {"rates": _plot_rates}

    def tidy(self) -> pd.DataFrame:
        return self.table.copy()

    def slope(self, learner: str, n_min: int = 0, n_max: float = np.inf) -> float:
        """Least-squares slope of log mean excess on log n for one learner (within n range)."""
        block = self.table[
            (self.table["learner"] == learner) & self.table["n"].between(n_min, n_max)
        ]
        if len(block) < 2:
            raise ValueError(f"`learner` {learner!r} has fewer than 2 grid points in range")
        if (block["mean_excess"] <= 0).any():
            raise ValueError(f"`learner` {learner!r} has a mean excess <= 0 in range: no log")
        return float(np.polyfit(np.log(block["n"]), np.log(block["mean_excess"]), 1)[0])


class FrontierDesign(Estimator):
    """A simulation design for the frontier learners: models on a curved two-benchmark frontier
    plus a dominated interior, and a squared-loss target task whose risks are monotone in (or
    unrelated to) the benchmark risks.

    Parameters
    ----------
    n_models : int
        ``|F|``; ``n_arc`` of them lie on the arc, the rest inside.
    n_arc : int
        Models on the frontier arc ``R = a - (cos t, sin t)``, ``t`` evenly spread on
        ``[0, pi / 2]``, ``a = 1.2``; interior models have ``R = a - rho (cos t, sin t)`` with
        ``rho ~ U(0.2, 0.95)`` and ``t ~ U(0, pi / 2)``.
    target : {"monotone", "unrelated"}
        Excess target risk ``b_j^2 = scale (w R_1 + (1 - w) R_2 - min)`` (exactly monotone, so
        the best model is on the frontier) or ``scale U_j`` with ``U_j ~ U(0, 1)`` independent of
        the benchmarks.
    mix : float
        ``w`` above.
    scale : float
        Scale of the excess target risks.
    noise : float
        ``sigma``: target ``y = sigma epsilon``.
    correlation : float in [0, 1]
        ``rho_e``: model ``j`` predicts ``b_j (sqrt(rho_e) z + sqrt(1 - rho_e) zeta_j)`` with
        ``z, zeta_j, epsilon`` standard normal, so ``R_0(f_j) = sigma^2 + b_j^2`` and a convex
        combination has the exact risk ``sigma^2 + rho_e (sum theta b)^2 +
        (1 - rho_e) sum theta^2 b^2``. ``rho_e = 1``: the errors are collinear and no mixture
        beats the best model (excess risks stay non-negative).
    random_state : None, int, SeedSequence or Generator
        Seeds the interior models and the unrelated target.

    Notes
    -----
    Fidelity: reconstruction. The paper's experiments were not available, so the design is
    ours: ``M = 1000`` models by default, a quarter-circle frontier (every point of the arc is
    non-dominated and the frontier is curved, so covers of growing radius thin it out), an
    interior dominated by the arc, and a target whose excess risks are a fixed linear score of
    the benchmark risks (exact monotonicity) or independent of them (monotonicity fails).

    References
    ----------
    Yang, Di Gennaro, So and Wegel (2026), arXiv:2605.30997.
    """

    method_name = "Frontier learners"

    def __init__(
        self,
        n_models: int = 1000,
        n_arc: int = 40,
        *,
        target: str = "monotone",
        mix: float = 0.5,
        scale: float = 1.0,
        noise: float = 1.0,
        correlation: float = 0.5,
        random_state=0,
    ):
        self.n_models = check_positive_int(n_models, name="n_models", minimum=2)
        self.n_arc = check_positive_int(n_arc, name="n_arc", minimum=1)
        if self.n_arc > self.n_models:
            raise ValueError(f"`n_arc` ({n_arc}) must not exceed `n_models` ({n_models})")
        self.target = check_option(target, name="target", options=("monotone", "unrelated"))
        self.mix = check_scalar(mix, name="mix", low=0.0, high=1.0)
        self.scale = check_scalar(scale, name="scale", low=0.0, low_inclusive=False)
        self.noise = check_scalar(noise, name="noise", low=0.0, low_inclusive=False)
        self.correlation = check_scalar(correlation, name="correlation", low=0.0, high=1.0)
        rng = check_random_state(random_state)
        m_in = self.n_models - self.n_arc
        t = np.concatenate([np.linspace(0, np.pi / 2, self.n_arc), rng.uniform(0, np.pi / 2, m_in)])
        rho = np.concatenate([np.ones(self.n_arc), rng.uniform(0.2, 0.95, m_in)])
        R = 1.2 - rho[:, None] * np.column_stack([np.cos(t), np.sin(t)])
        self.models = pd.Index([f"m{j:04d}" for j in range(self.n_models)], name="model")
        self.benchmark_risks = pd.DataFrame(R, index=self.models, columns=["bench_1", "bench_2"])
        if self.target == "monotone":
            score = self.mix * R[:, 0] + (1 - self.mix) * R[:, 1]
            excess = self.scale * (score - score.min())
        else:
            excess = self.scale * rng.uniform(size=self.n_models)
        self.b = np.sqrt(excess)
        self.target_risks = pd.Series(self.noise**2 + excess, index=self.models, name="R0")

    @property
    def nobs(self) -> int:
        """Number of models ``|F|``."""
        return self.n_models

    def sample(self, n: int, random_state=None) -> tuple[np.ndarray, np.ndarray]:
        """``n`` target samples: predictions ``(n, M)`` and responses ``(n,)``."""
        n = check_positive_int(n, name="n", minimum=2)
        rng = check_random_state(random_state)
        z = rng.standard_normal((n, 1))
        zeta = rng.standard_normal((n, self.n_models))
        c = self.correlation
        F = self.b * (np.sqrt(c) * z + np.sqrt(1 - c) * zeta)
        return F, self.noise * rng.standard_normal(n)

    def excess_risk(self, weights) -> float:
        """Exact excess target risk of the convex combination with these weights."""
        w = np.asarray(weights, dtype=float)
        c = self.correlation
        risk = c * (w @ self.b) ** 2 + (1 - c) * np.sum((w * self.b) ** 2)
        return float(risk - self.b.min() ** 2)

    def _temperature(self, temperature) -> float:
        """``beta``: the oracle value ``4 sigma^2`` unless given."""
        if temperature is None:
            return 4 * self.noise**2
        return check_scalar(temperature, name="temperature", low=0.0, low_inclusive=False)

    def _frontier(self) -> np.ndarray:
        """Positions of the frontier models (the mixed prior's cover is the whole frontier)."""
        return np.flatnonzero(_frontier_mask(self.benchmark_risks.to_numpy(), np.zeros(2)))

    def predict(self, n_grid, *, temperature: float | None = None) -> pd.DataFrame:
        """The aggregates' oracle-inequality scale ``beta log(1 / pi_j*) / n`` on ``n_grid``
        for the mixed, frontier and uniform priors (``beta`` default ``4 sigma^2``;
        ``j*`` the target's best model; infinite when the prior misses it).

        This is the bound's complexity term (Leung and Barron 2006 for exponential weights,
        Lecué and Rigollet 2014 for Q-aggregation, constants of the fixed-design Gaussian case),
        a reference slope and scale, not an exact prediction of the simulated means.
        """
        n = np.asarray(as_float_array(n_grid, name="n_grid", ndim=1), dtype=float)
        beta = self._temperature(temperature)
        best = int(np.argmin(self.b))
        cover = self._frontier()
        out = {}
        for kind in PRIORS:
            pi = _mixed_prior(self.n_models, cover, kind)[best]
            out[kind] = beta * (np.log(1 / pi) if pi > 0 else np.inf) / n
        return pd.DataFrame(out, index=pd.Index(n, name="n"))

    def simulate(
        self,
        n_grid,
        *,
        n_reps: int = 200,
        temperature: float | None = None,
        penalty: float = 1.0,
        random_state=None,
    ) -> FrontierSimulationResults:
        """Excess target risk of full-class ERM, frontier ERM, cover ERM and exponential-weights
        aggregates (mixed, frontier and uniform priors; cover = the whole frontier) over
        ``n_reps`` target samples of each size in ``n_grid``.

        The aggregates' risk is computed exactly (:meth:`excess_risk`), so only the target
        sample is random. ``temperature`` defaults to ``4 sigma^2`` (the oracle value, so that
        the rate is not confounded with a data-driven temperature).
        """
        if isinstance(n_grid, str) or np.ndim(n_grid) != 1 or not len(n_grid):
            raise TypeError(
                f"`n_grid` must be a non-empty 1-D sequence of sample sizes; got {describe(n_grid)}"
            )
        grid = [check_positive_int(v, name="n_grid", minimum=2) for v in n_grid]
        n_reps = check_positive_int(n_reps, name="n_reps")
        rng = check_random_state(random_state)
        beta = self._temperature(temperature)
        R = self.benchmark_risks.to_numpy()
        frontier = self._frontier()
        order, radii = _cover_path(R[frontier])
        path = frontier[order]
        priors = {kind: _mixed_prior(self.n_models, frontier, kind) for kind in PRIORS}
        excess0 = self.b**2 - self.b.min() ** 2
        rows = []
        for n in grid:
            for rep in range(n_reps):
                F, yv = self.sample(n, random_state=rng)
                L = (F - yv[:, None]) ** 2
                risks = L.mean(axis=0)
                scale = _comparison_scale(L[:, frontier])
                *_, k_hat = _cover_choice(risks[path], radii, scale, n, penalty)
                cover = path[:k_hat]
                picks = {
                    "full ERM": int(np.argmin(risks)),
                    "frontier ERM": frontier[np.argmin(risks[frontier])],
                    "cover ERM": cover[np.argmin(risks[cover])],
                }
                for name, j in picks.items():
                    rows.append((rep, n, name, excess0[j]))
                for kind, pi in priors.items():
                    theta = _exponential_weights(risks, pi, n, beta)
                    rows.append((rep, n, f"EW ({kind} prior)", self.excess_risk(theta)))
        draws = pd.DataFrame(rows, columns=["rep", "n", "learner", "excess"])
        grouped = draws.groupby(["n", "learner"], sort=False)["excess"]
        table = grouped.agg(mean_excess="mean", std_error="sem").reset_index()
        table["conf_low"] = table["mean_excess"] - 1.96 * table["std_error"]
        table["conf_high"] = table["mean_excess"] + 1.96 * table["std_error"]
        return FrontierSimulationResults(
            method=f"Frontier learners, {self.target} target (|F|={self.n_models}, "
            f"|P|={len(frontier)})",
            nobs=n_reps,
            model=self,
            table=table,
            theory=self.predict(grid, temperature=beta),
            draws=draws,
            n_reps=n_reps,
        )

    def __repr__(self) -> str:
        return (
            f"FrontierDesign(n_models={self.n_models}, n_arc={self.n_arc}, "
            f"target={self.target!r}, correlation={self.correlation})"
        )


__all__ = ["FrontierDesign", "FrontierSimulationResults"]
