"""Loss functions of mlcore, one function each (thin modules in :mod:`mlcore.losses`).

Every function takes ``reduction="mean"|"sum"|"none"`` like ``torch.nn.functional`` and
follows its input's device and dtype.
"""

from __future__ import annotations

import torch

from statcore._validation import check_option

REDUCTIONS = ("mean", "sum", "none")


def _reduce(values: torch.Tensor, reduction: str) -> torch.Tensor:
    check_option(reduction, name="reduction", options=REDUCTIONS)
    if reduction == "mean":
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

    References
    ----------
    Wang, D., Shelhamer, E., Liu, S., Olshausen, B. and Darrell, T. (2021). Tent: fully
    test-time adaptation by entropy minimization. *ICLR 2021*.

    Examples
    --------
    >>> float(softmax_entropy(torch.zeros(1, 4)))  # uniform over 4 classes: log 4
    1.3862943649291992
    """
    if not isinstance(logits, torch.Tensor):
        raise TypeError(f"`logits` must be a torch.Tensor; got {type(logits).__name__}")
    if logits.ndim == 0:
        raise ValueError("`logits` must have a class dimension; got a 0-d tensor")
    log_p = torch.log_softmax(logits, dim=dim)
    entropy = -(log_p.exp() * log_p).sum(dim=dim)
    return _reduce(entropy, reduction)


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
        Diffusion times in (0, 1].
    reduction : {"mean", "sum", "none"}
        Over sequences; ``"none"`` gives one per-token bound per sequence.

    References
    ----------
    Sahoo, S. S. et al. (2024). Simple and effective masked diffusion language models.
    *NeurIPS 2024*.
    """
    if logits.ndim != 3 or x0.shape != logits.shape[:2] or masked.shape != x0.shape:
        raise ValueError(
            "`logits` must be (batch, length, vocab) with `x0` and `masked` (batch, length); got "
            f"{tuple(logits.shape)}, {tuple(x0.shape)} and {tuple(masked.shape)}"
        )
    if t.shape != x0.shape[:1]:
        raise ValueError(
            f"`t` must have shape (batch,) = {tuple(x0.shape[:1])}; got {tuple(t.shape)}"
        )
    nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), x0, reduction="none")
    per_sequence = (nll * masked.to(nll.dtype)).sum(1) / t.to(nll.dtype) / x0.shape[1]
    return _reduce(per_sequence, reduction)
