"""extract_features: forward hooks on a tiny module, CPU (CUDA too when present)."""

import numpy as np
import pytest
import torch

from mlcore.analysis import extract_features
from statcore.geometry import AlignmentStudy


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 2, 3, padding=1)
        self.head = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(2 * 4 * 4, 3))
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.head(torch.relu(self.conv(x))))


@pytest.fixture
def setup():
    torch.manual_seed(0)
    model = Tiny()
    x = torch.randn(10, 1, 4, 4)
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(x, torch.zeros(10)), batch_size=4
    )
    return model, x, loader


def test_layers_match_direct_forward_in_loader_order(setup):
    model, x, loader = setup
    feats = extract_features(model, loader, layers=["conv", "head.1"])
    assert feats["conv"].shape == (10, 32) and feats["head.1"].shape == (10, 3)
    with torch.no_grad():
        conv = model.conv(x)
        head = model.head(torch.relu(conv))
    # eval mode: dropout off, so the model output equals the head output exactly
    np.testing.assert_allclose(feats["conv"], conv.flatten(1).double().numpy(), rtol=1e-6)
    np.testing.assert_allclose(feats["head.1"], head.double().numpy(), rtol=1e-6)
    out = extract_features(model, loader)["output"]
    np.testing.assert_allclose(out, feats["head.1"], rtol=1e-6)
    assert feats["conv"].dtype == np.float64


def test_model_left_as_found(setup):
    model, _, loader = setup
    model.train()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    extract_features(model, loader, layers="conv")
    assert model.training
    assert not model.conv._forward_hooks
    for key, value in model.state_dict().items():
        assert torch.equal(value, state[key])


def test_hooks_removed_when_a_batch_fails(setup):
    model, _, _ = setup
    with pytest.raises(RuntimeError):
        extract_features(model, [torch.randn(2, 1, 5, 5)], layers="conv")
    assert not model.conv._forward_hooks


def test_bad_input_names_argument(setup):
    model, _, loader = setup
    with pytest.raises(ValueError, match="`layers`.*nope"):
        extract_features(model, loader, layers=["nope"])
    with pytest.raises(TypeError, match="`model`"):
        extract_features(lambda t: t, loader)
    with pytest.raises(TypeError, match="`loader`"):
        extract_features(model, [np.zeros((2, 1, 4, 4))])
    with pytest.raises(ValueError, match="`loader`"):
        extract_features(model, [])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_model_gives_cpu_arrays(setup):
    model, x, loader = setup
    cpu = extract_features(model, loader, layers="conv")["conv"]
    gpu = extract_features(model.cuda(), loader, layers="conv")["conv"]
    np.testing.assert_allclose(gpu, cpu, rtol=1e-4, atol=1e-5)


def test_features_feed_alignment_study():
    torch.manual_seed(1)
    x = torch.randn(120, 6)
    feats = {}
    for width in (4, 8, 16):
        net = torch.nn.Sequential(torch.nn.Linear(6, width), torch.nn.Tanh())
        feats[f"w{width}"] = extract_features(net, x.split(50))["output"]
    res = AlignmentStudy(feats).fit(n_resamples=19, random_state=0)
    assert res.alignment_matrix.shape == (3, 3)
    assert np.all(res.models["lid"] > 0)
