"""Monte Carlo studies: :class:`MonteCarloStudy` runs a function over a grid of design points
on any backend, with one independent random stream per replicate; :class:`MonteCarloResult`
summarises the replicates (estimates, Monte Carlo standard errors, rejection rates)."""

from __future__ import annotations

import itertools
import numbers
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import special

from statcore.distributed.backends import (
    BACKENDS,
    Backend,
    borrowed_backend,
    is_dask_client,
)
from statcore.results.base import Results
from statcore.results.plotting import get_ax
from statcore.results.summary import Summary
from statcore.validation import (
    check_alpha,
    check_callable,
    check_option,
    check_positive_int,
    check_random_state,
    describe,
)

#: A Monte Carlo study is cut into about this many tasks per worker (fewer, larger tasks keep
#: the per-task overhead of processes and dask small; enough of them keep the workers busy).
_TASKS_PER_WORKER = 16

#: Column names a study's grid may not use: they name ``fn``'s seed argument or result columns.
_RESERVED = (
    "random_state",
    "replicate",
    "metric",
    "estimate",
    "std_error",
    "conf_low",
    "conf_high",
    "n_rep",
)


def _plot_estimates(results, ax=None, metric=None, alpha=0.05, **kwargs):
    """Estimates with ``1 - alpha`` Monte Carlo intervals against the first numeric grid column.

    One line per output (or only ``metric``) and per combination of the other grid columns.
    Without a numeric grid column the design points are placed side by side.
    """
    ax = get_ax(ax)
    metrics = (
        results.outputs
        if metric is None
        else (check_option(metric, name="metric", options=results.outputs),)
    )
    frame = results.tidy(alpha=alpha)
    grid = results.grid
    numeric = [
        c
        for c in grid.columns
        if pd.api.types.is_numeric_dtype(grid[c]) and not pd.api.types.is_bool_dtype(grid[c])
    ]
    x_name = numeric[0] if numeric else None
    if x_name is None:
        x = np.arange(results.n_points, dtype=float)
        groups = {"": np.arange(results.n_points)}
    else:
        x = grid[x_name].to_numpy(dtype=float)
        others = [c for c in grid.columns if c != x_name]
        labels = np.array(
            [_point_label(row, others) if others else "" for row in grid.to_dict("records")]
        )
        groups = {label: np.flatnonzero(labels == label) for label in dict.fromkeys(labels)}
    for name in metrics:
        rows = frame[frame["metric"] == name]
        est = rows["estimate"].to_numpy()
        err = np.vstack([est - rows["conf_low"].to_numpy(), rows["conf_high"].to_numpy() - est])
        for label, idx in groups.items():
            ax.errorbar(
                x[idx],
                est[idx],
                yerr=err[:, idx],
                fmt="o-",
                capsize=3,
                label=f"{name} {label}".strip(),
                **kwargs,
            )
    if x_name is None:
        ax.set_xticks(x, [_point_label(row, grid.columns) for row in grid.to_dict("records")])
    ax.set_xlabel(x_name or "design point")
    ax.set_ylabel("estimate")
    if len(metrics) * len(groups) > 1:
        ax.legend(frameon=False)
    ax.set_title(f"{results.method}: {100 * (1 - alpha):g}% Monte Carlo intervals")
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class MonteCarloResult(Results):
    """The replicates of a :class:`MonteCarloStudy` and their Monte Carlo summaries.

    Parameters
    ----------
    replicates : DataFrame
        One row per design point and replicate, point-major: the grid columns, ``replicate``
        (0, ..., n_rep - 1) and one column per output of ``fn`` (bool for boolean outputs).
    grid : DataFrame
        One row per design point, one column per parameter.
    outputs : tuple of str
        The output names, in the order ``fn`` returned them.
    n_rep : int
        Replicates per design point.
    backend : str
        Name of the backend that ran the study.
    wall_time_s : float
        Seconds the replicates took.

    Notes
    -----
    The estimate of an output at a design point is the mean over its replicates, a rate for a
    boolean output. Its Monte Carlo standard error is ``sd / sqrt(n)`` (sample sd, ddof=1), or
    ``sqrt(p (1 - p) / n)`` for a rate; intervals are normal, ``estimate ± z std_error``.
    NaN values (a test that did not apply) are left out, and ``n_rep`` in the tables counts
    the replicates used.

    References
    ----------
    Morris, T. P., White, I. R. and Crowther, M. J. (2019). Using simulation studies to evaluate
    statistical methods. *Statistics in Medicine* 38(11), 2074-2102 (Table 6).
    """

    replicates: pd.DataFrame
    grid: pd.DataFrame
    outputs: tuple[str, ...]
    n_rep: int
    backend: str = "serial"
    wall_time_s: float = float("nan")

    _plots: ClassVar[dict] = {"estimates": _plot_estimates}

    @property
    def n_points(self) -> int:
        """Number of design points."""
        return len(self.grid)

    def _estimates(self, values: np.ndarray, is_rate: bool, alpha: float) -> pd.DataFrame:
        """Per design point: grid columns + estimate, std_error, conf_low, conf_high, n_rep."""
        values = values.reshape(self.n_points, self.n_rep)
        valid = ~np.isnan(values)
        n = valid.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            est = np.where(valid, values, 0.0).sum(axis=1) / n
            if is_rate:
                se = np.sqrt(est * (1.0 - est) / n)
            else:
                dev = np.where(valid, values - est[:, None], 0.0)
                se = np.sqrt((dev**2).sum(axis=1) / (n - 1) / n)
        z = special.ndtri(1 - alpha / 2)
        frame = self.grid.reset_index(drop=True).copy()
        frame["estimate"] = est
        frame["std_error"] = se
        frame["conf_low"] = est - z * se
        frame["conf_high"] = est + z * se
        frame["n_rep"] = n
        return frame

    def _output_table(self, name: str, alpha: float) -> pd.DataFrame:
        column = self.replicates[name]
        return self._estimates(
            column.to_numpy(dtype=float), pd.api.types.is_bool_dtype(column), alpha
        )

    def tidy(self, alpha: float = 0.05) -> pd.DataFrame:
        """Long form: grid columns, ``metric``, ``estimate``, ``std_error``, ``conf_low``,
        ``conf_high``, ``n_rep``; one row per design point and output (point-major)."""
        alpha = check_alpha(alpha)
        tables = []
        for name in self.outputs:
            table = self._output_table(name, alpha)
            table.insert(self.grid.shape[1], "metric", name)
            tables.append(table)
        order = np.arange(self.n_points * len(self.outputs)).reshape(len(self.outputs), -1).T
        return pd.concat(tables, ignore_index=True).iloc[order.ravel()].reset_index(drop=True)

    def rejection_rate(self, alpha: float = 0.05) -> pd.DataFrame:
        """Share of replicates with ``pvalue <= alpha`` per design point, with its Monte Carlo
        standard error and 95% normal interval (the size or power of the test).

        Needs an output named ``pvalue`` (what ``fn`` returning a TestResult gives); NaN
        p-values are left out.
        """
        alpha = check_alpha(alpha)
        if "pvalue" not in self.outputs:
            raise ValueError(
                "`rejection_rate` needs an output named 'pvalue'; this study's outputs are "
                + ", ".join(repr(o) for o in self.outputs)
            )
        pvalues = self.replicates["pvalue"].to_numpy(dtype=float)
        rejected = np.where(np.isnan(pvalues), np.nan, pvalues <= alpha)
        return self._estimates(rejected, True, 0.05)

    def glance(self) -> pd.DataFrame:
        """One row: method, nobs (replicates in all), n_points, n_rep, backend, wall_time_s
        (seconds), random_state_used."""
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "nobs": self.nobs,
                    "n_points": self.n_points,
                    "n_rep": self.n_rep,
                    "backend": self.backend,
                    "wall_time_s": self.wall_time_s,
                    "random_state_used": self.random_state_used,
                }
            ]
        )

    def summary(self, alpha: float = 0.05) -> Summary:
        """One table per output: estimate, Monte Carlo standard error and normal interval per
        design point."""
        alpha = check_alpha(alpha)
        tables = {name: self._output_table(name, alpha) for name in self.outputs}
        notes = (
            "estimate: mean over replicates (rate for boolean outputs); std_error: Monte Carlo "
            "standard error, sd/sqrt(n_rep) (sqrt(p(1-p)/n_rep) for rates); "
            f"{100 * (1 - alpha):g}% normal intervals.",
        )
        if any((table["n_rep"] < self.n_rep).any() for table in tables.values()):
            notes += ("n_rep counts the replicates with a non-NaN value.",)
        return Summary(
            title=self.method, info=self._info(), tables=tables, notes=self.notes + notes
        )

    def _repr_lines(self) -> list[str]:
        return [
            f"  {self.n_points} design point(s) x {self.n_rep} replicates on {self.backend!r}; "
            f"outputs: {', '.join(self.outputs)}"
        ]


