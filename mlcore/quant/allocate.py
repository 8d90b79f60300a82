"""CoCoQuant's global precision allocation: an integer program over ops × precisions.

Fidelity: reconstruction. The abstract (ICML 2026) says the allocation "integrates
roofline-based cost modeling with relative sensitivity calibration, solved via global integer
linear programming"; the variables, the additive sensitivity budget and the alignment couplings
below are this library's reconstruction, in the manner of HAWQ-V3's bit-allocation ILP
(Yao et al., ICML 2021; its code was not read here), not read from the paper.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np
import pandas as pd

from mlcore.quant.cost import QuantOp, RooflineCostModel, check_ops
from statcore.compat import import_optional
from statcore.results import Results
from statcore.results.plotting import get_ax, label_axes
from statcore.validation import check_callable, check_option, check_positive, check_positive_int

COUPLINGS = ("aligned", "free")
BACKENDS = ("cvxpy", "brute")
BASELINES = ("all-16", "comm-int8", "gemm-int8")
#: Largest number of allocations the exhaustive backend enumerates.
MAX_BRUTE_FORCE = 2_000_000


def _plot_ops(result, ax=None, **kwargs):
    """Predicted time per op, coloured by its precision."""
    ax = get_ax(ax)
    table = result.tidy()
    colours = {16: "0.6", 8: "tab:blue", 4: "tab:orange"}
    for bits, rows in table.groupby("bits"):
        ax.barh(
            rows["op"],
            rows["time_s"] * 1e6,
            color=colours.get(bits, None),
            label=f"{bits}-bit",
            **kwargs,
        )
    ax.invert_yaxis()
    return label_axes(ax, xlabel="predicted time (µs)", title=result.method, legend="beside")


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class AllocationResult(Results):
    """Bits per op and what the cost model and the sensitivities predict for them.

    Parameters
    ----------
    bits : Series
        Precision per op (index: op names, in the order of ``ops``).
    ops : tuple of QuantOp
    op_table : DataFrame
        ``op, kind, bits, time_s, sensitivity`` per op; ``time_s`` includes unfused kernels
        charged to communication ops.
    latency_s : float
        Predicted time of one pass.
    reference_latency_s : float
        The latency with every op at its highest allowed precision (all-16 normally).
    delta_loss : float
        Predicted relative loss increase, the sum of the chosen sensitivities.
    eps : float
        The accuracy budget (NaN for a fixed baseline).
    coupling : str
        ``"aligned"`` (communication and consumer share one precision) or ``"free"``.
    backend : str
    """

    bits: pd.Series = field(repr=False)
    ops: tuple = field(default=(), repr=False)
    op_table: pd.DataFrame = field(repr=False)
    latency_s: float
    reference_latency_s: float
    delta_loss: float
    eps: float = np.nan
    coupling: str = "free"
    backend: str = "cvxpy"
    wall_time_s: float | None = None

    _plots: ClassVar[dict] = {"ops": _plot_ops}

    @property
    def speedup(self) -> float:
        """Reference (all-16) latency over this allocation's latency."""
        return self.reference_latency_s / self.latency_s

    def glance(self) -> pd.DataFrame:
        """``method, n_ops, eps, latency_s, speedup, delta_loss, coupling``."""
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "n_ops": len(self.bits),
                    "eps": self.eps,
                    "latency_s": self.latency_s,
                    "speedup": self.speedup,
                    "delta_loss": self.delta_loss,
                    "coupling": self.coupling,
                }
            ]
        )

    def tidy(self) -> pd.DataFrame:
        """One row per op: ``op, kind, bits, time_s, sensitivity``."""
        return self.op_table.copy()


