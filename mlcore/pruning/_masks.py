"""Masks from scores: the lowest-scored entries go, by count, row, column or N:M group."""

from __future__ import annotations

import numbers

import torch

from statcore.validation import check_positive_int, check_scalar


def check_sparsity(sparsity) -> float:
    return check_scalar(sparsity, name="sparsity", low=0.0, high=1.0, high_inclusive=False)


def check_nm(nm, *, name: str, width: int) -> tuple[int, int]:
    """An ``(n, m)`` pattern: ``n`` of every ``m`` consecutive entries of a row are pruned."""
    if (
        not isinstance(nm, tuple | list)
        or len(nm) != 2
        or not all(isinstance(v, numbers.Integral) for v in nm)
    ):
        raise TypeError(f"`{name}` must be a pair (n, m) of integers; got {nm!r}")
    n = check_positive_int(nm[0], name=f"{name}[0]")
    m = check_positive_int(nm[1], name=f"{name}[1]")
    if n >= m:
        raise ValueError(f"`{name}` = ({n}, {m}) must prune fewer than m of every m entries")
    if width % m:
        raise ValueError(f"`{name}` groups of m={m} must tile the row length {width}")
    return n, m


def lowest_mask(scores: torch.Tensor, sparsity: float) -> torch.Tensor:
    """Keep-mask removing exactly ``round(sparsity * numel)`` lowest scores."""
    k = int(round(sparsity * scores.numel()))
    keep = torch.ones(scores.numel(), dtype=torch.bool, device=scores.device)
    if k:
        keep[scores.reshape(-1).topk(k, largest=False).indices] = False
    return keep.view_as(scores)


def row_lowest_mask(scores: torch.Tensor, sparsity: float) -> torch.Tensor:
    """Keep-mask removing ``round(sparsity * columns)`` lowest scores in every row."""
    k = int(round(sparsity * scores.shape[1]))
    keep = torch.ones_like(scores, dtype=torch.bool)
    if k:
        keep.scatter_(1, scores.topk(k, dim=1, largest=False).indices, False)
    return keep


def nm_mask(scores: torch.Tensor, n: int, m: int) -> torch.Tensor:
    """Keep-mask removing the ``n`` lowest of every ``m`` consecutive entries of each row."""
    rows, cols = scores.shape
    groups = scores.reshape(rows, cols // m, m)
    keep = torch.ones_like(groups, dtype=torch.bool)
    keep.scatter_(2, groups.topk(n, dim=2, largest=False).indices, False)
    return keep.reshape(rows, cols)


def structure_name(structure) -> str:
    if structure is None:
        return "unstructured"
    if isinstance(structure, str):
        return structure
    return f"{structure[0]}:{structure[1]}"
