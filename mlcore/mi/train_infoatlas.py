"""Retrain the InfoAtlas checkpoint shipped with mlcore, from a fixed seed.

    python -m mlcore.mi.train_infoatlas [--out PATH] [--steps N] [--threads T]

The defaults reproduce ``mlcore/mi/infoatlas_small.pt`` (same torch version and thread count
give the same weights): about 35-40 minutes on one CPU core.
"""

from __future__ import annotations

from pathlib import Path

from mlcore._checkpoints import retrain_main
from mlcore.mi.infoatlas import CHECKPOINT, InfoAtlas

#: the settings of the shipped checkpoint
SETTINGS = {
    "max_dim": 5,
    "grid": 32,
    "channels": 32,
    "steps": 6000,
    "batch_size": 8,
    "n_samples": (150, 3750),
    "eval_fraction": 1 / 3,
    "gaussian_share": 0.5,
    "lr": 1e-3,
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
