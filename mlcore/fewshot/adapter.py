"""BOIF's multi-level feature adapter: intermediate-layer features added to the final one."""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from mlcore._checks import check_tensor
from mlcore._device import torch_generator
from statcore.validation import check_positive_int, check_scalar, describe


class MultiLevelAdapter(nn.Module):
    """Enrich a final image embedding with pooled features of intermediate layers.

    ``f̃ = normalise(f + γ · Σ_l softmax(a)_l · P_l LN(h_l))``, where ``f`` is the encoder's
    final (L2-normalised) embedding, ``h_l`` the pooled feature of layer ``l`` (as returned by
    ``encoder.image_layer_features`` or collected with
    :func:`mlcore.encoders.collect_multilevel`), ``LN`` a layer normalisation without learned
    affine parameters, ``P_l`` a linear projection to the embedding width, ``a`` the layer
    logits and ``γ`` a learned gate.

    Parameters
    ----------
    in_dims : sequence of int
        Widths of the layer features, in the order they are passed to :meth:`forward`.
    out_dim : int
        The embedding width (the encoder's ``embed_dim``).
    gamma_init : float
        Initial gate ``γ``. With ``γ = 0`` the adapter returns ``f`` unchanged (up to
        renormalising an already unit-norm vector), so training starts from the frozen encoder.
    random_state : None, int, numpy Generator or CPU torch.Generator
        Seeds the projections' initialisation (drawn on the CPU through
        ``torch_generator``, so it does not depend on the device; None:
        fresh entropy). Torch's global generator is neither read nor advanced.

    Notes
    -----
    Fidelity: reconstruction. The BOIF abstract names "a multi-level feature adapter to
    enrich visual representations"; its equations were not read. The gated, softmax-weighted
    sum of projected layer features is this package's design, with ``γ`` initialised
    at zero (as in zero-initialised residual adapters) so that an untrained adapter is a no-op.
    The output is renormalised because the caches compare unit vectors.

    References
    ----------
    BOIF: Bayesian-inspired optimal integration for few-shot classification (ICML 2026;
    abstract only).
    """

    def __init__(
        self,
        in_dims: Sequence[int],
        out_dim: int,
        gamma_init: float = 0.0,
        *,
        random_state=None,
    ):
        super().__init__()
        if isinstance(in_dims, int | str) or not isinstance(in_dims, Sequence) or not in_dims:
            raise TypeError(
                f"`in_dims` must be a non-empty sequence of layer widths; got {describe(in_dims)}"
            )
        self.in_dims = tuple(
            check_positive_int(d, name=f"in_dims[{i}]") for i, d in enumerate(in_dims)
        )
        self.out_dim = check_positive_int(out_dim, name="out_dim")
        gamma_init = check_scalar(gamma_init, name="gamma_init")
        # allocated without nn.Linear's own draw from torch's global generator: the values come
        # from `random_state` in reset_parameters
        self.projections = nn.ModuleList(
            nn.utils.skip_init(nn.Linear, d, self.out_dim) for d in self.in_dims
        )
        self.layer_logits = nn.Parameter(torch.zeros(len(self.in_dims)))
        self.gamma = nn.Parameter(torch.tensor(float(gamma_init)))
        self.reset_parameters(random_state)

    @torch.no_grad()
    def reset_parameters(self, random_state=None) -> None:
        """Draw the projections afresh (``nn.Linear``'s default ranges) from ``random_state``;
        uniform layer weights. ``γ`` keeps its value."""
        g = torch_generator(random_state, device="cpu")
        for proj in self.projections:
            bound = proj.in_features**-0.5
            for param in (proj.weight, proj.bias):
                draw = torch.rand(param.shape, generator=g, dtype=torch.float64)
                param.copy_((2 * draw - 1) * bound)
        self.layer_logits.zero_()

    @property
    def layer_weights(self) -> torch.Tensor:
        """``softmax(a)``: the weight of each layer in the sum."""
        return torch.softmax(self.layer_logits, dim=0)

    def forward(self, features: torch.Tensor, layer_features: Sequence[torch.Tensor]):
        """The adapted, unit-norm embedding ``f̃`` (n, out_dim)."""
        check_tensor(features, name="features", dims=("n", "dim"), sizes={"dim": self.out_dim})
        if isinstance(layer_features, torch.Tensor) or not isinstance(layer_features, Sequence):
            raise TypeError(
                "`layer_features` must be a list of (n, width) tensors, one per layer; got "
                f"{describe(layer_features)}"
            )
        if len(layer_features) != len(self.in_dims):
            raise ValueError(
                f"`layer_features` must hold {len(self.in_dims)} tensors (one per `in_dims` "
                f"entry); got {len(layer_features)}"
            )
        n = features.shape[0]
        weights = self.layer_weights
        mixed = torch.zeros_like(features)
        for i, (h, proj) in enumerate(zip(layer_features, self.projections, strict=True)):
            check_tensor(
                h,
                name=f"layer_features[{i}]",
                dims=("n", "width"),
                sizes={"n": n, "width": self.in_dims[i]},
            )
            h = F.layer_norm(h.to(proj.weight.dtype), h.shape[-1:])
            mixed = mixed + weights[i] * proj(h).to(features.dtype)
        return F.normalize(features + self.gamma.to(features.dtype) * mixed, dim=-1)

    def extra_repr(self) -> str:
        return f"in_dims={self.in_dims}, out_dim={self.out_dim}"
