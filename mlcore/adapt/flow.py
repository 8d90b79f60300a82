"""Flow-matching adaptation of cached image features toward class text features: the Euclidean
FMA and the path-decoupled hyperbolic HFM, one fit/predict API.

- :class:`FlowMatchingAdapter` (FMA): Euclidean flow matching from each image feature to its
  class text feature, as in the authors' code.
- :class:`HyperbolicFlowMatcher` (HFM): the same on the Lorentz model, with the centripetal lift,
  geodesic flow matching, the path-decoupled step-wise objective and diameter-based stopping.
- :class:`VelocityNet`: FMA's adaLN residual MLP velocity field, small by default.
- :class:`FlowFitResult`: what ``fit`` returns, the trained velocity net and its history, with
  ``predict``.
- :class:`FlowResult`: predictions, per-step accuracy, stopping steps, trajectories, history.

References
----------
Jiang, Wang & Chen (2025). Exploring cross-modal flows for few-shot learning (FMA).
arXiv:2510.14543; code github.com/HKUST-LongGroup/FMA.
Li, Jiang, Ye, He, Li, Xiao, Cheng & Chen (2026). Path-decoupled hyperbolic flow matching for
few-shot adaptation (HFM). arXiv:2602.20479.
"""

from __future__ import annotations

import copy
import math
import numbers
import time
import warnings
from dataclasses import dataclass, field, fields
from typing import ClassVar

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from mlcore._checks import check_tensor
from mlcore._device import as_numpy, seeded_torch, torch_generator, torch_seed
from mlcore._iterations import budget_result
from mlcore.adapt import lorentz as L
from mlcore.results import TrainingResult
from statcore.base import Estimator
from statcore.results import Results, Summary
from statcore.results.plotting import get_ax, label_axes
from statcore.validation import (
    as_class_labels,
    as_float_array,
    check_bool,
    check_option,
    check_positive,
    check_positive_int,
    check_scalar,
)

STOP_RULES = ("fixed", "diameter")

__all__ = [
    "FlowFitResult",
    "FlowMatchingAdapter",
    "FlowResult",
    "HyperbolicFlowMatcher",
    "VelocityNet",
    "crossing_pairs",
]


# --------------------------------------------------------------------------- velocity field
class _TimeEmbed(nn.Module):
    """FMA's sinusoidal embedding of ``1000 t`` followed by a two-layer SiLU MLP."""

    def __init__(self, width: int, frequencies: int = 64):
        super().__init__()
        self.frequencies = frequencies
        self.mlp = nn.Sequential(nn.Linear(frequencies, width), nn.SiLU(), nn.Linear(width, width))

    def forward(self, t):
        half = self.frequencies // 2
        freqs = torch.exp(
            -math.log(10000.0) * torch.arange(half, dtype=t.dtype, device=t.device) / half
        )
        args = 1000.0 * t * freqs
        return self.mlp(torch.cat([torch.cos(args), torch.sin(args)], dim=-1))


