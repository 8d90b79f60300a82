"""mlcore's results: ``TrainingResult`` (a training run) and ``EvaluationResult`` (metrics).

Both are statcore results (frozen dataclasses with ``summary``, ``tidy``, ``glance``, ``plot``);
tensors reach them only through ``as_numpy``.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import ClassVar

import numpy as np
import pandas as pd

from mlcore._device import as_numpy
from statcore.results import EstimationResults, ResamplingResult, Results, Summary
from statcore.results.plotting import get_ax, legend_beside
from statcore.validation import (
    as_float_array,
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
    check_same_length,
)

#: History columns that index a logged step rather than measure it.
INDEX_COLUMNS = ("step", "epoch", "lr")
MONITOR_MODES = ("min", "max")
#: Interval methods available from a per-example bootstrap (BCa would need jackknife values).
EVALUATION_CI_METHODS = ("percentile", "basic", "normal")
#: Largest number of float64 entries one bootstrap chunk materialises (32 MiB).
_CHUNK_ELEMENTS = 2**22


def _plot_curves(results, ax=None, metrics=None, lr=None, **kwargs):
    """Learning curves against ``step``, the best step starred; the learning rate in a panel
    of its own below.

    Parameters
    ----------
    results : TrainingResult
    ax : matplotlib Axes, optional
        A subplot to draw in (split in two when the learning rate is drawn).
    metrics : str or list of str, optional
        Metrics to draw (default: all of them).
    lr : bool, optional
        Draw the learning rate (on its own axis, log scale when it spans more than a
        decade); default: when ``history`` logs one.
    **kwargs
        Passed to ``Axes.plot`` for every curve.

    Returns
    -------
    Axes, or an array ``[curves, learning rate]`` when the learning rate is drawn.
    """
    if metrics is None:
        metrics = results.metrics
    elif isinstance(metrics, str):
        metrics = [metrics]
    else:
        metrics = list(metrics)
    for metric in metrics:
        check_option(metric, name="metrics", options=results.metrics)
    rates = results.history[["step", "lr"]].dropna()
    if lr is None:
        lr = len(rates) > 0
    elif lr and not len(rates):
        raise ValueError("`lr=True` but `history` logs no learning rate")
    if lr:
        ax, lr_ax = _curves_and_rate_axes(ax)
    else:
        ax = get_ax(ax)
    for metric in metrics:
        logged = results.history[["step", metric]].dropna()
        ax.plot(logged["step"], logged[metric], label=metric, **kwargs)
    if results.best_step is not None and results.monitor in metrics:
        ax.scatter(
            [results.best_step],
            [results.best_value],
            marker="*",
            s=90,
            color="black",
            zorder=3,
            label=f"best step ({results.best_step})",
        )
    ax.set_ylabel(metrics[0] if len(metrics) == 1 else "value")
    ax.set_title(results.method)
    legend_beside(ax)
    if not lr:
        ax.set_xlabel("step")
        return ax
    lr_ax.plot(rates["step"], rates["lr"], color="0.3")
    positive = rates["lr"][rates["lr"] > 0]
    if len(positive) and positive.max() > 10 * positive.min():
        lr_ax.set_yscale("log")
    lr_ax.set_ylabel("learning rate")
    lr_ax.set_xlabel("step")
    ax.tick_params(labelbottom=False)
    return np.array([ax, lr_ax])


def _curves_and_rate_axes(ax):
    """A tall panel for the curves over a short one for the learning rate, sharing ``step``."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig = plt.figure(figsize=(6.4, 4.8), layout="constrained")
        spec = fig.add_gridspec(2, 1, height_ratios=[3, 1])
    else:
        parent = ax.get_subplotspec()
        if parent is None:
            raise ValueError(
                "`ax` must be a subplot (from `plt.subplots`) to hold the curves and the "
                "learning-rate panel; or pass `lr=False`"
            )
        fig = ax.figure
        spec = parent.subgridspec(2, 1, height_ratios=[3, 1])
        ax.remove()
    curves = fig.add_subplot(spec[0])
    return curves, fig.add_subplot(spec[1], sharex=curves)


