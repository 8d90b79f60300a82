"""CoCoQuant's precision-aligned rewrite as real collective code, on a small tensor-parallel LM.

The rewrite (spec mlcore_batch_a.md §1): instead of all-reducing the row-parallel partial sums in
high precision and quantising afterwards, (1) reduce-scatter them in fp32, (2) quantise each
rank's shard once, with groups that never straddle shards, (3) all-gather the low-bit payload and
its scales, (4) hand the consumer GEMM the payload. :func:`fused_allreduce_quantize` runs it
with ``torch.distributed`` (gloo across CPU processes, NCCL on GPUs);
:func:`run_tensor_parallel` runs a whole :class:`TinyTPLM` forward that way across spawned
processes and records bytes on the wire and wall time per collective.

Fidelity: reconstruction. The abstract of CoCoQuant (ICML 2026) names a
"precision-aligned graph-rewriting that enables zero-overhead fusion"; the four steps are the
spec's reconstruction. In a pre-LN transformer the residual add and LayerNorm sit between the
collective and the next GEMM, so :class:`TinyTPLM` dequantises the gathered payload into the
residual stream; the GEMM fed directly by the payload is :func:`payload_linear`.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from mlcore._checks import check_tensor, check_token_ids
from mlcore._device import as_numpy
from mlcore._iterations import budget_result
from mlcore.quant.quantizers import (
    check_bits,
    dequantize,
    pack_int4,
    quantize,
    quantized_linear,
    unpack_int4,
)
from mlcore.results import TrainingResult
from statcore.progress import progress as progress_bar
from statcore.results import Results
from statcore.results.plotting import get_ax
from statcore.validation import check_positive, check_positive_int, check_random_state, describe

#: Collectives whose ring algorithm sends ``steps · (p-1)/p`` of the full tensor per rank.
_RING_STEPS = {"all_reduce": 2, "reduce_scatter": 1, "all_gather": 1}


class CollectiveLog:
    """Bytes and wall time of each collective one rank issues.

    ``payload_bytes`` is the full tensor a collective combines (for an all-gather, all ranks'
    pieces); ``wire_bytes`` is what one rank sends in the ring algorithm,
    ``steps · (p-1)/p · payload_bytes``.
    """

    def __init__(self, rank: int = 0, world_size: int = 1):
        self.rank = rank
        self.world_size = world_size
        self.records: list[dict] = []
        self.step = 0

    def add(self, op: str, collective: str, payload_bytes: int, dtype, wall_time_s: float):
        """Record one collective (``dtype``: a torch dtype or a label such as ``"int4"``)."""
        p = self.world_size
        self.records.append(
            {
                "rank": self.rank,
                "step": self.step,
                "op": op,
                "collective": collective,
                "dtype": str(dtype).replace("torch.", ""),
                "payload_bytes": int(payload_bytes),
                "wire_bytes": _RING_STEPS[collective] * (p - 1) / p * payload_bytes,
                "wall_time_s": wall_time_s,
            }
        )

    def frame(self) -> pd.DataFrame:
        """The records as a DataFrame."""
        return pd.DataFrame(self.records)


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _group_for_shard(width: int, p: int, group_size) -> int:
    if width % p:
        raise ValueError(f"the world size {p} must divide the hidden size {width}")
    shard = width // p
    if group_size is None:
        return shard
    group_size = check_positive_int(group_size, name="group_size")
    if shard % group_size:
        raise ValueError(
            f"`group_size`={group_size} must divide the per-rank shard width {shard} "
            f"(hidden size {width} over {p} ranks), so that no group straddles two shards"
        )
    return group_size


def fused_allreduce_quantize(
    partial,
    bits: int,
    *,
    group_size: int | None = None,
    process_group=None,
    log: CollectiveLog | None = None,
    op: str = "comm",
):
    """The rewrite: fp32 reduce-scatter, quantise each shard once, all-gather payload and scales.

    Call it on every rank of an initialised ``torch.distributed`` process group.

    Parameters
    ----------
    partial : Tensor (..., hidden), floating point
        This rank's partial sums (the output of a row-parallel GEMM).
    bits : int
        Payload width (< 16). 4-bit payloads travel packed two per byte.
    group_size : int, optional
        Entries per scale; must divide the shard width ``hidden / world_size``. Default: one
        scale per shard row.
    process_group : optional
        The tensor-parallel group (default: the whole world).
    log : CollectiveLog, optional
        Where to record bytes and wall time.
    op : str
        The op name written into ``log``.

    Returns
    -------
    q : Tensor (..., hidden), int8
        The gathered integers, identical on every rank.
    scales : Tensor (..., hidden // group), float32
        Their scales, in the same group order.

    Notes
    -----
    The reduce-scatter sums in fp32 whatever ``partial``'s dtype. Each rank's integers and
    scales travel as one byte message in a single all-gather. Each rank then owns a
    contiguous slice of the hidden axis, so groups inside it are the groups a quantiser of the
    full reduced tensor would form: when ``group_size`` divides the shard, the result is
    bit-identical to all-reduce then quantise (up to the order in which the collective adds the
    ranks' partial sums).
    """
    import torch.distributed as dist

    check_tensor(partial, name="partial", kind="floating", nonempty=True)
    bits = check_bits(bits)
    if bits == 16:
        raise ValueError("`bits`=16 needs no rewrite; use a plain all-reduce")
    p = dist.get_world_size(process_group)
    width = partial.shape[-1]
    group = _group_for_shard(width, p, group_size)
    shard_width = width // p
    chunks = [c.contiguous() for c in partial.to(torch.float32).split(shard_width, dim=-1)]
    shard = torch.empty_like(chunks[0])
    wall = _timed(lambda: dist.reduce_scatter(shard, chunks, group=process_group))
    if log is not None:
        log.add(op, "reduce_scatter", 4 * partial.numel(), torch.float32, wall)
    q, scales = quantize(shard, bits, group_size=group, name="partial")
    payload = (pack_int4(q) if bits == 4 else q).view(torch.uint8)
    # One message per rank: the payload bytes, then the fp32 scales' bytes, row by row.
    rows = payload.reshape(-1, payload.shape[-1])
    message = torch.cat([rows, scales.reshape(rows.shape[0], -1).view(torch.uint8)], dim=-1)
    pieces = [torch.empty_like(message) for _ in range(p)]
    wall = _timed(lambda: dist.all_gather(pieces, message.contiguous(), group=process_group))
    if log is not None:
        container = "int4 (packed)" if bits == 4 else "int8"  # other widths ride in int8
        log.add(op, "all_gather", p * message.numel(), container, wall)
    width = payload.shape[-1]
    ints, scale_parts = [], []
    for piece in pieces:
        body = piece[:, :width].reshape(payload.shape)
        ints.append(unpack_int4(body) if bits == 4 else body.view(torch.int8))
        scale_parts.append(piece[:, width:].contiguous().view(torch.float32).reshape(scales.shape))
    return torch.cat(ints, dim=-1), torch.cat(scale_parts, dim=-1)


def allreduce_quantize(
    partial,
    bits: int,
    *,
    group_size: int | None = None,
    process_group=None,
    log: CollectiveLog | None = None,
    op: str = "comm",
):
    """The unfused reference: fp32 all-reduce, then quantise the full reduced tensor.

    ``group_size=None`` gives one scale per row over the whole hidden size (per-token), the case
    where the rewrite (one scale per shard row) differs. Returns ``(q, scales)`` like
    :func:`fused_allreduce_quantize`.
    """
    import torch.distributed as dist

    check_tensor(partial, name="partial", kind="floating", nonempty=True)
    bits = check_bits(bits)
    total = partial.to(torch.float32).clone()
    wall = _timed(lambda: dist.all_reduce(total, group=process_group))
    if log is not None:
        log.add(op, "all_reduce", 4 * total.numel(), torch.float32, wall)
    return quantize(total, bits, group_size=group_size, name="partial")


def simulate_tp_allreduce(shards: Sequence[torch.Tensor], bits: int, *, group_size=None) -> dict:
    """Both paths with ``p`` ranks emulated in one process, for the numerics.

    Parameters
    ----------
    shards : sequence of Tensor (..., hidden)
        The ``p`` ranks' partial sums.
    bits : int
    group_size : int, optional
        As in :func:`fused_allreduce_quantize` (``None``: one scale per shard row in the rewrite,
        one per full row in the reference).

    Returns
    -------
    dict
        ``fused`` and ``reference`` (each ``(q, scales)``), ``fused_dequantized``,
        ``reference_dequantized``, ``bit_identical`` (the dequantised tensors equal exactly)
        and ``max_abs_diff``.
    """
    if not isinstance(shards, Sequence) or len(shards) < 1:
        raise TypeError(f"`shards` must be a non-empty sequence of tensors; got {describe(shards)}")
    first = check_tensor(shards[0], name="shards[0]", kind="floating", nonempty=True)
    for i, s in enumerate(shards):
        check_tensor(s, name=f"shards[{i}]", kind="floating")
        if s.shape != first.shape:
            raise ValueError(f"`shards[{i}]` has shape {tuple(s.shape)}, not {tuple(first.shape)}")
    bits = check_bits(bits)
    p = len(shards)
    width = first.shape[-1]
    group = _group_for_shard(width, p, group_size)
    total = shards[0].to(torch.float32).clone()
    for s in shards[1:]:
        total = total + s.to(torch.float32)
    pieces = [quantize(piece, bits, group_size=group) for piece in total.split(width // p, dim=-1)]
    fused = (torch.cat([q for q, _ in pieces], -1), torch.cat([s for _, s in pieces], -1))
    reference = quantize(total, bits, group_size=group_size)
    a, b = dequantize(*fused), dequantize(*reference)
    return {
        "fused": fused,
        "reference": reference,
        "fused_dequantized": a,
        "reference_dequantized": b,
        "bit_identical": bool(torch.equal(a, b)),
        "max_abs_diff": float((a - b).abs().max()),
    }


def payload_linear(q, scales, weight, bias=None) -> torch.Tensor:
    """A GEMM fed directly by a gathered payload: ``dequantize(q, scales) @ weightᵀ + bias``.

    The consumer of the rewrite reads the integers and scales the collective delivered, with no
    requantisation in between (a low-bit kernel would multiply the integers and apply the scales
    in its epilogue; here the product is computed in float32).
    """
    check_tensor(weight, name="weight", ndim=2, kind="floating")
    x = dequantize(q, scales, dtype=weight.dtype)
    if x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"the payload's width {x.shape[-1]} does not match `weight`'s {weight.shape[1]} inputs"
        )
    return F.linear(x, weight, bias)


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

    def _embed(self, ids):
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
        x = self._embed(ids)
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
    out = model(ids[:, :-1])
    logits = getattr(out, "logits", out)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


def synthetic_corpus(
    n_tokens: int = 20_000, *, vocab_size: int = 32, random_state=0
) -> torch.Tensor:
    """A seeded second-order Markov "grammar": each pair of tokens has a few likely successors
    (Dirichlet(0.1) transition rows), so a small LM learns it in seconds and its perplexity is
    far below ``vocab_size``. Returns a 1-D int64 tensor."""
    n_tokens = check_positive_int(n_tokens, name="n_tokens", minimum=3)
    vocab_size = check_positive_int(vocab_size, name="vocab_size", minimum=2)
    rng = check_random_state(random_state)
    table = rng.dirichlet(np.full(vocab_size, 0.1), size=(vocab_size, vocab_size))
    cdf = table.cumsum(axis=-1)
    u = rng.random(n_tokens)
    out = np.empty(n_tokens, dtype=np.int64)
    out[:2] = rng.integers(vocab_size, size=2)
    for t in range(2, n_tokens):
        out[t] = min(np.searchsorted(cdf[out[t - 2], out[t - 1]], u[t]), vocab_size - 1)
    return torch.from_numpy(out)


def batches(corpus: torch.Tensor, *, seq_len: int, batch_size: int, n_batches: int, random_state=0):
    """``n_batches`` random windows ``(batch_size, seq_len + 1)`` of a 1-D token corpus."""
    check_tensor(corpus, name="corpus", ndim=1, kind="integer")
    seq_len = check_positive_int(seq_len, name="seq_len")
    if corpus.numel() <= seq_len + 1:
        raise ValueError(f"`corpus` has {corpus.numel()} tokens; windows need {seq_len + 2}")
    batch_size = check_positive_int(batch_size, name="batch_size")
    n_batches = check_positive_int(n_batches, name="n_batches")
    rng = check_random_state(random_state)
    offsets = torch.arange(seq_len + 1)
    out = []
    for _ in range(n_batches):
        starts = rng.integers(0, corpus.numel() - seq_len - 1, size=batch_size)
        out.append(corpus[torch.from_numpy(starts)[:, None] + offsets])
    return out


def train_causal_lm(
    model: nn.Module,
    corpus: torch.Tensor,
    *,
    steps: int = 300,
    batch_size: int = 32,
    seq_len: int = 32,
    lr: float = 3e-3,
    random_state=0,
    progress: bool = False,
) -> TrainingResult:
    """Train ``model`` (any causal LM) in place with AdamW on random windows of ``corpus``."""
    steps = check_positive_int(steps, name="steps")
    lr = check_positive(lr, name="lr")
    device = next(model.parameters()).device
    data = batches(
        corpus, seq_len=seq_len, batch_size=batch_size, n_batches=steps, random_state=random_state
    )
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    history = []
    start = time.perf_counter()
    model.train()
    for step in progress_bar(range(steps), enabled=progress, desc="train_causal_lm"):
        loss = causal_lm_loss(model, data[step].to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append({"step": step, "loss": float(loss.detach())})
    model.eval()
    return budget_result(
        history,
        method="causal LM (AdamW)",
        function="train_causal_lm",
        n_iter=steps,
        maxiter=steps,
        criterion="steps",
        remedy="lower `lr`",
        wall_time_s=time.perf_counter() - start,
        device=str(device),
    )


def _check_world_size(model: TinyTPLM, world_size: int, group_size) -> None:
    cfg = model.config
    for key in ("n_heads", "d_model", "d_ff"):
        if cfg[key] % world_size:
            raise ValueError(
                f"`world_size`={world_size} must divide the model's {key}={cfg[key]} "
                "(each rank holds an equal slice)"
            )
    if group_size is not None:
        for key in ("d_model", "d_ff"):
            shard = cfg[key] // world_size
            if shard % group_size:
                raise ValueError(
                    f"`group_size`={group_size} must divide the per-rank {key} shard {shard}, "
                    "so that no group straddles two ranks"
                )


def _shard(model: TinyTPLM, rank: int, p: int) -> list[dict]:
    """Each block's weight slices for one rank (heads and hidden units ``rank``/``p``)."""
    cfg = model.config
    d, H, ff = cfg["d_model"], cfg["n_heads"], cfg["d_ff"]
    hd, h0, h1 = d // H, rank * H // p, (rank + 1) * H // p
    c0, c1 = rank * d // p, (rank + 1) * d // p
    f0, f1 = rank * ff // p, (rank + 1) * ff // p
    out = []
    for block in model.blocks:
        w_qkv = block.attn.qkv.weight.detach().reshape(3, H, hd, d)[:, h0:h1].reshape(-1, d)
        b_qkv = block.attn.qkv.bias.detach().reshape(3, H, hd)[:, h0:h1].reshape(-1)
        out.append(
            {
                "qkv": (w_qkv, b_qkv),
                "out": (block.attn.out.weight.detach()[:, c0:c1], block.attn.out.bias.detach()),
                "fc1": (block.mlp.fc1.weight.detach()[f0:f1], block.mlp.fc1.bias.detach()[f0:f1]),
                "fc2": (block.mlp.fc2.weight.detach()[:, f0:f1], block.mlp.fc2.bias.detach()),
                "heads": h1 - h0,
            }
        )
    return out


def _reduce(partial, bias, *, name, bits, group_size, log):
    """The row-parallel output: all-reduce at 16 bits, the rewrite below; bias added once."""
    import torch.distributed as dist

    if bits == 16:
        total = partial.clone()
        log.add(
            name,
            "all_reduce",
            total.numel() * total.element_size(),
            total.dtype,
            _timed(lambda: dist.all_reduce(total)),
        )
        return total + bias
    q, scales = fused_allreduce_quantize(partial, bits, group_size=group_size, log=log, op=name)
    return dequantize(q, scales, dtype=partial.dtype) + bias


def tp_forward(
    model: TinyTPLM,
    ids,
    *,
    bits: Mapping[str, int],
    group_size,
    activation_bits,
    log: CollectiveLog,
) -> torch.Tensor:
    """One rank's share of the forward pass (call on every rank of an initialised group)."""
    import torch.distributed as dist

    rank, p = dist.get_rank(), dist.get_world_size()
    shards = _shard(model, rank, p)

    def gemm(name, x, w, b):
        return quantized_linear(
            x, w, b, bits=bits.get(name, 16), group_size=group_size, activation_bits=activation_bits
        )

    def row_parallel(name, x, w, b):
        """The row-parallel GEMM (bias-free partial sums), then its all-reduce at its bits."""
        op = f"{name}.allreduce"
        partial = gemm(name, x, w, None)
        return _reduce(partial, b, name=op, bits=bits.get(op, 16), group_size=group_size, log=log)

    x = model._embed(ids)
    for i, (block, s) in enumerate(zip(model.blocks, shards, strict=True)):
        pre = f"blocks.{i}"
        B, T, _ = x.shape
        qkv = gemm(f"{pre}.attn.qkv", block.ln1(x), *s["qkv"])
        heads = [t.reshape(B, T, s["heads"], -1).transpose(1, 2) for t in qkv.chunk(3, dim=-1)]
        a = F.scaled_dot_product_attention(*heads, is_causal=True).transpose(1, 2).reshape(B, T, -1)
        x = x + row_parallel(f"{pre}.attn.out", a, *s["out"])
        hidden = F.gelu(gemm(f"{pre}.mlp.fc1", block.ln2(x), *s["fc1"]))
        x = x + row_parallel(f"{pre}.mlp.fc2", hidden, *s["fc2"])
    return model.head(model.ln_f(x))


def _plot_collectives(result, ax=None, **kwargs):
    """Bytes each rank sends per collective (bars) by op."""
    ax = get_ax(ax)
    table = result.tidy()
    labels = [f"{o}\n{c}" for o, c in zip(table["op"], table["collective"], strict=True)]
    ax.barh(labels, table["wire_bytes"] / 1024, **kwargs)
    ax.invert_yaxis()
    ax.set_xlabel("KiB sent per rank (ring)")
    ax.set_title(result.method)
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class TPRunResult(Results):
    """A tensor-parallel forward run across processes: what crossed the wire and how long it took.

    Parameters
    ----------
    collectives : DataFrame
        One row per collective per rank per repeat: ``rank, step, op, collective, dtype,
        payload_bytes, wire_bytes, wall_time_s``.
    logits : ndarray (batch, length - 1, vocab)
        Rank 0's output of the last repeat.
    loss : float
        Next-token cross-entropy of ``logits``.
    world_size : int
    bits : Series
        Precision per op of the run (ops absent: 16).
    group_size : int or None
    wall_time_s : float
        Whole run, process start-up included.
    """

    collectives: pd.DataFrame = field(repr=False)
    logits: np.ndarray = field(repr=False)
    loss: float
    world_size: int
    bits: pd.Series = field(repr=False)
    group_size: int | None = None
    wall_time_s: float | None = None

    _plots: ClassVar[dict] = {"collectives": _plot_collectives}

    @property
    def perplexity(self) -> float:
        """``exp(loss)``."""
        return math.exp(self.loss)

    @property
    def wire_bytes(self) -> float:
        """Bytes one rank sent per forward pass, summed over collectives (rank 0)."""
        t = self.tidy()
        return float(t["wire_bytes"].sum())

    def glance(self) -> pd.DataFrame:
        """``method, world_size, loss, perplexity, wire_bytes, comm_time_s``."""
        t = self.tidy()
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "world_size": self.world_size,
                    "loss": self.loss,
                    "perplexity": self.perplexity,
                    "wire_bytes": float(t["wire_bytes"].sum()),
                    "comm_time_s": float(t["wall_time_s"].sum()),
                }
            ]
        )

    def tidy(self) -> pd.DataFrame:
        """Per op and collective: ``dtype``, ``payload_bytes`` and ``wire_bytes`` per pass, and
        ``wall_time_s``, the median over repeats of the slowest rank."""
        c = self.collectives
        slowest = c.groupby(["op", "collective", "step"], sort=False)["wall_time_s"].max()
        wall = slowest.groupby(level=[0, 1], sort=False).median()
        first = c[(c["rank"] == 0) & (c["step"] == 0)].set_index(["op", "collective"])
        out = first[["dtype", "payload_bytes", "wire_bytes"]].assign(wall_time_s=wall)
        return out.reset_index()

    def link_fit(self) -> pd.Series:
        """``link_latency`` (s per ring step) and ``link_bandwidth`` (B/s) by least squares of
        wall time on ring steps and wire bytes, for :func:`mlcore.quant.measure_hardware`."""
        t = self.tidy()
        p = self.world_size
        steps = t["collective"].map(_RING_STEPS) * (p - 1)
        X = np.column_stack([steps, t["wire_bytes"]])
        coef, *_ = np.linalg.lstsq(X, t["wall_time_s"].to_numpy(), rcond=None)
        alpha = max(float(coef[0]), 0.0)
        bandwidth = 1 / float(coef[1]) if coef[1] > 0 else math.inf
        return pd.Series({"link_latency": alpha, "link_bandwidth": bandwidth})


