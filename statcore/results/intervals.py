"""Intervals over replicates: the Student-t interval of a mean over seeds, splits or data sets."""

from __future__ import annotations

import numpy as np
from scipy import stats


def mean_t_interval(values, alpha: float = 0.05) -> tuple[float, float, float, float]:
    """Mean, standard error and the two-sided ``1 - alpha`` t-interval of the mean.

    With fewer than two values there is no spread to estimate: the standard error and the
    interval are NaN rather than a misleading zero width.
    """
    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    if values.size < 2:
        return mean, np.nan, np.nan, np.nan
    se = float(values.std(ddof=1) / np.sqrt(values.size))
    half = float(stats.t.ppf(1 - alpha / 2, values.size - 1)) * se
    return mean, se, mean - half, mean + half


__all__ = [
    "mean_t_interval",
]
