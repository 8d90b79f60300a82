"""A synthetic entangled few-shot set: class prototypes on the sphere, image features shifted by
a shared modality gap and blurred by anisotropic noise whose classes overlap."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from statcore.validation import check_positive, check_positive_int, check_random_state

__all__ = ["EntangledTask", "entangled_features"]


@dataclass(frozen=True)
class EntangledTask:
    """Features of a synthetic few-shot task.

    Attributes
    ----------
    support_feats, query_feats : Tensor (n, dim)
        Unit-norm image features of the few-shot support set and of the queries.
    support_labels, query_labels : ndarray (n,)
    text_feats : Tensor (n_classes, dim)
        Unit-norm "text" features: the class prototypes.
    gap : ndarray (dim,)
        The shared modality-gap offset.
    """

    support_feats: torch.Tensor
    support_labels: np.ndarray
    query_feats: torch.Tensor
    query_labels: np.ndarray
    text_feats: torch.Tensor
    gap: np.ndarray


def entangled_features(
    n_classes: int = 8,
    dim: int = 16,
    *,
    n_shot: int = 16,
    n_query: int = 50,
    overlap: float = 1.0,
    gap: float = 1.0,
    anisotropy: float = 4.0,
    dtype=torch.float32,
    random_state=None,
) -> EntangledTask:
    """Draw the entangled synthetic set of the HFM notes.

    Prototypes ``μ_c`` are uniform on the unit sphere of ``R^dim`` and serve as text features.
    An image of class ``y`` has feature ``normalise(μ_y + g + overlap · R D ξ)`` with ``g`` a
    shared offset of norm ``gap`` in a random direction (the modality gap), ``ξ ~ N(0, I/dim)``,
    ``R`` a random rotation and ``D`` a diagonal whose entries fall geometrically from
    ``√anisotropy`` to ``1/√anisotropy`` (noise stretched along a few shared directions, so the
    classes overlap more along them).

    Parameters
    ----------
    n_classes, dim : int
    n_shot, n_query : int
        Support and query images per class.
    overlap : float
        Noise scale; larger entangles the classes more.
    gap : float
        Norm of the modality-gap offset.
    anisotropy : float
        Ratio of the largest to the smallest noise variance (1: isotropic).
    dtype : torch dtype
    random_state : None, int or numpy Generator

    Returns
    -------
    EntangledTask

    Notes
    -----
    Fidelity: reconstruction (a "difficult dataset" of this library's design: prototypes, a
    shared gap and overlapping anisotropic noise; the exact generator of Li et al. 2026 is
    unknown).
    """
    n_classes = check_positive_int(n_classes, name="n_classes", minimum=2)
    dim = check_positive_int(dim, name="dim", minimum=2)
    n_shot = check_positive_int(n_shot, name="n_shot")
    n_query = check_positive_int(n_query, name="n_query")
    overlap = check_positive(overlap, name="overlap", strict=False)
    gap = check_positive(gap, name="gap", strict=False)
    anisotropy = check_positive(anisotropy, name="anisotropy")
    if anisotropy < 1:
        raise ValueError(f"`anisotropy` must be >= 1; got {anisotropy}")
    rng = check_random_state(random_state)
    protos = rng.standard_normal((n_classes, dim))
    protos /= np.linalg.norm(protos, axis=1, keepdims=True)
    direction = rng.standard_normal(dim)
    offset = gap * direction / np.linalg.norm(direction)
    rotation, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
    scales = anisotropy ** np.linspace(0.5, -0.5, dim)
    mix = rotation * np.sqrt(scales)

    def draw(per_class):
        labels = np.repeat(np.arange(n_classes), per_class)
        noise = rng.standard_normal((len(labels), dim)) / np.sqrt(dim)
        feats = protos[labels] + offset + overlap * noise @ mix.T
        feats /= np.linalg.norm(feats, axis=1, keepdims=True)
        return torch.as_tensor(feats, dtype=dtype), labels

    support, support_labels = draw(n_shot)
    query, query_labels = draw(n_query)
    return EntangledTask(
        support_feats=support,
        support_labels=support_labels,
        query_feats=query,
        query_labels=query_labels,
        text_feats=torch.as_tensor(protos, dtype=dtype),
        gap=offset,
    )
