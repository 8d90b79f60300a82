"""Launching tensor-parallel jobs on gloo ranks: a whole forward pass, or the rewrite alone.

Each rank is a ``python -m mlcore.quant._tp_worker`` process (so that no caller's ``__main__``
is re-imported); the job and the ranks' outputs travel through a scratch directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence

import pandas as pd
import torch
import torch.nn.functional as F

from mlcore._checks import check_token_ids
from mlcore._device import as_numpy, torch_seed
from mlcore.quant.collectives import group_for_shard
from mlcore.quant.quantizers import check_bits, dequantize
from mlcore.quant.sharded import check_world_size
from mlcore.quant.tp_model import TinyTPLM
from mlcore.quant.tp_results import TPRunResult
from statcore.validation import check_positive, check_positive_int

__all__ = ["check_rewrite", "run_tensor_parallel"]


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
    check_world_size(model, world_size, group_size)
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
    random_state=0,
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
    random_state : None, int or numpy Generator
        Seeds the ranks' partial sums (rank ``r`` draws from seed ``s + r``).
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
    group_for_shard(width, world_size, group_size)
    if reference_group_size == "same":
        reference_group_size = group_size
    seed = torch_seed(random_state)
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
