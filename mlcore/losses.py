"""Thin ``nn.Module`` wrappers of the functions in :mod:`mlcore.functional`."""

from __future__ import annotations

import numbers

from torch import nn

from mlcore import functional as F
from statcore.validation import check_option, check_scalar


class EntropyLoss(nn.Module):
    """Mean (or summed) softmax entropy of the logits: Tent's objective.

    See :func:`mlcore.functional.softmax_entropy`.

    Parameters
    ----------
    dim : int
        The class dimension.
    reduction : {"mean", "sum", "none"}

    References
    ----------
    Wang, D., Shelhamer, E., Liu, S., Olshausen, B. and Darrell, T. (2021). Tent: fully
    test-time adaptation by entropy minimization. *ICLR 2021*.
    """

    def __init__(self, dim: int = -1, reduction: str = "mean"):
        super().__init__()
        # the range is checked against each input's dimensions in forward
        self.dim = check_scalar(dim, name="dim", kind=numbers.Integral)
        self.reduction = check_option(reduction, name="reduction", options=F.REDUCTIONS)

    def forward(self, logits):
        return F.softmax_entropy(logits, dim=self.dim, reduction=self.reduction)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, reduction={self.reduction!r}"


class MaskedDiffusionLoss(nn.Module):
    """Module form of :func:`mlcore.functional.masked_diffusion_loss` (MDLM / IMDM ELBO).

    ``forward(logits, x0, masked, t)``.

    References
    ----------
    Sahoo, S. S. et al. (2024). Simple and effective masked diffusion language models.
    *NeurIPS 2024*.
    """

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = check_option(reduction, name="reduction", options=F.REDUCTIONS)

    def forward(self, logits, x0, masked, t):
        return F.masked_diffusion_loss(logits, x0, masked, t, reduction=self.reduction)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"
