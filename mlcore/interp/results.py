"""Results of :mod:`mlcore.interp`: function vectors, additivity fits, reweighting, hybrids.

Arrays only (tensors pass through ``as_numpy`` before they get here).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from statcore.results import Results, Summary
from statcore.results.plotting import get_ax, label_axes


def _plot_effects(results, ax=None, cmap="viridis", **kwargs):
    """Heat map of the average indirect effect by layer (rows) and head (columns)."""
    ax = get_ax(ax)
    grid = results.effects.pivot(index="layer", columns="head", values="indirect_effect")
    image = ax.imshow(grid.to_numpy(), cmap=cmap, aspect="auto", **kwargs)
    for layer, head in results.heads:
        ax.scatter([head], [layer], marker="o", facecolors="none", edgecolors="red", s=120)
    ax.set_xlabel("head")
    ax.set_ylabel("layer")
    ax.set_xticks(range(grid.shape[1]))
    ax.set_yticks(range(grid.shape[0]))
    ax.figure.colorbar(image, ax=ax, label="average indirect effect")
    ax.set_title(f"{results.method}: top heads circled")
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class FunctionVectorResult(Results):
    """A function vector: the heads' indirect effects, the top heads, the vector, its accuracy.

    Parameters
    ----------
    effects : DataFrame
        ``layer, head, indirect_effect``: each head's average indirect effect (gain in
        P(answer) when its mean activation is patched into corrupted prompts).
    heads : tuple of (int, int)
        The top heads, largest effect first.
    vector : ndarray (d_model,)
        ``sum over heads of W_O[:, head] mean_activation[head]``.
    layer : int
        The layer after which the vector is added to the residual stream.
    accuracy : DataFrame, optional
        ``condition, accuracy, n``: zero-shot, zero-shot + FV, zero-shot + random-heads FV,
        few-shot.

    References
    ----------
    Todd, E. et al. (2024). Function vectors in large language models. *ICLR 2024*.
    """

    effects: pd.DataFrame
    heads: tuple
    vector: np.ndarray
    layer: int
    accuracy: pd.DataFrame | None = None

    _plots: ClassVar[dict] = {"effects": _plot_effects}

    def tidy(self) -> pd.DataFrame:
        """``layer, head, indirect_effect, top``: one row per head, largest effect first."""
        top = set(self.heads)
        out = self.effects.sort_values("indirect_effect", ascending=False).reset_index(drop=True)
        out["top"] = [
            (int(a), int(b)) in top for a, b in zip(out["layer"], out["head"], strict=True)
        ]
        return out

    def glance(self) -> pd.DataFrame:
        row = {
            "method": self.method,
            "nobs": self.nobs,
            "n_top_heads": len(self.heads),
            "layer": self.layer,
            "fv_norm": float(np.linalg.norm(self.vector)),
        }
        if self.accuracy is not None:
            for cond, acc in zip(
                self.accuracy["condition"], self.accuracy["accuracy"], strict=True
            ):
                row[f"accuracy_{cond}"] = float(acc)
        return pd.DataFrame([row])

    def summary(self, alpha: float = 0.05) -> Summary:
        tables = {"top heads": self.tidy().head(max(len(self.heads), 5))}
        if self.accuracy is not None:
            tables["accuracy"] = self.accuracy
        return Summary(title=self.method, info=self._info(), tables=tables, notes=self.notes)

    def _repr_lines(self) -> list[str]:
        return [f"top heads {list(self.heads)}; added after layer {self.layer}"]


def _plot_betas(results, ax=None, **kwargs):
    """Mean fitted weight beta_i by demonstration position, with the 1/n baseline."""
    ax = get_ax(ax)
    betas = results.betas
    n = betas.shape[1]
    ax.bar(np.arange(n), betas.mean(axis=0), yerr=betas.std(axis=0), capsize=3, **kwargs)
    ax.axhline(results.baseline_beta, color="black", ls="--", label="baseline")
    return label_axes(
        ax,
        xlabel="demonstration",
        ylabel="fitted beta",
        title=f"{results.method} (mean R2 {results.table['r2'].iloc[: betas.shape[0]].mean():.3f})",
        legend="inside",
    )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class AdditivityResult(Results):
    """The fit ``FV_n ~ sum_i beta_i v_i + b`` per prompt and on the prompt means.

    Parameters
    ----------
    table : DataFrame
        One row per fit (``fit`` = prompt index, or ``"mean"`` for the fit of the mean FV on the
        mean sub-vectors): ``r2, cos, baseline_r2, baseline_cos, intercept``; with the options
        of :func:`~mlcore.interp.fit_additivity`, also the rows ``mismatched`` (mean over the
        prompts), ``held_out`` and ``held_out_mismatched`` (mean over the held-out prompts).
    betas : ndarray (n_prompts, n_demos)
        Fitted weights of the per-prompt fits.
    baseline_beta : float
        The fixed weight of the baseline ``baseline_beta * sum_i v_i`` (1/n for isolated
        sub-vectors, 1 for span-attributed ones).

    References
    ----------
    Wang, E., Wang, Y., Bakalova, A. and Hahn, M. (2026). How few-shot examples add up: a
    causal decomposition of function vectors in in-context learning. *ICML 2026*,
    arXiv:2605.16591.
    """

    table: pd.DataFrame
    betas: np.ndarray
    baseline_beta: float

    _plots: ClassVar[dict] = {"betas": _plot_betas}

    def tidy(self) -> pd.DataFrame:
        """The fits table with one ``beta_i`` column per demonstration (NaN on the other
        rows)."""
        out = self.table.copy()
        n_prompts = self.betas.shape[0]
        for i in range(self.betas.shape[1]):
            out[f"beta_{i}"] = np.append(self.betas[:, i], np.full(len(out) - n_prompts, np.nan))
        return out

    def glance(self) -> pd.DataFrame:
        prompts = self.table.iloc[: self.betas.shape[0]]
        by_fit = self.table.set_index("fit")
        row = {
            "method": self.method,
            "nobs": self.nobs,
            "n_demos": self.betas.shape[1],
            "r2": float(prompts["r2"].mean()),
            "cos": float(prompts["cos"].mean()),
            "baseline_r2": float(prompts["baseline_r2"].mean()),
            "baseline_cos": float(prompts["baseline_cos"].mean()),
            "mean_fv_r2": float(by_fit.loc["mean", "r2"]),
            "mean_fv_cos": float(by_fit.loc["mean", "cos"]),
        }
        for fit in ("mismatched", "held_out", "held_out_mismatched"):
            if fit in by_fit.index:
                row[f"{fit}_cos"] = float(by_fit.loc[fit, "cos"])
                row[f"{fit}_r2"] = float(by_fit.loc[fit, "r2"])
        if "held_out" in by_fit.index:
            row["held_out_baseline_cos"] = float(by_fit.loc["held_out", "baseline_cos"])
        return pd.DataFrame([row])

    def summary(self, alpha: float = 0.05) -> Summary:
        betas = pd.DataFrame(
            {"mean": self.betas.mean(0), "sd": self.betas.std(0)},
            index=pd.Index(range(self.betas.shape[1]), name="demonstration"),
        )
        return Summary(
            title=self.method,
            info=self._info(),
            tables={"beta": betas},
            notes=self.notes,
        )


def _plot_mass(results, ax=None, **kwargs):
    """Attention mass on each demonstration against its ambiguity (mean and spread)."""
    ax = get_ax(ax)
    grouped = results.table.groupby("ambiguity")["mass"]
    levels = grouped.mean().index.to_numpy(dtype=float)
    ax.errorbar(levels, grouped.mean(), yerr=grouped.std(), fmt="o-", capsize=3, **kwargs)
    return label_axes(
        ax,
        xlabel="ambiguity of the demonstration",
        ylabel="attention mass from the last token",
        title=f"slope {results.slope:.3g} per unit of ambiguity",
    )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class ReweightingResult(Results):
    """Attention mass per demonstration against its ambiguity and position.

    Parameters
    ----------
    table : DataFrame
        ``prompt, demo, ambiguity, mass``: one row per demonstration of each prompt.
    slope : float
        OLS coefficient of ``mass`` on ``ambiguity`` with the position as a covariate.
    position_slope : float
        The coefficient of the position in the same fit.
    correlation : float
        Spearman correlation of mass and ambiguity.

    References
    ----------
    Wang et al. (2026), arXiv:2605.16591; full reference in :class:`AdditivityResult`.
    """

    table: pd.DataFrame
    slope: float
    position_slope: float
    correlation: float

    _plots: ClassVar[dict] = {"mass": _plot_mass}

    def tidy(self) -> pd.DataFrame:
        """Mean and standard deviation of the mass at each ambiguity level."""
        grouped = self.table.groupby("ambiguity")["mass"]
        return pd.DataFrame(
            {"mean_mass": grouped.mean(), "sd_mass": grouped.std(), "n": grouped.size()}
        ).reset_index()

    def glance(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "nobs": self.nobs,
                    "slope": self.slope,
                    "position_slope": self.position_slope,
                    "spearman": self.correlation,
                }
            ]
        )

    def summary(self, alpha: float = 0.05) -> Summary:
        return Summary(
            title=self.method, info=self._info(), tables={"mass": self.tidy()}, notes=self.notes
        )


def _plot_hybrids(results, ax=None, **kwargs):
    """Zero-shot accuracy with each hybrid FV, the unsteered zero-shot accuracy dashed."""
    ax = get_ax(ax)
    table = results.table
    labels = [f"QK {q} / V {v}" for q, v in zip(table["qk"], table["v"], strict=True)]
    ax.bar(labels, table["accuracy"], **kwargs)
    ax.axhline(results.zero_shot_accuracy, color="black", ls="--", label="zero-shot")
    ax.set_ylabel("zero-shot accuracy with the FV")
    ax.tick_params(axis="x", rotation=20)
    ax.legend()
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class HybridPatchResult(Results):
    """Zero-shot accuracy of function vectors rebuilt from mixed attention and value sources.

    Parameters
    ----------
    table : DataFrame
        ``qk, v, accuracy, probability, fv_norm``: zero-shot top-1 accuracy and mean
        P(answer) with each hybrid FV; ``qk`` and ``v`` each ``"context"`` (the n-shot run) or
        ``"isolated"`` (each demonstration encoded alone); QK-only = (context, isolated),
        V-only = (isolated, context).
    zero_shot_accuracy : float
    value_change : float
        How far the swapped values are from the contextual ones over the spans:
        ``sum ||v_context - v_isolated|| / sum ||v_context||`` over heads, spans and (mean)
        prompts. Near 0 the V swap cannot change anything (first-layer heads read token
        embeddings only), and a V-only result says nothing about the values.
    weight_change : float
        The same for the attention weights: total variation between the contextual and the
        (rescaled) isolated weights over the spans, mean over heads and prompts, in [0, 1].

    References
    ----------
    Wang et al. (2026), arXiv:2605.16591; full reference in :class:`AdditivityResult`.
    """

    table: pd.DataFrame
    zero_shot_accuracy: float
    value_change: float = float("nan")
    weight_change: float = float("nan")

    _plots: ClassVar[dict] = {"accuracy": _plot_hybrids}

    def tidy(self) -> pd.DataFrame:
        return self.table.copy()

    def glance(self) -> pd.DataFrame:
        row = {"method": self.method, "nobs": self.nobs, "zero_shot": self.zero_shot_accuracy,
               "value_change": self.value_change, "weight_change": self.weight_change}  # fmt: skip
        for q, v, acc in zip(
            self.table["qk"], self.table["v"], self.table["probability"], strict=True
        ):
            row[f"p_qk_{q}_v_{v}"] = float(acc)
        return pd.DataFrame([row])
