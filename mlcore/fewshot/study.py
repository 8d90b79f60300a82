"""BOIF against its own pathways and Tip-Adapter over shots and seeds, with intervals."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
import torch

from mlcore._checks import check_tensor
from mlcore._studies import SeedStudy, t_interval_row
from mlcore.encoders.splits import kshot_split
from mlcore.fewshot.adapter import MultiLevelAdapter
from mlcore.fewshot.boif import BOIF, TipAdapterClassifier, _labels
from statcore.results import Results
from statcore.results.plotting import get_ax, label_axes
from statcore.validation import (
    check_option,
    check_positive,
    check_positive_int,
    check_probability,
    check_random_state,
    describe,
)


def _plot_accuracy(results, ax=None, **kwargs):
    """Mean query accuracy against shots per method, with t-intervals."""
    ax = get_ax(ax)
    t = results.tidy()
    for method, rows in t.groupby("method", sort=False):
        err = np.vstack([rows["estimate"] - rows["conf_low"], rows["conf_high"] - rows["estimate"]])
        ax.errorbar(rows["shots"], rows["estimate"], yerr=err, marker="o", capsize=3,
                    label=method, **kwargs)  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(t["shots"].unique()))
    ax.set_xticklabels([str(k) for k in sorted(t["shots"].unique())])
    return label_axes(
        ax,
        xlabel="shots per class (K)",
        ylabel="query accuracy",
        title=results.method,
        legend="beside",
    )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class FewShotComparison(SeedStudy, Results):
    """Query accuracy of BOIF, its two pathways and Tip-Adapter, by shots and seed.

    Parameters
    ----------
    scores : DataFrame
        Long table ``method, shots, seed, accuracy``.
    alpha : float
        Significance level of the intervals (``1 - alpha`` t-intervals over seeds).
    wall_time_s : float
    """

    scores: pd.DataFrame = field(repr=False)
    alpha: float = 0.05
    wall_time_s: float = np.nan

    _plots: ClassVar[dict] = {"accuracy": _plot_accuracy}

    def tidy(self) -> pd.DataFrame:
        """``method, shots, estimate, std_error, conf_low, conf_high, n_seeds``: mean accuracy
        over seeds with its t-interval."""
        rows = []
        for (method, shots), g in self.scores.groupby(["method", "shots"], sort=False):
            rows.append({"method": method, "shots": shots,
                         **t_interval_row(g["accuracy"].to_numpy(), self.alpha),
                         "n_seeds": len(g)})  # fmt: skip
        return pd.DataFrame(rows)

    def contrast(self, method: str = "BOIF", baseline: str = "prior only") -> pd.DataFrame:
        """Paired difference ``method - baseline`` in accuracy (same split per seed), by shots:
        ``shots, estimate, std_error, conf_low, conf_high``."""
        methods = tuple(self.scores["method"].unique())
        check_option(method, name="method", options=methods)
        check_option(baseline, name="baseline", options=methods)
        wide = self.scores.pivot_table(index=["shots", "seed"], columns="method",
                                       values="accuracy")  # fmt: skip
        diff = (wide[method] - wide[baseline]).rename("diff").reset_index()
        rows = []
        for shots, g in diff.groupby("shots"):
            rows.append({"shots": shots, **t_interval_row(g["diff"].to_numpy(), self.alpha)})
        return pd.DataFrame(rows)

    def glance(self) -> pd.DataFrame:
        return pd.DataFrame([{
            "method": self.method,
            "nobs": self.nobs,
            "n_seeds": self.n_seeds,
            "shots": ",".join(str(k) for k in sorted(self.scores["shots"].unique())),
            "wall_time_s": self.wall_time_s,
        }])  # fmt: skip


def compare_fewshot(
    features,
    labels,
    text_weights,
    logit_scale: float,
    *,
    layer_features=None,
    shots: Sequence[int] = (1, 2, 4),
    n_seeds: int = 5,
    cache: str = "prototype",
    beta: float = 5.0,
    alpha: float = 1.0,
    tip_beta: float = 1.0,
    tip_alpha: float = 1.0,
    epochs: int = 50,
    lr: float = 1e-3,
    tune_beta: bool = True,
    ci_alpha: float = 0.05,
    random_state=None,
) -> FewShotComparison:
    """Draw K-shot support sets and score BOIF, its pathways and Tip-Adapter on the rest.

    For each seed and ``K``, :func:`~mlcore.encoders.kshot_split` draws the support set;
    :class:`BOIF` (with a fresh :class:`MultiLevelAdapter` when ``layer_features`` are
    given) and :class:`TipAdapterClassifier` are fitted on it and scored on the query set. "prior
    only" is the zero-shot head, "likelihood only" BOIF's cache (after the adapter's
    training) alone.

    Parameters
    ----------
    features : Tensor (n, embed_dim)
        Unit-norm image embeddings of the whole pool.
    labels : array_like (n,)
    text_weights : Tensor (n_classes, embed_dim)
    logit_scale : float
    layer_features : list of Tensors (n, width_l), optional
    shots : sequence of int
    n_seeds : int
    cache, beta, alpha : BOIF's (see :class:`BOIF`).
    tip_beta, tip_alpha : float
        Tip-Adapter's (fixed: no validation search, as for BOIF).
    epochs, lr, tune_beta : BOIF's training (see :meth:`BOIF.fit`).
    ci_alpha : float
        Level of the intervals.
    random_state : None, int or numpy Generator
        Seeds the splits and the adapters.

    Returns
    -------
    FewShotComparison
    """
    check_tensor(text_weights, name="text_weights", dims=("classes", "d"), kind="floating",
                 nonempty=True, finite=True)  # fmt: skip
    check_tensor(features, name="features", dims=("n", "d"),
                 sizes={"d": text_weights.shape[1]}, kind="floating", nonempty=True,
                 finite=True)  # fmt: skip
    logit_scale = check_positive(logit_scale, name="logit_scale")
    labels = _labels(labels, name="labels", n=len(features), n_classes=text_weights.shape[0])
    if isinstance(shots, int) or not isinstance(shots, Sequence) or not shots:
        raise TypeError(f"`shots` must be a non-empty sequence of ints; got {describe(shots)}")
    shots = [check_positive_int(k, name="shots") for k in shots]
    n_seeds = check_positive_int(n_seeds, name="n_seeds")
    ci_alpha = check_probability(ci_alpha, name="ci_alpha")
    rng = check_random_state(random_state)
    seeds = rng.integers(0, 2**31 - 1, size=n_seeds)
    in_dims = None if layer_features is None else [h.shape[1] for h in layer_features]
    rows, start = [], time.perf_counter()
    for seed_index, seed in enumerate(seeds):
        for k in shots:
            support, query = kshot_split(labels, k, random_state=int(seed))
            s_idx = torch.as_tensor(support, device=features.device)
            q_idx = torch.as_tensor(query, device=features.device)
            sl = None if in_dims is None else [h[s_idx] for h in layer_features]
            ql = None if in_dims is None else [h[q_idx] for h in layer_features]
            variants = [("BOIF", in_dims)] + ([("BOIF without adapter", None)] if in_dims else [])
            for name, dims in variants:
                adapter = None
                if dims is not None:
                    adapter = MultiLevelAdapter(dims, features.shape[1], random_state=int(seed))
                    adapter = adapter.to(features.device)
                model = BOIF(
                    text_weights, logit_scale, cache=cache, beta=beta, alpha=alpha, adapter=adapter
                )
                fit = model.fit(
                    features[s_idx], labels[support], layer_features=sl if dims else None,
                    epochs=epochs, lr=lr, tune_beta=tune_beta, random_state=int(seed),
                )  # fmt: skip
                acc = fit.evaluate(
                    features[q_idx], labels[query], layer_features=ql if dims else None
                ).accuracy
                found = [(name, acc["fused"])]
                if name == "BOIF":
                    found += [("prior only", acc["prior"]), ("likelihood only", acc["likelihood"])]
                rows += [
                    {"method": m, "shots": k, "seed": seed_index, "accuracy": v} for m, v in found
                ]
            tip = TipAdapterClassifier(text_weights, logit_scale, beta=tip_beta, alpha=tip_alpha)
            tip = tip.fit(features[s_idx], labels[support])
            tip_acc = tip.evaluate(features[q_idx], labels[query]).accuracy["fused"]
            rows.append({"method": "Tip-Adapter", "shots": k, "seed": seed_index,
                         "accuracy": tip_acc})  # fmt: skip
    return FewShotComparison(
        method=f"Few-shot comparison (BOIF cache={cache!r})",
        nobs=len(labels),
        scores=pd.DataFrame(rows),
        alpha=ci_alpha,
        wall_time_s=time.perf_counter() - start,
    )
