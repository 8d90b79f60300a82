"""CoCoQuant's precision-aligned rewrite of a row-parallel all-reduce, as collective code.

Instead of all-reducing the row-parallel partial sums in high precision and quantising
afterwards, the rewrite (1) reduce-scatters them in fp32, (2) quantises each rank's shard once,
with groups that never straddle shards, (3) all-gathers the low-bit payload and its scales, and
(4) hands the consumer GEMM the payload (:func:`payload_linear`).
:func:`fused_allreduce_quantize` runs it with ``torch.distributed`` (gloo across CPU processes,
NCCL on GPUs); :func:`allreduce_quantize` is the unfused reference and
:func:`simulate_tp_allreduce` both paths in one process.

References
----------
"CoCoQuant: Breaking the Bandwidth Wall via Co-Optimized Communication and Computation
Quantization", ICML 2026. Fidelity: reconstruction. The abstract names a "precision-aligned
graph-rewriting that enables zero-overhead fusion"; the four steps above are this library's
reading of it (reduce-scatter plus all-gather is the standard decomposition of a ring
all-reduce, Patarasuk & Yuan 2009).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import pandas as pd
import torch
import torch.nn.functional as F

from mlcore._checks import check_tensor
from mlcore.quant.quantizers import check_bits, dequantize, pack_int4, quantize, unpack_int4
from statcore.validation import check_positive_int, describe

__all__ = [
    "RING_STEPS",
    "CollectiveLog",
    "allreduce_quantize",
    "fused_allreduce_quantize",
    "group_for_shard",
    "payload_linear",
    "simulate_tp_allreduce",
    "timed",
]

#: Collectives whose ring algorithm sends ``steps · (p-1)/p`` of the full tensor per rank.
RING_STEPS = {"all_reduce": 2, "reduce_scatter": 1, "all_gather": 1}


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
                "wire_bytes": RING_STEPS[collective] * (p - 1) / p * payload_bytes,
                "wall_time_s": wall_time_s,
            }
        )

    def frame(self) -> pd.DataFrame:
        """The records as a DataFrame."""
        return pd.DataFrame(self.records)


def timed(fn):
    """Seconds ``fn()`` takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _check_partial(partial) -> torch.Tensor:
    check_tensor(partial, name="partial", kind="floating", nonempty=True, finite=True)
    if partial.ndim == 0:
        raise ValueError("`partial` must have a last (hidden) axis; got a 0-d tensor")
    return partial


def group_for_shard(width: int, p: int, group_size) -> int:
    """The group size of a rank's shard of ``width / p`` entries: ``group_size``, checked to
    divide the shard (no group straddles two ranks), or the whole shard when None."""
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

    _check_partial(partial)
    bits = check_bits(bits)
    if bits == 16:
        raise ValueError("`bits`=16 needs no rewrite; use a plain all-reduce")
    p = dist.get_world_size(process_group)
    width = partial.shape[-1]
    group = group_for_shard(width, p, group_size)
    shard_width = width // p
    chunks = [c.contiguous() for c in partial.to(torch.float32).split(shard_width, dim=-1)]
    shard = torch.empty_like(chunks[0])
    wall = timed(lambda: dist.reduce_scatter(shard, chunks, group=process_group))
    if log is not None:
        log.add(op, "reduce_scatter", 4 * partial.numel(), torch.float32, wall)
    q, scales = quantize(shard, bits, group_size=group, name="partial")
    payload = (pack_int4(q) if bits == 4 else q).view(torch.uint8)
    # One message per rank: the payload bytes, then the fp32 scales' bytes, row by row.
    rows = payload.reshape(-1, payload.shape[-1])
    message = torch.cat([rows, scales.reshape(rows.shape[0], -1).view(torch.uint8)], dim=-1)
    pieces = [torch.empty_like(message) for _ in range(p)]
    wall = timed(lambda: dist.all_gather(pieces, message.contiguous(), group=process_group))
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

    _check_partial(partial)
    bits = check_bits(bits)
    total = partial.to(torch.float32).clone()
    wall = timed(lambda: dist.all_reduce(total, group=process_group))
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
    if first.ndim == 0:
        raise ValueError("`shards[0]` must have a last (hidden) axis; got a 0-d tensor")
    for i, s in enumerate(shards):
        check_tensor(s, name=f"shards[{i}]", kind="floating", finite=True)
        if s.shape != first.shape:
            raise ValueError(f"`shards[{i}]` has shape {tuple(s.shape)}, not {tuple(first.shape)}")
    bits = check_bits(bits)
    p = len(shards)
    width = first.shape[-1]
    group = group_for_shard(width, p, group_size)
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
    check_tensor(weight, name="weight", ndim=2, kind="floating", nonempty=True, finite=True)
    x = dequantize(q, scales, dtype=weight.dtype)
    if x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"the payload's width {x.shape[-1]} does not match `weight`'s {weight.shape[1]} inputs"
        )
    return F.linear(x, weight, bias)
