"""Checkpoints shipped with mlcore: one file layout and one retraining command line.

A checkpoint is a ``torch.save`` dict ``{"config", "state_dict", **fields}`` with float32 CPU
weights, readable by ``torch.load(weights_only=True)``: fields hold only plain Python values.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path

import torch
from torch import nn


def write_checkpoint(path, module: nn.Module, config: Mapping, **fields) -> None:
    """Write ``module``'s weights as float32 on the CPU, its ``config`` and ``fields``."""
    state = {k: v.detach().cpu().float() for k, v in module.state_dict().items()}
    torch.save({"config": dict(config), "state_dict": state, **fields}, path)


def _plain(value):
    """Tuples as lists, recursively: what ``weights_only`` loading reads back unchanged."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def retrain_main(
    argv,
    *,
    description: str,
    default_out: Path,
    settings: Mapping,
    train: Callable,
) -> None:
    """The command line of a shipped checkpoint's retraining script.

    ``train(settings)`` returns ``(model, result)``: a model with ``save(path, **metadata)``
    and its :class:`mlcore.results.TrainingResult`. The options are ``--out``, ``--steps``
    (default: ``settings["steps"]``) and ``--threads`` (default 1: the shipped checkpoints were
    trained on one thread, and the thread count changes the floating-point sums).
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", default=str(default_out))
    parser.add_argument("--steps", type=int, default=settings["steps"])
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    settings = {**settings, "steps": args.steps}
    model, result = train(settings)
    loss = float(result.history["loss"].iloc[-1])
    model.save(
        args.out,
        settings=_plain(settings),
        torch_version=str(torch.__version__),
        threads=args.threads,
        wall_time_s=result.wall_time_s,
        final_loss=loss,
    )
    print(f"wrote {args.out}: {result.wall_time_s:.0f} s, final loss {loss:.4f}")