def _plot_frontier(result, ax=None, measured: bool | None = None, **kwargs):
    """Predicted latency against Δloss (or the measured metric), baselines marked."""
    ax = get_ax(ax)
    frame = result.frontier
    if measured is None:
        measured = "measured" in frame
    column = "measured" if measured else "delta_loss"
    ax.plot(frame["latency_s"] * 1e6, frame[column], marker="o", label="ILP frontier", **kwargs)
    if result.baselines is not None and column in result.baselines:
        for name, row in result.baselines.iterrows():
            ax.scatter([row["latency_s"] * 1e6], [row[column]], marker="s", label=name, zorder=3)
    return label_axes(
        ax,
        xlabel="predicted latency (µs)",
        ylabel=result.measured_name if measured else "predicted Δloss (relative)",
        title=result.method,
        legend="beside",
    )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class ParetoResult(Results):
    """The allocation frontier over a grid of accuracy budgets.

    Parameters
    ----------
    frontier : DataFrame
        One row per budget: ``eps, latency_s, speedup, delta_loss``, then ``measured`` once
        :meth:`measure` has run, then the bits of each op.
    allocations : tuple of AllocationResult
    baselines : DataFrame, optional
        Uniform baselines (rows ``all-16``, ``comm-int8``, ``gemm-int8``) in the same columns.
    measured_name : str
        What ``measured`` holds (e.g. ``"perplexity"``).
    """

    frontier: pd.DataFrame = field(repr=False)
    allocations: tuple = field(default=(), repr=False)
    baselines: pd.DataFrame | None = field(default=None, repr=False)
    measured_name: str = "measured"

    _plots: ClassVar[dict] = {"frontier": _plot_frontier}

    def tidy(self) -> pd.DataFrame:
        """The frontier without the per-op bits, baselines appended with their ``eps`` NaN."""
        cols = [
            c
            for c in ("eps", "latency_s", "speedup", "delta_loss", "measured")
            if c in self.frontier
        ]
        table = self.frontier[cols].assign(allocation="ILP")
        if self.baselines is not None:
            base = self.baselines.reindex(columns=cols).assign(allocation=self.baselines.index)
            table = pd.concat([table, base], ignore_index=True)
        return table[["allocation", *cols]]

    def measure(self, fn, *, name: str = "measured") -> ParetoResult:
        """A copy with ``fn(bits)`` (a metric measured under each allocation, e.g. perplexity)
        in a ``measured`` column of the frontier and of the baselines."""
        check_callable(fn, name="fn")
        values = [float(fn(a.bits)) for a in self.allocations]
        frontier = self.frontier.copy()
        frontier.insert(4, "measured", values)
        baselines = self.baselines
        if baselines is not None:
            baselines = baselines.copy()
            baselines["measured"] = [
                float(
                    fn(
                        baselines.loc[name_, [c for c in baselines if c.startswith("bits[")]]
                        .rename(lambda c: c[5:-1])
                        .astype(int)
                    )
                )
                for name_ in baselines.index
            ]
        return replace(self, frontier=frontier, baselines=baselines, measured_name=name)

    def dominates(self, *, column: str = "measured", rtol: float = 0.0) -> pd.Series:
        """For each baseline: is there a frontier point no slower and no worse in ``column``
        (within ``rtol`` relative)?"""
        if self.baselines is None:
            raise ValueError("this frontier has no baselines; build it with `baselines=True`")
        check_option(column, name="column", options=("measured", "delta_loss"))
        if column not in self.frontier:
            raise ValueError("no measured column yet; call `measure(fn)` first")
        f = self.frontier
        out = {}
        for name, row in self.baselines.iterrows():
            ok = (f["latency_s"] <= row["latency_s"] * (1 + 1e-12)) & (
                f[column] <= row[column] + rtol * abs(row[column])
            )
            out[name] = bool(ok.any())
        return pd.Series(out, name="dominated")


def _sensitivity_matrix(ops: Sequence[QuantOp], sensitivity, widths) -> np.ndarray:
    if hasattr(sensitivity, "table") and isinstance(sensitivity.table, pd.DataFrame):
        sensitivity = sensitivity.table
    if isinstance(sensitivity, Mapping):
        sensitivity = pd.DataFrame.from_dict(
            {k: dict(v) for k, v in sensitivity.items()}, orient="index"
        )
    if not isinstance(sensitivity, pd.DataFrame):
        raise TypeError(
            "`sensitivity` must be a DataFrame (ops × bits), a mapping op -> {bits: value} or a "
            f"SensitivityResult; got {type(sensitivity).__name__}"
        )
    S = np.full((len(ops), len(widths)), np.nan)
    for i, op in enumerate(ops):
        if op.name not in sensitivity.index:
            raise ValueError(f"`sensitivity` has no row for the op {op.name!r}")
        for j, b in enumerate(widths):
            if b in op.bits:
                if b not in sensitivity.columns or pd.isna(sensitivity.loc[op.name, b]):
                    raise ValueError(f"`sensitivity` has no value for {op.name!r} at {b} bits")
                S[i, j] = float(sensitivity.loc[op.name, b])
    if not np.isfinite(S[~np.isnan(S)]).all():
        raise ValueError("`sensitivity` must be finite")
    return S


