"""One-shot pruning baselines for linear layers (SparseGPT, Wanda) and plain magnitude pruning."""

from __future__ import annotations

import torch
from torch import nn

from mlcore._checks import check_finite, check_tensor
from mlcore._device import as_numpy
from mlcore.pruning._masks import (
    check_nm,
    check_sparsity,
    lowest_mask,
    nm_mask,
    row_lowest_mask,
    structure_name,
)
from mlcore.pruning.results import PruningResult
from mlcore.pruning.sparsessm import apply_ssm_mask
from statcore.validation import check_positive, check_positive_int


def _check_linear(layer):
    if not isinstance(layer, nn.Linear):
        raise TypeError(f"`layer` must be a torch.nn.Linear; got {type(layer).__name__}")
    # a NaN weight has no rank among the others: topk would keep it, the OBS update spreads it
    check_finite(layer.weight.detach(), name="layer.weight")


def _flat_inputs(layer, inputs):
    """The calibration inputs as float64 rows; empty or non-finite ones give no statistics."""
    check_tensor(inputs, name="inputs", kind="floating", nonempty=True, finite=True)
    if inputs.ndim < 2:
        raise ValueError(
            "`inputs` must be a tensor (..., in_features) of the layer's calibration inputs; "
            f"got {getattr(inputs, 'shape', type(inputs).__name__)}"
        )
    if inputs.shape[-1] != layer.in_features:
        raise ValueError(
            f"`inputs` must end in in_features={layer.in_features}; got shape {tuple(inputs.shape)}"
        )
    return inputs.detach().reshape(-1, layer.in_features).to(layer.weight.device, torch.float64)


def _mask_result(method, keep, scores, sparsity, nm, **fields) -> PruningResult:
    """The record of a pass that kept ``keep``, for ``sparsity`` or the ``nm`` pattern."""
    return PruningResult(
        method=method,
        mask=as_numpy(keep),
        scores=as_numpy(scores),
        target_sparsity=nm[0] / nm[1] if nm else sparsity,
        structure=structure_name(nm),
        **fields,
    )


@torch.no_grad()
def sparsegpt_prune_linear(
    layer, inputs, sparsity: float = 0.5, nm=None, *, blocksize: int = 128, percdamp: float = 0.01
) -> PruningResult:
    r"""SparseGPT: prune a linear layer in one shot with optimal-brain-surgeon weight updates.

    With the layer-wise Hessian :math:`H = 2 X^\top X / n` (damped by ``percdamp`` times its
    mean diagonal), columns are processed left to right in blocks. In each block the entries
    with the lowest OBS saliency :math:`w^2 / [H^{-1}]_{jj}^2` (from the upper Cholesky
    factor of :math:`H^{-1}`) are removed, ``round(sparsity * rows * block)`` of them (or
    ``n`` of every ``m`` with ``nm``), and the error of each removed column is compensated on
    the columns still to come. The layer's weight is modified in place.

    Parameters
    ----------
    layer : nn.Linear
    inputs : Tensor (..., in_features)
        Calibration inputs of the layer.
    sparsity : float in [0, 1)
    nm : (n, m), optional
        Semi-structured pattern: ``n`` of every ``m`` consecutive inputs of a row are pruned.
    blocksize : int
        Columns per lazy-update block (the selection is exact per block).
    percdamp : float
        Dampening, as a fraction of the mean Hessian diagonal.

    Returns
    -------
    PruningResult

    References
    ----------
    Frantar, E. and Alistarh, D. (2023). SparseGPT: massive language models can be accurately
    pruned in one-shot. *ICML 2023*.
    """
    _check_linear(layer)
    sparsity = check_sparsity(sparsity)
    blocksize = check_positive_int(blocksize, name="blocksize")
    percdamp = check_positive(percdamp, name="percdamp", strict=False)
    rows, cols = layer.weight.shape
    nm = None if nm is None else check_nm(nm, name="nm", width=cols)
    x = _flat_inputs(layer, inputs)
    W = layer.weight.detach().to(torch.float64).clone()
    H = 2.0 * x.T @ x / x.shape[0]
    dead = torch.diag(H) == 0
    H[dead, dead] = 1.0
    W[:, dead] = 0.0
    H += percdamp * torch.diag(H).mean() * torch.eye(cols, dtype=H.dtype, device=H.device)
    Hinv = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(H)), upper=True)
    keep = torch.ones_like(W, dtype=torch.bool)
    scores = torch.empty_like(W)
    for i1 in range(0, cols, blocksize):
        i2 = min(i1 + blocksize, cols)
        W1, Hinv1 = W[:, i1:i2].clone(), Hinv[i1:i2, i1:i2]
        err = torch.zeros_like(W1)
        saliency = W1**2 / torch.diag(Hinv1).unsqueeze(0) ** 2
        scores[:, i1:i2] = saliency
        keep1 = nm_mask(saliency, *nm) if nm is not None else lowest_mask(saliency, sparsity)
        for i in range(i2 - i1):
            w, d = W1[:, i], Hinv1[i, i]
            q = torch.where(keep1[:, i], w, torch.zeros_like(w))
            e = (w - q) / d
            W1[:, i:] -= e.unsqueeze(1) * Hinv1[i, i:].unsqueeze(0)
            W1[:, i] = q
            err[:, i] = e
        W[:, i1:i2] = W1
        keep[:, i1:i2] = keep1
        W[:, i2:] -= err @ Hinv[i1:i2, i2:]
    W[~keep] = 0.0
    layer.weight.copy_(W.to(layer.weight.dtype))
    return _mask_result("SparseGPT", keep, scores, sparsity, nm, nobs=x.shape[0])


