"""``IterationRecord``: how an iterative procedure stopped, in one shape for every method area."""

from __future__ import annotations

import math
import os
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from statcore.exceptions import ConvergenceWarning

#: Warnings point at the first frame outside these packages: the user's call, however deep the
#: procedure sits (wrappers, inner helpers) and without hand-counted stack levels.
_PACKAGE_DIRS = tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), name) + os.sep
    for name in ("statcore", "mlcore")
)

#: Why an iterative procedure stopped.
STATUSES = ("converged", "maxiter", "stalled", "diverged")

_STATUS_WORDS = {
    "maxiter": "reached maxiter={maxiter} without meeting the tolerance",
    "stalled": "stalled after {n_iter} iterations (its step collapsed short of the tolerance)",
    "diverged": "diverged after {n_iter} iterations",
}


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class IterationRecord:
    """How an iterative procedure (ECM, Sinkhorn, a Newton solver, a training loop) stopped.

    Make one with :meth:`from_run`, which decides ``status`` from what the loop saw and warns
    when the procedure did not converge; direct construction is checked for consistency only.

    Parameters
    ----------
    function : str
        The procedure's public name ("QuantizedNVMM.fit"), used in warnings and summaries.
    status : {"converged", "maxiter", "stalled", "diverged"}
        Why the loop stopped.
    n_iter : int
        Iterations run.
    maxiter : int or None
        The iteration limit (``None`` for loops without one).
    tol : float or None
        The tolerance the criterion was compared with.
    criterion : str
        What was compared with ``tol`` ("relative change in log-likelihood", "marginal error").
    last_value : float
        The criterion's value at the last iteration.
    history : DataFrame
        One row per recorded iteration (may be empty when the procedure keeps none).
    """

    function: str
    status: str
    n_iter: int
    maxiter: int | None
    tol: float | None
    criterion: str
    last_value: float = math.nan
    history: pd.DataFrame = field(default_factory=pd.DataFrame)

    def __post_init__(self):
        if self.status not in STATUSES:
            shown = ", ".join(repr(s) for s in STATUSES)
            raise ValueError(f"`status` must be one of {shown}; got {self.status!r}")
        if not isinstance(self.history, pd.DataFrame):
            raise TypeError(
                f"`history` must be a pandas DataFrame; got {type(self.history).__name__}"
            )

    @property
    def converged(self) -> bool:
        """Whether the criterion met the tolerance (never true for ``"maxiter"``)."""
        return self.status == "converged"

    @classmethod
    def from_run(
        cls,
        *,
        function: str,
        n_iter: int,
        maxiter: int | None,
        tol: float | None,
        criterion: str,
        last_value: float = math.nan,
        met: bool | None = None,
        stalled: bool = False,
        diverged: bool = False,
        history: pd.DataFrame | None = None,
        remedy: str = "raise maxiter or loosen tol",
        warn: bool = True,
    ) -> IterationRecord:
        """The one constructor of a record, with the rules every procedure follows.

        Parameters
        ----------
        function, n_iter, maxiter, tol, criterion, last_value, history
            As in the class.
        met : bool, optional
            Whether the stopping criterion was met; default ``last_value <= tol``.
        stalled : bool
            The loop stopped because its step collapsed (a line search that found no
            improvement, a step size under its floor). Without ``met`` this is ``"stalled"``,
            never ``"converged"``.
        diverged : bool
            The iterates became non-finite or the objective went the wrong way.
        remedy : str
            What the user can do, quoted in the warning.
        warn : bool
            Warn :class:`~statcore.exceptions.ConvergenceWarning` (once) unless converged,
            pointing at the user's call. Inner solves whose caller reports on them pass
            ``False``.

        Returns
        -------
        IterationRecord
            ``status`` is ``"diverged"`` if ``diverged``; else ``"converged"`` if the criterion
            was met (even at the last allowed iteration); else ``"stalled"`` if ``stalled`` or the
            loop stopped before ``maxiter``; else ``"maxiter"``.
        """
        n_iter = int(n_iter)
        last_value = float(last_value)
        if met is None:
            met = tol is not None and math.isfinite(last_value) and last_value <= tol
        if diverged or (not math.isfinite(last_value) and not met and not math.isnan(last_value)):
            status = "diverged"
        elif met:
            status = "converged"
        elif stalled or (maxiter is not None and n_iter < maxiter):
            status = "stalled"
        else:
            status = "maxiter"
        record = cls(
            function=function,
            status=status,
            n_iter=n_iter,
            maxiter=None if maxiter is None else int(maxiter),
            tol=None if tol is None else float(tol),
            criterion=criterion,
            last_value=last_value,
            history=pd.DataFrame() if history is None else history,
        )
        return record.warn(remedy) if warn else record

    @classmethod
    def combine(
        cls,
        records: Sequence[IterationRecord],
        *,
        function: str,
        labels: Sequence,
        label: str,
        remedy: str = "raise maxiter or loosen tol",
        warn: bool = True,
    ) -> IterationRecord:
        """One record for several solves reported together (per level, agent, OT problem).

        ``n_iter`` is their total and ``maxiter`` the limit each had; the whole converged when
        every solve did, diverged when one did, reached maxiter when one did, and stalled
        otherwise. ``last_value`` is the largest criterion value, and ``history`` has one row per
        solve (``label``: its level, agent or name) with its status, iterations and value.
        """
        if not records:
            raise ValueError("`records` must hold at least one IterationRecord; got none")
        met = all(r.converged for r in records)
        history = pd.DataFrame(
            {
                label: list(labels),
                "status": [r.status for r in records],
                "n_iter": [r.n_iter for r in records],
                "last_value": [r.last_value for r in records],
            }
        )
        values = [r.last_value for r in records if not math.isnan(r.last_value)]
        return cls.from_run(
            function=function,
            n_iter=sum(r.n_iter for r in records),
            maxiter=records[0].maxiter,
            tol=records[0].tol,
            criterion=f"largest {records[0].criterion} over the {label}s",
            last_value=max(values, default=math.nan),
            met=met,
            stalled=not met and not any(r.status == "maxiter" for r in records),
            diverged=any(r.status == "diverged" for r in records),
            history=history,
            remedy=remedy,
            warn=warn,
        )

    def warn(self, remedy: str = "raise maxiter or loosen tol") -> IterationRecord:
        """Warn ``ConvergenceWarning`` at the user's call unless converged; returns the record.

        :meth:`from_run` calls it; call it directly for a record built with ``warn=False`` that
        comes to report after all (the fit chosen among several silent ones).
        """
        if not self.converged:
            warnings.warn(
                f"{self.message()}; {remedy}", ConvergenceWarning, stacklevel=_user_level()
            )
        return self

    def message(self) -> str:
        """One line saying how the procedure stopped."""
        if self.converged:
            return f"{self.function} converged after {self.n_iter} iterations"
        words = _STATUS_WORDS[self.status].format(maxiter=self.maxiter, n_iter=self.n_iter)
        value = f"{self.criterion} = {self.last_value:.3g}"
        if self.tol is not None:
            value += f", tol = {self.tol:g}"
        return f"{self.function} {words} ({value})"

    def __repr__(self) -> str:
        return f"<IterationRecord: {self.message()}>"


def _user_level() -> int:
    """``warnings.warn``'s stacklevel for the innermost frame outside statcore and mlcore."""
    frame, level = sys._getframe(2), 2  # level 1 is IterationRecord.warn, which warns
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIRS):
        frame, level = frame.f_back, level + 1
    return level if frame is not None else 2