def run_tensor_parallel(
    model: TinyTPLM,
    ids,
    *,
    world_size: int = 2,
    bits: Mapping[str, int] | pd.Series | None = None,
    group_size: int | None = 16,
    activation_bits: Sequence[int] = (8,),
    repeats: int = 1,
    timeout: float = 300.0,
) -> TPRunResult:
    """Run ``model``'s forward sharded over ``world_size`` CPU processes talking over gloo.

    Each rank holds its heads and hidden units of every block; row-parallel outputs go through
    a plain fp32 all-reduce (16-bit ops) or :func:`fused_allreduce_quantize` (low-bit
    communication ops); GEMMs run at their op's precision on the local shard.

    Parameters
    ----------
    model : TinyTPLM
        Its weights are copied to each process; the model is not modified.
    ids : Tensor (batch, length), int64
        Token ids; the loss scores ``ids[:, 1:]`` from ``ids[:, :-1]``.
    world_size : int
        Ranks (processes); must divide ``n_heads``, ``d_model`` and ``d_ff``.
    bits : mapping, optional
        Precision per op name (see :func:`mlcore.quant.linear_ops`); missing ops run at 16.
    group_size : int or None
        Entries per quantisation scale, for GEMM weights/activations and payloads; must divide
        each per-rank shard.
    activation_bits : sequence of int
        GEMM precisions that also quantise their inputs.
    repeats : int
        Forward passes; wall times are the median over them.
    timeout : float
        Seconds before the ranks are killed and a RuntimeError is raised.

    Returns
    -------
    TPRunResult
    """
    if not isinstance(model, TinyTPLM):
        raise TypeError(f"`model` must be a TinyTPLM; got {type(model).__name__}")
    world_size = check_positive_int(world_size, name="world_size")
    if group_size is not None:
        group_size = check_positive_int(group_size, name="group_size")
    _check_world_size(model, world_size, group_size)
    check_token_ids(ids, name="ids", vocab=model.config["vocab_size"])
    bits = {k: check_bits(v, name=f"bits[{k!r}]") for k, v in dict(bits or {}).items()}
    repeats = check_positive_int(repeats, name="repeats")
    timeout = check_positive(timeout, name="timeout")
    cpu = _cpu_copy(model)
    ids = ids.detach().cpu()
    start = time.perf_counter()
    job = {
        "kind": "model",
        "model": cpu,
        "ids": ids[:, :-1],
        "bits": bits,
        "group_size": group_size,
        "activation_bits": tuple(activation_bits),
        "repeats": repeats,
        "world_size": world_size,
    }
    parts = _run_job(job, timeout)
    wall = time.perf_counter() - start
    logits = parts[0]["logits"]
    loss = float(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1)))
    records = [r for part in parts for r in part["log"]]
    return TPRunResult(
        method=f"tensor-parallel forward ({world_size} ranks, gloo)",
        collectives=pd.DataFrame(records),
        logits=as_numpy(logits, name="logits"),
        loss=loss,
        world_size=world_size,
        bits=pd.Series(bits, dtype="int64", name="bits"),
        group_size=group_size,
        wall_time_s=wall,
        nobs=int(ids[:, 1:].numel()),
    )


