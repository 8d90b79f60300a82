"""Unit checks of mlcore.transfer (XTransfer): data, stems, adapters, costs, anchors, search,
removal, results and bad input. The 5-seed evidence is in test_xtransfer_e2e.py."""

import hashlib
from importlib import resources

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import torch
from torch import nn

from mlcore.transfer import (
    LayerRecombiner,
    ShapeAdapter,
    SourceModel,
    XTransfer,
    XTransferResult,
    anchor_separability,
    basic_motions,
    cnn1d_source,
    fit_anchors,
    mmd2,
    module_cost,
    synthetic_imu,
    tiny_clip_source,
)
from mlcore.transfer.sources import SignalStem, SpectrogramStem, channel_moments

BASIC_MOTIONS_SHA256 = "ffbff855ad2acafcd7711f92029c5af6ce9c796feb42dd3d98de0cc8e2df52f3"


@pytest.fixture(scope="module")
def sources():
    return (tiny_clip_source(n_reference=100), cnn1d_source())


@pytest.fixture(scope="module")
def shots():
    d = synthetic_imu(12, random_state=3)
    idx, rest = d.few_shot(3, random_state=3)
    return d.X[idx], d.y[idx], d.X[rest], d.y[rest]


class _Residual(nn.Module):
    """A residual layer whose branch is scaled by ``eps``: negligible for small ``eps``."""

    def __init__(self, channels, eps):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 3, padding=1)
        self.eps = eps

    def forward(self, x):
        return x + self.eps * torch.tanh(self.conv(x))


def _toy_source(eps):
    torch.manual_seed(0)
    layers = (
        ("conv", nn.Sequential(nn.Conv1d(3, 8, 5, padding=2), nn.GELU())),
        ("res", _Residual(8, eps)),
        ("down", nn.Sequential(nn.Conv1d(8, 8, 3, stride=2, padding=1), nn.GELU())),
    )
    ref = torch.randn(60, 3, 64)
    return SourceModel("toy", layers, (3, 64), ref, np.arange(60) % 6)


def test_synthetic_imu_is_seeded_and_balanced():
    a, b = synthetic_imu(6, random_state=1), synthetic_imu(6, random_state=1)
    assert a.X.shape == (36, 3, 128) and a.X.dtype == np.float32
    np.testing.assert_array_equal(a.X, b.X)
    assert np.bincount(a.y).tolist() == [6] * 6
    assert set(a.groups.tolist()) == set(range(6))
    assert not np.array_equal(a.X, synthetic_imu(6, random_state=2).X)


def test_basic_motions_ships_the_uea_set():
    d = basic_motions()
    assert d.X.shape == (80, 6, 100) and np.isfinite(d.X).all()
    assert np.bincount(d.y).tolist() == [20, 20, 20, 20]
    assert np.bincount(d.groups).tolist() == [40, 40]
    # the first value of the archive's first training case (BasicMotions_TRAIN.ts)
    assert d.X[0, 0, 0] == pytest.approx(0.079106)
    # the bytes converted from aeon 1.6.0's .ts files (see the loader's Notes)
    shipped = resources.files("mlcore.transfer").joinpath("basic_motions.csv").read_bytes()
    assert hashlib.sha256(shipped).hexdigest() == BASIC_MOTIONS_SHA256