class _AdaLNBlock(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.norm = nn.LayerNorm(width, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(width, width), nn.SiLU(), nn.Linear(width, width))
        self.modulation = nn.Sequential(nn.SiLU(), nn.Linear(width, 3 * width))

    def forward(self, x, c):
        shift, scale, gate = self.modulation(c).chunk(3, dim=-1)
        return x + gate * self.mlp(self.norm(x) * (1 + scale) + shift)


class VelocityNet(nn.Module):
    """FMA's velocity field ``v_θ(x, t)``: input projection, adaLN residual MLP blocks
    conditioned on the time embedding, and a zero-initialised adaLN output layer.

    Parameters
    ----------
    dim : int
        Feature dimension (input and output).
    width : int
        Hidden width (FMA uses the feature dimension, 512 for ViT-B/16).
    n_blocks : int
        Residual blocks (FMA: 12; 2 is enough for CPU-sized tasks).

    Notes
    -----
    The layout and initialisation (Xavier linears, zeroed modulation and output layers, so that
    ``v_θ ≡ 0`` at the start) follow ``models/fm.py`` of HKUST-LongGroup/FMA; the time
    embedding uses 64 instead of 256 frequencies.
    """

    def __init__(self, dim: int, width: int = 64, n_blocks: int = 2):
        super().__init__()
        self.dim = check_positive_int(dim, name="dim")
        width = check_positive_int(width, name="width")
        n_blocks = check_positive_int(n_blocks, name="n_blocks")
        self.time_embed = _TimeEmbed(width)
        self.input_proj = nn.Linear(dim, width)
        self.blocks = nn.ModuleList(_AdaLNBlock(width) for _ in range(n_blocks))
        self.final_norm = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.final_modulation = nn.Sequential(nn.SiLU(), nn.Linear(width, 2 * width))
        self.output = nn.Linear(width, dim)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                nn.init.zeros_(module.bias)
        nn.init.normal_(self.time_embed.mlp[0].weight, std=0.02)
        nn.init.normal_(self.time_embed.mlp[2].weight, std=0.02)
        for layer in [b.modulation[-1] for b in self.blocks] + [self.final_modulation[-1]]:
            nn.init.zeros_(layer.weight)
            nn.init.zeros_(layer.bias)
        nn.init.zeros_(self.output.weight)
        nn.init.zeros_(self.output.bias)

    def forward(self, x, t):
        """Velocity (n, dim) at points ``x`` (n, dim) and times ``t`` (n, 1)."""
        c = self.time_embed(t)
        h = self.input_proj(x)
        for block in self.blocks:
            h = block(h, c)
        shift, scale = self.final_modulation(c).chunk(2, dim=-1)
        return self.output(self.final_norm(h) * (1 + scale) + shift)


# --------------------------------------------------------------------------- results
def _pairwise(points: np.ndarray, curvature: float) -> np.ndarray:
    """Pairwise distances (n, n) of points (n, D): Euclidean for NaN curvature, else Lorentz."""
    if math.isnan(curvature):
        sq = (points * points).sum(1)
        return np.sqrt(np.clip(sq[:, None] + sq[None] - 2 * points @ points.T, 0, None))
    # -K<x, y>_L - 1 = (K/2) <x - y, x - y>_L on the manifold: exactly 0 on the diagonal
    diff = points[:, None] - points[None]
    mink = (diff[..., 1:] ** 2).sum(-1) - diff[..., 0] ** 2
    return np.arccosh(1.0 + np.clip(0.5 * curvature * mink, 0, None)) / math.sqrt(curvature)


def crossing_pairs(trajectories, labels, eps: float, *, curvature: float = math.nan,
                   scale: float = 1.0) -> int:  # fmt: skip
    """Different-class trajectory pairs that come closer than ``eps · scale`` during the flow.

    Parameters
    ----------
    trajectories : ndarray (n_steps + 1, n, D)
        Points along each trajectory (``FlowResult.trajectories``).
    labels : ndarray (n,)
        True classes.
    eps : float
        Threshold, in units of ``scale``.
    curvature : float
        NaN: Euclidean distances; ``K > 0``: Lorentz distances on ``L_K`` (ambient coordinates).
    scale : float
        Unit of ``eps`` (``FlowResult.root_separation`` makes counts comparable across
        geometries).

    Returns
    -------
    int
        Pairs ``(i, j)``, ``y_i ≠ y_j``, at least ``eps · scale`` apart at the start and closer
        than that at some later step.
    """
    eps = check_positive(eps, name="eps")
    scale = check_positive(scale, name="scale")
    if not (isinstance(curvature, numbers.Real) and math.isnan(curvature)):
        curvature = L.check_curvature(curvature)
    trajectories = as_float_array(as_numpy(trajectories, name="trajectories"),
                                  name="trajectories", ndim=3)  # fmt: skip
    labels = as_class_labels(as_numpy(labels, name="labels"), name="labels")
    if labels.size == 0 or labels.min() < 0:
        raise ValueError("`labels` must hold at least one class index, each >= 0")
    if trajectories.shape[1] != len(labels) or trajectories.shape[0] == 0:
        raise ValueError(
            f"`trajectories` must be (n_steps + 1, n, D) with n = len(labels) = {len(labels)}; "
            f"got shape {trajectories.shape}"
        )
    if not math.isnan(curvature):
        # float32 flows store float32 points: hold them to float32's rounding (√eps = 3.5e-4)
        L.check_points(torch.as_tensor(trajectories), curvature, name="trajectories",
                       rtol=torch.finfo(torch.float32).eps ** 0.5)  # fmt: skip
    limit = eps * scale
    start = _pairwise(trajectories[0], curvature)
    came_close = np.zeros_like(start, dtype=bool)
    for points in trajectories[1:]:
        came_close |= _pairwise(points, curvature) < limit
    came_close &= (start >= limit) & (labels[:, None] != labels[None, :])
    return int(np.triu(came_close, k=1).sum())


def _plot_steps(results, ax=None, **kwargs):
    """Accuracy after each fixed number of steps, with the stopping rule's accuracy and mean
    stopping step marked."""
    ax = get_ax(ax)
    table = results.tidy()
    if table["accuracy"].isna().all():
        raise ValueError("the steps plot needs `labels`; predict with labels")
    ax.plot(table["step"], table["accuracy"], marker="o", label="fixed steps", **kwargs)
    ax.scatter([results.stop_steps.mean()], [results.accuracy], marker="*", s=120,
               color="black", zorder=3, label=f"{results.stop} stopping")  # fmt: skip
    return label_axes(
        ax, xlabel="Euler steps", ylabel="accuracy", title=results.method, legend="inside"
    )


def _plot_trajectories(results, ax=None, n_max: int = 200, **kwargs):
    """Trajectories' unit directions projected on their first two principal axes."""
    ax = get_ax(ax)
    traj = results.trajectories[:, :n_max]
    if not math.isnan(results.curvature):
        traj = traj[..., 1:]
    traj = traj / np.linalg.norm(traj, axis=-1, keepdims=True)
    flat = traj.reshape(-1, traj.shape[-1])
    centred = flat - flat.mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    xy = (centred @ vt[:2].T).reshape(traj.shape[0], traj.shape[1], 2)
    colours = results.labels[:n_max] if results.labels is not None else results.predictions[:n_max]
    for i in range(xy.shape[1]):
        ax.plot(xy[:, i, 0], xy[:, i, 1], color=f"C{int(colours[i]) % 10}", lw=0.6, alpha=0.6,
                **kwargs)  # fmt: skip
    ax.scatter(xy[0, :, 0], xy[0, :, 1], s=6, color="0.5", label="start")
    return label_axes(
        ax, title=f"{results.method}: trajectories (PCA of directions)", legend="inside"
    )


def _plot_history(results, ax=None, **kwargs):
    """The velocity net's training curves."""
    if results.history is None:
        raise ValueError("no training history")
    return results.history.plot(ax=ax, lr=False, **kwargs)


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class FlowResult(Results):
    """Transported features of one set of images and their classification.

    Parameters
    ----------
    logits : ndarray (n, n_classes)
        Class scores at each image's stopping step (cosine for FMA, ``-d_L/τ`` for HFM).
    predictions : ndarray (n,)
    labels : ndarray (n,), optional
    stop : {"fixed", "diameter"}
    stop_steps : ndarray (n,)
        The Euler step at which each trajectory stopped.
    step_accuracy : ndarray (n_steps + 1,), optional
        Accuracy if every trajectory stopped after ``k`` steps, ``k = 0..n_steps``.
    trajectories : ndarray (n_steps + 1, n, D)
        The points along each trajectory (ambient Lorentz coordinates for HFM, ``D = d + 1``).
    radii : ndarray (n_steps + 1, n)
        Euclidean norm (FMA) or hyperbolic radius ``d_L(o, z)`` (HFM) along each trajectory.
    step_size : float
    curvature : float
        ``K`` of HFM; NaN for FMA.
    stop_radius : float
        The diameter rule's radius ``r*`` (NaN for fixed steps).
    root_separation : float
        Smallest distance between two class roots (text features), the geometry's unit.
    history : TrainingResult, optional
        The velocity net's training run.
    """

    logits: np.ndarray = field(repr=False)
    predictions: np.ndarray = field(repr=False)
    labels: np.ndarray | None = field(default=None, repr=False)
    stop: str = "fixed"
    stop_steps: np.ndarray = field(repr=False)
    step_accuracy: np.ndarray | None = field(default=None, repr=False)
    trajectories: np.ndarray = field(repr=False)
    radii: np.ndarray = field(repr=False)
    step_size: float = 0.1
    curvature: float = math.nan
    stop_radius: float = math.nan
    root_separation: float = 1.0
    history: TrainingResult | None = field(default=None, repr=False)

    _plots: ClassVar[dict] = {
        "steps": _plot_steps,
        "trajectories": _plot_trajectories,
        "history": _plot_history,
    }

    @property
    def accuracy(self) -> float:
        """Accuracy of ``predictions`` (NaN without labels)."""
        if self.labels is None:
            return math.nan
        return float(np.mean(self.predictions == self.labels))

    @property
    def mean_steps(self) -> float:
        """Mean stopping step."""
        return float(np.mean(self.stop_steps))

    def crossing_pairs(self, eps: float = 0.5) -> int:
        """Different-class trajectory pairs coming closer than ``eps`` times the roots'
        smallest separation (default: the packing radius), in the flow's own geometry (see
        :func:`crossing_pairs`)."""
        if self.labels is None:
            raise ValueError("crossing pairs need `labels`; predict with labels")
        return crossing_pairs(self.trajectories, self.labels, eps, curvature=self.curvature,
                              scale=self.root_separation)  # fmt: skip

    def tidy(self) -> pd.DataFrame:
        """One row per step ``k``: ``step, t, accuracy`` (stopping all at ``k``),
        ``mean_radius``, ``n_active`` (trajectories not yet stopped)."""
        n_steps = self.trajectories.shape[0] - 1
        steps = np.arange(n_steps + 1)
        acc = self.step_accuracy if self.step_accuracy is not None else np.full(n_steps + 1, np.nan)
        return pd.DataFrame({
            "step": steps,
            "t": steps * self.step_size,
            "accuracy": acc,
            "mean_radius": self.radii.mean(axis=1),
            "n_active": [(self.stop_steps >= k).sum() for k in steps],
        })  # fmt: skip

    def glance(self) -> pd.DataFrame:
        best = np.nan
        best_steps = np.nan
        if self.step_accuracy is not None:
            best_steps = int(np.argmax(self.step_accuracy))
            best = float(self.step_accuracy[best_steps])
        return pd.DataFrame([{
            "method": self.method,
            "nobs": self.nobs,
            "n_classes": self.logits.shape[1],
            "curvature": self.curvature,
            "stop": self.stop,
            "accuracy": self.accuracy,
            "mean_steps": self.mean_steps,
            "best_fixed_accuracy": best,
            "best_fixed_steps": best_steps,
        }])  # fmt: skip

    def summary(self, alpha: float = 0.05) -> Summary:
        """Header from :meth:`glance`; the per-step table and the stopping-step counts.

        ``alpha`` is accepted for the common signature (no intervals here).
        """
        counts = pd.Series(self.stop_steps).value_counts().sort_index()
        counts.index.name = "stop step"
        return Summary(
            title=self._title(),
            info=self._info(),
            tables={
                "steps": self.tidy().set_index("step"),
                "stopping steps": counts.rename("count").to_frame(),
            },  # fmt: skip
            notes=self.notes + self._convergence_notes(),
        )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class FlowFitResult(TrainingResult):
    """What ``FlowMatchingAdapter.fit`` and ``HyperbolicFlowMatcher.fit`` return: the
    velocity net's training run (a :class:`~mlcore.results.TrainingResult`) and the fitted
    transport, which :meth:`predict` applies to new image features.

    Parameters
    ----------
    net : VelocityNet
        The trained velocity field (a torch module, in eval mode).
    text_feats : Tensor (n_classes, dim)
        The unit-norm class text features the flow was trained toward.
    scale_image, scale_text : float
        HFM's fitted lift scales ``α_img``, ``α_txt`` (1 for FMA).
    alignment : TrainingResult, optional
        HFM's centripetal alignment stage (None for FMA or without ``learn_scale``).
    """

    net: nn.Module = field(repr=False)
    text_feats: torch.Tensor = field(repr=False)
    scale_image: float = 1.0
    scale_text: float = 1.0
    alignment: TrainingResult | None = field(default=None, repr=False)
    _transport: object = field(default=None, repr=False)

    @property
    def n_classes(self) -> int:
        """The number of classes (rows of ``text_feats``)."""
        return self.text_feats.shape[0]

    def predict(self, image_feats, labels=None, *, steps: int = 10, stop: str = "fixed",
                stop_fraction: float = 1.0) -> FlowResult:  # fmt: skip
        """Transport image features with ``steps`` Euler steps of the fitted flow and classify
        them; the arguments are those of ``FlowMatchingAdapter.predict``."""
        return self._transport._predict(image_feats, labels, steps=steps, stop=stop,
                                        stop_fraction=stop_fraction, fit=self)  # fmt: skip


# --------------------------------------------------------------------------- shared fit/predict
class _FlowBase(Estimator):
    """The training loop and Euler integration both adapters share; subclasses supply the
    geometry (lift, path, loss, step, scores). The estimator wraps a :class:`VelocityNet`: each
    ``fit`` trains a new one on a fitted copy of the estimator, which the returned
    :class:`FlowFitResult` carries, and leaves the estimator as it was."""

    method_name = "flow matching"

    def __init__(self, *, width, n_blocks, epochs, batch_size, lr, weight_decay, warmup_epochs,
                 step_size, random_state):  # fmt: skip
        self.width = check_positive_int(width, name="width")
        self.n_blocks = check_positive_int(n_blocks, name="n_blocks")
        self.epochs = check_positive_int(epochs, name="epochs")
        self.batch_size = check_positive_int(batch_size, name="batch_size")
        self.lr = check_positive(lr, name="lr")
        self.weight_decay = check_positive(weight_decay, name="weight_decay", strict=False)
        self.warmup_epochs = check_scalar(
            warmup_epochs, name="warmup_epochs", kind=numbers.Integral, low=0
        )
        self.step_size = check_positive(step_size, name="step_size")
        self.random_state = random_state
        self.net: VelocityNet | None = None
        self._latest: FlowFitResult | None = None

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(width={self.width}, n_blocks={self.n_blocks}, "
            f"epochs={self.epochs}, lr={self.lr:g}, step_size={self.step_size:g})"
        )

    # -- input checks
    def _check_inputs(self, image_feats, labels=None, text_feats=None):
        # At predict time the width must be the fitted text features' width.
        sizes = {"dim": self.text_feats.shape[1]} if text_feats is None else None
        image_feats = check_tensor(image_feats, name="image_feats", dims=("n", "dim"),
                                   sizes=sizes, kind="floating", nonempty=True,
                                   finite=True)  # fmt: skip
        if text_feats is not None:
            text_feats = check_tensor(
                text_feats, name="text_feats", dims=("n_classes", "dim"),
                sizes={"dim": image_feats.shape[1]}, kind="floating", nonempty=True, finite=True,
            )  # fmt: skip
        if labels is not None:
            arr = as_numpy(labels, name="labels")
            n_classes = text_feats.shape[0] if text_feats is not None else self.n_classes
            if arr.shape != (image_feats.shape[0],):
                raise ValueError(
                    f"`labels` must have shape ({image_feats.shape[0]},) (one per row of "
                    f"`image_feats`); got {arr.shape}"
                )
            arr = as_class_labels(arr, name="labels")
            if arr.min() < 0 or arr.max() >= n_classes:
                raise ValueError(
                    f"`labels` must hold class indices in [0, {n_classes - 1}] (rows of "
                    "`text_feats`)"
                )
            labels = arr.astype(np.int64)
        return image_feats, labels, text_feats

    @property
    def n_classes(self) -> int:
        self._check_fitted()
        return self.text_feats.shape[0]

    def _check_fitted(self):
        if self.net is None:
            raise RuntimeError(
                f"{type(self).__name__} is not fitted; call fit() and predict with its result"
            )

    @property
    def history(self) -> FlowFitResult | None:
        """Deprecated: the latest fit's training run; use the result ``fit`` returns."""
        warnings.warn(
            f"`{type(self).__name__}.history` is deprecated: `fit()` returns the training run "
            "(a FlowFitResult); keep that instead",
            FutureWarning,
            stacklevel=2,
        )
        return self._latest

    # -- fit
    def fit(self, image_feats, labels, text_feats) -> FlowFitResult:
        """Train a new velocity field on (image feature, class text feature) pairs.

        Parameters
        ----------
        image_feats : Tensor (n, dim)
            Cached image features (normalised to unit norm here, as FMA does).
        labels : array_like or Tensor (n,)
            Class index of each image, a row of ``text_feats``.
        text_feats : Tensor (n_classes, dim)
            One text feature per class (normalised to unit norm here).

        Returns
        -------
        FlowFitResult
            The run's history (``iterations`` records it), the trained net, and
            :meth:`FlowFitResult.predict`.
        """
        image_feats, labels, text_feats = self._check_inputs(image_feats, labels, text_feats)
        dtype, device = image_feats.dtype, image_feats.device
        x0 = F.normalize(image_feats.detach(), dim=-1)
        text = F.normalize(text_feats.detach().to(dtype), dim=-1)
        y = torch.as_tensor(labels, device=device)
        seed = torch_seed(self.random_state)
        fitted = copy.copy(self)
        fitted.text_feats = text
        fitted._prepare(x0, y, text)
        # The net is initialised on the CPU from `seed`, leaving torch's global generator as it was.
        with seeded_torch(seed):
            net = VelocityNet(x0.shape[1], self.width, self.n_blocks)
        fitted.net = net.to(device=device, dtype=dtype)
        run = fitted._train(x0, y, torch_generator(seed, device))
        result = FlowFitResult(
            **{f.name: getattr(run, f.name) for f in fields(run) if f.init},
            net=fitted.net,
            text_feats=text,
            scale_image=getattr(fitted, "scale_image", 1.0),
            scale_text=getattr(fitted, "scale_text", 1.0),
            alignment=getattr(fitted, "alignment", None),
            _transport=fitted,
        )
        # kept only for the deprecated `predict` / `history` on the estimator (one release)
        self._latest = result
        return result

    def _prepare(self, x0, y, text):
        """Hook before flow training (HFM's centripetal alignment)."""

    def _train(self, x0, y, gen):
        n = x0.shape[0]
        per_epoch = math.ceil(n / self.batch_size)
        total, warmup = self.epochs * per_epoch, self.warmup_epochs * per_epoch
        opt = torch.optim.AdamW(self.net.parameters(), lr=self.lr, weight_decay=self.weight_decay,
                                foreach=True)  # fmt: skip
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(total - warmup, 1))
        records, start, step = [], time.perf_counter(), 0
        self.net.train()
        for epoch in range(1, self.epochs + 1):
            order = torch.randperm(n, generator=gen, device=x0.device)
            sums = {}
            for batch in order.split(self.batch_size):
                t = torch.rand(len(batch), 1, generator=gen, device=x0.device, dtype=x0.dtype)
                terms = self._losses(x0[batch], y[batch], t, gen)
                loss = sum(terms.values())
                opt.zero_grad()
                loss.backward()
                opt.step()
                step += 1
                # FMA's schedule: linear warm-up over `warmup_epochs`, then cosine to 0.
                if step < warmup:
                    for group in opt.param_groups:
                        group["lr"] = self.lr * step / warmup
                else:
                    sched.step()
                for key, value in terms.items():
                    sums[key] = sums.get(key, 0.0) + float(value.detach()) * len(batch) / n
            records.append({"step": step, "epoch": epoch, "lr": opt.param_groups[0]["lr"],
                            "loss": sum(sums.values()), **sums})  # fmt: skip
        self.net.eval()
        return budget_result(
            records,
            method=f"{self.method_name} velocity training",
            wall_time_s=time.perf_counter() - start,
            device=x0.device,
            function=f"{type(self).__name__}.fit",
            n_iter=step,
            maxiter=total,
            criterion=f"flow-matching loss after {self.epochs} epochs",
            remedy="lower `lr`",
        )

    # -- predict
    def predict(self, image_feats, labels=None, *, steps: int = 10, stop: str = "fixed",
                stop_fraction: float = 1.0) -> FlowResult:  # fmt: skip
        """Deprecated on the estimator: call ``fit(...).predict(...)``.

        Transports image features with ``steps`` Euler steps of the latest fit's flow and
        classifies them.

        Parameters
        ----------
        image_feats : Tensor (n, dim)
        labels : array_like or Tensor (n,), optional
            True classes, for accuracies and crossing counts.
        steps : int
            Euler steps of size ``step_size`` (FMA: 10 steps of 0.1 reach ``t = 1``); with
            ``stop="diameter"`` the most steps a trajectory takes.
        stop : {"fixed", "diameter"}
            ``"fixed"``: every trajectory takes ``steps`` steps. ``"diameter"``: a trajectory
            stops at the first step where its nearest text root is closer than
            ``r* = stop_fraction · min_{c≠c'} d(r_c, r_c') / 2``: the trajectory has entered the
            ball of the root set's packing radius around one root, where (for
            ``stop_fraction <= 1``) that root is certainly its nearest; stepping on would carry
            it toward the crowded region between the roots.
        stop_fraction : float
            The fraction of the packing radius that defines ``r*`` (default: all of it).

        Returns
        -------
        FlowResult

        Notes
        -----
        Every trajectory is integrated to ``steps`` and the stopping step read off it: the
        velocity net acts row by row (LayerNorm, no batch statistics), so the stopped point is
        the one an integration frozen at that step would give.
        """
        warnings.warn(
            f"`{type(self).__name__}.predict` is deprecated: call `predict` on the result of "
            "`fit()` (a FlowFitResult)",
            FutureWarning,
            stacklevel=2,
        )
        if self._latest is None:
            self._check_fitted()
        return self._latest.predict(
            image_feats, labels, steps=steps, stop=stop, stop_fraction=stop_fraction
        )

    @torch.no_grad()
    def _predict(self, image_feats, labels, *, steps, stop, stop_fraction, fit) -> FlowResult:
        self._check_fitted()
        steps = check_scalar(steps, name="steps", kind=numbers.Integral, low=0)
        stop = check_option(stop, name="stop", options=STOP_RULES)
        stop_fraction = check_positive(stop_fraction, name="stop_fraction")
        image_feats, labels, _ = self._check_inputs(image_feats, labels)
        x = F.normalize(image_feats.to(self.text_feats.dtype), dim=-1)
        z = self._lift_images(x)
        n = z.shape[0]
        roots = self._roots()
        path = [z]
        for k in range(steps):
            t = torch.full((n, 1), k * self.step_size, dtype=z.dtype, device=z.device)
            z = self._euler(z, self._velocity(z, t), self.step_size)
            path.append(z)
        root_dist = torch.stack([self._root_distances(p, roots) for p in path])  # (S+1, n, C)
        pair = self._root_distances(roots, roots)
        pair = pair + torch.diag(torch.full((len(roots),), math.inf, device=pair.device,
                                            dtype=pair.dtype))  # fmt: skip
        separation = float(pair.min())
        if stop == "fixed":
            stop_steps = torch.full((n,), steps, dtype=torch.long, device=z.device)
            radius = math.nan
        else:
            radius = stop_fraction * separation / 2
            inside = root_dist.min(dim=2).values < radius
            inside[-1] = True
            stop_steps = inside.to(torch.int8).argmax(dim=0)
        scores = torch.stack([self._scores(p, roots) for p in path])  # (S+1, n, C)
        logits = scores[stop_steps, torch.arange(n, device=z.device)]
        predictions = as_numpy(logits.argmax(1))
        step_accuracy = None
        if labels is not None:
            step_accuracy = (as_numpy(scores.argmax(2)) == labels[None]).mean(axis=1)
        return FlowResult(
            method=self.method_name,
            nobs=n,
            logits=as_numpy(logits),
            predictions=predictions,
            labels=labels,
            stop=stop,
            stop_steps=as_numpy(stop_steps).astype(int),
            step_accuracy=step_accuracy,
            trajectories=np.stack([as_numpy(p) for p in path]),
            radii=np.stack([as_numpy(self._radius(p)) for p in path]),
            step_size=self.step_size,
            curvature=self._curvature_value(),
            stop_radius=radius,
            root_separation=separation,
            history=fit,
            iterations=fit.iterations,
            fit_options={"steps": steps, "stop": stop, "stop_fraction": stop_fraction},
        )

    def _velocity(self, z, t):
        return self.net(self._net_input(z), t)

    def _curvature_value(self) -> float:
        return math.nan


