"""The iteration record of mlcore's loops, which run a step budget rather than to a tolerance."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from mlcore.results import TrainingResult
from statcore.results import IterationRecord


def budget_result(
    records,
    *,
    method: str,
    function: str,
    n_iter: int,
    maxiter: int | None,
    criterion: str,
    remedy: str,
    nan_means_unobserved: bool = False,
    **fields,
) -> TrainingResult:
    """A :class:`TrainingResult` from logged records, carrying the loop's ``iterations`` record.

    Parameters
    ----------
    records, method, **fields
        As in :meth:`TrainingResult.from_records`.
    function : str
        The loop's public name, for the warning.
    n_iter, maxiter : int
        Steps run and steps planned (``maxiter=None`` where the caller's loop decides).
    criterion, remedy
        As in :meth:`statcore.results.IterationRecord.from_run`.
    nan_means_unobserved : bool
        A NaN loss marks a step that logged no loss, not a diverged one.
    """
    result = TrainingResult.from_records(records, method=method, **fields)
    losses = result.history["loss"].to_numpy()
    if nan_means_unobserved:
        losses = losses[~np.isnan(losses)]
    # A training loop with a fixed number of steps (or one whose caller decides when to stop) has
    # no tolerance to meet: running its steps as planned completes it, so it reports met=True,
    # never "maxiter". The one way it fails is a loss gone infinite or NaN: diverged=True.
    diverged = not np.isfinite(losses).all()
    record = IterationRecord.from_run(
        function=function,
        n_iter=n_iter,
        maxiter=maxiter,
        tol=None,
        criterion=criterion,
        last_value=losses[-1] if losses.size else math.nan,
        met=not diverged,
        diverged=diverged,
        history=result.history,
        remedy=remedy,
    )
    return replace(result, iterations=record)