def test_stems_match_source_input_moments(sources):
    X = torch.from_numpy(synthetic_imu(5, random_state=0).X)
    for stem, src in ((SpectrogramStem(3, 3, 16), sources[0]), (SignalStem(3, 3, 128), sources[1])):
        stem.match(X, *src.input_moments)
        m, s = channel_moments(stem(X))
        # the affine solves the moment equations exactly; float32 rounding only
        torch.testing.assert_close(m, src.input_moments[0], atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(s, src.input_moments[1], atol=1e-4, rtol=1e-4)
    assert SpectrogramStem(6, 3, 16)(torch.randn(2, 6, 100)).shape == (2, 3, 16, 16)


@pytest.mark.parametrize(
    "in_shape, out_shape",
    [
        ((32, 16, 16), (16, 128)),
        ((16, 128), (32, 16, 16)),
        ((64, 8, 8), (96, 4, 4)),
        ((8, 32), (16, 64)),
    ],
)
def test_shape_adapter_maps_between_layouts(in_shape, out_shape):
    adapter = ShapeAdapter(in_shape, out_shape, generator=torch.Generator().manual_seed(0))
    x = torch.randn(5, *in_shape)
    assert adapter(x).shape == (5, *out_shape)
    mean, sd = torch.linspace(-1, 1, out_shape[0]), torch.linspace(0.5, 2, out_shape[0])
    adapter.match(x, mean, sd)
    m, s = channel_moments(adapter(x))
    torch.testing.assert_close(m, mean, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(s, sd, atol=1e-4, rtol=1e-4)


def test_module_cost_counts_parameters_and_macs():
    conv = nn.Conv1d(3, 4, 5, padding=2)
    # params 3*4*5 + 4; MACs: 4 outputs x 10 positions, each 3*5 products
    assert module_cost(conv, (3, 10)) == {"params": 64, "flops": 600}
    lin = nn.Sequential(nn.Flatten(), nn.Linear(6, 2))
    assert module_cost(lin, (2, 3)) == {"params": 14, "flops": 12}


def test_anchors_match_target_classes_to_distinct_source_means():
    g = torch.Generator().manual_seed(0)
    centres = torch.tensor([[5.0, 0.0], [0.0, 5.0], [-5.0, 0.0], [0.0, -5.0]])
    src_labels = np.repeat(np.arange(4), 30)
    src = centres[src_labels] + 0.1 * torch.randn(120, 2, generator=g)
    # target classes 0, 1, 2 sit near source classes 3, 0, 1
    y = np.repeat(np.arange(3), 5)
    tgt = centres[torch.tensor([3, 0, 1])[y]] * 0.8 + 0.1 * torch.randn(15, 2, generator=g)
    anc = fit_anchors("l", src, src_labels, tgt, y, 3, n_pca=2)
    assert anc.mode == "source"
    src_means = anc.project(centres[[3, 0, 1]])
    # anchors are the empirical source means: within the noise (sd 0.1 / sqrt(30)) of the centres
    torch.testing.assert_close(anc.anchors, src_means, atol=0.1, rtol=0)
    at = anc.mean + anc.anchors[torch.from_numpy(y)] @ anc.components
    assert float(anc.loss(at, torch.from_numpy(y))) < 1e-10
    assert fit_anchors("l", src, src_labels, tgt, y, 3, n_pca=2, mode="target").mode == "target"


def test_mmd_and_separability_proxy():
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(50, 4, generator=g), torch.randn(50, 4, generator=g)
    assert mmd2(a, a, 1.0) == pytest.approx(0.0, abs=1e-7)
    # two samples of one law give only the V-statistic's O(1/n) bias
    assert mmd2(a, b + 3.0, 1.0) > 5 * mmd2(a, b, 1.0)
    y = np.repeat(np.arange(3), 6)
    separated = torch.eye(3)[torch.from_numpy(y)] * 4 + 0.1 * torch.randn(18, 3, generator=g)
    noise = torch.randn(18, 3, generator=g)
    assert anchor_separability(separated, y) > 1.0  # LOO accuracy 1 plus a positive margin
    assert anchor_separability(noise, y) < 0.8


def test_search_meets_budget_and_is_deterministic(sources, shots):
    X, y, _, _ = shots
    Xt = torch.from_numpy(X)
    runs = [
        LayerRecombiner(sources, budget=12_000, beam=2, random_state=5).search(Xt, y, 6)
        for _ in range(2)
    ]
    (arch, trace), (arch2, trace2) = runs
    assert arch == arch2
    np.testing.assert_array_equal(trace["score"].to_numpy(), trace2["score"].to_numpy())
    chosen = trace[trace["selected"]].iloc[0]
    assert chosen["params"] <= 12_000 and chosen["feasible"]
    feasible = trace[trace["feasible"]]
    assert (feasible["params"] <= 12_000).all()
    assert chosen["score"] == feasible["score"].max()
    with pytest.raises(ValueError, match="fits no layer"):
        LayerRecombiner(sources, budget=100).search(Xt, y, 6)


def test_removal_drops_a_negligible_layer(shots):
    X, y, Xv, yv = shots
    kept = XTransfer([_toy_source(eps=0.5)], architecture=[(0, 0), (0, 1), (0, 2)], steps=5)
    dropped = XTransfer([_toy_source(eps=1e-4)], architecture=[(0, 0), (0, 1), (0, 2)], steps=5)
    assert kept.fit(X, y).removed == ()
    res = dropped.fit(X, y, X_val=Xv, y_val=yv)
    assert res.removed == ("toy.res",)
    assert list(res.per_layer_shift["layer"]) == ["toy.conv", "toy.down"]
    assert res.n_iter == 10  # a second repair of the smaller model


def test_fit_result_reports_and_is_reproducible(sources, shots):
    X, y, Xv, yv = shots
    X0, y0 = X.copy(), y.copy()
    kw = dict(budget=15_000, beam=2, max_depth=2, steps=10, random_state=1)
    res = XTransfer(sources, **kw).fit(X, y, X_val=Xv, y_val=yv)
    again = XTransfer(sources, **kw).fit(X, y, X_val=Xv, y_val=yv)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    assert isinstance(res, XTransferResult)
    assert res.arch == again.arch and res.val_accuracy == again.val_accuracy
    pd_a, pd_b = res.per_layer_shift, again.per_layer_shift
    np.testing.assert_array_equal(pd_a["mmd_after"].to_numpy(), pd_b["mmd_after"].to_numpy())
    assert res.cost["params"] <= 15_000
    assert res.cost["params"] == res.architecture.loc[~res.architecture["removed"], "params"].sum()
    assert res.converged and res.n_iter == 10
    text = str(res.summary())
    assert "mmd_before" in text and "accuracy" in text
    assert set(res.tidy().columns) >= {"layer", "params", "mmd_before", "mmd_after", "reduction"}
    assert res.glance()["params"].iloc[0] == res.cost["params"]
    for kind in ("shift", "search", "history"):
        res.plot(kind)
    no_val = XTransfer(sources, **kw).fit(X, y)
    assert no_val.accuracy.index.tolist() == ["xtransfer"]
    assert res.predict(Xv).shape == yv.shape
    assert res.strip().predict(Xv).shape == yv.shape  # the network survives strip()


def test_val_accuracy_is_the_accuracy_on_the_validation_windows(sources, shots):
    X, y, Xv, yv = shots
    kw = dict(architecture=[(1, 0), (1, 1)], steps=15, random_state=2)
    res = XTransfer(sources, **kw).fit(X, y, X_val=Xv, y_val=yv)
    # computed independently: the repaired network's predictions on the validation split
    with torch.no_grad():
        pred = res.network(torch.from_numpy(Xv).float()).argmax(1).numpy()
    assert res.val_accuracy == pytest.approx(float((pred == yv).mean()))
    assert res.val_accuracy == pytest.approx(float((res.predict(Xv) == yv).mean()))
    train = float((res.predict(X) == y).mean())
    assert res.train_accuracy == pytest.approx(train)
    assert res.val_accuracy != pytest.approx(train)  # the two sets do differ here
    assert res.glance()["val_accuracy"].iloc[0] == res.val_accuracy
    # without a validation split there is no validation accuracy (not the few shots' one)
    no_val = XTransfer(sources, **kw).fit(X, y)
    assert np.isnan(no_val.val_accuracy)
    assert no_val.train_accuracy == pytest.approx(float((no_val.predict(X) == y).mean()))


def test_fit_returns_a_new_result_and_leaves_the_estimator_unchanged(sources, shots):
    X, y, Xv, yv = shots
    est = XTransfer(sources, architecture=[(1, 0)], steps=5, random_state=4)
    before = dict(vars(est))
    first = est.fit(X, y, X_val=Xv, y_val=yv)
    second = est.fit(X, y, X_val=Xv, y_val=yv)
    assert first is not second and first.network is not second.network
    assert vars(est) == before  # no fitted state (``model_`` and the like) lands on self
    assert first.model is est and first.nobs == len(y)
    assert first.fit_options["baselines"] is False and "X_val" in first.fit_options
    assert first.random_state_used == 4 == second.random_state_used
    assert first.val_accuracy == second.val_accuracy  # an int seed: the same fit each call
    with pytest.raises(AttributeError, match="network"):
        _ = est.model_
    with pytest.raises(RuntimeError, match="predict"):
        est.predict(X)


def test_random_state_none_int_and_generator(sources, shots):
    X, y, Xv, yv = shots
    kw = dict(architecture=[(1, 0), (1, 1)], steps=5)

    def fit(random_state):
        res = XTransfer(sources, random_state=random_state, **kw).fit(X, y, X_val=Xv, y_val=yv)
        return res, [p.detach().clone() for p in res.network.parameters()]

    res, _ = fit(None)
    assert isinstance(res, XTransferResult) and isinstance(res.random_state_used, int)
    (a, pa), (b, pb) = fit(np.random.default_rng(7)), fit(np.random.default_rng(7))
    assert a.random_state_used == b.random_state_used
    for p, q in zip(pa, pb, strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=0)
    assert a.val_accuracy == b.val_accuracy
    # one Generator is one stream: a second fit from it draws another seed
    rng = np.random.default_rng(7)
    est = XTransfer(sources, random_state=rng, **kw)
    seeds = {est.fit(X, y).random_state_used for _ in range(2)}
    assert len(seeds) == 2 and a.random_state_used in seeds
    state = torch.random.get_rng_state()
    XTransfer(sources, random_state=3, **kw).fit(X, y, baselines=True)
    assert torch.equal(torch.random.get_rng_state(), state)  # torch's global RNG untouched
    with pytest.raises(TypeError, match="random_state"):
        XTransfer(sources, random_state=1.5)
    with pytest.raises(ValueError, match="random_state"):
        XTransfer(sources, random_state=-1)


def test_bad_input_is_refused(sources, shots):
    X, y, _, _ = shots
    xt = XTransfer(sources, steps=2, max_depth=1)
    bad = X.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="X_few"):
        xt.fit(bad, y)
    with pytest.raises(ValueError, match="X_few"):
        xt.fit(X[:, 0], y)
    with pytest.raises(ValueError, match="y_few"):
        xt.fit(X, y[:-1])
    gap = np.where(y == 1, 2, y)  # no window of class 1
    with pytest.raises(ValueError, match=r"no windows of class\(es\) \[1\]"):
        xt.fit(X, gap)
    with pytest.raises(ValueError, match="X_val"):
        xt.fit(X, y, X_val=X[:, :2], y_val=y)
    with pytest.raises(ValueError, match="budget"):
        XTransfer(sources, budget=10, steps=2).fit(X, y)
    with pytest.raises(ValueError, match="budget"):
        XTransfer(sources, budget=-1.0)
    with pytest.raises(ValueError, match="lam"):
        XTransfer(sources, lam=-1.0)
    with pytest.raises(ValueError, match="max_depth"):
        XTransfer(sources, max_depth=0)
    assert XTransfer(sources, lam=0.0, removal_tol=0.0).lam == 0.0  # CE only, no removal
    with pytest.raises(ValueError, match="architecture"):
        XTransfer(sources, architecture=[(0, 1)])
    with pytest.raises(RuntimeError, match="fit"):
        XTransfer(sources).predict(X)
    with pytest.raises(ValueError, match="X"):
        XTransfer(sources, steps=2, max_depth=1).fit(X, y).predict(X[:, 0])
