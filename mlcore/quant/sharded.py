"""One rank's share of a :class:`~mlcore.quant.TinyTPLM` forward pass over an initialised
``torch.distributed`` group: weight slices, row-parallel reductions and the sharded forward."""

from __future__ import annotations

from collections.abc import Mapping

import torch
import torch.nn.functional as F

from mlcore.quant.collectives import CollectiveLog, fused_allreduce_quantize, timed
from mlcore.quant.quantizers import dequantize, quantized_linear
from mlcore.quant.tp_model import TinyTPLM

__all__ = ["check_world_size", "tp_forward"]


def check_world_size(model: TinyTPLM, world_size: int, group_size) -> None:
    """Refuse a world size that does not split every tensor-parallel width of ``model`` evenly,
    or a ``group_size`` that does not divide each rank's shard."""
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
            timed(lambda: dist.all_reduce(total)),
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

    x = model.embed(ids)
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