class MonteCarloStudy:
    """A simulation study (size, power, coverage, bias) over a grid of design points.

    Parameters
    ----------
    fn : callable
        ``fn(random_state=<numpy Generator>, **params)`` for one replicate, returning a mapping
        of output name to scalar (bool, int or float; NaN allowed), or an object with
        ``.statistic`` and ``.pvalue`` (a ``TestResult``, a scipy result), recorded as the
        outputs ``statistic`` and ``pvalue``. It must draw all its randomness from the
        Generator it is given. For the ``"processes"`` and dask backends it must be picklable
        (see :mod:`statcore.distributed`).
    grid : dict, list of dict or DataFrame
        The design points. A dict maps each parameter to its list of values, and the points are
        their Cartesian product (first parameter outermost); a str or non-iterable value is a
        single value. A list holds one dict per point (all with the same keys); a DataFrame one
        row per point. ``{}`` is one point without parameters.
    n_rep : int
        Replicates per design point.
    random_state : None, int, SeedSequence or Generator
        Fixes the entropy ``E`` of the study: an int is ``E`` itself; a SeedSequence without
        spawn key is its entropy, otherwise 128 bits of its state; a Generator gives 128 bits
        drawn from it (so its stream advances and each run differs); None draws fresh OS
        entropy at each run. ``E`` is recorded as ``random_state_used``; ``random_state=E``
        repeats the study.
    backend : None, str, Backend or dask.distributed.Client
        Where the replicates run (see :func:`get_backend`); a pool created for the run is closed
        after it.
    progress : bool
        Show a tqdm progress bar (it advances by tasks, each a block of replicates).

    Attributes
    ----------
    points : list of dict
        The design points' parameters, in order.
    grid : DataFrame
        The same, one row per point.

    Notes
    -----
    Replicate ``r`` of design point ``i`` uses the Generator seeded by child ``i * n_rep + r``
    of ``np.random.SeedSequence(E).spawn(n_points * n_rep)``: independent streams assigned by
    position, so the replicates are identical on every backend, whatever the number of workers
    or the order in which tasks finish. Each child is built in the worker that needs it, as
    ``SeedSequence(E, spawn_key=(i * n_rep + r,))``, which is what ``spawn`` returns.

    References
    ----------
    Morris, T. P., White, I. R. and Crowther, M. J. (2019). Using simulation studies to evaluate
    statistical methods. *Statistics in Medicine* 38(11), 2074-2102.

    Examples
    --------
    >>> def ztest(random_state, n):
    ...     x = random_state.standard_normal(n)
    ...     z = np.sqrt(n) * x.mean()
    ...     return {"statistic": z, "pvalue": 2 * special.ndtr(-abs(z))}
    >>> res = MonteCarloStudy(ztest, {"n": [10, 50]}, n_rep=500, random_state=1).run()
    >>> res.rejection_rate(alpha=0.05)  # doctest: +SKIP
    """

    def __init__(
        self,
        fn: Callable,
        grid,
        n_rep: int,
        *,
        random_state=None,
        backend=None,
        progress: bool = False,
    ):
        check_callable(fn, name="fn")
        self.fn = fn
        self.points, self.grid = _design_points(grid)
        self.n_rep = check_positive_int(n_rep, name="n_rep")
        check_random_state(random_state)
        self.random_state = random_state
        if not (backend is None or isinstance(backend, Backend) or is_dask_client(backend)):
            check_option(backend, name="backend", options=BACKENDS)
        self.backend = backend
        self.progress = progress

    @property
    def n_points(self) -> int:
        """Number of design points."""
        return len(self.points)

    def __repr__(self) -> str:
        return (
            f"MonteCarloStudy({_fn_name(self.fn)}, n_points={self.n_points}, "
            f"n_rep={self.n_rep}, backend={describe(self.backend)})"
        )

    def run(self) -> MonteCarloResult:
        """Run every replicate of every design point and collect them.

        Returns
        -------
        MonteCarloResult
        """
        entropy = _entropy(self.random_state)
        runner = _Replicates(fn=self.fn, entropy=entropy, n_rep=self.n_rep)
        with borrowed_backend(self.backend) as backend:
            start = time.perf_counter()
            blocks = backend.map(
                runner, self._tasks(backend.n_workers), progress=self.progress, desc="Monte Carlo"
            )
            wall_time_s = time.perf_counter() - start
        records = [record for block in blocks for record in block]
        outputs = self._check_outputs(records)
        rows = np.repeat(np.arange(self.n_points), self.n_rep)
        columns = {"replicate": np.tile(np.arange(self.n_rep), self.n_points)}
        columns.update({name: _column([r[name] for r in records]) for name in outputs})
        replicates = pd.concat(
            [self.grid.iloc[rows].reset_index(drop=True), pd.DataFrame(columns)], axis=1
        )
        return MonteCarloResult(
            method=f"Monte Carlo study of {_fn_name(self.fn)}",
            nobs=len(replicates),
            model=self,
            random_state_used=entropy,
            replicates=replicates,
            grid=self.grid.copy(),
            outputs=outputs,
            n_rep=self.n_rep,
            backend=backend.name,
            wall_time_s=wall_time_s,
        )

    def _tasks(self, n_workers: int) -> list[tuple[int, dict, int, int]]:
        """``(point, params, first replicate, stop)`` blocks, about 16 per worker in all."""
        per_point = min(self.n_rep, max(1, -(-_TASKS_PER_WORKER * n_workers // self.n_points)))
        edges = [j * self.n_rep // per_point for j in range(per_point + 1)]
        return [
            (i, params, first, stop)
            for i, params in enumerate(self.points)
            for first, stop in itertools.pairwise(edges)
        ]

    def _check_outputs(self, records: list[dict]) -> tuple[str, ...]:
        """The output names, checked to be the same at every replicate and free of clashes."""
        names = tuple(records[0])
        expected = set(names)
        for index, record in enumerate(records):
            if record.keys() != expected:
                point, rep = divmod(index, self.n_rep)
                raise ValueError(
                    f"`fn` returned the outputs {sorted(record)} at grid point "
                    f"{_point_label(self.points[point])}, replicate {rep}, but {sorted(names)} "
                    f"at grid point {_point_label(self.points[0])}, replicate 0; every "
                    "replicate must return the same outputs"
                )
        clash = [name for name in names if name in self.grid.columns or name == "replicate"]
        if clash:
            raise ValueError(
                f"`fn` outputs {clash} clash with the grid's parameters or 'replicate'; rename them"
            )
        return names


@dataclass(frozen=True)
class _Replicates:
    """The function each task runs: replicates ``first..stop-1`` of one design point."""

    fn: Callable
    entropy: int
    n_rep: int

    def __call__(self, task: tuple[int, dict, int, int]) -> list[dict]:
        point, params, first, stop = task
        out = []
        for rep in range(first, stop):
            seed = np.random.SeedSequence(self.entropy, spawn_key=(point * self.n_rep + rep,))
            try:
                value = self.fn(random_state=np.random.default_rng(seed), **params)
            except Exception as exc:
                where = f"at grid point {_point_label(params)}, replicate {rep}"
                exc.add_note(f"raised by `fn` {where}")
                raise
            out.append(_outputs(value, params, rep))
        return out


def _outputs(value, params: dict, rep: int) -> dict[str, Any]:
    """One replicate's outputs as a dict of Python scalars (bool, int, float)."""
    where = f"at grid point {_point_label(params)}, replicate {rep}"
    if not isinstance(value, Mapping):
        if not (hasattr(value, "statistic") and hasattr(value, "pvalue")):
            raise TypeError(
                "`fn` must return a mapping of output name to scalar, or an object with "
                f"`.statistic` and `.pvalue`; got {describe(value)} {where}"
            )
        value = {"statistic": value.statistic, "pvalue": value.pvalue}
    if not value:
        raise ValueError(f"`fn` returned no outputs {where}")
    out = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise TypeError(f"`fn` output names must be str; got {key!r} {where}")
        scalar = item.item() if isinstance(item, np.ndarray) and item.ndim == 0 else item
        if isinstance(scalar, bool | np.bool_):
            out[key] = bool(scalar)
        elif isinstance(scalar, numbers.Integral):
            out[key] = int(scalar)
        elif isinstance(scalar, numbers.Real):
            out[key] = float(scalar)
        else:
            raise TypeError(
                f"`fn` output {key!r} must be a scalar (bool, int or float); "
                f"got {describe(item)} {where}"
            )
    return out


def _column(values: list) -> np.ndarray:
    """bool when every value is, int64 when every value is an int, float64 otherwise."""
    if all(isinstance(v, bool) for v in values):
        return np.array(values, dtype=bool)
    if all(type(v) is int for v in values):
        return np.array(values, dtype=np.int64)
    return np.array(values, dtype=np.float64)


def _design_points(grid) -> tuple[list[dict], pd.DataFrame]:
    """The grid as a list of parameter dicts and a DataFrame with one row per point."""
    if isinstance(grid, pd.DataFrame):
        if len(grid) == 0:
            raise ValueError("`grid` must have at least one row; got an empty DataFrame")
        frame = grid.reset_index(drop=True)
        points = frame.to_dict("records")
    elif isinstance(grid, Mapping):
        levels = {}
        for name, values in grid.items():
            single = isinstance(values, str) or not isinstance(values, Iterable)
            levels[name] = [values] if single else list(values)
            if not levels[name]:
                raise ValueError(f"`grid[{name!r}]` must hold at least one value; got {values!r}")
        points = [
            dict(zip(levels, combo, strict=True)) for combo in itertools.product(*levels.values())
        ]
        frame = pd.DataFrame(points, index=range(len(points)))
    elif isinstance(grid, list | tuple):
        if not grid:
            raise ValueError("`grid` must hold at least one design point; got an empty list")
        for i, point in enumerate(grid):
            if not isinstance(point, Mapping):
                raise TypeError(f"`grid[{i}]` must be a dict of parameters; got {describe(point)}")
            if point.keys() != grid[0].keys():
                raise ValueError(
                    f"every point of `grid` must have the same parameters; grid[0] has "
                    f"{sorted(grid[0])}, grid[{i}] has {sorted(point)}"
                )
        points = [dict(point) for point in grid]
        frame = pd.DataFrame(points, index=range(len(points)))
    else:
        raise TypeError(
            "`grid` must be a dict of parameter values, a list of dicts or a DataFrame; "
            f"got {describe(grid)}"
        )
    for name in frame.columns:
        if not isinstance(name, str) or name in _RESERVED:
            raise ValueError(
                "`grid` parameter names must be str and not one of "
                f"{', '.join(repr(r) for r in _RESERVED)}; got {name!r}"
            )
    return points, frame


def _entropy(random_state) -> int:
    """The study's root entropy ``E`` (see :class:`MonteCarloStudy`)."""
    if isinstance(random_state, np.random.Generator):
        return int.from_bytes(random_state.bytes(16), "little")
    if isinstance(random_state, np.random.SeedSequence):
        plain = not random_state.spawn_key and random_state.pool_size == 4
        if plain and isinstance(random_state.entropy, int):
            return random_state.entropy
        return int.from_bytes(random_state.generate_state(4, np.uint32).tobytes(), "little")
    if random_state is None:
        return np.random.SeedSequence().entropy
    return int(random_state)


def _point_label(params: Mapping, names: Iterable[str] | None = None) -> str:
    names = list(params) if names is None else list(names)
    return "{" + ", ".join(f"{name}={params[name]!r}" for name in names) + "}"


def _fn_name(fn: Callable) -> str:
    return getattr(fn, "__qualname__", type(fn).__name__)
