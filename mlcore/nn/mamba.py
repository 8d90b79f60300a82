"""A small Mamba (selective state-space) block and the pure-torch reference selective scan."""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from mlcore._checks import check_float_dtype, check_tensor, check_token_ids
from statcore.validation import check_option, check_positive_int

SCANS = ("chunked", "sequential")


def _check_scan_inputs(u, delta, A, B, C, D, mask):
    """The scan's shapes, dtypes and devices, one message per argument."""
    check_tensor(
        u, name="u", dims=("batch", "length", "d_inner"), kind="floating", nonempty=("length",)
    )
    batch, length, d_inner = u.shape
    sizes = {"batch": batch, "length": length, "d_inner": d_inner}
    check_tensor(
        delta, name="delta", dims=("batch", "length", "d_inner"), sizes=sizes, like=u, like_name="u"
    )
    check_tensor(A, name="A", dims=("d_inner", "d_state"), sizes=sizes, like=u, like_name="u")
    sizes["d_state"] = A.shape[1]
    for name, x in (("B", B), ("C", C)):
        check_tensor(
            x, name=name, dims=("batch", "length", "d_state"), sizes=sizes, like=u, like_name="u"
        )
    if D is not None:
        check_tensor(D, name="D", dims=("d_inner",), sizes=sizes, like=u, like_name="u")
    if mask is not None:
        # any dtype: 1/0 or True/False, cast where it is applied
        check_tensor(mask, name="mask", dims=("d_inner", "d_state"), sizes=sizes)
        if mask.device != u.device:
            raise ValueError(f"`mask` must be on the device of `u` ({u.device}); got {mask.device}")


def selective_scan(u, delta, A, B, C, D=None, *, mask=None, return_states=False):
    r"""Mamba's selective scan, step by step (the reference, not a fused kernel).

    With :math:`\bar A_t = \exp(\Delta_t \odot A)` (zeroed where ``mask`` is 0) and the
    Euler-discretised input :math:`\bar B_t u_t = \Delta_t B_t u_t`:

    .. math::

        h_t = \bar A_t \odot h_{t-1} + \Delta_t B_t u_t, \qquad
        y_t = C_t h_t + D \odot u_t, \qquad h_{-1} = 0.

    Parameters
    ----------
    u, delta : Tensor (batch, length, d_inner)
    A : Tensor (d_inner, d_state)
        The (negative) continuous-time transition, ``-exp(A_log)``.
    B, C : Tensor (batch, length, d_state)
    D : Tensor (d_inner,), optional
        Skip connection.
    mask : Tensor (d_inner, d_state), optional
        1 keeps a state entry, 0 cuts it (its :math:`\bar A` is 0): how pruned SSM entries act.
    return_states : bool
        Also return ``deltaA`` (:math:`\bar A_t`, (batch, length, d_inner, d_state)) and
        ``h_prev`` (:math:`h_{t-1}`, same shape), the quantities SparseSSM's saliency needs.

    Returns
    -------
    y : Tensor (batch, length, d_inner)
    (y, deltaA, h_prev) when ``return_states``.

    References
    ----------
    Gu, A. and Dao, T. (2024). Mamba: linear-time sequence modeling with selective state
    spaces. *COLM 2024* (Algorithm 2).
    """
    _check_scan_inputs(u, delta, A, B, C, D, mask)
    batch, length, d_inner = u.shape
    d_state = A.shape[1]
    deltaA = torch.exp(delta.unsqueeze(-1) * A)
    if mask is not None:
        deltaA = deltaA * mask.to(deltaA.dtype)
    deltaBu = delta.unsqueeze(-1) * B.unsqueeze(2) * u.unsqueeze(-1)
    h = u.new_zeros(batch, d_inner, d_state)
    ys, prev = [], []
    for t in range(length):
        if return_states:
            prev.append(h)
        h = deltaA[:, t] * h + deltaBu[:, t]
        ys.append(torch.einsum("bdn,bn->bd", h, C[:, t]))
    y = torch.stack(ys, dim=1)
    if D is not None:
        y = y + u * D
    if return_states:
        return y, deltaA, torch.stack(prev, dim=1)
    return y


