"""The XTransfer estimator: splice, layer-wise search, anchor-based repair and removal.

Zhang et al. (2025), arXiv:2506.22726; see :class:`XTransfer`.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from mlcore._device import as_numpy, seeded_torch
from mlcore._iterations import budget_result
from mlcore.transfer.anchors import ANCHOR_MODES, fit_anchors, median_distance, mmd2
from mlcore.transfer.recombiner import LayerRecombiner
from mlcore.transfer.result import XTransferResult
from mlcore.transfer.sources import (
    COST_METRICS,
    check_architecture,
    check_sources,
    cnn1d_source,
    module_cost,
    module_latency,
    tiny_clip_source,
)
from mlcore.transfer.transferred import (
    TransferredModel,
    _Features,
    _trainable,
    build_model,
    check_windows,
    transfer_seed,
)
from statcore.base import Estimator
from statcore.validation import (
    as_class_labels,
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
)


class XTransfer(Estimator):
    """XTransfer: few-shot transfer of pretrained source layers to a new sensor modality.

    ``fit`` runs the pipeline of Zhang et al. (2025): **Splice** a stem mapping sensor
    windows into a source's input space (STFT spectrogram + conv for an image source, resampling
    + conv for a 1-D source); **Layer-wise search** (:class:`LayerRecombiner`) for the
    combination of source layers that fits the budget; **Repair** with few shots by training
    only light parameters (stem, junction adapters, per-layer :class:`LightAdapter`, head) on

    ``L = CE + λ Σ_l mean_i ‖PCA_k(h_l(x_i)) − a_{l,y_i}‖² / v_l``

    (``v_l`` the PCA variance kept at layer ``l``, see :class:`LayerAnchors`); **Removal** of
    shape-preserving layers whose repaired contribution ``‖f_l(h) − h‖ / ‖h‖`` is below
    ``removal_tol``, followed by a second repair of the smaller model.

    Parameters
    ----------
    sources : sequence of SourceModel, optional
        Default: :func:`~mlcore.transfer.tiny_clip_source` and
        :func:`~mlcore.transfer.cnn1d_source`.
    budget : float, optional
        Cost limit of the searched model (None: unconstrained).
    budget_metric : {"params", "flops", "latency"}
    beam : int
        Beam width of the search (1: greedy).
    max_depth : int, optional
    n_pca : int
        PCA dimension ``k`` of the anchor spaces.
    lam : float
        Weight ``λ`` of the anchor term.
    anchors : {"source", "target"}
        Anchors from the source's class means (matched to target classes) or the target's.
    rank : int
        Rank of the low-rank residual of each light adapter (0: affine only).
    steps : int
        Full-batch Adam steps of the repair (and of each baseline).
    lr : float
    removal_tol : float
        Relative contribution below which a shape-preserving layer is removed (0: never).
    score_fn : callable, optional
        The search's score, see :class:`LayerRecombiner`.
    architecture : sequence of (int, int), optional
        A fixed architecture, ``(source index, layer index)`` pairs in forward order; skips the
        search (and its budget).
    random_state : None, int or numpy Generator
        Seeds the junction adapters, heads and the from-scratch baseline (see
        :func:`~mlcore.transfer.transferred.transfer_seed`): an int gives the same fit every
        time; a Generator is drawn from once per fit (so consecutive fits differ, and two
        estimators with equally seeded Generators agree); None draws fresh entropy.

    Notes
    -----
    The estimator holds the specification only: :meth:`fit` returns a new
    :class:`XTransferResult` each call, with the repaired network in ``network`` (and
    :meth:`XTransferResult.predict`), and leaves the estimator unchanged.

    Fidelity: reconstruction (abstract and summaries only; see :mod:`mlcore.transfer.xtransfer`).
    The search runs before the repair here (the proxy needs no training), so only the chosen
    architecture is repaired.

    References
    ----------
    Zhang, Zhang, Zhou, Chen, Gao, Jia, Yang, Qi and Gu (2025). XTransfer: modality-agnostic
    few-shot model transfer for human sensing at the edge. arXiv:2506.22726.

    Examples
    --------
    >>> from mlcore.transfer import XTransfer, synthetic_imu
    >>> d = synthetic_imu(10, random_state=0)
    >>> res = XTransfer(budget=30_000, steps=20).fit(d.X[::2], d.y[::2])  # doctest: +SKIP
    """

    method_name = "XTransfer"

    def __init__(
        self,
        sources=None,
        *,
        budget=None,
        budget_metric: str = "params",
        beam: int = 3,
        max_depth=None,
        n_pca: int = 16,
        lam: float = 1e-3,
        anchors: str = "source",
        rank: int = 0,
        steps: int = 100,
        lr: float = 1e-2,
        removal_tol: float = 0.05,
        score_fn=None,
        architecture=None,
        random_state=0,
    ):
        self.sources = None if sources is None else check_sources(sources)
        self.budget = None if budget is None else check_positive(budget, name="budget")
        self.budget_metric = check_option(budget_metric, name="budget_metric", options=COST_METRICS)
        self.beam = check_positive_int(beam, name="beam")
        self.max_depth = (
            None if max_depth is None else check_positive_int(max_depth, name="max_depth")
        )
        self.n_pca = check_positive_int(n_pca, name="n_pca")
        self.lam = check_positive(lam, name="lam", strict=False)
        self.anchors = check_option(anchors, name="anchors", options=ANCHOR_MODES)
        self.rank = check_positive_int(rank, name="rank", minimum=0)
        self.steps = check_positive_int(steps, name="steps")
        self.lr = check_positive(lr, name="lr")
        self.removal_tol = check_positive(removal_tol, name="removal_tol", strict=False)
        self.score_fn = score_fn
        self.architecture = None if architecture is None else check_architecture(architecture)
        check_random_state(random_state)  # refuse a bad seed here, not at the first fit
        self.random_state = random_state

    @property
    def nobs(self) -> None:
        """None: the estimator holds settings only; the windows come to :meth:`fit`."""
        return None

    def _repr_spec(self) -> str:
        arch = "searched" if self.architecture is None else f"architecture={self.architecture}"
        return f"budget={self.budget}, {arch}"

    # -- the steps ---------------------------------------------------------------------

    def _anchors(self, model, sources, arch, X, y, n_classes) -> list:
        """One :class:`LayerAnchors` per source layer, from the spliced model's activations."""
        with torch.no_grad():
            _, acts = model(X, layers=True)
        return [
            fit_anchors(
                name,
                sources[s].reference_activations[j],
                sources[s].reference_labels,
                a,
                y,
                n_classes,
                n_pca=self.n_pca,
                mode=self.anchors,
            )
            for name, (s, j), a in zip(model.layer_names, arch, acts, strict=True)
        ]

    def _train(self, model, anchors, X, y, *, lam, which="light") -> list:
        """Full-batch Adam on ``CE + lam · Σ_l anchor_l`` over the ``which`` parameters."""
        params = _trainable(model, which)
        yt = torch.from_numpy(y)
        opt = torch.optim.Adam(params, lr=self.lr)
        records = []
        for step in range(self.steps):
            logits, acts = model(X, layers=True)
            ce = F.cross_entropy(logits, yt)
            anchor = ce.new_zeros(())
            if lam:
                anchor = sum(a.loss(h, yt) for a, h in zip(anchors, acts, strict=True))
            loss = ce + lam * anchor
            opt.zero_grad()
            loss.backward()
            opt.step()
            records.append({"step": step, "loss": loss, "ce": ce, "anchor": anchor})
        for p in model.parameters():
            p.requires_grad_(False)
        return records

    def _removable(self, model, X) -> list:
        """Positions of shape-preserving layers whose relative contribution is negligible."""
        out = []
        with torch.no_grad():
            h = model.stem(X)
            for pos, (kind, part) in enumerate(zip(model.kinds, model.parts, strict=True)):
                if kind == "layer":
                    core = part[0](h)
                    if core.shape == h.shape:
                        ratio = float((core - h).norm() / h.norm().clamp_min(1e-12))
                        if ratio < self.removal_tol:
                            out.append(pos)
                h = part(h)
        return out

    def _shift(self, model, anchors, sources, arch, X) -> tuple:
        """Squared MMD of each layer's target activations to its source activations: in the
        layer's anchor (PCA) space and in the full channel space."""
        with torch.no_grad():
            _, acts = model(X, layers=True)
        reduced, full = [], []
        for (s, j), a, anc in zip(arch, acts, anchors, strict=True):
            ref = sources[s].reference_activations[j]
            ref_k = anc.project(ref)
            reduced.append(mmd2(anc.project(a), ref_k, median_distance(ref_k)))
            full.append(mmd2(a, ref, median_distance(ref)))
        return reduced, full

    # -- fit ----------------------------------------------------------------------------

    def fit(
        self, X_few, y_few, *, X_val=None, y_val=None, baselines: bool = False
    ) -> XTransferResult:
        """Search, splice, repair and prune on the few shots; evaluate on ``X_val``.

        Returns a new :class:`XTransferResult` each call and leaves the estimator unchanged
        (the options it was called with are recorded on the result's ``fit_options``).

        Parameters
        ----------
        X_few : array_like (n, channels, length)
            The few labelled sensor windows (not modified).
        y_few : array_like (n,)
            Class indices ``0..K-1``; every class needs at least one window.
        X_val, y_val : optional
            Held-out windows for ``val_accuracy``, the accuracies and the per-layer shift
            (without them, ``accuracy`` and the shift are on the shots and ``val_accuracy`` is
            NaN).
        baselines : bool
            Also fit the linear probe and the from-scratch model on the same architecture.

        Returns
        -------
        XTransferResult

        Raises
        ------
        ValueError
            For NaN/inf or misshapen windows, a class without windows, labels that do not
            match, or a budget that no single-layer architecture fits.
        """
        X = check_windows(X_few, name="X_few")
        if isinstance(y_few, torch.Tensor):
            y_few = as_numpy(y_few, name="y_few")
        y = as_class_labels(y_few, name="y_few", n=X.shape[0])
        if y.min() < 0:
            raise ValueError("`y_few` must hold class indices >= 0")
        n_classes = int(y.max()) + 1
        if n_classes < 2:
            raise ValueError("`y_few` must hold at least two classes")
        counts = np.bincount(y, minlength=n_classes)
        if (counts == 0).any():
            empty = np.flatnonzero(counts == 0).tolist()
            raise ValueError(f"`y_few` has no windows of class(es) {empty} (labels must be 0..K-1)")
        if (X_val is None) != (y_val is None):
            raise ValueError("pass both `X_val` and `y_val`, or neither")
        if X_val is not None:
            Xv = check_windows(X_val, name="X_val", channels=X.shape[1])
            if isinstance(y_val, torch.Tensor):
                y_val = as_numpy(y_val, name="y_val")
            yv = as_class_labels(y_val, name="y_val", n=Xv.shape[0])
            if yv.min() < 0 or yv.max() >= n_classes:
                raise ValueError(f"`y_val` must hold class indices in [0, {n_classes - 1}]")
        else:
            Xv, yv = X, y
        seed = transfer_seed(self.random_state)
        sources = self.sources or (tiny_clip_source(), cnn1d_source())
        Xt, Xvt = torch.from_numpy(X).float(), torch.from_numpy(Xv).float()
        recombiner = LayerRecombiner(
            sources,
            budget=self.budget,
            metric=self.budget_metric,
            beam=self.beam,
            max_depth=self.max_depth,
            score_fn=self.score_fn,
            rank=self.rank,
            random_state=seed,
        )
        if self.architecture is None:
            arch, trace = recombiner.search(Xt, y, n_classes)
        else:
            arch = self.architecture
            for s, j in arch:
                if s >= len(sources) or j >= len(sources[s].layers):
                    raise ValueError(
                        f"`architecture` names layer {j} of source {s}, which does not exist"
                    )
            trace = pd.DataFrame(
                columns=["depth", "architecture", "score", *COST_METRICS, "feasible", "selected"]
            )

        model = build_model(sources, arch, Xt, n_classes, rank=self.rank, seed=seed)
        anchors = self._anchors(model, sources, arch, Xt, y, n_classes)
        before, before_full = self._shift(model, anchors, sources, arch, Xvt)
        records = self._train(model, anchors, Xt, y, lam=self.lam)
        n_steps = self.steps
        removed_pos = self._removable(model, Xt)
        removed = tuple(model.names[p] for p in removed_pos)
        kept = list(range(len(arch)))
        if removed_pos:
            layer_pos = [p for p, k in enumerate(model.kinds) if k == "layer"]
            kept = [i for i, p in enumerate(layer_pos) if p not in removed_pos]
            keep = [p for p in range(len(model.parts)) if p not in removed_pos]
            model = TransferredModel(
                model.stem,
                [(model.kinds[p], model.names[p], model.parts[p]) for p in keep],
                model.head,
            )
            anchors = [anchors[i] for i in kept]
            more = self._train(model, anchors, Xt, y, lam=self.lam)
            records += [dict(r, step=r["step"] + n_steps) for r in more]
            n_steps += self.steps
        kept_arch = tuple(arch[i] for i in kept)
        after, after_full = self._shift(model, anchors, sources, kept_arch, Xvt)
        history = budget_result(
            records,
            method="XTransfer repair",
            function="XTransfer.fit",
            n_iter=n_steps,
            maxiter=n_steps,
            criterion="repair loss (CE + anchor term)",
            remedy="lower `lr` or `lam`",
        )
        shift = pd.DataFrame(
            {
                "layer": model.layer_names,
                "mmd_before": [before[i] for i in kept],
                "mmd_after": after,
                "mmd_full_before": [before_full[i] for i in kept],
                "mmd_full_after": after_full,
            }
        )
        shift.insert(3, "reduction", 1 - shift["mmd_after"] / shift["mmd_before"])
        acc = {"xtransfer": _accuracy(model, Xvt, yv)}
        val_accuracy = math.nan if X_val is None else acc["xtransfer"]
        if baselines:
            acc.update(self._baselines(sources, kept_arch, Xt, y, Xvt, yv, n_classes, seed))
        fields = self._result_fields()
        fields["nobs"] = int(X.shape[0])
        return XTransferResult(
            **fields,
            method=self.method_name,
            network=model,
            architecture=_architecture_table(model, removed),
            cost=pd.Series(_final_cost(model, tuple(X.shape[1:])), name="cost", dtype=float),
            budget=self.budget,
            budget_metric=self.budget_metric,
            per_layer_shift=shift,
            accuracy=pd.Series(acc, name="accuracy"),
            val_accuracy=val_accuracy,
            train_accuracy=_accuracy(model, Xt, y),
            search=trace,
            removed=removed,
            anchor_modes=tuple(a.mode for a in anchors),
            history=history,
            iterations=history.iterations,
            random_state_used=seed,
        )

    def _baselines(self, sources, arch, Xt, y, Xvt, yv, n_classes, seed) -> dict:
        """Linear probe (head only on the frozen spliced features) and from scratch (the same
        architecture re-initialised, every parameter trained on cross-entropy)."""
        probe = build_model(sources, arch, Xt, n_classes, rank=self.rank, seed=seed)
        with torch.no_grad():
            feats, feats_val = probe.features(Xt)[0], probe.features(Xvt)[0]
        head = probe.head
        self._train(_Features(head), [], feats, y, lam=0.0, which="all")
        with torch.no_grad():
            probe_acc = float((head(feats_val).argmax(1).numpy() == yv).mean())
        scratch = copy.deepcopy(
            build_model(sources, arch, Xt, n_classes, rank=self.rank, seed=seed)
        )
        with seeded_torch(seed):
            for m in scratch.modules():
                if m is not scratch and hasattr(m, "reset_parameters"):
                    m.reset_parameters()
        self._train(scratch, [], Xt, y, lam=0.0, which="all")
        return {"linear_probe": probe_acc, "scratch": _accuracy(scratch, Xvt, yv)}

    @property
    def model_(self):
        """Removed: the estimator keeps no fitted state; ``fit`` returns the result, whose
        ``network`` is the repaired model."""
        raise AttributeError(
            "XTransfer no longer keeps the fitted model: `res = XTransfer(...).fit(X, y)` returns "
            "an XTransferResult; use `res.network` (and `res.predict(X)`)"
        )

    def predict(self, X) -> np.ndarray:
        """Removed: the estimator keeps no fitted model. Raises ``RuntimeError`` pointing to
        ``XTransfer(...).fit(X_few, y_few).predict(X)``."""
        raise RuntimeError(
            "XTransfer keeps no fitted model: `fit` returns an XTransferResult; use "
            "`res = XTransfer(...).fit(X_few, y_few)` and `res.predict(X)`"
        )


def _accuracy(model, X, y) -> float:
    with torch.no_grad():
        return float((model(X).argmax(1).numpy() == y).mean())


def _architecture_table(model: TransferredModel, removed) -> pd.DataFrame:
    rows = [
        {
            "part": "stem",
            "name": "stem",
            "params": _n(model.stem),
            "trainable": _n(model.stem),
            "removed": False,
        }
    ]
    for kind, name, part in zip(model.kinds, model.names, model.parts, strict=True):
        light = _n(part) if kind == "junction" else _n(part[1])
        rows.append(
            {"part": kind, "name": name, "params": _n(part), "trainable": light, "removed": False}
        )
    rows += [
        {"part": "layer", "name": n, "params": 0, "trainable": 0, "removed": True} for n in removed
    ]
    rows.append(
        {
            "part": "head",
            "name": "head",
            "params": _n(model.head),
            "trainable": _n(model.head),
            "removed": False,
        }
    )
    return pd.DataFrame(rows)


def _final_cost(model, in_shape) -> dict:
    cost = module_cost(model, in_shape)
    cost["latency"] = module_latency(model, in_shape)
    return cost


def _n(module) -> int:
    return int(sum(p.numel() for p in module.parameters()))


__all__ = ["XTransfer"]
