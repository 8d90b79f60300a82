"""A tiny decoder-only transformer whose positional scheme is a switch (for HIPE experiments)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from mlcore._checks import check_float_dtype, check_token_ids
from mlcore.nn.positional import HIPERotaryEmbedding, RotaryEmbedding
from statcore.validation import check_option, check_positive_int, check_scalar

POSITIONS = ("rope", "hipe", "learned", "none")


class _Block(nn.Module):
    def __init__(self, d_model, n_heads, rotary, dropout, factory):
        super().__init__()
        self.n_heads = n_heads
        self.norm1 = nn.LayerNorm(d_model, **factory)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False, **factory)
        self.proj = nn.Linear(d_model, d_model, bias=False, **factory)
        self.norm2 = nn.LayerNorm(d_model, **factory)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model, **factory),
            nn.GELU(),
            nn.Linear(4 * d_model, d_model, **factory),
        )
        self.rotary = rotary
        self.dropout = dropout

    def qkv_heads(self, x, positions):
        """Queries, keys and values (batch, heads, time, head_dim), rotated where rotary.

        The one computation of them, shared with :mod:`mlcore.interp.hooks`, which recomputes
        the attention pattern from a block's input.
        """
        b, t, d = x.shape
        # the head width spelled out, not -1: an empty batch has no size to infer it from
        q, k, v = (
            self.qkv(self.norm1(x))
            .view(b, t, 3, self.n_heads, d // self.n_heads)
            .permute(2, 0, 3, 1, 4)
        )
        if self.rotary is not None:
            q, k = self.rotary(q, k, positions)
        return q, k, v

    def forward(self, x, positions):
        b, t, d = x.shape
        q, k, v = self.qkv_heads(x, positions)
        drop = self.dropout if self.training else 0.0
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=drop)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.norm2(x))


class TinyTransformer(nn.Module):
    """A small causal (decoder-only) transformer language model.

    Pre-norm blocks of causal multi-head attention (``F.scaled_dot_product_attention``) and a
    GELU MLP, with one switchable positional scheme, so that positional embeddings can be
    compared with everything else fixed.

    Parameters
    ----------
    vocab : int
        Vocabulary size.
    d_model : int
        Width (divisible by ``n_heads``; ``d_model / n_heads`` even for rotary schemes).
    n_layers, n_heads : int
    pos : {"rope", "hipe", "learned", "none"}
        ``rope``: :class:`RotaryEmbedding`; ``hipe``: :class:`HIPERotaryEmbedding` with
        ``sigmas`` and ``decay``; ``learned``: absolute embeddings up to ``max_len``;
        ``none``: no positional information beyond the causal mask.
    sigmas : sequence of float, optional
        HIPE's per-head widths (required with ``pos="hipe"``).
    decay : {"gaussian", "exp", "power"}
    theta : float
        Rotary frequency base.
    max_len : int
        Longest sequence for ``pos="learned"``.
    dropout : float
        Attention dropout in training mode.
    device, dtype
        Factory keywords.

    References
    ----------
    Zhou, S. and Chen, G. The hippocampal place field gradient: a bio-inspired framework
    building multiscale representation for better sample efficiency. *ICML 2026*.
    Vaswani, A. et al. (2017). Attention is all you need. *NeurIPS 2017*.

    Examples
    --------
    >>> lm = TinyTransformer(11, 16, 1, 2, pos="hipe", sigmas=[1.0, 4.0])
    >>> lm(torch.randint(0, 11, (3, 7))).shape
    torch.Size([3, 7, 11])
    """

    def __init__(
        self,
        vocab: int,
        d_model: int,
        n_layers: int,
        n_heads: int,
        pos: str = "rope",
        *,
        sigmas=None,
        decay: str = "gaussian",
        theta: float = 1e4,
        max_len: int = 512,
        dropout: float = 0.0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        factory = {"device": device, "dtype": check_float_dtype(dtype)}
        self.vocab = check_positive_int(vocab, name="vocab", minimum=2)
        self.d_model = check_positive_int(d_model, name="d_model")
        self.n_layers = check_positive_int(n_layers, name="n_layers")
        self.n_heads = check_positive_int(n_heads, name="n_heads")
        self.pos = check_option(pos, name="pos", options=POSITIONS)
        self.max_len = check_positive_int(max_len, name="max_len")
        dropout = check_scalar(dropout, name="dropout", low=0.0, high=1.0, high_inclusive=False)
        if d_model % n_heads:
            raise ValueError(
                f"`d_model` must be divisible by `n_heads`; got {d_model} and {n_heads}"
            )
        head_dim = d_model // n_heads
        if pos == "hipe" and sigmas is None:
            raise ValueError("pos='hipe' needs `sigmas`, one place-field width per head")
        if pos != "hipe" and sigmas is not None:
            raise ValueError(f"`sigmas` applies to pos='hipe' only; got pos={pos!r}")
        self.embed = nn.Embedding(vocab, d_model, **factory)
        self.pos_embed = nn.Embedding(max_len, d_model, **factory) if pos == "learned" else None
        blocks = []
        for _ in range(n_layers):
            if pos == "rope":
                rotary = RotaryEmbedding(head_dim, theta, **factory)
            elif pos == "hipe":
                rotary = HIPERotaryEmbedding(head_dim, n_heads, sigmas, decay, theta, **factory)
            else:
                rotary = None
            blocks.append(_Block(d_model, n_heads, rotary, dropout, factory))
        self.blocks = nn.ModuleList(blocks)
        self.norm = nn.LayerNorm(d_model, **factory)
        self.head = nn.Linear(d_model, vocab, bias=False, **factory)

    def forward(self, ids: torch.Tensor, positions=None) -> torch.Tensor:
        """Next-token logits (batch, time, vocab) for integer ``ids`` (batch, time)."""
        check_token_ids(ids, name="ids", vocab=self.vocab, dims=("batch", "time"))
        x = self.embed(ids)
        if self.pos_embed is not None:
            if ids.shape[1] > self.max_len:
                raise ValueError(
                    f"`ids` has {ids.shape[1]} time steps, more than the learned positions' "
                    f"max_len={self.max_len}"
                )
            x = x + self.pos_embed(torch.arange(ids.shape[1], device=ids.device))
        for block in self.blocks:
            x = block(x, positions)
        return self.head(self.norm(x))

    def extra_repr(self) -> str:
        return (
            f"vocab={self.vocab}, d_model={self.d_model}, n_layers={self.n_layers}, "
            f"n_heads={self.n_heads}, pos={self.pos!r}"
        )
