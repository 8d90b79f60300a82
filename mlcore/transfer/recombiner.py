"""XTransfer's layer-wise search: recombine layers of one or more sources under a budget.

Zhang et al. (2025), arXiv:2506.22726: a resource-budgeted, NAS-inspired recombination of
source layers. The move set, the beam search and its tie-breaking are this package's
reconstruction (see :class:`LayerRecombiner`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd
import torch

from mlcore.transfer.anchors import anchor_separability
from mlcore.transfer.sources import (
    COST_METRICS,
    check_architecture,
    check_sources,
    module_cost,
    module_latency,
    pool,
)
from mlcore.transfer.transferred import TransferredModel, build_model, transfer_seed
from statcore.validation import check_option, check_positive, check_positive_int, describe


class LayerRecombiner:
    """Layer-wise search that recombines layers of one or more sources under a budget.

    An architecture is a sequence of ``(source, layer)`` pairs: it starts at the first layer
    of a source (whose splice stem feeds it) and grows one layer at a time, either with the
    next layer of the same source or by jumping (through a shape adapter) to a later layer of
    another source; a source's layers keep their order and none repeats. Every prefix is a
    candidate (followed by the head). Beam search keeps the ``beam`` best prefixes of each
    depth by ``score_fn`` on the spliced, untrained prefix; ties go to the cheaper, then the
    lexicographically smaller architecture, so the search is deterministic for a seed (under
    a latency budget, as deterministic as the measured times). ``beam=1`` is greedy.

    Parameters
    ----------
    sources : sequence of SourceModel
    budget : float, optional
        The most ``metric`` an architecture may cost (stem, junctions, layers, adapters and
        head together); None: unconstrained.
    metric : {"params", "flops", "latency"}
        Parameters, multiply-accumulates per window, or median CPU latency (ms, batch 32).
    beam : int
    max_depth : int, optional
        The most source layers (default: all layers of all sources).
    score_fn : callable, optional
        ``score_fn(features, y) -> float`` on the pooled final activations (n, C) of the
        few shots; default :func:`anchor_separability`.
    rank : int
        Rank of the light adapters (counted in the cost).
    random_state : None, int or numpy Generator
        Seeds the junction adapters and heads of the spliced candidates (see
        :func:`~mlcore.transfer.transferred.transfer_seed`).

    Notes
    -----
    Fidelity: reconstruction. The paper's search is resource-budgeted and NAS-inspired; the
    move set, the training-free proxy, the beam and the tie-breaking are ours.
    """

    def __init__(
        self,
        sources,
        *,
        budget=None,
        metric: str = "params",
        beam: int = 4,
        max_depth=None,
        score_fn: Callable | None = None,
        rank: int = 0,
        random_state=0,
    ):
        self.sources = check_sources(sources)
        self.metric = check_option(metric, name="metric", options=COST_METRICS)
        self.budget = None if budget is None else check_positive(budget, name="budget")
        self.beam = check_positive_int(beam, name="beam")
        total = sum(len(s.layers) for s in self.sources)
        self.max_depth = (
            total if max_depth is None else check_positive_int(max_depth, name="max_depth")
        )
        if score_fn is not None and not callable(score_fn):
            raise TypeError(f"`score_fn` must be callable; got {describe(score_fn)}")
        self.score_fn = score_fn or anchor_separability
        self.rank = check_positive_int(rank, name="rank", minimum=0)
        self.seed = transfer_seed(random_state)

    def _moves(self, arch):
        s, j = arch[-1]
        used_max = {}
        for si, ji in arch:
            used_max[si] = max(used_max.get(si, -1), ji)
        if j + 1 < len(self.sources[s].layers):
            yield (s, j + 1)
        for t, src in enumerate(self.sources):
            if t == s:
                continue
            for k in range(used_max.get(t, -1) + 1, len(src.layers)):
                yield (t, k)

    def cost(self, model: TransferredModel, in_shape) -> dict:
        """``params``, ``flops`` and ``latency`` (ms) of a built model on one window."""
        cost = module_cost(model, in_shape)
        cost["latency"] = module_latency(model, in_shape) if self.metric == "latency" else math.nan
        return cost

    def search(self, X, y, n_classes: int) -> tuple:
        """Run the search on the few shots; return ``(best architecture, trace DataFrame)``.

        Raises
        ------
        ValueError
            When no single-layer architecture fits the budget.
        """
        rows, frontier, seen = [], [((s, 0),) for s in range(len(self.sources))], set()
        in_shape = tuple(X.shape[1:])
        for depth in range(1, self.max_depth + 1):
            scored = []
            for arch in frontier:
                if arch in seen:
                    continue
                seen.add(arch)
                model = build_model(
                    self.sources, arch, X, n_classes, rank=self.rank, seed=self.seed
                )
                cost = self.cost(model, in_shape)
                feasible = self.budget is None or cost[self.metric] <= self.budget
                score = math.nan
                if feasible:
                    with torch.no_grad():
                        score = float(self.score_fn(pool(model.features(X)[0]), y))
                rows.append(
                    {
                        "depth": depth,
                        "architecture": self.describe(arch),
                        "score": score,
                        **cost,
                        "feasible": feasible,
                        "_arch": arch,
                    }
                )
                if feasible:
                    scored.append((-score, cost[self.metric], arch))
            if depth == 1 and not scored:
                cheapest = min(r[self.metric] for r in rows)
                raise ValueError(
                    f"`budget`={self.budget:g} ({self.metric}) fits no layer: the cheapest "
                    f"single-layer architecture costs {cheapest:g}"
                )
            keep = [a for _, _, a in sorted(scored)[: self.beam]]
            frontier = sorted({a + (m,) for a in keep for m in self._moves(a)})
            if not frontier:
                break
        trace = pd.DataFrame(rows)
        ok = trace[trace["feasible"]]
        order = sorted(
            zip(-ok["score"].to_numpy(), ok[self.metric].to_numpy(), ok["_arch"], strict=True),
            key=lambda r: (r[0], r[1], r[2]),
        )
        best = order[0][2]
        trace["selected"] = [a == best for a in trace["_arch"]]
        return best, trace.drop(columns="_arch")

    def describe(self, arch) -> str:
        return " > ".join(f"{self.sources[s].name}.{self.sources[s].layers[j][0]}" for s, j in arch)


__all__ = [
    "LayerRecombiner",
    "check_architecture",
    "check_sources",
]
