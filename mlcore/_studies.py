"""The interval rows of mlcore's seed studies: a mean over repetitions with its t-interval."""

from __future__ import annotations

from statcore.results.intervals import mean_t_interval


def t_interval_row(values, alpha: float) -> dict:
    """The mean of ``values`` with its Student-t interval, as the columns of a tidy row.

    Parameters
    ----------
    values : array_like
        One number per repetition (seed, paired difference, episode).
    alpha : float
        The interval is ``1 - alpha``.

    Returns
    -------
    dict
        ``estimate, std_error, conf_low, conf_high``, in that order, to splice into a row
        (``{"method": name, **t_interval_row(values, alpha)}``).
    """
    mean, se, low, high = mean_t_interval(values, alpha)
    return {"estimate": mean, "std_error": se, "conf_low": low, "conf_high": high}


class SeedStudy:
    """The ``n_seeds`` of a study result whose ``scores`` table has a ``seed`` column."""

    @property
    def n_seeds(self) -> int:
        """Number of repetitions (distinct seeds)."""
        return int(self.scores["seed"].nunique())