class _Problem:
    """The numbers of one allocation problem: times, sensitivities, weight bytes, couplings."""

    def __init__(self, ops, cost_model, sensitivity, coupling):
        self.ops = check_ops(ops)
        if not isinstance(cost_model, RooflineCostModel):
            raise TypeError(f"`cost_model` must be a RooflineCostModel; got {cost_model!r}")
        self.cost = cost_model
        self.coupling = check_option(coupling, name="coupling", options=COUPLINGS)
        self.widths = sorted({b for op in self.ops for b in op.bits}, reverse=True)
        k = len(self.widths)
        self.allowed = np.array([[b in op.bits for b in self.widths] for op in self.ops])
        self.T = np.array(
            [
                [cost_model.op_time(op, b) if b in op.bits else 0.0 for b in self.widths]
                for op in self.ops
            ]
        )
        self.S = np.nan_to_num(_sensitivity_matrix(self.ops, sensitivity, self.widths))
        self.W = np.array(
            [
                [op.K * op.N * b / 8 if op.kind == "gemm" else 0.0 for b in self.widths]
                for op in self.ops
            ]
        )
        index = {op.name: i for i, op in enumerate(self.ops)}
        self.pairs = []  # (comm index, consumer index or None, k × k unfused time)
        for i, op in enumerate(self.ops):
            if op.kind != "comm":
                continue
            c = None if op.consumer is None else index[op.consumer]
            cons_widths = self.widths if c is not None else [16] * k
            O = np.array(
                [[cost_model.mismatch_time(op, b, cb) for cb in cons_widths] for b in self.widths]
            )
            self.pairs.append((i, c, O))

    def evaluate(self, choice: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Latency, Δloss, weight bytes and feasibility of allocations ``choice`` (n_alloc ×
        n_ops column indices)."""
        rows = np.arange(len(self.ops))
        lat = self.T[rows, choice].sum(axis=1)
        for i, c, O in self.pairs:
            lat = lat + O[choice[:, i], choice[:, c] if c is not None else 0]
        ok = self.allowed[rows, choice].all(axis=1)
        if self.coupling == "aligned":
            for i, c, _ in self.pairs:
                if c is not None:
                    ok &= choice[:, i] == choice[:, c]
        return lat, self.S[rows, choice].sum(axis=1), self.W[rows, choice].sum(axis=1), ok

    def result(self, choice, *, eps, backend, method, wall):
        choice = np.asarray(choice)[None, :]
        lat, dl, _, _ = self.evaluate(choice)
        ref = self.evaluate(np.argmax(self.allowed, axis=1)[None, :])[0][0]
        bits = pd.Series(
            [self.widths[j] for j in choice[0]], index=[op.name for op in self.ops], name="bits"
        )
        times = self.T[np.arange(len(self.ops)), choice[0]].copy()
        for i, c, O in self.pairs:
            times[i] += O[choice[0, i], choice[0, c] if c is not None else 0]
        table = pd.DataFrame(
            {
                "op": bits.index,
                "kind": [op.kind for op in self.ops],
                "bits": bits.to_numpy(),
                "time_s": times,
                "sensitivity": self.S[np.arange(len(self.ops)), choice[0]],
            }
        )
        return AllocationResult(
            method=method,
            bits=bits,
            ops=self.ops,
            op_table=table,
            latency_s=float(lat[0]),
            reference_latency_s=float(ref),
            delta_loss=float(dl[0]),
            eps=eps,
            coupling=self.coupling,
            backend=backend,
            wall_time_s=wall,
        )


def _solve_cvxpy(problem: _Problem, eps: float, memory_budget, objective: str):
    cp = import_optional("cvxpy", "quant")
    if "HIGHS" not in cp.installed_solvers():
        raise ImportError(
            "the allocation ILP is solved by HiGHS: install it with `pip install highspy` (or "
            "`pip install statcore[quant]`)"
        )

    n, k = problem.T.shape
    x = cp.Variable((n, k), boolean=True)
    # Normalised times keep HiGHS's absolute gap and tolerances meaningful (raw times are µs).
    scale = problem.T.max()
    cost = cp.sum(cp.multiply(problem.T / scale, x))
    constraints = (
        [cp.sum(x, axis=1) == 1, x[~problem.allowed] == 0]
        if (~problem.allowed).any()
        else [cp.sum(x, axis=1) == 1]
    )
    for i, c, O in problem.pairs:
        if c is None:
            cost += (O[:, 0] / scale) @ x[i]
        elif problem.coupling == "aligned":
            constraints.append(x[i] == x[c])
        elif O.any():
            # z ≥ x_i,b + x_c,b' − 1 with z ≥ 0 equals the product of the binaries at the optimum,
            # since the unfused times it carries are non-negative.
            z = cp.Variable((k, k), nonneg=True)
            constraints.append(
                z >= x[i][:, None] @ np.ones((1, k)) + np.ones((k, 1)) @ x[c][None, :] - 1
            )
            cost += cp.sum(cp.multiply(O / scale, z))
    sens = cp.sum(cp.multiply(problem.S, x))
    if objective == "latency":
        constraints.append(sens <= eps)
        goal = cost
    else:
        goal = sens
    if memory_budget is not None:
        constraints.append(cp.sum(cp.multiply(problem.W, x)) <= memory_budget)
    prob = cp.Problem(cp.Minimize(goal), constraints)
    prob.solve(solver=cp.HIGHS, mip_rel_gap=0.0, mip_abs_gap=0.0, output_flag=False)
    if prob.status in ("infeasible", "infeasible_inaccurate"):
        return None
    if prob.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"HiGHS stopped with status {prob.status!r}")
    return np.argmax(np.round(x.value), axis=1)


def _solve_brute(problem: _Problem, eps: float, memory_budget):
    n, k = problem.T.shape
    total = k**n
    if total > MAX_BRUTE_FORCE:
        raise ValueError(
            f"`backend`='brute' would enumerate {total} allocations (more than "
            f"{MAX_BRUTE_FORCE}); use backend='cvxpy'"
        )
    choice = np.array(list(itertools.product(range(k), repeat=n)))
    lat, dl, mem, ok = problem.evaluate(choice)
    ok &= dl <= eps
    if memory_budget is not None:
        ok &= mem <= memory_budget
    if not ok.any():
        return None
    return choice[np.flatnonzero(ok)[np.argmin(lat[ok])]]


def _infeasible(problem, eps, memory_budget):
    best = _solve_cvxpy(problem, np.inf, memory_budget, objective="sensitivity")
    if best is None:
        return ValueError(
            f"no allocation fits `memory_budget`={memory_budget:g} bytes; the smallest weights "
            f"take {problem.W[:, -1].sum():g} bytes"
        )
    floor = problem.evaluate(best[None, :])[1][0]
    return ValueError(
        f"`eps`={eps:g} is infeasible: the smallest predicted Δloss any allocation reaches is "
        f"{floor:g}" + ("" if memory_budget is None else " under `memory_budget`")
    )


def allocate_precision(
    ops: Sequence[QuantOp],
    cost_model: RooflineCostModel,
    sensitivity,
    eps: float,
    *,
    coupling: str = "free",
    memory_budget: float | None = None,
    backend: str = "cvxpy",
) -> AllocationResult:
    """Choose a precision per op that minimises predicted latency within an accuracy budget.

    Solves ``min Σ x_ib t_i(b) + Σ_j Σ_bb' z_jbb' u_j(b, b')`` over binary ``x`` with one
    precision per op, ``Σ x_ib s_i(b) ≤ eps`` and an optional weight-memory cap. The alignment
    coupling of communication op ``j`` and its consumer GEMM: with ``coupling="free"`` (default)
    they may differ, and ``u_j(b, b')`` (:meth:`RooflineCostModel.mismatch_time`) charges the
    unfused quantise/dequantise kernels, zero when ``b = b'`` (the precision-aligned rewrite);
    ``z`` linearises the product ``x_jb · x_consumer,b'``. With ``coupling="aligned"`` the
    hard equality ``x_jb = x_consumer(j),b`` (every coupled pair precision-aligned) is
    imposed instead. "free" contains every
    "aligned" allocation at the same cost, so its optimum is never slower; it also contains
    the uniform baselines, so the frontier dominates them in predicted latency.

    Parameters
    ----------
    ops : sequence of QuantOp
    cost_model : RooflineCostModel
    sensitivity : DataFrame, mapping or SensitivityResult
        Relative Δloss ``s_i(b)`` per op (rows) and bit-width (columns).
    eps : float
        Accuracy budget on the summed sensitivities.
    coupling : {"free", "aligned"}
    memory_budget : float, optional
        Cap on the bytes of GEMM weights (per rank).
    backend : {"cvxpy", "brute"}
        The integer program in cvxpy solved by HiGHS (MIP gap 0), or exhaustive enumeration
        (small problems; the check of the ILP).

    Returns
    -------
    AllocationResult

    Raises
    ------
    ValueError
        When ``eps`` is below the smallest Δloss any allocation reaches (the message says that
        floor), or no allocation fits ``memory_budget``.

    Notes
    -----
    Fidelity: reconstruction of CoCoQuant's "global integer linear programming" ("CoCoQuant:
    Breaking the Bandwidth Wall via Co-Optimized Communication and Computation Quantization",
    ICML 2026; abstract read, method text not), in the manner of HAWQ-V3's ILP (Yao et al., 2021).
    Reconstructed: the additive sensitivity budget, the alignment couplings (hard, or priced
    as unfused kernels) and the uniform baselines.
    """
    eps = check_positive(eps, name="eps", strict=False)
    if memory_budget is not None:
        memory_budget = check_positive(memory_budget, name="memory_budget")
    check_option(backend, name="backend", options=BACKENDS)
    problem = _Problem(ops, cost_model, sensitivity, coupling)
    start = time.perf_counter()
    if backend == "cvxpy":
        choice = _solve_cvxpy(problem, eps, memory_budget, objective="latency")
    else:
        choice = _solve_brute(problem, eps, memory_budget)
    if choice is None:
        raise _infeasible(problem, eps, memory_budget)
    return problem.result(
        choice,
        eps=eps,
        backend=backend,
        method=f"CoCoQuant allocation (eps={eps:g})",
        wall=time.perf_counter() - start,
    )


def baseline_allocation(
    ops: Sequence[QuantOp], cost_model: RooflineCostModel, sensitivity, scheme: str
) -> AllocationResult:
    """A uniform baseline priced by the same cost model: ``"all-16"``, ``"comm-int8"``
    (communication at 8 bits, GEMMs at 16, unfused kernels paid) or ``"gemm-int8"``."""
    check_option(scheme, name="scheme", options=BASELINES)
    problem = _Problem(ops, cost_model, sensitivity, "free")
    want = {
        "all-16": {"gemm": 16, "comm": 16},
        "comm-int8": {"gemm": 16, "comm": 8},
        "gemm-int8": {"gemm": 8, "comm": 16},
    }[scheme]
    choice = []
    for op in problem.ops:
        if want[op.kind] not in op.bits:
            raise ValueError(f"the op {op.name!r} does not allow {want[op.kind]} bits")
        choice.append(problem.widths.index(want[op.kind]))
    return problem.result(
        np.array(choice), eps=np.nan, backend="fixed", method=f"uniform {scheme}", wall=0.0
    )


def pareto_frontier(
    ops: Sequence[QuantOp],
    cost_model: RooflineCostModel,
    sensitivity,
    eps_grid=None,
    *,
    n_eps: int = 12,
    coupling: str = "free",
    memory_budget: float | None = None,
    baselines: bool = True,
) -> ParetoResult:
    """Solve :func:`allocate_precision` over a grid of budgets.

    Parameters
    ----------
    eps_grid : array-like, optional
        Budgets; default ``n_eps`` points from 0 to the Δloss of the all-lowest allocation.
    baselines : bool
        Also price the uniform baselines (all-16, comm-int8, gemm-int8) where the ops allow them,
        and add each baseline's predicted Δloss to the budgets.

    Returns
    -------
    ParetoResult
        Latency is non-increasing in ``eps``: a larger budget only adds feasible allocations.
    """
    problem = _Problem(ops, cost_model, sensitivity, coupling)
    if eps_grid is None:
        n_eps = check_positive_int(n_eps, name="n_eps", minimum=2)
        top = np.where(problem.allowed, problem.S, -np.inf).max(axis=1).sum()
        eps_grid = np.linspace(0.0, top, n_eps)
    eps_grid = np.asarray(eps_grid, dtype=float).ravel()
    if not len(eps_grid) or not np.isfinite(eps_grid).all() or (eps_grid < 0).any():
        raise ValueError("`eps_grid` must hold finite non-negative budgets")
    fixed = {}
    if baselines:
        for scheme in BASELINES:
            try:
                fixed[scheme] = baseline_allocation(problem.ops, cost_model, sensitivity, scheme)
            except ValueError:
                continue
        # Each baseline's own Δloss joins the grid, so the frontier has a point at its budget.
        eps_grid = np.concatenate([eps_grid, [a.delta_loss for a in fixed.values()]])
    eps_grid = np.unique(eps_grid)
    allocations = tuple(
        allocate_precision(
            problem.ops, cost_model, sensitivity, e, coupling=coupling, memory_budget=memory_budget
        )
        for e in eps_grid
    )

    def row(a):
        return {
            "eps": a.eps,
            "latency_s": a.latency_s,
            "speedup": a.speedup,
            "delta_loss": a.delta_loss,
            **{f"bits[{k}]": int(v) for k, v in a.bits.items()},
        }

    frontier = pd.DataFrame([row(a) for a in allocations])
    base = None
    if baselines:
        base = pd.DataFrame.from_dict({k: row(a) for k, a in fixed.items()}, orient="index")
    return ParetoResult(
        method=f"CoCoQuant Pareto frontier ({coupling})",
        frontier=frontier,
        allocations=allocations,
        baselines=base,
    )
