"""A synthetic few-shot task: Gaussian class features and noisy "text" prototypes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from statcore.validation import check_positive, check_positive_int, check_random_state, describe


@dataclass(frozen=True)
class FewShotTask:
    """Features of a few-shot task, as an encoder would give them.

    Attributes
    ----------
    features : Tensor (n, dim)
        Unit-norm final embeddings.
    layer_features : list of Tensors (n, width_l)
        Per-layer features (other noisy views of the class).
    labels : ndarray (n,)
    text_weights : Tensor (n_classes, dim)
        Unit-norm "text" prototypes: the true class directions plus noise.
    logit_scale : float
    classnames : list of str
    means : ndarray (n_classes, dim)
        The true (unit) class directions.
    """

    features: torch.Tensor
    layer_features: list
    labels: np.ndarray
    text_weights: torch.Tensor
    logit_scale: float
    classnames: list
    means: np.ndarray


def simulate_fewshot(
    n_classes: int = 10,
    n_per_class: int = 60,
    *,
    dim: int = 32,
    within: float = 1.5,
    text_noise: float = 1.5,
    layer_dims: Sequence[int] = (24, 24),
    layer_noise: float = 2.0,
    logit_scale: float = 20.0,
    random_state=None,
) -> FewShotTask:
    """Draw a few-shot task whose prior (text) and likelihood (shots) carry separate evidence.

    Class directions ``μ_c`` are uniform on the unit sphere of ``R^dim``. An image of class
    ``y`` has embedding ``f = normalise(μ_y + within · ε)`` with ``ε ~ N(0, I/dim)``, and layer
    features ``h_l = A_l μ_y + layer_noise · ε_l`` (``A_l`` a fixed random map to ``R^width_l`` with
    N(0, 1/width_l) entries,
    ``ε_l ~ N(0, I/width_l)``) independent of ``ε`` given the class. The zero-shot head's text
    prototypes are ``w_c = normalise(μ_c + text_noise · η_c)``, ``η_c ~ N(0, I/dim)``: a prior
    that is informative but biased, as CLIP's is on a downstream domain.

    Parameters
    ----------
    n_classes, n_per_class : int
    dim : int
        Embedding width.
    within : float
        Within-class spread of the embeddings (relative to the unit class separation).
    text_noise : float
        Error of the text prototypes.
    layer_dims : sequence of int
        Widths of the per-layer features (empty: none).
    layer_noise : float
        Noise of the per-layer features.
    logit_scale : float
        The zero-shot head's scale, stored on the task.
    random_state : None, int or numpy Generator

    Returns
    -------
    FewShotTask

    Notes
    -----
    A synthetic check of BOIF's fusion: Gaussian class features around unit class means, text
    prototypes = true means + noise (the zero-shot prior), with layer features added so that
    the multi-level adapter has information to find.

    References
    ----------
    BOIF: Bayesian-inspired optimal integration for few-shot classification (ICML 2026;
    abstract only).
    """
    n_classes = check_positive_int(n_classes, name="n_classes", minimum=2)
    n_per_class = check_positive_int(n_per_class, name="n_per_class")
    dim = check_positive_int(dim, name="dim", minimum=2)
    within = check_positive(within, name="within", strict=False)
    text_noise = check_positive(text_noise, name="text_noise", strict=False)
    layer_noise = check_positive(layer_noise, name="layer_noise", strict=False)
    logit_scale = check_positive(logit_scale, name="logit_scale")
    if isinstance(layer_dims, int) or not isinstance(layer_dims, Sequence):
        raise TypeError(f"`layer_dims` must be a sequence of widths; got {describe(layer_dims)}")
    layer_dims = [check_positive_int(w, name=f"layer_dims[{i}]") for i, w in enumerate(layer_dims)]
    rng = check_random_state(random_state)

    def unit(a):
        return a / np.linalg.norm(a, axis=-1, keepdims=True)

    means = unit(rng.standard_normal((n_classes, dim)))
    labels = np.repeat(np.arange(n_classes), n_per_class)
    n = labels.size
    features = unit(means[labels] + within * rng.standard_normal((n, dim)) / np.sqrt(dim))
    text = unit(means + text_noise * rng.standard_normal((n_classes, dim)) / np.sqrt(dim))
    layers = []
    for width in layer_dims:
        mixing = rng.standard_normal((width, dim)) / np.sqrt(width)
        noise = rng.standard_normal((n, width)) / np.sqrt(width)
        layers.append(means[labels] @ mixing.T + layer_noise * noise)
    as_tensor = lambda a: torch.as_tensor(a, dtype=torch.float32)  # noqa: E731
    return FewShotTask(
        features=as_tensor(features),
        layer_features=[as_tensor(h) for h in layers],
        labels=labels,
        text_weights=as_tensor(text),
        logit_scale=logit_scale,
        classnames=[f"class {c}" for c in range(n_classes)],
        means=means,
    )
