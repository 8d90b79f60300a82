"""Calibrated stacking (Chao et al. 2016): subtract a constant gamma from every seen-class score,
with gamma tuned on labelled validation data; PUFE's baseline."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
import torch

from mlcore._device import as_numpy
from mlcore.encoders._inputs import check_class_indices
from mlcore.encoders.metrics import gzsl_scores
from mlcore.gzsl._inputs import as_matrix, as_seen_mask, input_device
from mlcore.gzsl.pufe import _as_like
from statcore.base import Estimator
from statcore.results import Results
from statcore.results.plotting import get_ax, label_axes
from statcore.validation import check_option, check_positive_int, check_scalar

CRITERIA = ("harmonic", "seen", "unseen")


def stack(scores, seen_mask, gamma: float):
    """Calibrated stacking (Chao et al. 2016): ``scores - gamma`` on the seen classes.

    Parameters
    ----------
    scores : array_like or Tensor, shape (n, C)
        Base logits.
    seen_mask : array_like of bool, shape (C,)
    gamma : float
        The offset, e.g. ``CalibratedStackingResult.gamma``.

    Returns
    -------
    array or Tensor (n, C), as ``scores`` came; the input is not modified.
    """
    gamma = check_scalar(gamma, name="gamma")
    device = input_device(scores)
    s = as_matrix(scores, name="scores", device=device)
    mask = torch.as_tensor(as_seen_mask(seen_mask, n_classes=s.shape[1]), device=device)
    return _as_like(s - gamma * mask.to(s.dtype), scores)


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class CalibratedStackingResult(Results):
    """The tuned offset and the validation seen-unseen curve it was picked from.

    Attributes
    ----------
    gamma : float
        The selected offset.
    curve : DataFrame
        ``gamma, seen, unseen, harmonic`` on the validation data, one row per candidate.
    seen_mask : ndarray of bool (C,)
    criterion : str
        The validation metric maximised.
    """

    gamma: float
    curve: pd.DataFrame = field(repr=False)
    seen_mask: np.ndarray
    criterion: str = "harmonic"

    _plots: ClassVar[dict] = {}

    def calibrated_scores(self, scores):
        """``scores - gamma`` on the seen classes, as ``scores`` came."""
        return stack(scores, self.seen_mask, self.gamma)

    def tidy(self) -> pd.DataFrame:
        best = self.curve.loc[(self.curve["gamma"] - self.gamma).abs().idxmin()]
        rows = [("gamma", self.gamma)] + [
            (f"{m} (validation)", float(best[m])) for m in ("seen", "unseen", "harmonic")
        ]
        return pd.DataFrame(rows, columns=["term", "estimate"])

    def _repr_lines(self) -> list[str]:
        return [f"  gamma = {self.gamma:.4g}"]


def _plot_curve(result, ax=None, **kwargs):
    """The validation seen-unseen accuracy curve over gamma, the chosen gamma marked."""
    ax = get_ax(ax)
    ax.plot(result.curve["seen"], result.curve["unseen"], **kwargs)
    best = result.curve.loc[(result.curve["gamma"] - result.gamma).abs().idxmin()]
    ax.scatter([best["seen"]], [best["unseen"]], marker="*", s=90, color="black", zorder=3,
               label=f"gamma = {result.gamma:.3g}")  # fmt: skip
    return label_axes(
        ax,
        xlabel="seen accuracy (S)",
        ylabel="unseen accuracy (U)",
        title=result.method,
        legend="beside",
    )


CalibratedStackingResult._plots = {"curve": _plot_curve}


class CalibratedStacking(Estimator):
    """Calibrated stacking: ``score'_c = score_c - gamma 1[c seen]``, gamma tuned on validation.

    Parameters
    ----------
    n_candidates : int
        Candidate offsets: quantiles of the per-example gap between the best seen and the best
        unseen score (where predictions change), 0 (the base model), and offsets past both
        ends.
    criterion : {"harmonic", "seen", "unseen"}
        The validation metric to maximise.

    References
    ----------
    Chao, Changpinyo, Gong and Sha (2016), "An empirical study and analysis of generalized
    zero-shot learning for object recognition in the wild", ECCV.

    Notes
    -----
    Fidelity: paper (the published rule, a constant offset on seen-class scores; its text was
    not re-read here; the candidate grid is this library's).
    Tuning needs validation examples of unseen classes (or of seen classes held out as
    pseudo-unseen, Xian et al.'s protocol); with labelled unseen validation data drawn from the
    test distribution the baseline is an optimistic one.
    """

    method_name = "Calibrated stacking"

    def __init__(self, *, n_candidates: int = 201, criterion: str = "harmonic"):
        self.n_candidates = check_positive_int(n_candidates, name="n_candidates", minimum=2)
        self.criterion = check_option(criterion, name="criterion", options=CRITERIA)

    def __repr__(self) -> str:
        return f"CalibratedStacking(n_candidates={self.n_candidates}, criterion={self.criterion!r})"

    def fit(self, scores_val, y_val, *, seen_mask) -> CalibratedStackingResult:
        """Pick gamma on validation scores.

        Parameters
        ----------
        scores_val : array_like or Tensor, shape (n, C)
            Base logits of validation examples, which must include seen and unseen classes.
        y_val : array_like of int, shape (n,)
            Their class indices.
        seen_mask : array_like of bool, shape (C,)

        Returns
        -------
        CalibratedStackingResult
        """
        s = as_numpy(as_matrix(scores_val, name="scores_val", device=input_device(scores_val)))
        mask = as_seen_mask(seen_mask, n_classes=s.shape[1])
        y = check_class_indices(y_val, name="y_val", n=s.shape[0], n_classes=s.shape[1])
        if mask[y].all() or not mask[y].any():
            raise ValueError("`y_val` must contain examples of both seen and unseen classes")
        present = np.isin(np.arange(mask.size), y)
        gap = s[:, mask].max(axis=1) - s[:, ~mask].max(axis=1)
        inner = np.quantile(gap, np.linspace(0.0, 1.0, self.n_candidates - 2))
        spread = max(float(np.ptp(gap)), 1.0)
        # Offsets past both ends give the all-unseen and all-seen corners of the curve; 0 keeps
        # the base model among the candidates, so tuning never does worse on validation.
        gammas = np.unique(np.concatenate([[gap.min() - spread, 0.0], inner, [gap.max() + spread]]))
        rows = []
        for g in gammas:
            pred = (s - g * mask).argmax(axis=1)
            acc = gzsl_scores(
                y, pred, np.flatnonzero(mask & present), np.flatnonzero(~mask & present)
            )
            rows.append(
                {"gamma": float(g), **{k: float(acc[k]) for k in ("seen", "unseen", "harmonic")}}
            )
        curve = pd.DataFrame(rows)
        best = float(curve.loc[curve[self.criterion].idxmax(), "gamma"])
        return CalibratedStackingResult(
            method="Calibrated stacking",
            nobs=s.shape[0],
            gamma=best,
            curve=curve,
            seen_mask=mask,
            criterion=self.criterion,
        )