@torch.no_grad()
def wanda_prune_linear(layer, inputs, sparsity: float = 0.5, nm=None) -> PruningResult:
    r"""Wanda: prune by weight magnitude times input-activation norm, per output row.

    The score of :math:`W_{ij}` is :math:`|W_{ij}|\,\lVert X_j\rVert_2`; each output row
    loses its ``round(sparsity * in_features)`` lowest (or ``n`` of every ``m``); no weight
    update. In place.

    References
    ----------
    Sun, M., Liu, Z., Bair, A. and Kolter, J. Z. (2024). A simple and effective pruning
    approach for large language models. *ICLR 2024*.
    """
    _check_linear(layer)
    sparsity = check_sparsity(sparsity)
    nm = None if nm is None else check_nm(nm, name="nm", width=layer.in_features)
    x = _flat_inputs(layer, inputs)
    scores = layer.weight.detach().double().abs() * x.norm(dim=0).unsqueeze(0)
    keep = nm_mask(scores, *nm) if nm is not None else row_lowest_mask(scores, sparsity)
    layer.weight.masked_fill_(~keep, 0.0)
    return _mask_result("Wanda", keep, scores, sparsity, nm, nobs=x.shape[0])


@torch.no_grad()
def magnitude_prune(target, sparsity: float = 0.5, nm=None) -> PruningResult:
    """Magnitude pruning: remove the entries of smallest absolute value, in place.

    Parameters
    ----------
    target : nn.Linear, Mamba mixer or nn.Parameter
        A linear layer (its ``weight``), a Mamba mixer (its ``A_log``, with the state-cutting
        semantics of :func:`~mlcore.pruning.apply_ssm_mask`), or a 2-D parameter.
    sparsity : float in [0, 1)
        Exactly ``round(sparsity * numel)`` entries go (or ``n`` of every ``m`` per row).
    nm : (n, m), optional

    References
    ----------
    Han, S., Pool, J., Tran, J. and Dally, W. (2015). Learning both weights and connections
    for efficient neural networks. *NeurIPS 2015*.
    """
    sparsity = check_sparsity(sparsity)
    if isinstance(target, nn.Linear):
        weight, name = target.weight, "weight"
    elif isinstance(target, nn.Module) and isinstance(getattr(target, "A_log", None), torch.Tensor):
        weight, name = target.A_log, "A_log"
    elif isinstance(target, torch.Tensor):
        weight, name = target, "weight"
    else:
        raise TypeError(
            "`target` must be an nn.Linear, a Mamba mixer with `A_log` or a tensor; got "
            f"{type(target).__name__}"
        )
    if weight.ndim != 2:
        raise ValueError(f"magnitude_prune needs a 2-D weight; got shape {tuple(weight.shape)}")
    shown = "target" if weight is target else f"target.{name}"
    check_tensor(weight.detach(), name=shown, kind="real", nonempty=True, finite=True)
    nm = None if nm is None else check_nm(nm, name="nm", width=weight.shape[1])
    scores = weight.detach().double().abs()
    keep = nm_mask(scores, *nm) if nm is not None else lowest_mask(scores, sparsity)
    if name == "A_log":
        apply_ssm_mask(target, keep)
    else:
        weight.masked_fill_(~keep, 0.0)
    return _mask_result("Magnitude", keep, scores, sparsity, nm, parameter=name)