def _scalar(value, *, name: str):
    """One logged value (tensor, array or number) as a Python scalar."""
    arr = as_numpy(value, name=name)
    if arr.size != 1:
        raise ValueError(f"`{name}` must be a scalar; got an array of shape {arr.shape}")
    return arr.reshape(()).item()


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class TrainingResult(Results):
    """The record of a training run: a history of logged steps and the best of them.

    Parameters
    ----------
    history : DataFrame
        One row per logged step. Required columns ``step`` and ``loss``; ``epoch`` and ``lr``
        are added as NaN when absent; every other column is a metric (``val_loss``,
        ``accuracy``, ...). Metrics logged less often than ``loss`` are NaN in between. The
        stored history is a copy ordered ``step, epoch, lr, loss, <metrics>``, with float
        metrics.
    best_step : int, optional
        The selected step; by default the step where ``monitor`` is smallest (largest with
        ``monitor_mode="max"``).
    monitor : str
        Metric that selects ``best_step`` (``"loss"``, or a validation metric).
    monitor_mode : {"min", "max"}
        Whether the best ``monitor`` value is its minimum or its maximum.
    wall_time_s : float, optional
        Wall-clock duration of the run in seconds.
    device : str, optional
        Where it ran (``"cpu"``, ``"cuda:0"``); a ``torch.device`` is stored as its string.

    Notes
    -----
    ``converged`` and ``n_iter`` mean what they mean in statcore: whether the loop met its
    stopping rule, and how many iterations (optimiser steps) it took.

    Examples
    --------
    >>> res = TrainingResult.from_records(
    ...     [{"step": 0, "loss": 1.0}, {"step": 1, "loss": 0.5}], method="SGD")
    >>> res.best_step
    1
    """

    history: pd.DataFrame
    best_step: int | None = None
    monitor: str = "loss"
    monitor_mode: str = "min"
    wall_time_s: float | None = None
    device: str | None = None

    _plots: ClassVar[dict] = {"curves": _plot_curves}

    def __post_init__(self):
        super().__post_init__()
        if not isinstance(self.history, pd.DataFrame):
            raise TypeError(
                f"`history` must be a pandas DataFrame; got {type(self.history).__name__}"
            )
        missing = [c for c in ("step", "loss") if c not in self.history.columns]
        if missing:
            raise ValueError(
                f"`history` must have the columns 'step' and 'loss'; missing {missing} in "
                f"columns {list(self.history.columns)}"
            )
        check_option(self.monitor_mode, name="monitor_mode", options=MONITOR_MODES)
        metrics = ["loss", *(c for c in self.history.columns if c not in (*INDEX_COLUMNS, "loss"))]
        check_option(self.monitor, name="monitor", options=metrics)
        as_float_array(self.history["step"], name="history['step']", min_rows=1)
        history = pd.DataFrame(
            as_float_array(self.history[metrics], name="history", allow_nan=True, allow_inf=True),
            columns=metrics,
        )
        for position, column in enumerate(INDEX_COLUMNS):
            values = self.history[column] if column in self.history else np.nan
            history.insert(position, column, np.asarray(values))
        object.__setattr__(self, "history", history)
        if self.wall_time_s is not None:
            wall_time_s = check_positive(self.wall_time_s, name="wall_time_s", strict=False)
            object.__setattr__(self, "wall_time_s", wall_time_s)
        if self.device is not None:
            object.__setattr__(self, "device", str(self.device))
        if self.best_step is None:
            monitored = history[self.monitor]
            if monitored.notna().any():
                best = monitored.idxmin() if self.monitor_mode == "min" else monitored.idxmax()
                object.__setattr__(self, "best_step", history.at[best, "step"].item())
        elif not (history["step"] == self.best_step).any():
            raise ValueError(f"`best_step` must be one of the logged steps; got {self.best_step!r}")

    @classmethod
    def from_records(cls, records, *, method: str, **fields) -> TrainingResult:
        """Build a result from logged records, one dict per step.

        Parameters
        ----------
        records : iterable of dict
            ``{"step": ..., "loss": ..., <metric>: ...}``; values may be 0-d (or one-element)
            tensors, arrays or numbers. Keys missing from a record are NaN there.
        method : str
            Name of the training procedure.
        **fields
            Further :class:`TrainingResult` fields (``wall_time_s``, ``device``, ``monitor``,
            ``converged``, ``n_iter``, ...).

        Returns
        -------
        TrainingResult
        """
        rows = [
            {key: _scalar(value, name=f"records[{i}][{key!r}]") for key, value in record.items()}
            for i, record in enumerate(records)
        ]
        return cls(method=method, history=pd.DataFrame.from_records(rows), **fields)

    @property
    def metrics(self) -> list[str]:
        """Names of the metric columns of ``history`` (``loss`` first)."""
        return [c for c in self.history.columns if c not in INDEX_COLUMNS]

    @property
    def n_steps(self) -> int:
        """Number of logged steps (rows of ``history``)."""
        return len(self.history)

    @property
    def best_value(self) -> float:
        """``monitor`` at ``best_step`` (NaN when there is no best step)."""
        if self.best_step is None:
            return np.nan
        return float(self._best_row()[self.monitor])

    def _best_row(self) -> pd.Series:
        return self.history.loc[self.history["step"] == self.best_step, self.metrics].iloc[0]

    def tidy(self) -> pd.DataFrame:
        """``history`` in long form: ``step, epoch, metric, value``, one row per step and metric.

        Metric-major (all ``loss`` rows, then the next metric); unlogged values stay as NaN, so
        there are always ``n_steps * len(metrics)`` rows.
        """
        return self.history.melt(
            id_vars=["step", "epoch"],
            value_vars=self.metrics,
            var_name="metric",
            value_name="value",
        )

    def glance(self) -> pd.DataFrame:
        """One row: ``method, nobs, n_steps, final_<metric>..., monitor, best_step, best_value,
        wall_time_s, device, converged, n_iter``.

        ``final_<metric>`` is the last logged (non-NaN) value of each metric.
        """
        final = self.history[self.metrics].ffill().iloc[-1]
        row = {
            "method": self.method,
            "nobs": self.nobs,
            "n_steps": self.n_steps,
            **{f"final_{m}": float(final[m]) for m in self.metrics},
            "monitor": self.monitor,
            "best_step": self.best_step,
            "best_value": self.best_value,
            "wall_time_s": self.wall_time_s,
            "device": self.device,
            "converged": self.converged,
            "n_iter": self.n_iter,
        }
        return pd.DataFrame([row])

    def summary(self, alpha: float = 0.05) -> Summary:
        """Header from :meth:`glance`; a ``metrics`` table of final, best, min and max values.

        ``alpha`` is accepted for the common signature; a training record has no intervals.
        """
        finals = self.glance().iloc[0]
        values = self.tidy().groupby("metric", sort=False)["value"]
        best = self._best_row() if self.best_step is not None else np.nan
        table = pd.DataFrame(
            {
                "final": [finals[f"final_{m}"] for m in self.metrics],
                "best": best,
                "min": values.min(),
                "max": values.max(),
            },
            index=pd.Index(self.metrics, name="metric"),
        )
        note = (
            f"best: each metric at step {self.best_step}, the {self.monitor_mode}imum of "
            f"`{self.monitor}`."
        )
        return Summary(
            title=self._title(),
            info=self._info(),
            tables={"metrics": table},
            notes=self.notes + (note,) + self._convergence_notes(),
        )

    def _info(self) -> tuple[tuple[str, str], ...]:
        """The glance header without the ``final_*`` values (the metrics table shows them)."""
        return tuple((k, v) for k, v in super()._info() if not k.startswith("final_"))

    def _repr_lines(self) -> list[str]:
        final = self.glance().iloc[0]
        values = ", ".join(f"{m}={final[f'final_{m}']:.4g}" for m in self.metrics)
        return [
            f"{self.n_steps} steps; best step {self.best_step} "
            f"({self.monitor}={self.best_value:.4g})",
            f"final: {values}",
        ]


