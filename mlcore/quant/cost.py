"""Hardware as data and the roofline cost of every op at every precision (CoCoQuant's cost model).

Fidelity: reconstruction. The CoCoQuant abstract (ICML 2026) names "roofline-based
cost modeling"; the formulas below are the standard roofline (Williams, Waterman & Patterson,
CACM 2009) and ring-collective (Patarasuk & Yuan, JPDC 2009) models, not read from the paper.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from mlcore._device import torch_generator
from mlcore.quant.quantizers import check_bits
from statcore.validation import check_option, check_positive, check_positive_int

OP_KINDS = ("gemm", "comm")


@dataclass(frozen=True)
class HardwareSpec:
    """One accelerator and its tensor-parallel interconnect, as numbers.

    Parameters
    ----------
    name : str
    peak_flops : mapping of int to float
        Dense peak FLOP/s by GEMM precision in bits (``{16: ..., 8: ...}``). A precision absent
        here runs weight-only: its weights are stored at that width and dequantised into a
        16-bit GEMM (W4A16 on hardware without int4 tensor cores).
    memory_bandwidth : float
        Bytes/s from device memory.
    link_bandwidth : float
        Bytes/s one rank sends to its ring neighbour.
    link_latency : float
        Seconds per ring step (the α of the collective model).
    tp_size : int
        Tensor-parallel ranks ``p``.
    source : str
        Where the numbers come from (datasheet, measured, abstract).
    """

    name: str
    peak_flops: Mapping[int, float]
    memory_bandwidth: float
    link_bandwidth: float
    link_latency: float
    tp_size: int = 2
    source: str = "user"

    def __post_init__(self):
        if not isinstance(self.peak_flops, Mapping) or 16 not in self.peak_flops:
            raise ValueError(
                f"`peak_flops` must be a mapping from bits to FLOP/s with a 16-bit entry; got "
                f"{self.peak_flops!r}"
            )
        flops = {}
        for bits, value in self.peak_flops.items():
            flops[check_bits(bits, name="peak_flops key")] = check_positive(
                value, name=f"peak_flops[{bits}]"
            )
        object.__setattr__(self, "peak_flops", dict(sorted(flops.items(), reverse=True)))
        check_positive(self.memory_bandwidth, name="memory_bandwidth")
        check_positive(self.link_bandwidth, name="link_bandwidth")
        check_positive(self.link_latency, name="link_latency", strict=False)
        check_positive_int(self.tp_size, name="tp_size")

    def with_tp_size(self, tp_size: int) -> HardwareSpec:
        """The same hardware with ``tp_size`` ranks."""
        return HardwareSpec(**{**self.__dict__, "tp_size": tp_size})


#: Hardware descriptions as data. "abstract" is a round-number machine for checking the
#: arithmetic by hand (P16 = 1e14, P8 = 2e14 FLOP/s, 1e12 B/s memory, 1e11 B/s link, α = 5 µs,
#: p = 8); the others are dense
#: datasheet peaks (no sparsity) with per-direction NVLink / PCIe bandwidth and an assumed 5 µs
#: (NVLink) or 10 µs (PCIe) per ring step.
HARDWARE: dict[str, HardwareSpec] = {
    "abstract": HardwareSpec(
        "abstract",
        {16: 1e14, 8: 2e14},
        1e12,
        1e11,
        5e-6,
        tp_size=8,
        source="round numbers for hand arithmetic",
    ),
    "a100-nvlink": HardwareSpec(
        "a100-nvlink",
        {16: 312e12, 8: 624e12},
        2.039e12,
        300e9,
        5e-6,
        tp_size=8,
        source="NVIDIA A100 SXM datasheet",
    ),
    "h100-nvlink": HardwareSpec(
        "h100-nvlink",
        {16: 989e12, 8: 1979e12},
        3.35e12,
        450e9,
        5e-6,
        tp_size=8,
        source="NVIDIA H100 SXM datasheet",
    ),
    "l40s-pcie": HardwareSpec(
        "l40s-pcie",
        {16: 362e12, 8: 733e12},
        0.864e12,
        32e9,
        10e-6,
        tp_size=4,
        source="NVIDIA L40S datasheet; PCIe 4.0 x16",
    ),
}


def measure_hardware(
    *,
    tp_size: int = 2,
    link_bandwidth: float | None = None,
    link_latency: float | None = None,
    size: int = 512,
    repeats: int = 5,
    device=None,
) -> HardwareSpec:
    """A :class:`HardwareSpec` measured on this machine (the measured-profile option).

    The 16-bit peak is the best of ``repeats`` timed products of two ``size`` × ``size`` matrices in
    float32 (the dtype every device runs fast); memory bandwidth is the best timed copy of a 64 MiB
    tensor (read plus write). Integer GEMM speed is not measured: torch has no portable int8 matmul,
    so the profile has only a 16-bit peak and every lower precision is costed weight-only. The link
    numbers are not measured here; pass the ones :meth:`TPRunResult.link_fit` estimates from a real
    gloo run, or leave them to default to the memory bandwidth and 10 µs.
    """
    size = check_positive_int(size, name="size", minimum=16)
    repeats = check_positive_int(repeats, name="repeats")
    # checked before the timing, not after it in HardwareSpec
    tp_size = check_positive_int(tp_size, name="tp_size")
    if link_bandwidth is not None:
        link_bandwidth = check_positive(link_bandwidth, name="link_bandwidth")
    if link_latency is not None:
        link_latency = check_positive(link_latency, name="link_latency", strict=False)
    dev = torch.device("cpu" if device is None else device)
    # any values time the same; a generator of its own leaves torch's global RNG alone
    gen = torch_generator(0, dev)
    a = torch.randn(size, size, device=dev, generator=gen)
    b = torch.randn(size, size, device=dev, generator=gen)
    src = torch.empty(2**24, device=dev)
    dst = torch.empty_like(src)

    def best(fn) -> float:
        times = []
        for _ in range(repeats + 1):
            if dev.type == "cuda":
                torch.cuda.synchronize(dev)
            start = time.perf_counter()
            fn()
            if dev.type == "cuda":
                torch.cuda.synchronize(dev)
            times.append(time.perf_counter() - start)
        return min(times[1:])  # the first call pays allocation and kernel selection

    flops = 2 * size**3 / best(lambda: torch.mm(a, b))
    bandwidth = 2 * src.numel() * src.element_size() / best(lambda: dst.copy_(src))
    return HardwareSpec(
        name=f"measured-{dev.type}",
        peak_flops={16: flops},
        memory_bandwidth=bandwidth,
        link_bandwidth=bandwidth if link_bandwidth is None else link_bandwidth,
        link_latency=10e-6 if link_latency is None else link_latency,
        tp_size=tp_size,
        source="measured on this machine (float32 matmul and copy)",
    )


@dataclass(frozen=True)
class QuantOp:
    """One quantisable op of a tensor-parallel model, with the shapes one rank sees.

    Parameters
    ----------
    name : str
    kind : {"gemm", "comm"}
        A GEMM ``(M, K) @ (K, N)``, or the all-reduce of an ``(M, N)`` tensor of partial sums.
    M, N, K : int
        Tokens, output width, reduction width (``K`` unused for ``"comm"``).
    consumer : str, optional
        For ``"comm"``: the GEMM that reads the reduced tensor, the partner of the alignment
        coupling. None when nothing quantised reads it.
    module : str, optional
        The ``nn.Linear`` the op belongs to (its own for a GEMM; the row-parallel linear whose
        output is reduced for a communication op); default ``name``.
    bits : tuple of int
        The precisions allowed for this op.
    """

    name: str
    kind: str
    M: int
    N: int
    K: int = 0
    consumer: str | None = None
    module: str | None = None
    bits: tuple[int, ...] = (16, 8, 4)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"`name` must be a non-empty string; got {self.name!r}")
        check_option(self.kind, name="kind", options=OP_KINDS)
        for dim in ("M", "N"):
            check_positive_int(getattr(self, dim), name=f"{self.name}.{dim}")
        if self.kind == "gemm":
            check_positive_int(self.K, name=f"{self.name}.K")
        elif self.consumer is not None and not isinstance(self.consumer, str):
            raise TypeError(f"`consumer` must be an op name or None; got {self.consumer!r}")
        bits = tuple(check_bits(b, name=f"{self.name}.bits") for b in self.bits)
        if not bits or len(set(bits)) != len(bits):
            raise ValueError(f"`{self.name}.bits` must be distinct bit-widths; got {self.bits}")
        object.__setattr__(self, "bits", bits)
        if self.module is None:
            object.__setattr__(self, "module", self.name)


class RooflineCostModel:
    """Roofline time of each op at each precision on a :class:`HardwareSpec`.

    Parameters
    ----------
    hardware : HardwareSpec or str
        A spec, or a key of ``HARDWARE``.
    scale_group_size : int, optional
        Entries per scale in a low-bit communication payload; ``None`` leaves scales out of the
        byte count (the round-number arithmetic of the "abstract" machine).
    scale_bytes : int
        Bytes per scale.
    reduce_bits : int
        Width of the partial sums the reduce-scatter half of the rewrite sends (16: half
        precision on the wire, accumulated in fp32 on arrival).

    Notes
    -----
    - GEMM at ``b`` bits: ``t = max(2MNK / P(b), Q(b) / BW_mem)``; weights at ``b`` bits,
      activations at ``b`` when the hardware has a ``b``-bit peak (else at 16, weight-only),
      outputs at 16.
    - Ring all-reduce of ``S`` bytes: ``2(p-1)/p · S / BW_link + 2(p-1)α``; reduce-scatter and
      all-gather cost half of it each.
    - A communication op at ``b < 16`` is the precision-aligned rewrite: a reduce-scatter of
      ``reduce_bits`` partial sums, then an all-gather of the ``b``-bit payload and its scales.
      At 16 it is the plain all-reduce.
    - A quantise or dequantise kernel that is not fused costs its bytes over ``BW_mem``
      (:meth:`mismatch_time`); the aligned rewrite fuses both away.

    Fidelity: reconstruction (standard roofline and ring models; the paper's were not read).
    """

    def __init__(
        self,
        hardware: HardwareSpec | str,
        *,
        scale_group_size: int | None = None,
        scale_bytes: int = 2,
        reduce_bits: int = 16,
    ):
        if isinstance(hardware, str):
            check_option(hardware, name="hardware", options=tuple(HARDWARE))
            hardware = HARDWARE[hardware]
        if not isinstance(hardware, HardwareSpec):
            raise TypeError(f"`hardware` must be a HardwareSpec or a name; got {hardware!r}")
        self.hardware = hardware
        if scale_group_size is not None:
            scale_group_size = check_positive_int(scale_group_size, name="scale_group_size")
        self.scale_group_size = scale_group_size
        self.scale_bytes = check_positive_int(scale_bytes, name="scale_bytes")
        self.reduce_bits = check_bits(reduce_bits, name="reduce_bits")

    def __repr__(self) -> str:
        return f"RooflineCostModel({self.hardware.name}, p={self.hardware.tp_size})"

    def activation_bits(self, bits: int) -> int:
        """Width of a GEMM's activations when its weights are at ``bits``."""
        return bits if bits in self.hardware.peak_flops else 16

    def gemm_times(self, M: int, N: int, K: int, bits: int) -> tuple[float, float]:
        """``(compute time, memory time)`` of one ``(M, K) @ (K, N)`` GEMM at ``bits``."""
        bits = check_bits(bits)
        a_bits = self.activation_bits(bits)
        compute = 2.0 * M * N * K / self.hardware.peak_flops[a_bits]
        moved = M * K * a_bits / 8 + K * N * bits / 8 + M * N * 2
        return compute, moved / self.hardware.memory_bandwidth

    def gemm_time(self, M: int, N: int, K: int, bits: int) -> float:
        """Roofline time of the GEMM: the larger of its compute and memory times."""
        return max(self.gemm_times(M, N, K, bits))

    def payload_bytes(self, n_elements: int, bits: int) -> float:
        """Bytes of ``n_elements`` at ``bits`` on the wire, scales included where counted."""
        data = n_elements * bits / 8
        if bits < 16 and self.scale_group_size is not None:
            data += math.ceil(n_elements / self.scale_group_size) * self.scale_bytes
        return data

    def _ring(self, n_elements: int, bits: int, steps: int) -> float:
        p = self.hardware.tp_size
        if p == 1:
            return 0.0
        size = self.payload_bytes(n_elements, bits)
        hw = self.hardware
        return steps * ((p - 1) / p * size / hw.link_bandwidth + (p - 1) * hw.link_latency)

    def allreduce_time(self, n_elements: int, bits: int = 16) -> float:
        """Ring all-reduce of ``n_elements`` entries sent at ``bits``."""
        return self._ring(n_elements, check_bits(bits), steps=2)

    def reduce_scatter_time(self, n_elements: int, bits: int = 16) -> float:
        """Ring reduce-scatter: half an all-reduce."""
        return self._ring(n_elements, check_bits(bits), steps=1)

    def all_gather_time(self, n_elements: int, bits: int = 16) -> float:
        """Ring all-gather: half an all-reduce."""
        return self._ring(n_elements, check_bits(bits), steps=1)

    def comm_time(self, n_elements: int, bits: int) -> float:
        """A communication op at ``bits``: all-reduce at 16, the rewrite below 16."""
        if check_bits(bits) == 16:
            return self.allreduce_time(n_elements, 16)
        return self.reduce_scatter_time(n_elements, self.reduce_bits) + self.all_gather_time(
            n_elements, bits
        )

    def op_time(self, op: QuantOp, bits: int) -> float:
        """Time of ``op`` at ``bits`` (fused quantisers: no extra kernels)."""
        if op.kind == "gemm":
            return self.gemm_time(op.M, op.N, op.K, bits)
        return self.comm_time(op.M * op.N, bits)

    def mismatch_time(self, op: QuantOp, comm_bits: int, consumer_bits: int) -> float:
        """Unfused kernels between communication op ``op`` and its consumer GEMM.

        Zero when the payload already is the consumer's format (``comm_bits ==
        consumer_bits``: the aligned rewrite). Otherwise a low-bit payload pays a quantise pass
        over the rank's shard and a dequantise pass over the gathered tensor, and a low-bit
        consumer pays a quantise pass of its input.
        """
        if comm_bits == consumer_bits:
            return 0.0
        n = op.M * op.N
        p = self.hardware.tp_size
        moved = 0.0
        if comm_bits < 16:
            moved += n / p * (2 + comm_bits / 8) + n * (comm_bits / 8 + 2)
        if consumer_bits < 16:
            moved += n * (2 + self.activation_bits(consumer_bits) / 8)
        return moved / self.hardware.memory_bandwidth

    def table(self, ops: Sequence[QuantOp]) -> pd.DataFrame:
        """Time in seconds of every op (rows) at every precision it allows (columns)."""
        ops = check_ops(ops)
        widths = sorted({b for op in ops for b in op.bits}, reverse=True)
        rows = {
            op.name: [self.op_time(op, b) if b in op.bits else np.nan for b in widths] for op in ops
        }
        return pd.DataFrame.from_dict(rows, orient="index", columns=widths)

    def latency(self, ops: Sequence[QuantOp], bits: Mapping[str, int]) -> float:
        """Predicted time of one pass with ``bits`` per op, unfused kernels included."""
        ops = check_ops(ops)
        missing = [op.name for op in ops if op.name not in bits]
        if missing:
            raise ValueError(f"`bits` has no precision for the ops {missing}")
        total = 0.0
        for op in ops:
            b = check_bits(bits[op.name], name=f"bits[{op.name!r}]")
            if b not in op.bits:
                raise ValueError(f"`bits[{op.name!r}]`={b} is not among the op's {op.bits}")
            total += self.op_time(op, b)
            if op.kind == "comm":
                consumer_bits = 16 if op.consumer is None else bits[op.consumer]
                total += self.mismatch_time(op, b, consumer_bits)
        return total


def check_ops(ops) -> tuple[QuantOp, ...]:
    """Non-empty :class:`QuantOp` sequence, unique names, consumers that are GEMMs in it."""
    if isinstance(ops, QuantOp) or not isinstance(ops, Sequence) or not len(ops):
        raise TypeError(f"`ops` must be a non-empty sequence of QuantOp; got {type(ops).__name__}")
    for op in ops:
        if not isinstance(op, QuantOp):
            raise TypeError(f"`ops` must hold QuantOp objects; got {type(op).__name__}")
    by_name = {op.name: op for op in ops}
    if len(by_name) != len(ops):
        raise ValueError("`ops` must have unique names")
    for op in ops:
        if op.kind == "comm" and op.consumer is not None:
            partner = by_name.get(op.consumer)
            if partner is None or partner.kind != "gemm":
                raise ValueError(
                    f"the consumer {op.consumer!r} of {op.name!r} must be a GEMM op in `ops`"
                )
    return tuple(ops)
