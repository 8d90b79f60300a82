"""Anchors of XTransfer's repair, the MMD of the layer-wise shift and the search's proxy.

Zhang et al. (2025), arXiv:2506.22726: the repair pulls each source layer's target activations
onto anchors in a PCA-reduced space. How the anchors are chosen, the MMD and the
separability proxy are this package's reconstruction, stated in each docstring.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from scipy.optimize import linear_sum_assignment

from mlcore._checks import check_tensor
from mlcore._device import as_numpy
from statcore.validation import as_class_labels, check_option, check_positive, check_positive_int

ANCHOR_MODES = ("source", "target")


@dataclass(frozen=True, eq=False)
class LayerAnchors:
    """The anchor space of one source layer: PCA of its source activations and one anchor per
    target class.

    ``components`` (k, C) are the top ``k = min(n_pca, C, m - 1)`` principal axes of the
    source reference's pooled activations (m, C); ``scale`` their total variance (so the
    anchor term is comparable across layers); ``anchors`` (n_classes, k).

    Fidelity: reconstruction. With ``mode="source"`` each target class is matched (Hungarian
    assignment on the distances between the spliced target class means and the source class
    means in the PCA space) to a distinct source class mean, its anchor: pulling the target
    onto anchors taken from the source is what lowers the layer-wise shift. When there are
    fewer source classes than target classes, or with ``mode="target"``, the anchors are the
    target class means in the source's PCA space.
    """

    name: str
    mean: torch.Tensor
    components: torch.Tensor
    scale: float
    anchors: torch.Tensor
    mode: str

    def project(self, acts: torch.Tensor) -> torch.Tensor:
        return (acts - self.mean) @ self.components.T

    def loss(self, acts: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """``mean_i ‖PCA_k(h(x_i)) - a_{y_i}‖² / scale``."""
        return ((self.project(acts) - self.anchors[y]) ** 2).sum(dim=1).mean() / self.scale


def fit_anchors(
    name: str,
    source_acts: torch.Tensor,
    source_labels: np.ndarray,
    target_acts: torch.Tensor,
    y: np.ndarray,
    n_classes: int,
    *,
    n_pca: int = 8,
    mode: str = "source",
) -> LayerAnchors:
    """The :class:`LayerAnchors` of one layer from pooled source and target activations.

    ``source_acts`` (m, d) and ``target_acts`` (n, d) are finite activations, ``source_labels``
    (m,) and ``y`` (n,) class indices; every target class ``0..n_classes-1`` needs a window.
    """
    mode = check_option(mode, name="mode", options=ANCHOR_MODES)
    n_classes = check_positive_int(n_classes, name="n_classes")
    n_pca = check_positive_int(n_pca, name="n_pca")
    check_tensor(
        source_acts, name="source_acts", dims=("m", "d"), kind="floating", finite=True,
        nonempty=True,
    )  # fmt: skip
    check_tensor(
        target_acts, name="target_acts", dims=("n", "d"), sizes={"d": source_acts.shape[1]},
        kind="floating", finite=True, nonempty=True, like=source_acts, like_name="source_acts",
    )  # fmt: skip
    source_labels = _labels(source_labels, "source_labels", source_acts.shape[0])
    y = _labels(y, "y", target_acts.shape[0])
    missing = sorted(set(range(n_classes)) - set(y.tolist()))
    if y.max() >= n_classes or missing:
        raise ValueError(
            f"`y` must hold every class 0..{n_classes - 1} (`n_classes`={n_classes}) and no "
            f"other; got classes {np.unique(y).tolist()}"
        )
    mean = source_acts.mean(dim=0)
    centred = source_acts - mean
    k = max(1, min(n_pca, source_acts.shape[1], source_acts.shape[0] - 1))
    _, svals, vt = torch.linalg.svd(centred, full_matrices=False)
    components = vt[:k]
    scale = float((svals[:k] ** 2).sum() / (source_acts.shape[0] - 1))
    z_t = (target_acts - mean) @ components.T
    t_means = torch.stack([z_t[torch.from_numpy(y == c)].mean(dim=0) for c in range(n_classes)])
    src_classes = np.unique(source_labels)
    if mode == "source" and src_classes.size >= n_classes:
        z_s = centred @ components.T
        s_means = torch.stack(
            [z_s[torch.from_numpy(source_labels == c)].mean(0) for c in src_classes]
        )
        _, cols = linear_sum_assignment(torch.cdist(t_means, s_means).numpy())
        anchors, used = s_means[torch.from_numpy(cols)], "source"
    else:
        anchors, used = t_means, "target"
    return LayerAnchors(name, mean, components, max(scale, 1e-12), anchors, used)


def _labels(labels, name: str, n: int) -> np.ndarray:
    """Class indices ``>= 0`` of length ``n`` (a tensor leaves torch here)."""
    if isinstance(labels, torch.Tensor):
        labels = as_numpy(labels, name=name)
    out = as_class_labels(labels, name=name, n=n)
    if out.min() < 0:
        raise ValueError(f"`{name}` must hold class indices >= 0; got {int(out.min())}")
    return out


def mmd2(a: torch.Tensor, b: torch.Tensor, bandwidth: float) -> float:
    """Squared MMD (biased V-statistic) with the Gaussian kernel ``exp(-‖x-y‖²/(2σ²))``."""
    bandwidth = check_positive(bandwidth, name="bandwidth")
    check_tensor(a, name="a", dims=("n", "d"), kind="floating", finite=True, nonempty=True)
    check_tensor(
        b, name="b", dims=("m", "d"), sizes={"d": a.shape[1]}, kind="floating", finite=True,
        nonempty=True, like=a, like_name="a",
    )  # fmt: skip

    def k(x, z):
        return torch.exp(-(torch.cdist(x, z) ** 2) / (2 * bandwidth**2)).mean()

    return float(k(a, a) + k(b, b) - 2 * k(a, b))


def median_distance(x: torch.Tensor) -> float:
    d = torch.cdist(x, x)
    return float(d[torch.triu(torch.ones_like(d, dtype=torch.bool), diagonal=1)].median())


def anchor_separability(features: torch.Tensor, y: np.ndarray) -> float:
    """The search's training-free proxy: leave-one-out accuracy of a ridge classifier on the
    standardised features (closed form through the hat matrix), plus a tenth of the mean
    leave-one-out margin (true class score minus the best other) to break ties.

    The ridge penalty is ``n`` (the trace of ``ZᵀZ / d`` for standardised ``Z``), so the
    proxy does not favour wide layers merely for their width.

    Fidelity: reconstruction. The paper scores candidates without training them (a
    NAS-inspired search); leave-one-out ridge on the few shots is our proxy.
    """
    check_tensor(
        features, name="features", dims=("n", "d"), kind="floating", finite=True, nonempty=True
    )
    y = _labels(y, "y", features.shape[0])
    z = ((features - features.mean(0)) / features.std(0).clamp_min(1e-6)).double()
    n = z.shape[0]
    yt = torch.from_numpy(y)
    onehot = F.one_hot(yt, int(y.max()) + 1).double()
    targets = onehot - onehot.mean(0)
    gram = z @ z.T
    hat = gram @ torch.linalg.solve(
        gram + n * torch.eye(n, dtype=z.dtype), torch.eye(n, dtype=z.dtype)
    )
    fitted = hat @ targets
    h = torch.diagonal(hat).clamp(max=1 - 1e-9)[:, None]
    loo = (fitted - h * targets) / (1 - h)
    true = loo[torch.arange(n), yt]
    other = loo.masked_fill(onehot.bool(), -math.inf).max(dim=1).values
    return float((true > other).double().mean() + 0.1 * (true - other).clamp(-1, 1).mean())


__all__ = [
    "ANCHOR_MODES",
    "LayerAnchors",
    "anchor_separability",
    "fit_anchors",
    "median_distance",
    "mmd2",
]