def _bootstrap(matrix: np.ndarray, statistic, n_resamples: int, rng) -> np.ndarray:
    """``n_resamples`` bootstrap replicates of ``statistic`` over the rows of ``matrix`` (n, k).

    Rows (examples) are resampled jointly across columns (metrics), by index matrices drawn
    from ``rng`` in chunks of at most ``_CHUNK_ELEMENTS`` resampled entries.
    """
    n, k = matrix.shape
    out = np.empty((n_resamples, k))
    chunk = max(1, _CHUNK_ELEMENTS // (n * k))
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = statistic(matrix[idx], axis=1)
    return out


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class EvaluationResult(EstimationResults):
    """Evaluation metrics as estimates ("terms"), with resampled standard errors and intervals.

    ``params`` holds the metric values. Their uncertainty comes from the attached
    ``resampling`` (by default a per-example bootstrap, see :meth:`from_per_example`), or from a
    ``vcov`` with ``inference="normal"`` where an analytic formula exists. There is no null
    value by default, so ``tidy()`` has no ``statistic`` / ``p_value`` columns.

    Parameters
    ----------
    inference : {"bootstrap", "normal", "t"}
        Defaults to ``"bootstrap"``.
    cov_type : str
        Defaults to ``"bootstrap"``.
    null_value : float or None
        Defaults to None (no tests).

    See :class:`statcore.results.EstimationResults` for the other fields.

    References
    ----------
    Efron, B. and Tibshirani, R. (1993). *An Introduction to the Bootstrap*, ch. 6 and 13.
    """

    inference: str = "bootstrap"
    cov_type: str = "bootstrap"
    null_value: float | None = None

    _table_name: ClassVar[str] = "metrics"

    @classmethod
    def from_per_example(
        cls,
        values,
        *,
        statistic=np.mean,
        n_resamples: int = 2000,
        random_state=None,
        method: str = "Evaluation",
        ci_method: str = "percentile",
        **fields,
    ) -> EvaluationResult:
        """Metrics from per-example values, with a per-example (nonparametric) bootstrap.

        Each metric is ``statistic`` of its per-example values (mean of 0/1 correctness gives
        accuracy, mean of per-example losses the risk). The bootstrap resamples *examples*,
        jointly across metrics, so the replicates keep the metrics' correlation (and
        ``wald_test``-style contrasts between them stay valid).

        Parameters
        ----------
        values : mapping of str to array_like, or DataFrame
            Metric name -> per-example values (1-D, the same length for every metric); tensors
            are accepted (through ``as_numpy``).
        statistic : callable
            ``statistic(x, axis)`` reducing ``axis`` of a float array, like numpy reductions
            (``np.mean``, ``np.median``); it is applied to the (examples, metrics) matrix with
            ``axis=0`` and to stacks of resamples with ``axis=1``.
        n_resamples : int
            Bootstrap replicates (at least 2).
        random_state : None, int, SeedSequence or Generator
            Source of the resampling indices.
        method : str
            Name shown in the summary.
        ci_method : {"percentile", "basic", "normal"}
            Bootstrap interval; percentile by default.
        **fields
            Further :class:`EvaluationResult` fields (``notes``, ``model``, ...).

        Returns
        -------
        EvaluationResult
            ``resampling`` keeps a ``resampler``, so :meth:`extend` can add replicates.

        Examples
        --------
        >>> ev = EvaluationResult.from_per_example(
        ...     {"accuracy": [1, 0, 1, 1, 0, 1, 1, 1]}, n_resamples=200, random_state=0)
        >>> float(ev.params["accuracy"])
        0.75
        """
        if isinstance(values, pd.DataFrame):
            values = dict(values.items())
        if not isinstance(values, Mapping):
            raise TypeError(
                "`values` must be a mapping of metric name to per-example values (or a "
                f"DataFrame); got {type(values).__name__}"
            )
        if not values:
            raise ValueError("`values` must hold at least one metric; got an empty mapping")
        names = [str(name) for name in values]
        columns = {
            name: as_float_array(
                as_numpy(v, name=f"values[{name!r}]"), name=f"values[{name!r}]", ndim=1, min_rows=2
            )
            for name, v in zip(names, values.values(), strict=True)
        }
        nobs = check_same_length(**columns)
        n_resamples = check_positive_int(n_resamples, name="n_resamples", minimum=2)
        check_option(ci_method, name="ci_method", options=EVALUATION_CI_METHODS)
        rng = check_random_state(random_state)
        matrix = np.column_stack(list(columns.values()))
        estimate = pd.Series(
            as_float_array(statistic(matrix, axis=0), name="statistic(values, axis=0)", ndim=1),
            index=names,
            name="estimate",
        )
        resampler = partial(_bootstrap, matrix, statistic)
        seed = int(random_state) if isinstance(random_state, numbers.Integral) else None
        stat_name = getattr(statistic, "__name__", type(statistic).__name__)
        resampling = ResamplingResult(
            method=f"Per-example bootstrap of the {stat_name}",
            nobs=nobs,
            estimate=estimate,
            replicates=pd.DataFrame(resampler(n_resamples, rng), columns=names),
            scheme="per-example bootstrap (examples resampled jointly across metrics)",
            resampler=resampler,
            random_state_used=seed,
        )
        note = f"Metrics: {stat_name} over {nobs} examples; examples resampled jointly."
        return cls(
            method=method,
            nobs=nobs,
            params=estimate,
            resampling=resampling,
            ci_method=ci_method,
            random_state_used=seed,
            notes=(*fields.pop("notes", ()), note),
            **fields,
        )

    def extend(self, n_more: int, random_state=None) -> EvaluationResult:
        """A new result with ``n_more`` further bootstrap replicates (see
        :meth:`statcore.results.ResamplingResult.extend`).
        """
        if self.resampling is None:
            raise ValueError("this result has no `resampling` replicates to extend")
        return replace(self, resampling=self.resampling.extend(n_more, random_state))

    def _repr_lines(self) -> list[str]:
        return ["", "Metrics:", self.params.to_string(float_format=lambda v: f"{v:.4g}")]
