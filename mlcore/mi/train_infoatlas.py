"""Retrain the InfoAtlas checkpoint shipped with mlcore, from a fixed seed.

    python -m mlcore.mi.train_infoatlas [--out PATH] [--steps N] [--threads T]

The defaults reproduce ``mlcore/mi/infoatlas_small.pt`` (same torch version and thread count
give the same weights): ~10 minutes on one quiet CPU core.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from mlcore.mi.infoatlas import CHECKPOINT, InfoAtlas

#: the settings of the shipped checkpoint
SETTINGS = {
    "max_dim": 5,
    "width": 64,
    "critic_hidden": 32,
    "steps": 2000,
    "batch_size": 8,
    "n_samples": (200, 600),
    "lr": 2e-3,
    "random_state": 0,
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).with_name(CHECKPOINT)))
    parser.add_argument("--steps", type=int, default=SETTINGS["steps"])
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    settings = {**SETTINGS, "steps": args.steps}
    model = InfoAtlas.train(**settings, progress=True)
    result = model.training_result
    model.save(
        args.out,
        settings=dict(settings, n_samples=list(settings["n_samples"])),
        torch_version=str(torch.__version__),
        threads=args.threads,
        wall_time_s=result.wall_time_s,
        final_loss=float(result.history["loss"].iloc[-1]),
    )
    loss = result.history["loss"].iloc[-1]
    print(f"wrote {args.out}: {result.wall_time_s:.0f} s, final loss {loss:.4f}")


if __name__ == "__main__":
    main()