def selective_scan_chunked(u, delta, A, B, C, D=None, *, mask=None, chunk: int = 16):
    r"""The selective scan of :func:`selective_scan`, computed chunk by chunk in closed form.

    Within a chunk, :math:`h_t = \sum_{s \le t} e^{S_{ts}} \Delta_s B_s u_s + e^{P_t} h_0`
    with the segment sums :math:`S_{ts} = \sum_{r=s+1}^{t} \Delta_r A` (accumulated directly,
    without differences of cumulative sums, so no cancellation) and :math:`P_t = S_{t,-1}`;
    chunks are chained through their last state. The same recursion as the reference, a
    different algorithm: ``length / chunk`` sequential steps instead of ``length``, so that
    training a small Mamba on a CPU is fast. Entries cut by ``mask`` keep only the input term.

    Parameters and returns as :func:`selective_scan` (without ``return_states``); ``chunk``
    is the number of steps solved at once.

    References
    ----------
    Dao, T. and Gu, A. (2024). Transformers are SSMs: generalized models and efficient
    algorithms through structured state space duality. *ICML 2024* (the segment-sum form).
    """
    chunk = check_positive_int(chunk, name="chunk")
    _check_scan_inputs(u, delta, A, B, C, D, mask)
    batch, length, d_inner = u.shape
    d_state = A.shape[1]
    log_a = (delta.unsqueeze(-1) * A).permute(0, 2, 3, 1)  # (b, d, n, L)
    inputs = (delta.unsqueeze(-1) * B.unsqueeze(2) * u.unsqueeze(-1)).permute(0, 2, 3, 1)
    h0 = u.new_zeros(batch, d_inner, d_state, 1)
    states = []
    for start in range(0, length, chunk):
        a = log_a[..., start : start + chunk]
        c = a.shape[-1]
        strict = torch.ones(c, c, dtype=torch.bool, device=u.device).tril(-1)
        # seg[t, s] = sum_{r = s+1}^{t} a_r: cumulative sum down the rows of a masked copy
        seg = (a.unsqueeze(-2) * strict.T.to(a.dtype)).transpose(-1, -2)
        seg = seg.masked_fill(~strict, 0.0).cumsum(dim=-2)
        seg = seg.masked_fill(~torch.ones_like(strict).tril(), float("-inf"))
        h = torch.exp(seg) @ inputs[..., start : start + c].unsqueeze(-1)
        h = h.squeeze(-1) + torch.exp(a.cumsum(-1)) * h0
        if mask is not None:
            cut = ~mask.to(torch.bool).unsqueeze(-1)
            h = torch.where(cut, inputs[..., start : start + c], h)
        states.append(h)
        h0 = h[..., -1:]
    h = torch.cat(states, dim=-1)  # (b, d, n, L)
    y = torch.einsum("bdnt,btn->btd", h, C)
    if D is not None:
        y = y + u * D
    return y


def check_mixer(mixer):
    """A module with Mamba's parameter layout and a 2-D (d_inner, d_state) ``A_log``."""
    for name in ("in_proj", "conv1d", "x_proj", "dt_proj", "A_log", "D", "out_proj"):
        if not hasattr(mixer, name):
            raise TypeError(
                f"`mixer` must have Mamba's parameters (in_proj, conv1d, x_proj, dt_proj, "
                f"A_log, D, out_proj); {type(mixer).__name__} has no `{name}`"
            )
    check_tensor(mixer.A_log, name="mixer.A_log", dims=("d_inner", "d_state"))
    return mixer


def mixer_ssm_inputs(mixer, x):
    """The scan's inputs for ``x`` (batch, length, d_model), from a Mamba mixer's parameters.

    Works for any module with Mamba's parameter layout (``in_proj``, ``conv1d``, ``x_proj``,
    ``dt_proj``, ``A_log``, ``D``, ``out_proj``), as in :class:`MambaBlock`, mamba-minimal or
    the HF ``MambaMixer``. Returns a dict with ``u, delta, A, B, C, D, gate``.
    """
    check_mixer(mixer)
    weight = mixer.in_proj.weight
    # the input's width, dtype and device are those of in_proj, where a mismatch would fail
    check_tensor(
        x,
        name="x",
        dims=("batch", "length", "d_model"),
        sizes={"d_model": weight.shape[1]},
        nonempty=("length",),
        like=weight,
        like_name="mixer.in_proj.weight",
    )
    d_inner, d_state = mixer.A_log.shape
    length = x.shape[1]
    u, gate = mixer.in_proj(x).split([d_inner, d_inner], dim=-1)
    # causal depthwise convolution: the conv pads both sides; keep the first `length` outputs
    u = F.silu(mixer.conv1d(u.transpose(1, 2))[..., :length].transpose(1, 2))
    dt_rank = mixer.x_proj.out_features - 2 * d_state
    dt, B, C = mixer.x_proj(u).split([dt_rank, d_state, d_state], dim=-1)
    delta = F.softplus(mixer.dt_proj(dt))
    A = -torch.exp(mixer.A_log.to(u.dtype))
    return {"u": u, "delta": delta, "A": A, "B": B, "C": C, "D": mixer.D, "gate": gate}


