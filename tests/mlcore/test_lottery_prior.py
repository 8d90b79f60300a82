"""Unit tests of mlcore.inverse: the masked random layers, the latents and their rate, the forward
operators, the solver's bookkeeping and errors, the baselines. No scikit-image needed except where
skipped."""

import math

import numpy as np
import pytest
import scipy.ndimage
import scipy.stats
import torch
import torch.nn.functional as F
from torch import nn

from mlcore.inverse import (
    AutoregressiveEntropyModel,
    Downsample,
    FactorizedEntropyModel,
    Identity,
    LatentPyramid,
    LotteryPriorResult,
    LotteryPriorSolver,
    MaskedRandomConv,
    PixelMask,
    RandomSynthesis,
    bicubic_upsample,
    deep_image_prior,
    estimate_noise_sigma,
    psnr,
    random_pixel_mask,
    tv_reconstruct,
)


def _image(n=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    u = torch.linspace(0, 1, n)
    yy, xx = torch.meshgrid(u, u, indexing="ij")
    x = 0.3 + 0.4 * xx * yy
    return x, x + 0.1 * torch.randn(x.shape, generator=g)


# -- building blocks -----------------------------------------------------------------------------


def test_masked_random_conv_is_seeded_frozen_and_masks_the_weights():
    make = lambda: MaskedRandomConv(3, 5, 3, generator=torch.Generator().manual_seed(7))  # noqa: E731
    a, b = make(), make()
    assert torch.equal(a.weight, b.weight) and torch.equal(a.scores, b.scores)
    assert [n for n, _ in a.named_parameters()] == ["scores"]  # the weights are not learned
    x = torch.randn(2, 3, 6, 6, generator=torch.Generator().manual_seed(1))
    mask = (torch.sigmoid(a.scores) > 0.5).float()
    expected = F.conv2d(F.pad(x, (1, 1, 1, 1), mode="reflect"), a.weight * mask)
    torch.testing.assert_close(a(x), expected)
    a(x).sum().backward()
    assert a.scores.grad is not None and a.scores.grad.abs().sum() > 0
    assert a.weight.grad is None


def test_masked_random_conv_topk_keeps_the_requested_fraction():
    layer = MaskedRandomConv(
        4, 6, 3, mode="topk", density=0.3, generator=torch.Generator().manual_seed(0)
    )
    n = layer.weight.numel()
    assert layer.n_kept() == round(0.3 * n)
    kept = layer.mask().bool()
    assert layer.scores[kept].min() >= layer.scores[~kept].max()  # the top scores are the kept ones
    assert float(layer.density_penalty()) == pytest.approx(0.3)


def test_masked_random_conv_threshold_density_penalty_is_the_expected_density():
    layer = MaskedRandomConv(8, 8, 1, density=0.25, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(layer.density_penalty(), torch.sigmoid(layer.scores).mean())
    # each of the 64 weights is kept with probability 0.25: 16 expected, s.d. 3.5; 5..27 is
    # beyond 3 s.d. either side
    assert 5 <= layer.n_kept() <= 27


def test_masked_random_conv_rejects_bad_options():
    with pytest.raises(ValueError, match="kernel_size"):
        MaskedRandomConv(1, 1, 2)
    with pytest.raises(ValueError, match="mode"):
        MaskedRandomConv(1, 1, 1, mode="soft")
    with pytest.raises(ValueError, match="density"):
        MaskedRandomConv(1, 1, 1, density=0.0)


def test_entropy_model_matches_the_discretised_laplace():
    model = FactorizedEntropyModel(2)
    with torch.no_grad():
        model.loc.copy_(torch.tensor([0.3, -1.0]))
        model.log_scale.copy_(torch.tensor([0.5, -0.2]))
    q = [torch.tensor([[-2.0, 0.0, 1.0, 40.0]]), torch.tensor([[3.0, -1.0]])]
    expected = 0.0
    for level, values in enumerate(q):
        loc, log_scale = float(model.loc[level].detach()), float(model.log_scale[level].detach())
        dist = scipy.stats.laplace(loc=loc, scale=math.exp(log_scale) + 1e-3)
        p = dist.cdf(values.numpy() + 0.5) - dist.cdf(values.numpy() - 0.5)
        expected += -np.log2(np.maximum(p, 2.0**-16)).sum()
    # float32 CDF differences against scipy's float64: 1e-4 relative is a few float32 ulps per term
    assert float(model.bits(q).detach()) == pytest.approx(expected, rel=1e-4)
    # a value far in the tail is floored at 16 bits: nothing costs more
    assert float(FactorizedEntropyModel(1).bits([torch.tensor([1000.0])]).detach()) == 16.0


def test_autoregressive_entropy_model_starts_factorised_and_is_causal():
    arm = AutoregressiveEntropyModel(2, generator=torch.Generator().manual_seed(0))
    q = [
        torch.randint(-3, 4, (1, 1, 6, 7), generator=torch.Generator().manual_seed(s)).float()
        for s in (1, 2)
    ]
    # its output layer starts at zero: a unit Laplace at 0 for every latent, which is the
    # factorised model's starting point, so the two price any code alike (float32 sums)
    assert float(arm.bits(q).detach()) == pytest.approx(
        float(FactorizedEntropyModel(2).bits(q).detach()), rel=1e-6
    )
    with torch.no_grad():
        arm.layers[-1].weight.normal_(generator=torch.Generator().manual_seed(3))
    loc, scale = arm._parameters_of(q[0])
    later = q[0].clone()
    later[0, 0, 3, 4] += 5.0  # a latent at raster position 3 * 7 + 4 = 25
    loc2, scale2 = arm._parameters_of(later)
    changed = ((loc2 != loc) | (scale2 != scale))[0].nonzero().flatten()
    # only latents decoded after it (positions > 25) may see it as context; some of them do
    assert len(changed) > 0 and int(changed.min()) > 25


def test_autoregressive_entropy_model_makes_smooth_latents_cheap():
    """A ramp of integers costs about log2(range) bits a latent under a factorised model but
    almost nothing under the context model, which predicts each latent from its left and upper
    neighbours: the rate is then a spatial prior, as in Cool-chic and LotteryCodec."""
    i, j = torch.meshgrid(torch.arange(12.0), torch.arange(12.0), indexing="ij")
    q = [(i + j - 11).reshape(1, 1, 12, 12)]
    bits = {}
    for name, model in {
        "factorized": FactorizedEntropyModel(1),
        "autoregressive": AutoregressiveEntropyModel(1, generator=torch.Generator().manual_seed(0)),
    }.items():
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        for _ in range(300):
            loss = model.bits(q)
            opt.zero_grad()
            loss.backward()
            opt.step()
        bits[name] = float(model.bits(q).detach()) / 144
    # measured 4.44 against 0.13 bits a latent after 300 Adam steps; the factorised model cannot
    # go below the ramp's 23-value histogram entropy (about 4.2 bits), and half of it leaves the
    # context model a wide margin for a different optimisation path
    assert bits["factorized"] > 4.0 and bits["autoregressive"] < 0.5 * bits["factorized"]


def test_latent_pyramid_noise_rounding_and_straight_through():
    lat = LatentPyramid((1, 10, 12), n_levels=3, step=0.5)
    assert [tuple(z.shape) for z in lat.latents] == [(1, 1, 10, 12), (1, 1, 5, 6), (1, 1, 3, 3)]
    with torch.no_grad():
        for z in lat.latents:
            z.copy_(torch.linspace(-3, 3, z.numel()).reshape(z.shape))
    noisy = lat.quantised(noise_generator=torch.Generator().manual_seed(0))
    for z, q in zip(lat.latents, noisy, strict=True):
        d = (q - z).detach()
        assert d.min() >= -0.5 and d.max() < 0.5 and d.abs().max() > 0.3  # U[-1/2, 1/2) noise
    ste = lat.quantised(straight_through=True)
    assert all(
        torch.equal(q, torch.round(z.detach())) for z, q in zip(lat.latents, ste, strict=True)
    )
    sum(q.sum() for q in ste).backward()
    assert all(torch.equal(z.grad, torch.ones_like(z)) for z in lat.latents)  # identity gradient
    lat.eval()
    up = lat.upsample(lat.quantised())
    assert up.shape == (1, 3, 10, 12)
    torch.testing.assert_close(up[:, :1], torch.round(lat.latents[0].detach()) * 0.5)


# -- operators -----------------------------------------------------------------------------------


def test_downsample_is_gaussian_blur_then_decimation():
    x = torch.rand(2, 24, 32, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    op = Downsample(4)
    y = op(x)
    # torch's "reflect" padding (edge not repeated) is scipy's "mirror"; truncate=3 gives radius 6
    ref = scipy.ndimage.gaussian_filter(x.numpy(), sigma=(0, 2, 2), mode="mirror", truncate=3.0)
    np.testing.assert_allclose(y.numpy(), ref[:, ::4, ::4], rtol=0, atol=1e-6)  # float32 kernel
    assert op.signal_shape(tuple(y.shape)) == (2, 24, 32)
    with pytest.raises(ValueError, match="multiples of `factor`"):
        op(torch.zeros(1, 10, 12))


def test_pixel_mask_observes_only_the_mask_and_refuses_an_empty_one():
    mask = random_pixel_mask((8, 9), 0.5, random_state=0)
    op = PixelMask(mask)
    x = torch.rand(1, 8, 9)
    y = op(x)
    assert torch.equal(y[0][mask], x[0][mask]) and bool((y[0][~mask] == 0).all())
    assert op.n_measurements((1, 8, 9)) == int(mask.sum())
    with pytest.raises(ValueError, match="at least one pixel"):
        PixelMask(torch.zeros(4, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match="bool"):
        PixelMask(torch.ones(4, 4))
    with pytest.raises(ValueError, match="keep"):
        random_pixel_mask((4, 4), 1.5)


def test_psnr_and_noise_estimate():
    ref = torch.zeros(10, 10)
    assert psnr(ref + 0.1, ref) == pytest.approx(20.0)
    noise = 0.2 * torch.randn(128, 128, generator=torch.Generator().manual_seed(0))
    # the MAD of 4096 Gaussian coefficients has relative s.d. about 1.17 / sqrt(4096) = 1.8%;
    # 6% is over 3 s.d.
    assert estimate_noise_sigma(noise) == pytest.approx(0.2, rel=0.06)
    with pytest.raises(ValueError, match="finite"):
        estimate_noise_sigma(torch.tensor([[0.0, float("nan")], [0.0, 0.0]]))


# -- solver --------------------------------------------------------------------------------------


def test_solver_result_reports_and_leaves_inputs_alone(device):
    x, y = _image()
    x, y = x.to(device), y.to(device)
    y_before = y.clone()
    res = LotteryPriorSolver(n_seeds=2, steps=20).fit(y, x_true=x, random_state=0, log_every=10)
    assert torch.equal(y, y_before)
    assert isinstance(res, LotteryPriorResult) and res.device.startswith(device)
    assert res.x_hat.shape == (16, 16) and res.members.shape == (2, 16, 16)
    np.testing.assert_allclose(res.x_hat, res.members.mean(axis=0))
    assert res.converged and res.n_iter == 20
    assert list(res.history.columns) == [
        "member",
        "step",
        "loss",
        "data_fit",
        "bpp",
        "density",
        "psnr",
    ]
    assert len(res.history) == 4 and len(res.tidy()) == 4 * 5
    assert res.noise_sigma == pytest.approx(estimate_noise_sigma(y))
    assert res.lambda_rate == pytest.approx(res.noise_sigma**2)  # rate_weight 1
    assert np.all(res.rate_bits > 0) and np.all((res.density > 0) & (res.density < 1))
    assert 0.0 <= res.x_hat.min() and res.x_hat.max() <= 1.0
    assert "members' PSNR" in str(res.summary())
    assert res.glance().loc[0, "psnr"] == pytest.approx(psnr(res.x_hat, x.cpu()))


def test_solver_is_reproducible_and_members_differ():
    _, y = _image()
    a = LotteryPriorSolver(n_seeds=2, steps=10).fit(y, random_state=3)
    b = LotteryPriorSolver(n_seeds=2, steps=10).fit(y, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(a.x_hat, b.x_hat)
    assert not np.array_equal(a.members[0], a.members[1])  # two seeds, two random networks


def test_solver_is_an_estimator_whose_fit_records_its_options():
    from statcore.base import Estimator

    _, y = _image()
    solver = LotteryPriorSolver(n_seeds=1, steps=3, noise_sigma=0.1)
    assert isinstance(solver, Estimator) and solver.nobs is None
    res = solver.fit(y, random_state=0, log_every=1)
    assert res is not solver and res.model is solver and res.nobs == y.numel()
    assert res.fit_options["random_state"] == 0 and res.fit_options["log_every"] == 1
    assert res.strip().model is None and res.strip().x_hat.shape == res.x_hat.shape


def test_solver_with_a_user_operator_and_network():
    class HorizontalBlur(nn.Module):
        def forward(self, x):
            return (x + torch.roll(x, 1, dims=-1)) / 2

    def factory(in_channels, out_channels, generator):
        return nn.Conv2d(in_channels, out_channels, 1)

    x, _ = _image()
    y = HorizontalBlur()(x[None])[0]
    res = LotteryPriorSolver(
        HorizontalBlur(), net_factory=factory, n_seeds=1, steps=5, noise_sigma=0.01
    ).fit(y, signal_shape=(16, 16), random_state=0)
    assert res.x_hat.shape == (16, 16) and np.isnan(res.density).all()  # no masked layers
    with pytest.raises(TypeError, match="signal_shape"):
        LotteryPriorSolver(HorizontalBlur(), noise_sigma=0.01).fit(y)
    with pytest.raises(ValueError, match="noise level cannot be estimated"):
        LotteryPriorSolver(HorizontalBlur()).fit(y, signal_shape=(16, 16))
    with pytest.raises(TypeError, match="nn.Module"):
        LotteryPriorSolver(net_factory=lambda *a: "net", steps=1, noise_sigma=0.1).fit(y)


def test_solver_bad_inputs():
    _, y = _image()
    with pytest.raises(ValueError, match="finite"):
        LotteryPriorSolver().fit(torch.full((4, 4), float("nan")))
    with pytest.raises(TypeError, match="torch.Tensor"):
        LotteryPriorSolver().fit(y.numpy())
    with pytest.raises(ValueError, match="maps a signal of shape"):
        LotteryPriorSolver(Downsample(2), steps=1).fit(y, signal_shape=(16, 16))
    with pytest.raises(ValueError, match="x_true"):
        LotteryPriorSolver(steps=1).fit(y, x_true=torch.zeros(8, 8))
    with pytest.raises(ValueError, match="noise level cannot be estimated"):
        LotteryPriorSolver(PixelMask(torch.ones(16, 16, dtype=torch.bool))).fit(y)
    with pytest.raises(TypeError, match="forward_op"):
        LotteryPriorSolver(lambda x: x)
    with pytest.raises(ValueError, match="decode"):
        LotteryPriorSolver(decode="mean")
    with pytest.raises(ValueError, match="entropy_model"):
        LotteryPriorSolver(entropy_model="hyperprior")
    with pytest.raises(TypeError, match="fixes `lambda_rate`"):
        deep_image_prior(lambda_rate=1.0)
    with pytest.raises(ValueError, match="`init`"):
        tv_reconstruct(y, steps=1, init=torch.zeros(8, 8))


def test_factorised_rate_option_and_the_rate_weight_floor():
    _, y = _image()
    res = LotteryPriorSolver(entropy_model="factorized", n_seeds=1, steps=3, noise_sigma=0.01).fit(
        y, random_state=0
    )
    assert np.isfinite(res.rate_bits).all() and res.rate_bits[0] > 0
    # sigma^2 = 1e-4 is under the floor, ZS-NCD's lambda = 150 on 8-bit MSE
    assert res.lambda_rate == pytest.approx(150 / 255**2)
    floorless = LotteryPriorSolver(min_lambda_rate=0.0, n_seeds=1, steps=1, noise_sigma=0.01)
    assert floorless.fit(y, random_state=0).lambda_rate == pytest.approx(1e-4)


def test_deep_image_prior_mode_has_no_rate():
    _, y = _image()
    res = deep_image_prior(n_seeds=1, steps=5).fit(y, random_state=0)
    assert res.method == "Deep image prior" and np.isnan(res.rate_bits).all()
    assert (res.history["bpp"] == 0).all()


# -- baselines -----------------------------------------------------------------------------------


def test_tv_matches_scikit_image_chambolle():
    restoration = pytest.importorskip("skimage.restoration")
    x, y = _image(32)
    ours = tv_reconstruct(y, weight=0.08, steps=400)
    ref = restoration.denoise_tv_chambolle(y.numpy(), weight=0.08)
    # the same energy minimised two ways (Adam on a smoothed TV, Chambolle's dual iteration):
    # the minimisers agree to a few 1e-3 per pixel, which moves PSNR by well under 0.3 dB
    assert abs(psnr(ours, x) - psnr(torch.tensor(ref), x)) < 0.3
    assert float((ours - torch.tensor(ref, dtype=ours.dtype)).abs().mean()) < 5e-3


def test_bicubic_upsample_shape_and_constant():
    y = torch.full((3, 5), 0.4)
    up = bicubic_upsample(y, 4)
    assert up.shape == (12, 20)
    torch.testing.assert_close(up, torch.full((12, 20), 0.4))
    assert isinstance(Identity()(y), torch.Tensor)


def test_plots_draw():
    import matplotlib

    matplotlib.use("Agg")
    x, y = _image()
    res = LotteryPriorSolver(n_seeds=1, steps=4).fit(y, x_true=x, random_state=0, log_every=2)
    assert res.plot("trace") is not None and res.plot("image") is not None
    x = RandomSynthesis(2, 1, generator=torch.Generator().manual_seed(0))(torch.zeros(1, 2, 4, 4))
    assert x.shape == (1, 1, 4, 4)


def test_operators_and_baselines_follow_the_device(device):
    x = torch.rand(16, 16, generator=torch.Generator().manual_seed(0)).to(device)
    mask = random_pixel_mask((16, 16), 0.5, random_state=0)
    for op in (Identity(), Downsample(2), PixelMask(mask)):
        y = op(x[None])[0]
        assert y.device == x.device
        assert tv_reconstruct(y, op, steps=3).device == x.device
    assert bicubic_upsample(Downsample(2)(x[None])[0], 2).device == x.device
    layer = MaskedRandomConv(1, 2, 3, generator=torch.Generator().manual_seed(0)).to(device)
    assert layer(x[None, None]).device == x.device


def test_progress_bar_counts_every_members_steps(capsys):
    _, y = _image()
    LotteryPriorSolver(n_seeds=2, steps=3).fit(y, random_state=0, progress=True)
    err = capsys.readouterr().err
    assert "Lottery Prior" in err and "6/6" in err
    with pytest.raises(TypeError, match="progress"):
        LotteryPriorSolver(steps=1).fit(y, progress="yes")
