"""TIES-merging of three experts of a 2.4-million-parameter state dict: mlcore vs plain numpy."""

import numpy as np
import torch

from mlcore.merging import merge

gen = torch.Generator().manual_seed(0)
SHAPES = {"embed": (4096, 256), "w1": (256, 1024), "w2": (1024, 1024), "b": (1024,)}
base = {k: torch.randn(s, generator=gen) for k, s in SHAPES.items()}
experts = [
    {k: v + 0.01 * torch.randn(v.shape, generator=gen) for k, v in base.items()} for _ in range(3)
]
base_np = {k: v.numpy() for k, v in base.items()}
experts_np = [{k: v.numpy() for k, v in e.items()} for e in experts]


def _numpy_ties(density=0.2):
    """Yadav et al. (2023) vectorised in numpy, float64: trim over the whole task vector,
    elect signs by mass, disjoint mean."""
    keys = list(SHAPES)
    tau = np.stack(
        [
            np.concatenate([e[k].astype(np.float64).ravel() - base_np[k].ravel() for k in keys])
            for e in experts_np
        ]
    )
    n = tau.shape[1]
    k = int(density * n)
    mag = np.abs(tau)
    threshold = np.partition(mag, n - k, axis=1)[:, n - k : n - k + 1]
    trimmed = np.where(mag >= threshold, tau, 0.0)
    elected = np.sign(trimmed.sum(axis=0))
    elected[elected == 0] = 1.0 if elected.sum() >= 0 else -1.0
    agree = (np.sign(trimmed) == elected) & (trimmed != 0)
    merged = np.where(agree, trimmed, 0.0).sum(axis=0) / np.maximum(agree.sum(axis=0), 1)
    out, start = {}, 0
    for key in keys:
        size = base_np[key].size
        out[key] = (base_np[key] + merged[start : start + size].reshape(SHAPES[key])).astype(
            np.float32
        )
        start += size
    return out


CASES = [
    {
        "name": "ties_merge_3_experts_2.4M_params",
        "ours": lambda: merge(base, experts, "ties", density=0.2),
        "anchor": _numpy_ties,
        "anchor_name": f"numpy {np.__version__} (direct TIES)",
        "repeat": 3,
    },
]
