"""Loss functions of mlcore, one function each (thin modules in :mod:`mlcore.losses`).

Every function takes ``reduction="mean"|"sum"|"none"`` like ``torch.nn.functional`` and
follows its input's device and dtype.
"""

from __future__ import annotations

import numbers

import torch

from mlcore._checks import check_finite, check_tensor, check_token_ids
from statcore.validation import check_option, check_scalar

REDUCTIONS = ("mean", "sum", "none")


def _reduce(values: torch.Tensor, reduction: str, *, name: str) -> torch.Tensor:
    check_option(reduction, name="reduction", options=REDUCTIONS)
    if reduction == "mean":
        # torch's mean of nothing is NaN; an empty batch is a caller's slip, not a loss of NaN
        if values.numel() == 0:
            raise ValueError(
                f"`{name}` has an empty batch: reduction='mean' is undefined over no rows"
            )
        return values.mean()
    if reduction == "sum":
        return values.sum()
    return values


def softmax_entropy(
    logits: torch.Tensor, *, dim: int = -1, reduction: str = "mean"
) -> torch.Tensor:
    r"""Shannon entropy of ``softmax(logits)`` along ``dim``, in nats.

    :math:`H(p) = -\sum_c p_c \log p_c` with :math:`p = \mathrm{softmax}(z)`, computed from
    ``log_softmax`` so that it stays finite for saturated logits. This is Tent's test-time
    objective and CONGA's confidence measure.

    Parameters
    ----------
    logits : Tensor
        Unnormalised scores; ``dim`` indexes the classes.
    dim : int
        The class dimension.
    reduction : {"mean", "sum", "none"}
        ``"none"`` keeps one entropy per row (the shape of ``logits`` without ``dim``).

    Returns
    -------
    Tensor
        NaN where a row of ``logits`` holds NaN (propagated, as torch's losses do).

    Raises
    ------
    TypeError
        When ``logits`` is not a floating-point tensor.
    ValueError
        For a ``dim`` outside the tensor, or an empty batch with ``reduction="mean"``.

    References
    ----------
    Wang et al. (2021), Tent's objective; full reference in :class:`mlcore.tta.Tent`.

    Examples
    --------
    >>> float(softmax_entropy(torch.zeros(1, 4)))  # uniform over 4 classes: log 4
    1.3862943649291992
    """
    check_tensor(logits, name="logits", kind="floating")
    if logits.ndim == 0:
        raise ValueError("`logits` must have a class dimension; got a 0-d tensor")
    dim = check_scalar(
        dim, name="dim", kind=numbers.Integral, low=-logits.ndim, high=logits.ndim - 1
    )
    log_p = torch.log_softmax(logits, dim=dim)
    entropy = -(log_p.exp() * log_p).sum(dim=dim)
    return _reduce(entropy, reduction, name="logits")


def masked_diffusion_loss(
    logits: torch.Tensor,
    x0: torch.Tensor,
    masked: torch.Tensor,
    t: torch.Tensor,
    *,
    reduction: str = "mean",
) -> torch.Tensor:
    r"""The continuous-time masked-diffusion ELBO (MDLM's SUBS objective, log-linear schedule).

    With :math:`\alpha_t = 1 - t` the negative ELBO of a sequence of length ``L`` is
    :math:`\frac{1}{t}\sum_{i\ \mathrm{masked}} -\log p_\theta(x_{0,i} \mid x_t)`
    (:math:`-\alpha'_t / (1 - \alpha_t) = 1/t`); it is reported per token (divided by ``L``).

    Parameters
    ----------
    logits : Tensor (batch, length, vocab)
        The denoiser's scores for the clean tokens at every position.
    x0 : Tensor (batch, length)
        Clean token ids.
    masked : Tensor of bool (batch, length)
        Which positions of :math:`x_t` are masked (only they contribute).
    t : Tensor (batch,)
        Diffusion times in (0, 1] (the 1/t weight is infinite at 0, and the bound has no
        meaning outside the diffusion's time interval).
    reduction : {"mean", "sum", "none"}
        Over sequences; ``"none"`` gives one per-token bound per sequence.

    Raises
    ------
    TypeError
        For non-floating ``logits`` or ``t``, non-integer ``x0`` or non-boolean ``masked``.
    ValueError
        For mismatched shapes, ids of ``x0`` outside the vocabulary, times outside (0, 1], or
        an empty batch with ``reduction="mean"``.

    References
    ----------
    Sahoo, S. S. et al. (2024). Simple and effective masked diffusion language models.
    *NeurIPS 2024*.
    """
    check_tensor(logits, name="logits", dims=("batch", "length", "vocab"), kind="floating")
    batch, length, vocab = logits.shape
    sizes = {"batch": batch, "length": length}
    check_tensor(x0, name="x0", dims=("batch", "length"), sizes=sizes)
    check_token_ids(x0, name="x0", vocab=vocab)
    check_tensor(masked, name="masked", dims=("batch", "length"), sizes=sizes)
    if masked.dtype != torch.bool:
        raise TypeError(f"`masked` must be a boolean tensor; got dtype {masked.dtype}")
    check_tensor(t, name="t", dims=("batch",), sizes=sizes, kind="floating")
    check_times(t, name="t")
    nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), x0, reduction="none")
    per_sequence = (nll * masked.to(nll.dtype)).sum(1) / t.to(nll.dtype) / x0.shape[1]
    return _reduce(per_sequence, reduction, name="logits")


def check_times(t: torch.Tensor, *, name: str) -> torch.Tensor:
    """Diffusion times, each in (0, 1] (NaN is outside)."""
    inside = (t > 0) & (t <= 1)
    if not bool(inside.all()):
        check_finite(t, name=name)
        raise ValueError(
            f"`{name}` must lie in (0, 1]; got values from {float(t.min()):g} to {float(t.max()):g}"
        )
    return t
