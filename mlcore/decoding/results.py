"""``InterventionResult``: where a reasoning model took over the base model's decoding."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from statcore.results import Results, Summary
from statcore.results.plotting import get_ax, label_axes


def _plot_trace(results, ax=None, sequence=0, **kwargs):
    """The disagreement along one generated sequence, the threshold dashed, takeovers marked."""
    ax = get_ax(ax)
    n = results.lengths[sequence]
    steps = np.arange(n)
    trace = results.disagreement[sequence, :n]
    ax.plot(steps, trace, marker=".", label=f"{results.measure} disagreement", **kwargs)
    hit = results.intervened[sequence, :n]
    ax.scatter(
        steps[hit], trace[hit], s=70, facecolors="none", edgecolors="C3", label="reasoner token"
    )
    label = f"threshold {results.threshold:g}"
    ax.axhline(results.threshold, color="0.4", linestyle="--", label=label)
    return label_axes(
        ax,
        xlabel="generated position",
        ylabel="disagreement",
        title=f"{results.method}: sequence {sequence}",
        legend="beside",
    )


def _plot_positions(results, ax=None, **kwargs):
    """How often each generated position was handed to the reasoner, over all sequences."""
    ax = get_ax(ax)
    width = results.tokens.shape[1]
    counts = results.intervened.sum(axis=0)
    ax.bar(np.arange(width), counts, **kwargs)
    return label_axes(
        ax,
        xlabel="generated position",
        ylabel="interventions",
        title=f"{results.method}: {results.n_interventions.sum()} interventions",
    )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class InterventionResult(Results):
    """The record of one disagreement-guided decoding run (see :func:`intervene_generate`).

    Parameters
    ----------
    prompt : ndarray of int, shape (batch, prompt_length)
        The prompt ids.
    tokens : ndarray of int, shape (batch, n_steps)
        The generated ids; ``-1`` after a sequence emitted ``eos_token_id``.
    intervened : ndarray of bool, shape (batch, n_steps)
        True where the token came from the reasoner.
    disagreement : ndarray of float, shape (batch, n_steps)
        The disagreement between the two models' next-token distributions at each step (NaN
        after the end of a sequence).
    base_entropy : ndarray of float, shape (batch, n_steps)
        The base model's next-token entropy (nats) at each step.
    base_top1 : ndarray of int, shape (batch, n_steps)
        The base model's most likely token at each step.
    measure : str
        ``"kl"``, ``"js"``, ``"top1"`` or ``"entropy"`` (then ``disagreement`` is the base's
        entropy).
    threshold : float
        A step is handed over when its disagreement exceeds it (and budget is left).
    budget : int or None
        Most interventions per sequence (None: no limit).
    do_sample, temperature : bool, float
        How tokens were chosen.
    wall_time_s : float
        Seconds the decoding took.
    n_forward : int
        Forward passes of the base (one per step).
    n_reasoner_calls : int
        Forward passes of the reasoner (every step, except under the entropy trigger).

    See :class:`statcore.results.Results` for the other fields.
    """

    prompt: np.ndarray
    tokens: np.ndarray
    intervened: np.ndarray
    disagreement: np.ndarray
    base_entropy: np.ndarray
    base_top1: np.ndarray
    measure: str = "kl"
    threshold: float = 0.0
    budget: int | None = None
    do_sample: bool = False
    temperature: float = 1.0
    wall_time_s: float = float("nan")
    n_forward: int = 0
    n_reasoner_calls: int = 0

    _plots: ClassVar[dict] = {"trace": _plot_trace, "positions": _plot_positions}

    @property
    def lengths(self) -> np.ndarray:
        """Generated tokens per sequence (the end-of-sequence token included)."""
        return (self.tokens >= 0).sum(axis=1)

    @property
    def sequences(self) -> list[np.ndarray]:
        """Prompt and generated ids of each sequence, one array each."""
        rows = zip(self.prompt, self.tokens, self.lengths, strict=True)
        return [np.concatenate([p, t[:n]]) for p, t, n in rows]

    @property
    def n_interventions(self) -> np.ndarray:
        """Reasoner tokens per sequence."""
        return self.intervened.sum(axis=1)

    @property
    def n_changed(self) -> np.ndarray:
        """Reasoner tokens per sequence that differ from the base model's top-1 choice."""
        return (self.intervened & (self.tokens != self.base_top1)).sum(axis=1)

    @property
    def intervention_rate(self) -> float:
        """Reasoner tokens over all generated tokens."""
        total = int(self.lengths.sum())
        return float(self.n_interventions.sum() / total) if total else float("nan")

    @property
    def positions(self) -> list[np.ndarray]:
        """The generated positions (0 = first new token) handed over, per sequence."""
        return [np.flatnonzero(row) for row in self.intervened]

    def glance(self) -> pd.DataFrame:
        """One row: ``method, nobs, measure, threshold, budget, n_tokens, n_interventions,
        n_changed, intervention_rate, mean_disagreement, n_reasoner_calls, wall_time_s``."""
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "nobs": self.nobs,
                    "measure": self.measure,
                    "threshold": self.threshold,
                    "budget": self.budget,
                    "n_tokens": int(self.lengths.sum()),
                    "n_interventions": int(self.n_interventions.sum()),
                    "n_changed": int(self.n_changed.sum()),
                    "intervention_rate": self.intervention_rate,
                    "mean_disagreement": (
                        float(np.nanmean(self.disagreement))
                        if np.isfinite(self.disagreement).any()
                        else float("nan")
                    ),
                    "n_reasoner_calls": self.n_reasoner_calls,
                    "wall_time_s": self.wall_time_s,
                }
            ]
        )

    def tidy(self) -> pd.DataFrame:
        """One row per generated token: ``sequence, position, token, intervened, changed,
        disagreement, base_entropy``."""
        seq, pos = np.nonzero(self.tokens >= 0)
        return pd.DataFrame(
            {
                "sequence": seq,
                "position": pos,
                "token": self.tokens[seq, pos],
                "intervened": self.intervened[seq, pos],
                "changed": self.intervened[seq, pos]
                & (self.tokens[seq, pos] != self.base_top1[seq, pos]),
                "disagreement": self.disagreement[seq, pos],
                "base_entropy": self.base_entropy[seq, pos],
            }
        )

    def per_sequence(self) -> pd.DataFrame:
        """One row per sequence: ``sequence, length, n_interventions, n_changed, first_position,
        max_disagreement``."""
        rows = []
        for i, (n, where) in enumerate(zip(self.lengths, self.positions, strict=True)):
            trace = self.disagreement[i, :n]
            rows.append(
                {
                    "sequence": i,
                    "length": int(n),
                    "n_interventions": int(len(where)),
                    "n_changed": int(self.n_changed[i]),
                    "first_position": int(where[0]) if len(where) else -1,
                    "max_disagreement": float(trace.max()) if n else float("nan"),
                }
            )
        return pd.DataFrame(rows)

    def summary(self, alpha: float = 0.05) -> Summary:
        """The run's facts and one row per sequence (``alpha`` is unused: no intervals)."""
        return Summary(
            title=self._title(),
            info=self._info(),
            tables={"sequences": self.per_sequence()},
            notes=self.notes,
        )

    def _repr_lines(self) -> list[str]:
        return [
            f"{int(self.n_interventions.sum())} reasoner tokens of {int(self.lengths.sum())} "
            f"({self.intervention_rate:.3f}); measure={self.measure!r}, "
            f"threshold={self.threshold:g}, budget={self.budget}"
        ]
