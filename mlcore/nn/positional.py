"""Rotary positional embeddings: plain RoPE and HIPE, its hippocampus-inspired multi-scale form."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from mlcore._checks import check_float_dtype, check_tensor
from statcore.validation import check_option, check_positive, check_positive_int, describe

DECAYS = ("gaussian", "exp", "power")
PAIRINGS = ("half", "interleaved")


def rope_frequencies(head_dim: int, theta: float = 1e4, *, device=None, dtype=None):
    r"""RoPE's angular frequencies :math:`\omega_d = \theta^{-2d/D}` for d from 0 to D/2 - 1.

    References
    ----------
    Su, J., Lu, Y., Pan, S., Murtadha, A., Wen, B. and Liu, Y. (2024). RoFormer: enhanced
    transformer with rotary position embedding. *Neurocomputing* 568.
    """
    head_dim = _check_head_dim(head_dim)
    theta = check_positive(theta, name="theta")
    dtype = check_float_dtype(dtype)
    exponents = torch.arange(0, head_dim, 2, device=device, dtype=torch.float64) / head_dim
    return (theta ** (-exponents)).to(dtype or torch.get_default_dtype())


def _check_head_dim(head_dim):
    head_dim = check_positive_int(head_dim, name="head_dim", minimum=2)
    if head_dim % 2:
        raise ValueError(f"`head_dim` must be even (rotations act on pairs); got {head_dim}")
    return head_dim


def _decay(x: torch.Tensor, decay: str) -> torch.Tensor:
    if decay == "gaussian":
        return torch.exp(-0.5 * x**2)
    if decay == "exp":
        # the authors' (1/s)^2 / ((1/s)^2 + w^2), rewritten to stay defined at sigma = 0
        return 1.0 / (1.0 + x**2)
    return torch.exp(-x)


def hipe_gains(head_dim: int, sigmas, decay: str = "gaussian", theta: float = 1e4):
    r"""HIPE's per-head frequency gains :math:`w_{h,d} = \omega_d\,g(\sigma_h\omega_d)`.

    ``g`` is the place-field decay: ``gaussian`` :math:`e^{-x^2/2}`, ``exp`` (Lorentzian)
    :math:`1/(1+x^2)`, ``power`` :math:`e^{-x}`. Returns a float64 (n_heads, head_dim / 2)
    tensor; the attention logit of head ``h`` weights RoPE's cosine at frequency ``d`` by
    :math:`w_{h,d}` (up to the global normalisation of :func:`hipe_scales`).

    References
    ----------
    Zhou, S. and Chen, G. The hippocampal place field gradient: a bio-inspired framework
    building multiscale representation for better sample efficiency. *ICML 2026*
    (arXiv:2506.04943; code AIogry/relative_PE, ``ScaledRotaryEmbedding``).
    """
    sigmas = _check_sigmas(sigmas)
    check_option(decay, name="decay", options=DECAYS)
    omega = rope_frequencies(head_dim, theta, dtype=torch.float64)
    sigma = torch.tensor(sigmas, dtype=torch.float64).unsqueeze(1)
    return omega * _decay(sigma * omega, decay)


def hipe_scales(head_dim, sigmas, decay="gaussian", theta=1e4, pairing="half"):
    r"""HIPE's per-head, per-channel scale vector ``s`` applied to queries and keys.

    :math:`s = \sqrt{w}` is duplicated over each rotation pair (``half``: channels ``d`` and
    ``d + D/2``; ``interleaved``: ``2d`` and ``2d + 1``) and multiplied by one global factor,
    shared by all heads, so that :math:`\mathrm{mean}(s^2) = 1`. Returns float64
    (n_heads, head_dim).

    References
    ----------
    Zhou, S. and Chen, G. The hippocampal place field gradient. *ICML 2026*.
    """
    check_option(pairing, name="pairing", options=PAIRINGS)
    scale = hipe_gains(head_dim, sigmas, decay, theta).sqrt()
    if pairing == "half":
        scale = torch.cat((scale, scale), dim=-1)
    else:
        scale = scale.repeat_interleave(2, dim=-1)
    return scale * torch.rsqrt((scale**2).mean())


def _check_sigmas(sigmas) -> list[float]:
    if isinstance(sigmas, torch.Tensor | np.ndarray):
        if sigmas.ndim != 1:
            raise TypeError(
                f"`sigmas` must be a non-empty 1-D sequence of widths; got shape "
                f"{tuple(sigmas.shape)}"
            )
        sigmas = sigmas.tolist()
    # a dict or a set has a length too, but no order that would pair widths with heads
    if isinstance(sigmas, str) or not isinstance(sigmas, Sequence) or len(sigmas) == 0:
        raise TypeError(f"`sigmas` must be a non-empty sequence of widths; got {describe(sigmas)}")
    return [check_positive(s, name=f"sigmas[{i}]", strict=False) for i, s in enumerate(sigmas)]


def _check_qk(q, k, n_heads, head_dim):
    # RoPE rotates real vectors: integer q and k would round the rotation (and HIPE's scales,
    # cast to their dtype) to integers, silently returning zeros.
    dims = ("batch", "heads", "time", "head_dim")
    sizes = {"head_dim": head_dim} if n_heads is None else {"head_dim": head_dim, "heads": n_heads}
    check_tensor(q, name="q", dims=dims, sizes=sizes, kind="floating")
    sizes.update(batch=q.shape[0], heads=q.shape[1], time=q.shape[2])
    check_tensor(k, name="k", dims=dims, sizes=sizes, kind="floating", like=q, like_name="q")


class RotaryEmbedding(nn.Module):
    r"""Rotary positional embedding (RoPE) for (batch, heads, time, head_dim) queries and keys.

    Channel pair ``d`` of a vector at position ``m`` is rotated by the angle
    :math:`m\,\omega_d`, so that the logit ``q_m . k_n`` depends on positions only through
    ``m - n``. The outputs go straight into ``F.scaled_dot_product_attention``.

    Parameters
    ----------
    head_dim : int
        Even channel count per head.
    theta : float
        Frequency base.
    pairing : {"half", "interleaved"}
        Which channels form a rotation pair: ``d`` with ``d + D/2`` (GPT-NeoX / Llama / OLMo)
        or ``2d`` with ``2d + 1`` (the RoFormer paper).
    device, dtype
        Factory keywords for the frequency buffer.

    References
    ----------
    Su, J., Lu, Y., Pan, S., Murtadha, A., Wen, B. and Liu, Y. (2024). RoFormer: enhanced
    transformer with rotary position embedding. *Neurocomputing* 568.

    Examples
    --------
    >>> rope = RotaryEmbedding(8)
    >>> q, k = rope(torch.randn(1, 2, 5, 8), torch.randn(1, 2, 5, 8))
    >>> q.shape
    torch.Size([1, 2, 5, 8])
    """

    n_heads = None

    def __init__(
        self, head_dim: int, theta: float = 1e4, pairing: str = "half", *, device=None, dtype=None
    ):
        super().__init__()
        self.head_dim = _check_head_dim(head_dim)
        self.theta = check_positive(theta, name="theta")
        dtype = check_float_dtype(dtype)
        self.pairing = check_option(pairing, name="pairing", options=PAIRINGS)
        self.register_buffer(
            "inv_freq",
            rope_frequencies(head_dim, theta, device=device, dtype=dtype),
            persistent=False,
        )

    def _angles(self, positions, batch, length, device):
        if positions is None:
            positions = torch.arange(length, device=device)
        elif not isinstance(positions, torch.Tensor):
            try:
                positions = torch.as_tensor(positions, device=device)
            except (TypeError, ValueError, RuntimeError):
                raise TypeError(
                    "`positions` must be a tensor or sequence of numbers; got "
                    f"{describe(positions)}"
                ) from None
        check_tensor(positions, name="positions", kind="real", finite=True)
        # a (batch, time) tensor of another batch size would broadcast q to its batch size
        if (
            positions.ndim not in (1, 2)
            or positions.shape[-1] != length
            or (positions.ndim == 2 and positions.shape[0] not in (1, batch))
        ):
            raise ValueError(
                f"`positions` must have shape (time,) or (batch, time) with time={length} and "
                f"batch={batch}; got {tuple(positions.shape)}"
            )
        # float64 angles: positions times the fastest frequency lose digits in float32
        angles = positions.to(device=device, dtype=torch.float64).unsqueeze(-1) * self.inv_freq.to(
            device=device, dtype=torch.float64
        )
        if angles.ndim == 3:
            angles = angles.unsqueeze(1)  # (batch, 1, time, D/2) broadcasts over heads
        return angles

    def _rotate(self, x, angles):
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        if self.pairing == "half":
            x1, x2 = x.chunk(2, dim=-1)
            return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)

    def forward(self, q, k, positions=None):
        """Rotate ``q`` and ``k`` (batch, heads, time, head_dim) by their positions.

        ``positions``: (time,) or (batch, time) integer or float positions; default
        ``0 .. time - 1``.
        """
        _check_qk(q, k, self.n_heads, self.head_dim)
        angles = self._angles(positions, q.shape[0], q.shape[-2], q.device)
        return self._rotate(q, angles), self._rotate(k, angles)

    def positional_kernel(self, max_delta: int) -> torch.Tensor:
        r"""The logit's position profile :math:`K(\Delta) = \frac1{D/2}\sum_d\cos(\omega_d\Delta)`.

        Returns float64 (1, max_delta + 1): plain RoPE weights every frequency equally.
        """
        max_delta = check_positive_int(max_delta, name="max_delta", minimum=0)
        weights = torch.ones(1, self.head_dim // 2, dtype=torch.float64)
        return _kernel(weights, self.inv_freq, max_delta)

    def extra_repr(self) -> str:
        return f"head_dim={self.head_dim}, theta={self.theta:g}, pairing={self.pairing!r}"


def _kernel(weights, inv_freq, max_delta):
    delta = torch.arange(max_delta + 1, dtype=torch.float64)
    cosines = torch.cos(delta.unsqueeze(1) * inv_freq.detach().cpu().double())  # (Δ, D/2)
    return (weights @ cosines.T) / weights.sum(dim=1, keepdim=True)


class HIPERotaryEmbedding(RotaryEmbedding):
    r"""HIPE: RoPE with a per-head place-field width, a multi-scale positional inductive bias.

    Each head ``h`` scales queries and keys channel-wise by ``s_h`` (:func:`hipe_scales`),
    then rotates them as RoPE does. Its attention logit becomes a weighted sum of RoPE's
    cosines with weights :math:`w_{h,d} = \omega_d\,g(\sigma_h\omega_d)`: a low-pass "place
    field" in the relative position whose width grows with :math:`\sigma_h` (about
    ``1.2 sigma`` tokens to half height for the Gaussian decay). Relative-position invariance
    is kept. Note that :math:`\sigma \to 0` is *not* RoPE: the factor :math:`\omega_d` still
    reweights the frequencies.

    Parameters
    ----------
    head_dim : int
    n_heads : int
    sigmas : sequence of float
        One place-field width per head (``len(sigmas) == n_heads``), in tokens.
    decay : {"gaussian", "exp", "power"}
    theta : float
    pairing : {"half", "interleaved"}
    device, dtype
        Factory keywords for the buffers.

    Attributes
    ----------
    scale : Tensor (buffer)
        (n_heads, head_dim) channel scales, ``mean(scale**2) == 1``.

    Notes
    -----
    Fidelity: paper, from the authors' code (AIogry/relative_PE,
    ``OLMo/olmo/model.py::ScaledRotaryEmbedding``); the paper's body was not read. The
    frequencies, the per-head gains :math:`\omega_d\, g(\sigma_h \omega_d)` with the three
    decays, the half-split pairing and the ``mean(s^2) = 1`` rescaling follow that code;
    ``pairing="interleaved"`` is an addition. The paper's experiments (OLMo-60M on C4) are not
    reproduced: `TinyTransformer` and ``simulate.py`` are a CPU stand-in.

    References
    ----------
    Zhou, S. and Chen, G. The hippocampal place field gradient: a bio-inspired framework
    building multiscale representation for better sample efficiency. *ICML 2026*
    (arXiv:2506.04943; code AIogry/relative_PE).

    Examples
    --------
    >>> hipe = HIPERotaryEmbedding(16, 2, sigmas=[2.0, 8.0])
    >>> q, k = hipe(torch.randn(1, 2, 5, 16), torch.randn(1, 2, 5, 16))
    >>> float((hipe.scale ** 2).mean())
    1.0
    """

    def __init__(
        self,
        head_dim: int,
        n_heads: int,
        sigmas,
        decay: str = "gaussian",
        theta: float = 1e4,
        pairing: str = "half",
        *,
        device=None,
        dtype=None,
    ):
        super().__init__(head_dim, theta, pairing, device=device, dtype=dtype)
        self.n_heads = check_positive_int(n_heads, name="n_heads")
        sigmas = _check_sigmas(sigmas)
        if len(sigmas) != self.n_heads:
            raise ValueError(
                f"`sigmas` must have one width per head ({self.n_heads}); got {len(sigmas)}"
            )
        self.sigmas = tuple(sigmas)
        self.decay = check_option(decay, name="decay", options=DECAYS)
        scale = hipe_scales(head_dim, sigmas, decay, theta, pairing)
        self.register_buffer(
            "scale", scale.to(device=device, dtype=dtype or torch.get_default_dtype())
        )

    def forward(self, q, k, positions=None):
        """Scale ``q`` and ``k`` by each head's ``scale``, then rotate them (see RoPE)."""
        _check_qk(q, k, self.n_heads, self.head_dim)
        scale = self.scale.to(device=q.device, dtype=q.dtype).unsqueeze(1)  # (H, 1, D)
        return super().forward(q * scale, k * scale, positions)

    def positional_kernel(self, max_delta: int) -> torch.Tensor:
        r"""Each head's normalised profile :math:`K_h(\Delta)=\sum_d w_{h,d}\cos(\omega_d\Delta)
        / \sum_d w_{h,d}`, float64 (n_heads, max_delta + 1)."""
        max_delta = check_positive_int(max_delta, name="max_delta", minimum=0)
        weights = hipe_gains(self.head_dim, self.sigmas, self.decay, self.theta)
        return _kernel(weights, self.inv_freq, max_delta)

    def extra_repr(self) -> str:
        sigmas = ", ".join(f"{s:g}" for s in self.sigmas)
        return (
            f"{super().extra_repr()}, n_heads={self.n_heads}, sigmas=({sigmas}), "
            f"decay={self.decay!r}"
        )


def half_width(kernel: torch.Tensor) -> torch.Tensor:
    """First offset where each row of a positional kernel drops below half its value at 0.

    Returns an int64 tensor with one entry per row (``-1`` where the kernel never does).
    """
    check_tensor(kernel, name="kernel", dims=("heads", "delta"), kind="real", nonempty=("delta",))
    below = kernel < 0.5 * kernel[:, :1]
    first = below.double().argmax(dim=1)
    return torch.where(below.any(dim=1), first, torch.full_like(first, -1))


__all__ = [
    "DECAYS",
    "HIPERotaryEmbedding",
    "RotaryEmbedding",
    "half_width",
    "hipe_gains",
    "hipe_scales",
    "rope_frequencies",
]