class MambaBlock(nn.Module):
    """A Mamba mixer (selective SSM block) in pure torch, small enough for CPU experiments.

    ``in_proj`` splits the input into a stream ``u`` and a gate; ``u`` passes a causal
    depthwise convolution and SiLU, gives the selective parameters ``Δ, B, C`` through
    ``x_proj`` / ``dt_proj``, and runs through :func:`selective_scan`; the output is gated by
    ``SiLU(gate)`` and projected back by ``out_proj``. The buffer ``ssm_mask`` (1 = kept)
    cuts pruned state entries (their discretised transition is 0).

    Parameters
    ----------
    d_model : int
    d_state : int
        State size ``N`` per channel.
    expand : int
        ``d_inner = expand * d_model``.
    d_conv : int
        Convolution width.
    dt_rank : int or "auto"
        Rank of Δ's projection; ``"auto"`` is ``ceil(d_model / 16)``.
    scan : {"chunked", "sequential"}
        The step-by-step :func:`selective_scan` (the fastest on a CPU) or
        :func:`selective_scan_chunked` (fewer sequential steps, more arithmetic).
    device, dtype
        Factory keywords.

    References
    ----------
    Gu, A. and Dao, T. (2024). Mamba: linear-time sequence modeling with selective state
    spaces. *COLM 2024*.

    Examples
    --------
    >>> block = MambaBlock(8, d_state=4)
    >>> block(torch.randn(2, 5, 8)).shape
    torch.Size([2, 5, 8])
    """

    def __init__(
        self,
        d_model: int,
        d_state: int = 16,
        expand: int = 2,
        d_conv: int = 4,
        dt_rank="auto",
        *,
        scan: str = "sequential",
        device=None,
        dtype=None,
    ):
        super().__init__()
        factory = {"device": device, "dtype": check_float_dtype(dtype)}
        self.scan = check_option(scan, name="scan", options=SCANS)
        self.d_model = check_positive_int(d_model, name="d_model")
        self.d_state = check_positive_int(d_state, name="d_state")
        self.expand = check_positive_int(expand, name="expand")
        self.d_conv = check_positive_int(d_conv, name="d_conv")
        self.d_inner = self.expand * self.d_model
        self.dt_rank = (
            math.ceil(self.d_model / 16)
            if dt_rank == "auto"
            else check_positive_int(dt_rank, name="dt_rank")
        )
        self.in_proj = nn.Linear(d_model, 2 * self.d_inner, bias=False, **factory)
        self.conv1d = nn.Conv1d(
            self.d_inner, self.d_inner, d_conv, groups=self.d_inner, padding=d_conv - 1, **factory
        )
        self.x_proj = nn.Linear(self.d_inner, self.dt_rank + 2 * d_state, bias=False, **factory)
        self.dt_proj = nn.Linear(self.dt_rank, self.d_inner, **factory)
        # S4D-real initialisation A = -(1, 2, ..., N) per channel, as in Mamba
        a = torch.arange(1, d_state + 1, device=device, dtype=torch.float64).repeat(self.d_inner, 1)
        self.A_log = nn.Parameter(a.log().to(dtype or torch.get_default_dtype()))
        self.D = nn.Parameter(torch.ones(self.d_inner, **factory))
        self.out_proj = nn.Linear(self.d_inner, d_model, bias=False, **factory)
        self.register_buffer("ssm_mask", torch.ones(self.d_inner, d_state, **factory))

    def forward(self, x):
        p = mixer_ssm_inputs(self, x)
        scan = selective_scan_chunked if self.scan == "chunked" else selective_scan
        y = scan(p["u"], p["delta"], p["A"], p["B"], p["C"], p["D"], mask=self.ssm_mask)
        return self.out_proj(y * F.silu(p["gate"]))

    def extra_repr(self) -> str:
        return (
            f"d_model={self.d_model}, d_state={self.d_state}, d_inner={self.d_inner}, "
            f"d_conv={self.d_conv}, dt_rank={self.dt_rank}, scan={self.scan!r}"
        )


class MambaLM(nn.Module):
    """A tiny Mamba language model: embedding, pre-norm residual :class:`MambaBlock` s, head.

    Parameters
    ----------
    vocab, d_model, n_layers : int
    d_state, expand, d_conv : int
        Passed to each :class:`MambaBlock`.
    device, dtype
        Factory keywords.

    References
    ----------
    Gu and Dao (2024), Mamba; full reference in :class:`MambaBlock`.
    """

    def __init__(
        self,
        vocab: int,
        d_model: int,
        n_layers: int,
        d_state: int = 16,
        expand: int = 2,
        d_conv: int = 4,
        *,
        device=None,
        dtype=None,
    ):
        super().__init__()
        factory = {"device": device, "dtype": check_float_dtype(dtype)}
        self.vocab = check_positive_int(vocab, name="vocab", minimum=2)
        d_model = check_positive_int(d_model, name="d_model")
        self.embed = nn.Embedding(vocab, d_model, **factory)
        self.norms = nn.ModuleList(
            nn.LayerNorm(d_model, **factory)
            for _ in range(check_positive_int(n_layers, name="n_layers"))
        )
        self.mixers = nn.ModuleList(
            MambaBlock(d_model, d_state, expand, d_conv, **factory) for _ in range(n_layers)
        )
        self.norm = nn.LayerNorm(d_model, **factory)
        self.head = nn.Linear(d_model, vocab, bias=False, **factory)

    def forward(self, ids, *, return_hidden=False):
        """Logits (batch, length, vocab); with ``return_hidden`` also each mixer's input."""
        check_token_ids(ids, name="ids", vocab=self.vocab)
        x = self.embed(ids)
        hidden = []
        for norm, mixer in zip(self.norms, self.mixers, strict=True):
            h = norm(x)
            hidden.append(h)
            x = x + mixer(h)
        logits = self.head(self.norm(x))
        return (logits, hidden) if return_hidden else logits
