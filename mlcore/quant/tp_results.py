"""The record of a tensor-parallel run: bytes on the wire and wall time per collective."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from mlcore.quant.collectives import RING_STEPS
from statcore.results import Results
from statcore.results.plotting import get_ax, label_axes

__all__ = ["TPRunResult"]


def _plot_collectives(result, ax=None, **kwargs):
    """Bytes each rank sends per collective (bars) by op."""
    ax = get_ax(ax)
    table = result.tidy()
    labels = [f"{o}\n{c}" for o, c in zip(table["op"], table["collective"], strict=True)]
    ax.barh(labels, table["wire_bytes"] / 1024, **kwargs)
    ax.invert_yaxis()
    return label_axes(ax, xlabel="KiB sent per rank (ring)", title=result.method)


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class TPRunResult(Results):
    """A tensor-parallel forward run across processes: what crossed the wire and how long it took.

    Parameters
    ----------
    collectives : DataFrame
        One row per collective per rank per repeat: ``rank, step, op, collective, dtype,
        payload_bytes, wire_bytes, wall_time_s``.
    logits : ndarray (batch, length - 1, vocab)
        Rank 0's output of the last repeat.
    loss : float
        Next-token cross-entropy of ``logits``.
    world_size : int
    bits : Series
        Precision per op of the run (ops absent: 16).
    group_size : int or None
    wall_time_s : float
        Whole run, process start-up included.
    """

    collectives: pd.DataFrame = field(repr=False)
    logits: np.ndarray = field(repr=False)
    loss: float
    world_size: int
    bits: pd.Series = field(repr=False)
    group_size: int | None = None
    wall_time_s: float | None = None

    _plots: ClassVar[dict] = {"collectives": _plot_collectives}

    @property
    def perplexity(self) -> float:
        """``exp(loss)``."""
        return math.exp(self.loss)

    @property
    def wire_bytes(self) -> float:
        """Bytes one rank sent per forward pass, summed over collectives (rank 0)."""
        t = self.tidy()
        return float(t["wire_bytes"].sum())

    def glance(self) -> pd.DataFrame:
        """``method, world_size, loss, perplexity, wire_bytes, comm_time_s``."""
        t = self.tidy()
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "world_size": self.world_size,
                    "loss": self.loss,
                    "perplexity": self.perplexity,
                    "wire_bytes": float(t["wire_bytes"].sum()),
                    "comm_time_s": float(t["wall_time_s"].sum()),
                }
            ]
        )

    def tidy(self) -> pd.DataFrame:
        """Per op and collective: ``dtype``, ``payload_bytes`` and ``wire_bytes`` per pass, and
        ``wall_time_s``, the median over repeats of the slowest rank."""
        c = self.collectives
        slowest = c.groupby(["op", "collective", "step"], sort=False)["wall_time_s"].max()
        wall = slowest.groupby(level=[0, 1], sort=False).median()
        first = c[(c["rank"] == 0) & (c["step"] == 0)].set_index(["op", "collective"])
        out = first[["dtype", "payload_bytes", "wire_bytes"]].assign(wall_time_s=wall)
        return out.reset_index()

    def link_fit(self) -> pd.Series:
        """``link_latency`` (s per ring step) and ``link_bandwidth`` (B/s) by least squares of
        wall time on ring steps and wire bytes, for :func:`mlcore.quant.measure_hardware`."""
        t = self.tidy()
        p = self.world_size
        steps = t["collective"].map(RING_STEPS) * (p - 1)
        X = np.column_stack([steps, t["wire_bytes"]])
        coef, *_ = np.linalg.lstsq(X, t["wall_time_s"].to_numpy(), rcond=None)
        alpha = max(float(coef[0]), 0.0)
        bandwidth = 1 / float(coef[1]) if coef[1] > 0 else math.inf
        return pd.Series({"link_latency": alpha, "link_bandwidth": bandwidth})
