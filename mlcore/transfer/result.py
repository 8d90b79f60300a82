"""The result of an XTransfer fit: the repaired network, its architecture, cost, layer-wise
shifts and accuracies, with its plots."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import torch

from mlcore.results import TrainingResult
from mlcore.transfer.transferred import check_windows
from statcore.results import Results, Summary
from statcore.results.plotting import get_ax, label_axes


def _plot_shift(results, ax=None, **kwargs):
    """Per-layer MMD² between target and source activations, before and after repair."""
    ax = get_ax(ax)
    df = results.per_layer_shift
    x = np.arange(len(df))
    ax.bar(x - 0.2, df["mmd_before"], 0.4, label="spliced", **kwargs)
    ax.bar(x + 0.2, df["mmd_after"], 0.4, label="repaired", **kwargs)
    ax.set_xticks(x, df["layer"], rotation=30, ha="right")
    return label_axes(ax, ylabel="MMD² to the source", title=results.method, legend="beside")


def _plot_search(results, ax=None, **kwargs):
    """Proxy score against cost of every searched architecture; the budget and the pick."""
    ax = get_ax(ax)
    df, metric = results.search, results.budget_metric
    ax.scatter(df[metric], df["score"], s=14, color="0.5", label="candidates", **kwargs)
    pick = df[df["selected"]]
    ax.scatter(pick[metric], pick["score"], marker="*", s=120, color="black", label="selected")
    if results.budget is not None:
        ax.axvline(results.budget, color="tab:red", ls="--", label="budget")
    ax.set_xscale("log")
    return label_axes(ax, xlabel=metric, ylabel="proxy score", legend="beside")


def _plot_history(results, ax=None, **kwargs):
    """The repair loss (cross-entropy plus anchor term) per step."""
    return results.history.plot(ax=ax, **kwargs)


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class XTransferResult(Results):
    """The searched, repaired architecture with its cost, shifts and accuracies.

    Parameters
    ----------
    architecture : DataFrame
        One row per part (``stem``, ``junction``, ``layer``, ``head``): ``part, name,
        params, trainable, removed``.
    cost : Series
        ``params``, ``flops`` (multiply-accumulates per window) and ``latency`` (ms for a
        batch of 32 on this CPU) of the final model.
    budget : float or None
    budget_metric : str
    per_layer_shift : DataFrame
        ``layer, mmd_before, mmd_after, reduction, mmd_full_before, mmd_full_after``: squared
        MMD between the pooled target activations after each kept source layer and that
        layer's source activations, on the spliced model and after repair, in the layer's
        anchor (PCA) space and in the full channel space (Gaussian kernel, bandwidth the
        median distance of the source activations); ``reduction`` is ``1 - after/before`` in
        the anchor space.
    accuracy : Series
        Accuracy on the evaluation windows (the validation windows when given, else the few
        shots) of
        ``xtransfer`` and, when fitted with ``baselines=True``, of ``linear_probe`` (frozen
        spliced layers, head only) and ``scratch`` (the same architecture re-initialised and
        trained in full).
    train_accuracy : float
    search : DataFrame
        The search trace: ``depth, architecture, score, params, flops, latency, feasible,
        selected``.
    removed : tuple of str
        Layers dropped as negligible.
    anchor_modes : tuple of str
        Per kept layer, ``"source"`` or ``"target"`` anchors (see :class:`LayerAnchors`).
    history : TrainingResult
        The repair run.
    val_accuracy : float
        Accuracy of the repaired network on the validation windows (``X_val, y_val`` of
        ``fit``); NaN when none were given (the few shots are training data, see
        ``train_accuracy``).
    network : TransferredModel
        The repaired network (kept by :meth:`strip`, which drops only the estimator in
        ``model``); :meth:`predict` runs it.
    """

    architecture: pd.DataFrame = field(repr=False)
    cost: pd.Series = field(repr=False)
    budget: float | None = None
    budget_metric: str = "params"
    per_layer_shift: pd.DataFrame = field(repr=False)
    accuracy: pd.Series = field(repr=False)
    train_accuracy: float = math.nan
    search: pd.DataFrame = field(repr=False)
    removed: tuple = ()
    anchor_modes: tuple = ()
    history: TrainingResult | None = field(default=None, repr=False)
    val_accuracy: float = math.nan
    network: Any = field(default=None, repr=False)

    _plots: ClassVar[dict] = {
        "shift": _plot_shift,
        "search": _plot_search,
        "history": _plot_history,
    }

    def predict(self, X) -> np.ndarray:
        """Class indices for sensor windows (n, channels, length) with the repaired network."""
        if self.network is None:
            raise RuntimeError("this result holds no network to predict with")
        X = check_windows(X, name="X")
        with torch.no_grad():
            return self.network(torch.from_numpy(X).float()).argmax(1).numpy()

    @property
    def arch(self) -> str:
        """The kept source layers, ``" > "``-joined."""
        df = self.architecture
        return " > ".join(df.loc[(df["part"] == "layer") & ~df["removed"], "name"])

    def glance(self) -> pd.DataFrame:
        row = super().glance().iloc[0].to_dict()
        row.update(
            architecture=self.arch,
            params=int(self.cost["params"]),
            flops=int(self.cost["flops"]),
            budget=self.budget,
            val_accuracy=self.val_accuracy,
            train_accuracy=self.train_accuracy,
        )
        return pd.DataFrame([row])

    def tidy(self) -> pd.DataFrame:
        """One row per kept source layer: its parameters and its shift before and after."""
        df = self.architecture
        layers = df[(df["part"] == "layer") & ~df["removed"]][["name", "params", "trainable"]]
        return layers.rename(columns={"name": "layer"}).merge(self.per_layer_shift, on="layer")

    def summary(self, alpha: float = 0.05) -> Summary:
        """Header from :meth:`glance`; the layers with their shifts, the cost, the accuracies.

        ``alpha`` is accepted for the common signature (no intervals here).
        """
        notes = self.notes
        if self.removed:
            notes = notes + (f"Removed as negligible: {', '.join(self.removed)}.",)
        return Summary(
            title=self._title(),
            info=self._info(),
            tables={
                "layers": self.tidy().set_index("layer"),
                "cost": self.cost.to_frame("value"),
                "accuracy": self.accuracy.to_frame("accuracy"),
            },
            notes=notes + self._convergence_notes(),
        )


__all__ = [
    "XTransferResult",
]
