"""The retraining command lines of the shipped checkpoints write what the loaders read."""

import pytest
import torch

from mlcore._checkpoints import retrain_main
from mlcore.encoders.tiny import TinyCLIP
from mlcore.encoders.train_tiny_clip import main as retrain_tiny_clip
from mlcore.mi.infoatlas import InfoAtlas
from mlcore.mi.train_infoatlas import main as retrain_infoatlas


def test_tiny_clip_retraining_writes_a_loadable_checkpoint(tmp_path):
    out = tmp_path / "clip.pt"
    retrain_tiny_clip(["--out", str(out), "--steps", "2"])
    model = TinyCLIP.load(out, device="cpu")
    assert model.metadata["settings"]["steps"] == 2
    assert model.metadata["threads"] == 1
    # the loader gives back exactly the weights the script wrote
    blob = torch.load(out, weights_only=True)
    for name, value in model.state_dict().items():
        assert torch.equal(value, blob["state_dict"][name])


def test_infoatlas_retraining_writes_a_loadable_checkpoint(tmp_path):
    out = tmp_path / "atlas.pt"
    retrain_infoatlas(["--out", str(out), "--steps", "2"])
    blob = torch.load(out, weights_only=True)
    # tuples (n_samples) are stored as lists, which weights_only loading reads back as written
    assert blob["settings"]["n_samples"] == [150, 3750]
    assert blob["settings"]["steps"] == 2
    model = InfoAtlas.load(out)
    for name, value in model.net.state_dict().items():
        assert torch.equal(value, blob["state_dict"][name])


def test_retrain_main_refuses_an_unknown_option(tmp_path):
    with pytest.raises(SystemExit):
        retrain_main(
            ["--epochs", "3"],
            description="x",
            default_out=tmp_path / "x.pt",
            settings={"steps": 1},
            train=lambda settings: pytest.fail("must not train"),
        )
