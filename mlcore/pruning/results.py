"""``PruningResult``: what a one-shot pruning pass removed, and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from statcore.results import Results
from statcore.results.plotting import plot_matrix


def _plot_scores(results, ax=None, **kwargs):
    """Saliency scores (log10) as an image; pruned entries are left blank."""
    if results.scores is None:
        raise ValueError("this result has no scores to plot")
    return plot_matrix(
        results.scores,
        ax,
        mask=results.mask,
        log10=True,
        label="log10 score (kept entries)",
        title=f"{results.method}: sparsity {results.sparsity:.2f}",
        **kwargs,
    )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class PruningResult(Results):
    """The record of one pruning pass over one weight.

    Parameters
    ----------
    mask : ndarray of bool
        The weight's shape; True where an entry is kept.
    scores : ndarray, optional
        The saliency each entry was ranked by (same shape; larger = more important).
    target_sparsity : float
        The requested fraction of removed entries.
    structure : str
        ``"unstructured"``, ``"row"``, ``"col"`` or ``"n:m"``.
    parameter : str
        Which weight was pruned (``"A_log"``, ``"weight"``).

    See :class:`statcore.results.Results` for the other fields.
    """

    mask: np.ndarray
    scores: np.ndarray | None = None
    target_sparsity: float = 0.5
    structure: str = "unstructured"
    parameter: str = "weight"

    _plots: ClassVar[dict] = {"scores": _plot_scores}

    @property
    def n_params(self) -> int:
        """Number of entries of the pruned weight."""
        return int(self.mask.size)

    @property
    def n_pruned(self) -> int:
        """Number of removed entries."""
        return int(self.mask.size - np.count_nonzero(self.mask))

    @property
    def sparsity(self) -> float:
        """Achieved sparsity: removed entries over all entries."""
        return self.n_pruned / self.n_params

    def glance(self) -> pd.DataFrame:
        """One row: ``method, parameter, structure, n_params, n_pruned, sparsity,
        target_sparsity``."""
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "parameter": self.parameter,
                    "structure": self.structure,
                    "n_params": self.n_params,
                    "n_pruned": self.n_pruned,
                    "sparsity": self.sparsity,
                    "target_sparsity": self.target_sparsity,
                    "nobs": self.nobs,
                }
            ]
        )

    def tidy(self) -> pd.DataFrame:
        """One row per weight row: ``row, n_kept, n_pruned, mean_score_kept,
        mean_score_pruned``."""
        mask = np.atleast_2d(self.mask)
        scores = None if self.scores is None else np.atleast_2d(self.scores)
        rows = []
        for i, keep in enumerate(mask):
            row = {"row": i, "n_kept": int(keep.sum()), "n_pruned": int((~keep).sum())}
            if scores is not None:
                row["mean_score_kept"] = float(scores[i][keep].mean()) if keep.any() else np.nan
                row["mean_score_pruned"] = (
                    float(scores[i][~keep].mean()) if (~keep).any() else np.nan
                )
            rows.append(row)
        return pd.DataFrame(rows)

    def _repr_lines(self) -> list[str]:
        return [
            f"{self.parameter} {tuple(self.mask.shape)}, {self.structure}: pruned "
            f"{self.n_pruned}/{self.n_params} (sparsity {self.sparsity:.4f}, target "
            f"{self.target_sparsity:.4f})"
        ]
