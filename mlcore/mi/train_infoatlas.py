"""Retrain the InfoAtlas checkpoint shipped with mlcore, from a fixed seed.

    python -m mlcore.mi.train_infoatlas [--out PATH] [--steps N] [--threads T]

The defaults reproduce ``mlcore/mi/infoatlas_small.pt`` (same torch version and thread count
give the same weights): ~10 minutes on one quiet CPU core.
"""

from __future__ import annotations

from pathlib import Path

from mlcore._checkpoints import retrain_main
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


def _train(settings):
    model = InfoAtlas.train(**settings, progress=True)
    return model, model.training_result


def main(argv=None) -> None:
    retrain_main(
        argv,
        description=__doc__.splitlines()[0],
        default_out=Path(__file__).with_name(CHECKPOINT),
        settings=SETTINGS,
        train=_train,
    )


if __name__ == "__main__":
    main()