# --------------------------------------------------------------------------- FMA
class FlowMatchingAdapter(_FlowBase):
    """FMA: Euclidean flow matching from image features to their class text features.

    Training pairs each image feature ``x0`` with its class text feature ``x1`` (fixed coupling),
    draws ``t ~ U(0, 1)`` and regresses ``v_θ(x_t, t)`` on the path's velocity::

        x_t = (1 - t) x0 + t x1 + γ √(t(1-t)) ξ,
        u   = x1 - x0 + γ (1 - 2t) / (2√(t(1-t))) ξ,    loss = ‖v_θ(x_t, t) - u‖².

    Inference takes Euler steps ``x ← x + h v_θ(x, t)`` from the image feature and classifies
    the normalised result by cosine to the text features.

    Parameters
    ----------
    width, n_blocks : int
        The :class:`VelocityNet` (FMA: the feature width and 12 blocks).
    gamma : float
        Noise level of the path (FMA's default 0).
    epochs, batch_size, lr, weight_decay, warmup_epochs :
        AdamW with linear warm-up then cosine decay (FMA: 200 epochs, batch 32, lr 2e-4,
        weight decay 0.01, 1 warm-up epoch).
    step_size : float
        Euler step (FMA: 0.1).
    random_state : None, int or numpy Generator
        Seeds the net's initialisation, the batches, ``t`` and ``ξ``.

    Notes
    -----
    Fidelity: paper (the authors' code ``train.py``, ``test.py``, ``models/fm.py`` of
    HKUST-LongGroup/FMA read). Differences: a smaller net and lr 1e-3 by default for CPU-sized
    tasks, float32 or float64 (no autocast), and the optional ``stop="diameter"`` rule of HFM
    instead of FMA's ``test_fma_adaptive`` (which sums the class probabilities at steps
    0, 4 and 8).

    References
    ----------
    Jiang, Wang & Chen (2025). Exploring cross-modal flows for few-shot learning.
    arXiv:2510.14543; code github.com/HKUST-LongGroup/FMA.
    """

    method_name = "FMA"

    def __init__(self, *, width: int = 64, n_blocks: int = 2, gamma: float = 0.0,
                 epochs: int = 200, batch_size: int = 32, lr: float = 1e-3,
                 weight_decay: float = 0.01, warmup_epochs: int = 1, step_size: float = 0.1,
                 random_state=None):  # fmt: skip
        super().__init__(width=width, n_blocks=n_blocks, epochs=epochs, batch_size=batch_size,
                         lr=lr, weight_decay=weight_decay, warmup_epochs=warmup_epochs,
                         step_size=step_size, random_state=random_state)  # fmt: skip
        self.gamma = check_positive(gamma, name="gamma", strict=False)

    def _losses(self, x0, y, t, gen):
        x1 = self.text_feats[y]
        xt = (1 - t) * x0 + t * x1
        u = x1 - x0
        if self.gamma > 0:
            xi = torch.randn(x0.shape, generator=gen, device=x0.device, dtype=x0.dtype)
            root = (t * (1 - t)).clamp_min(1e-6).sqrt()
            xt = xt + self.gamma * root * xi
            u = u + self.gamma * (1 - 2 * t) / (2 * root) * xi
        v = self.net(xt, t)
        return {"flow": ((v - u) ** 2).sum(1).mean()}

    def _lift_images(self, x):
        return x

    def _roots(self):
        return self.text_feats

    def _net_input(self, z):
        return z

    def _euler(self, z, v, h):
        return z + h * v

    def _root_distances(self, z, roots):
        return torch.cdist(z, roots)

    def _scores(self, z, roots):
        return F.normalize(z, dim=-1) @ roots.T

    def _radius(self, z):
        return z.norm(dim=-1)