def _cpu_copy(model: TinyTPLM) -> TinyTPLM:
    clone = TinyTPLM(**model.config)
    clone.load_state_dict({k: v.detach().cpu() for k, v in model.state_dict().items()})
    return clone.eval()


def _run_job(job: dict, timeout: float) -> list[dict]:
    """Write ``job`` to a scratch directory, run its ranks and read back what each one saved."""
    with tempfile.TemporaryDirectory() as tmp:
        torch.save(job, os.path.join(tmp, "job.pt"))
        _launch(tmp, job["world_size"], timeout)
        return [
            torch.load(os.path.join(tmp, f"rank{r}.pt"), weights_only=False)
            for r in range(job["world_size"])
        ]


def _launch(workdir: str, world_size: int, timeout: float) -> None:
    """Start the ranks as ``python -m mlcore.quant._tp_worker`` and wait for all of them."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "mlcore.quant._tp_worker", workdir, str(rank)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for rank in range(world_size)
    ]
    deadline = time.monotonic() + timeout
    failures = []
    try:
        for rank, proc in enumerate(procs):
            try:
                _, err = proc.communicate(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                failures.append(f"rank {rank} ran past `timeout`={timeout:g} s")
                continue
            if proc.returncode:
                tail = err.decode(errors="replace").strip().splitlines()[-3:]
                failures.append(f"rank {rank} exited with {proc.returncode}: {' | '.join(tail)}")
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if failures:
        raise RuntimeError("the tensor-parallel run failed: " + "; ".join(failures))


def check_rewrite(
    *,
    world_size: int = 2,
    shape: tuple[int, int] = (64, 256),
    bits: int = 8,
    group_size: int | None = 32,
    reference_group_size: int | str | None = "same",
    random_state: int = 0,
    timeout: float = 120.0,
) -> dict:
    """Run the rewrite and all-reduce-then-quantise on real gloo ranks and compare them.

    Each rank draws seeded partial sums of ``shape`` (heavy-tailed across rows, as activations
    are); both paths run on the same partials.

    Parameters
    ----------
    world_size : int
    shape : (rows, hidden)
    bits : int
    group_size : int or None
        The rewrite's groups (``None``: one scale per shard row).
    reference_group_size : int, None or "same"
        The reference's groups; ``None`` is per-token scales over the full hidden size, the case
        where the two paths differ.
    random_state : int
    timeout : float

    Returns
    -------
    dict
        ``bit_identical`` (the dequantised results of every rank equal exactly),
        ``max_abs_diff``, ``consistent`` (every rank holds the same rewrite result) and
        ``collectives`` (DataFrame of bytes and wall time per rank).
    """
    world_size = check_positive_int(world_size, name="world_size")
    bits = check_bits(bits)
    if bits == 16:
        raise ValueError("`bits` must be below 16; at 16 there is nothing to rewrite")
    rows, width = (check_positive_int(v, name="shape") for v in shape)
    _group_for_shard(width, world_size, group_size)
    if reference_group_size == "same":
        reference_group_size = group_size
    seed = check_positive_int(random_state, name="random_state", minimum=0)
    job = {
        "kind": "rewrite",
        "world_size": world_size,
        "shape": (rows, width),
        "bits": bits,
        "group_size": group_size,
        "reference_group_size": reference_group_size,
        "seed": seed,
        "spread": torch.exp(torch.linspace(-2, 2, rows)).unsqueeze(-1),
    }
    parts = _run_job(job, check_positive(timeout, name="timeout"))
    fused = [dequantize(*part["fused"]) for part in parts]
    reference = [dequantize(*part["reference"]) for part in parts]
    return {
        "bit_identical": all(torch.equal(a, b) for a, b in zip(fused, reference, strict=True)),
        "max_abs_diff": max(
            float((a - b).abs().max()) for a, b in zip(fused, reference, strict=True)
        ),
        "consistent": all(torch.equal(fused[0], f) for f in fused),
        "collectives": pd.DataFrame([r for part in parts for r in part["log"]]),
    }
