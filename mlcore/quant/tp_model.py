"""The small tensor-parallel causal LM of CoCoQuant's experiments and its next-token loss.

:class:`TinyTPLM` is a pre-LN transformer laid out for Megatron-style tensor parallelism
(Shoeybi et al. 2019, arXiv 1909.08053): column-parallel ``qkv`` / ``fc1``, row-parallel
``out`` / ``fc2``. In a pre-LN transformer the residual add and LayerNorm sit between the
collective and the next GEMM, so the sharded forward (:mod:`mlcore.quant.sharded`) dequantises
the gathered payload into the residual stream.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from mlcore._checks import check_token_ids
from statcore.validation import check_positive_int

__all__ = ["TinyTPLM", "causal_lm_loss"]


class _Block(nn.Module):
    def __init__(self, d_model: int, n_heads: int, d_ff: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.Module()
        self.attn.qkv = nn.Linear(d_model, 3 * d_model)
        self.attn.out = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Module()
        self.mlp.fc1 = nn.Linear(d_model, d_ff)
        self.mlp.fc2 = nn.Linear(d_ff, d_model)
        self.n_heads = n_heads


class TinyTPLM(nn.Module):
    """A small pre-LN causal transformer laid out for Megatron-style tensor parallelism.

    Per block, ``attn.qkv`` and ``mlp.fc1`` are column-parallel (each rank holds some heads /
    hidden units) and ``attn.out`` and ``mlp.fc2`` row-parallel (their partial sums are
    all-reduced). Single-process ``forward`` is the reference; :func:`run_tensor_parallel` runs
    the sharded version.

    Parameters
    ----------
    vocab_size, d_model, n_heads, n_layers, d_ff, max_len : int
    """

    def __init__(
        self,
        vocab_size: int = 32,
        *,
        d_model: int = 64,
        n_heads: int = 4,
        n_layers: int = 2,
        d_ff: int = 256,
        max_len: int = 64,
    ):
        super().__init__()
        self.config = {
            name: check_positive_int(value, name=name)
            for name, value in dict(
                vocab_size=vocab_size,
                d_model=d_model,
                n_heads=n_heads,
                n_layers=n_layers,
                d_ff=d_ff,
                max_len=max_len,
            ).items()
        }
        if d_model % n_heads:
            raise ValueError(f"`n_heads`={n_heads} must divide `d_model`={d_model}")
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(_Block(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def tp_plan(self) -> dict:
        """``row_parallel`` linears (their outputs are all-reduced) and the ``consumers`` GEMM of
        each: the MLP's ``fc1`` after attention, the next block's ``qkv`` after the MLP."""
        n = len(self.blocks)
        row = [f"blocks.{i}.attn.out" for i in range(n)] + [f"blocks.{i}.mlp.fc2" for i in range(n)]
        consumers = {f"blocks.{i}.attn.out": f"blocks.{i}.mlp.fc1" for i in range(n)}
        consumers.update({f"blocks.{i}.mlp.fc2": f"blocks.{i + 1}.attn.qkv" for i in range(n - 1)})
        return {"row_parallel": row, "consumers": consumers, "exclude": ["head"]}

    def embed(self, ids):
        check_token_ids(ids, name="ids", vocab=self.config["vocab_size"])
        if ids.shape[1] > self.config["max_len"]:
            raise ValueError(
                f"`ids` has {ids.shape[1]} positions; the model takes at most "
                f"{self.config['max_len']}"
            )
        positions = torch.arange(ids.shape[1], device=ids.device)
        return self.tok(ids) + self.pos(positions)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch, length, vocab)`` of token ids ``(batch, length)``."""
        x = self.embed(ids)
        for block in self.blocks:
            x = x + _attention(block.ln1(x), block.attn.qkv, block.n_heads, block.attn.out)
            x = x + block.mlp.fc2(F.gelu(block.mlp.fc1(block.ln2(x))))
        return self.head(self.ln_f(x))


def _attention(h, qkv_linear, n_heads, out_linear):
    B, T, _ = h.shape
    q, k, v = qkv_linear(h).chunk(3, dim=-1)
    heads = [t.reshape(B, T, n_heads, -1).transpose(1, 2) for t in (q, k, v)]
    a = F.scaled_dot_product_attention(*heads, is_causal=True)
    return out_linear(a.transpose(1, 2).reshape(B, T, -1))


def causal_lm_loss(model: nn.Module, ids: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy of ``model`` on ``ids`` (``(batch, length)``); the model may
    return logits or an object with ``.logits`` (Hugging Face causal LMs)."""
    check_token_ids(ids, name="ids", vocab=torch.iinfo(torch.int64).max)
    if ids.shape[1] < 2:
        raise ValueError(
            f"`ids` must have at least 2 positions (an input and its next token); got shape "
            f"{tuple(ids.shape)}"
        )
    if ids.shape[0] == 0:
        raise ValueError("`ids` must have at least one sequence; got shape (0, ...)")
    out = model(ids[:, :-1])
    logits = getattr(out, "logits", out)
    if logits.shape[:2] != ids[:, :-1].shape:
        raise ValueError(
            f"the model must return logits (batch, length, vocab) for `ids` of shape "
            f"{tuple(ids.shape)} less its last position; got shape {tuple(logits.shape)}"
        )
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))