# --------------------------------------------------------------------------- HFM
class HyperbolicFlowMatcher(_FlowBase):
    """HFM: path-decoupled flow matching on the Lorentz model ``L^d_K``.

    1. **Lift.** Unit image features ``x`` and text features ``t_c`` go to the hyperboloid by
       the exponential map at the origin with learnable scales: image leaves
       ``z = expmap0(α_img x)``, text roots ``r_c = expmap0(α_txt t_c)``.
    2. **Centripetal alignment** (before the flow): the scales minimise
       ``[α_txt - α_img + margin]_+ + CE(softmax(-d_L(z, r)/τ), y)`` so that roots sit nearer
       the origin than leaves (radius ``d_L(o, expmap0(αx)) = α`` for unit ``x``).
    3. **Geodesic flow matching.** ``z_t = exp_{z0}(t log_{z0} r_y)``, target
       ``u_t = PT_{z0→z_t}(log_{z0} r_y)``, loss ``<v - u_t, v - u_t>_L`` with the net's output
       made tangent at ``z_t``.
    4. **Path-decoupled objective.** The one-step extrapolation ``ẑ = exp_{z_t}((1 - t) v)`` is
       classified against the roots by ``softmax(-d_L(ẑ, r_c)/τ)``; its cross-entropy, weighted
       by ``lam_path``, keeps each trajectory inside its class corridor.
    5. **Diameter stopping** (``predict(stop="diameter")``): a trajectory stops once its nearest
       root is within ``r*``, a fraction of the roots' packing radius.

    Euler steps follow geodesics: ``z ← exp_z(h v_θ(z, t))``.

    Parameters
    ----------
    curvature : float
        ``K > 0`` (sectional curvature ``-K``; see :mod:`mlcore.adapt.lorentz`). ``K → 0`` with
        ``learn_scale=False``, unit scales and ``lam_path = lam_centripetal = 0`` recovers
        :class:`FlowMatchingAdapter`.
    lam_path : float
        Weight of the path-decoupled step-wise cross-entropy.
    lam_centripetal : float
        Weight of the centripetal hinge in the alignment stage (0 with ``learn_scale=True``
        leaves only the alignment cross-entropy).
    scale_image, scale_text : float
        Initial ``α_img`` and ``α_txt``; the fitted scales are on the result of ``fit``
        (every fit starts from these).
    learn_scale : bool
        Fit ``α_img``, ``α_txt`` in the alignment stage (``align_steps`` full-batch Adam steps).
    margin : float
        Radius margin of the centripetal hinge.
    tau : float
        Temperature of the distance softmax (alignment, path objective and scores).
    width, n_blocks, epochs, batch_size, lr, weight_decay, warmup_epochs, step_size,
    random_state :
        As in :class:`FlowMatchingAdapter`.

    Notes
    -----
    Fidelity: reconstruction. Only the abstract and the start of the introduction of
    arXiv:2602.20479 were read and no code is released; steps 2 (the hinge and the alignment
    cross-entropy, fitted as a separate stage with the scales frozen afterwards), 4 (which point
    is classified and the weight), 5 (the radius ``r*``) and the network's input (``logmap0`` of
    the point) and output (spatial velocity completed to a tangent vector) are this library's
    choices. The geometry (:mod:`mlcore.adapt.lorentz`) and the geodesic flow-matching target
    (Riemannian flow matching, Chen & Lipman 2024) are standard.

    References
    ----------
    Li, Jiang, Ye, He, Li, Xiao, Cheng & Chen (2026). Path-decoupled hyperbolic flow matching
    for few-shot adaptation. arXiv:2602.20479.
    Chen & Lipman (2024). Flow matching on general geometries. *ICLR 2024*.
    """

    method_name = "HFM"

    def __init__(self, *, curvature: float = 1.0, lam_path: float = 0.1,
                 lam_centripetal: float = 1.0, scale_image: float = 1.0,
                 scale_text: float = 1.0, learn_scale: bool = True, margin: float = 0.5,
                 tau: float = 0.1, align_steps: int = 200, width: int = 64, n_blocks: int = 2,
                 epochs: int = 200, batch_size: int = 32, lr: float = 1e-3,
                 weight_decay: float = 0.01, warmup_epochs: int = 1, step_size: float = 0.1,
                 random_state=None):  # fmt: skip
        super().__init__(width=width, n_blocks=n_blocks, epochs=epochs, batch_size=batch_size,
                         lr=lr, weight_decay=weight_decay, warmup_epochs=warmup_epochs,
                         step_size=step_size, random_state=random_state)  # fmt: skip
        self.curvature = L.check_curvature(curvature)
        self.lam_path = check_positive(lam_path, name="lam_path", strict=False)
        self.lam_centripetal = check_positive(lam_centripetal, name="lam_centripetal",
                                              strict=False)  # fmt: skip
        self.scale_image = check_positive(scale_image, name="scale_image")
        self.scale_text = check_positive(scale_text, name="scale_text")
        self.learn_scale = check_bool(learn_scale, name="learn_scale")
        self.margin = check_positive(margin, name="margin", strict=False)
        self.tau = check_positive(tau, name="tau")
        self.align_steps = check_scalar(
            align_steps, name="align_steps", kind=numbers.Integral, low=0
        )

    def _curvature_value(self):
        return self.curvature

    def _prepare(self, x0, y, text):
        self.alignment = None
        if not self.learn_scale or self.align_steps == 0:
            return
        k = self.curvature
        log_scales = torch.tensor([math.log(self.scale_image), math.log(self.scale_text)],
                                  dtype=x0.dtype, device=x0.device, requires_grad=True)  # fmt: skip
        opt = torch.optim.Adam([log_scales], lr=0.05)
        records = []
        for step in range(1, self.align_steps + 1):
            a_img, a_txt = log_scales.exp()
            leaves = L.expmap0(a_img * x0, k)
            roots = L.expmap0(a_txt * text, k)
            d = L.dist(leaves[:, None], roots[None], k)
            hinge = F.relu(a_txt - a_img + self.margin)
            loss = F.cross_entropy(-d / self.tau, y) + self.lam_centripetal * hinge
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                # Radii beyond 10/√K put cosh past float32's comfortable range.
                log_scales.clamp_(max=math.log(10 / math.sqrt(k)))
            records.append({"step": step, "loss": float(loss.detach()),
                            "hinge": float(hinge.detach())})  # fmt: skip
        self.scale_image, self.scale_text = (float(s) for s in log_scales.detach().exp())
        self.alignment = TrainingResult.from_records(records, method="HFM centripetal alignment")

    def _lift_images(self, x):
        return L.expmap0(self.scale_image * x, self.curvature)

    def _roots(self):
        return L.expmap0(self.scale_text * self.text_feats, self.curvature)

    def _net_input(self, z):
        return L.logmap0(z, self.curvature)

    def _tangent(self, z, v_space):
        """Spatial velocity completed by the time coordinate that makes it tangent at ``z``."""
        time_part = (z[..., 1:] * v_space).sum(-1, keepdim=True) / z[..., :1]
        return torch.cat([time_part, v_space], dim=-1)

    def _velocity(self, z, t):
        return self._tangent(z, self.net(self._net_input(z), t))

    def _losses(self, x0, y, t, gen):
        k = self.curvature
        z0 = self._lift_images(x0)
        roots = self._roots()
        z1 = roots[y]
        u0 = L.logmap(z0, z1, k)
        zt = L.project(L.expmap(z0, t * u0, k), k)
        ut = L.transport(z0, zt, u0, k)
        v = self._velocity(zt, t)
        diff = v - ut
        terms = {"flow": L.inner(diff, diff).clamp_min(0).mean()}
        if self.lam_path > 0:
            ahead = L.project(L.expmap(zt, (1 - t) * v, k), k)
            logits = self._scores(ahead, roots)
            terms["path"] = self.lam_path * F.cross_entropy(logits, y)
        return terms

    def _euler(self, z, v, h):
        return L.project(L.expmap(z, h * v, self.curvature), self.curvature)

    def _root_distances(self, z, roots):
        return L.dist(z[:, None], roots[None], self.curvature)

    def _scores(self, z, roots):
        return -self._root_distances(z, roots) / self.tau

    def _radius(self, z):
        return L.dist0(z, self.curvature)
