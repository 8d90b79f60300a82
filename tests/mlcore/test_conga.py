"""CONGA (mlcore.tta) and its host method Tent, plus the entropy loss they share."""

import copy
import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats
import torch
from torch import nn

from mlcore.functional import softmax_entropy
from mlcore.losses import EntropyLoss
from mlcore.results import TrainingResult
from mlcore.tta import (
    CONGA,
    Tent,
    configure_norm_params,
    corrupt_images,
    digits_source_model,
    digits_split,
)
from statcore.exceptions import ConvergenceWarning


def _optimizer(lrs=(0.1,)):
    groups = [{"params": [nn.Parameter(torch.zeros(3))], "lr": lr} for lr in lrs]
    return torch.optim.SGD(groups)


# -- the entropy loss -------------------------------------------------------------------------
def test_softmax_entropy_matches_scipy_and_reductions():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(7, 5, generator=gen, dtype=torch.float64) * 3
    probs = torch.softmax(logits, 1).numpy()
    expected = scipy.stats.entropy(probs, axis=1)
    got = softmax_entropy(logits, reduction="none").numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert float(EntropyLoss(reduction="sum")(logits)) == pytest.approx(expected.sum(), rel=1e-12)
    assert float(EntropyLoss()(logits)) == pytest.approx(expected.mean(), rel=1e-12)
    # saturated logits stay finite (log_softmax, not log of a rounded-to-zero probability)
    assert torch.isfinite(softmax_entropy(torch.tensor([[1e4, -1e4]]))).all()
    with pytest.raises(ValueError, match="`reduction` must be one of"):
        softmax_entropy(logits, reduction="avg")


# -- acceptance 1: cosine annealing when the bounds are fixed ---------------------------------
def test_fixed_bounds_reduce_to_cosine_annealing():
    total, eta_min = 25, 0.004
    base = (0.1, 0.03)
    ours_opt, ref_opt = _optimizer(base), _optimizer(base)
    # lower is a fraction of each group's base LR, so both groups need the same ratio
    ours = CONGA(ours_opt, lower=eta_min / base[0], upper=1.0, schedule="steps", total_steps=total)
    refs = [
        torch.optim.lr_scheduler.CosineAnnealingLR(
            torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=b),
            T_max=total,
            eta_min=eta_min * b / base[0],
        )
        for b in base
    ]
    assert ours.get_last_lr() == pytest.approx(list(base), abs=1e-15)
    for _ in range(total):
        ref_opt.step()
        ours.step()
        for ref in refs:
            ref.optimizer.step()
            ref.step()
        expected = [ref.get_last_lr()[0] for ref in refs]
        # torch's CosineAnnealingLR is recursive; the 1e-12 slack covers its rounding only
        np.testing.assert_allclose(ours.get_last_lr(), expected, rtol=0, atol=1e-12)
    assert ours.get_last_lr()[0] == pytest.approx(eta_min, abs=1e-15)


# -- acceptance 2: inside the interval; monotone in the progress --------------------------------
def test_lr_stays_inside_interval_on_random_draws():
    rng = np.random.default_rng(1)
    opt = _optimizer((0.05,))
    sched = CONGA(opt, snr="batch", ema=0.5)
    for _ in range(1000):
        batch, classes = int(rng.integers(1, 20)), int(rng.integers(2, 6))
        if sched.n_classes is not None:
            classes = sched.n_classes
        logits = torch.tensor(rng.normal(scale=rng.uniform(0.1, 6), size=(batch, classes)))
        grads = torch.tensor(rng.normal(loc=rng.normal(), size=(batch, 4)))
        sched.observe(logits, per_sample_grads=grads)
        sched.step()
        rec = sched.records[-1]
        assert rec["eta_lo"] <= rec["eta_hi"] + 1e-15
        assert rec["eta_lo"] - 1e-15 <= rec["lr"] <= rec["eta_hi"] + 1e-15
        assert 0.0 <= rec["progress"] <= 1.0
        assert rec["eta_hi"] <= 0.05 + 1e-15


def test_lr_is_non_increasing_in_progress_for_fixed_bounds():
    sched = CONGA(_optimizer(), lower=0.2, upper=0.9)
    values = []
    for progress in np.linspace(0, 1, 101):
        sched.progress_value = float(progress)
        values.append(sched.get_lr()[0])
    assert np.all(np.diff(values) <= 1e-15)
    assert values[0] == pytest.approx(0.09) and values[-1] == pytest.approx(0.02)


# -- acceptance 3: the limits -------------------------------------------------------------------
def test_uniform_logits_give_zero_lower_bound():
    sched = CONGA(_optimizer(), upper=1.0)
    sched.observe(torch.zeros(16, 10))
    sched.step()
    assert sched.records[-1]["confident_frac"] == 0.0
    assert sched.records[-1]["eta_lo"] == 0.0


def test_confident_fraction_uses_the_eata_margin():
    sched = CONGA(_optimizer(), upper=1.0)
    # entropies: one-hot-ish rows are below 0.4 log 10, uniform rows above
    logits = torch.zeros(4, 10)
    logits[:3, 0] = 20.0
    sched.observe(logits)
    assert sched.confident_frac == pytest.approx(0.75)


def test_zero_mean_iid_gradients_give_snr_one_over_batch_minus_one():
    gen = torch.Generator().manual_seed(2)
    batch, dim = 16, 20_000
    grads = torch.randn(batch, dim, generator=gen, dtype=torch.float64)
    sched = CONGA(_optimizer(), snr="batch", kappa=2.0)
    sched.observe(torch.zeros(batch, 3), per_sample_grads=grads)
    sched.step()
    # E||g_bar||^2 / E mean_i ||g_i - g_bar||^2 = (d/B) / (d (B-1)/B) = 1/(B-1); with d = 2e4
    # coordinates the ratio's relative standard deviation is about sqrt(2/d) = 1%, so 5% is safe
    assert sched.snr_value * (batch - 1) == pytest.approx(1.0, rel=0.05)
    assert sched.records[-1]["eta_hi"] == pytest.approx(0.1 * 2.0 / (batch - 1), rel=0.05)


def test_identical_gradients_give_the_base_lr_as_upper_bound():
    sched = CONGA(_optimizer(), snr="batch", kappa=0.01)
    sched.observe(torch.zeros(8, 3), per_sample_grads=torch.ones(8, 5))
    sched.step()
    assert math.isinf(sched.snr_value)
    assert sched.records[-1]["eta_hi"] == pytest.approx(0.1)


@pytest.mark.parametrize("ema", [0.0, 0.5, 0.99])
def test_identical_gradients_give_the_base_lr_on_the_ema_path_from_the_first_step(ema):
    param = nn.Parameter(torch.zeros(5, dtype=torch.float64))
    sched = CONGA(torch.optim.SGD([param], lr=0.1), kappa=0.01, ema=ema)
    for _ in range(3):
        param.grad = torch.full((5,), 0.3, dtype=torch.float64)
        sched.observe(torch.zeros(4, 3))
        sched.step()
        # bias-corrected moments of a constant gradient are g and ||g||^2: no noise, so the
        # upper bound is the base rate at every step (uncorrected, step 1 gave 0.011 x base)
        assert math.isinf(sched.snr_value)
        assert sched.records[-1]["eta_hi"] == pytest.approx(0.1)


def test_ema_moments_are_unbiased_from_the_second_step():
    gen = torch.Generator().manual_seed(5)
    dim, mean, steps = 20_000, 0.1, 3
    param = nn.Parameter(torch.zeros(dim, dtype=torch.float64))
    sched = CONGA(torch.optim.SGD([param], lr=1.0), ema=0.9)
    for _ in range(steps):
        param.grad = mean + torch.randn(dim, generator=gen, dtype=torch.float64)
        sched.observe(torch.zeros(4, 3))
    # signal ||mu||^2 = 200 and noise d sigma^2 = 2e4, so SNR = 0.01; on these draws the raw
    # EMAs read 0.10 and Adam-corrected ones without the variance correction 0.52 (three draws
    # look nearly noise-free). The estimate's relative error is about sqrt(2 / (d n_eff)) for
    # the noise and a few percent for the signal at d = 2e4 (observed 0.0105): 10 % is safe
    assert sched.snr_value == pytest.approx(0.01, rel=0.1)


def test_ema_snr_is_high_for_steady_and_low_for_noisy_gradients():
    def run(noisy):
        param = nn.Parameter(torch.zeros(50, dtype=torch.float64))
        sched = CONGA(torch.optim.SGD([param], lr=1.0))
        gen = torch.Generator().manual_seed(3)
        for _ in range(60):
            direction = torch.randn(50, generator=gen, dtype=torch.float64) if noisy else 1.0
            param.grad = torch.ones(50, dtype=torch.float64) * direction
            sched.observe(torch.zeros(4, 3))
            sched.step()
        return sched.snr_value

    # steady: bias-corrected moments of a constant gradient leave no noise (SNR infinite);
    # noisy: about 1/19 (the EMA's effective sample size is 19)
    assert run(noisy=False) > 100
    assert run(noisy=True) < 0.5


def test_entropy_progress_tracks_the_entropy_drop():
    sched = CONGA(_optimizer(), ema=0.0, upper=1.0)
    sched.observe(torch.zeros(4, 10))
    assert sched.progress_value == 0.0
    sched.observe(torch.tensor([[20.0] + [0.0] * 9] * 4))
    expected = 1 - float(softmax_entropy(torch.tensor([[20.0] + [0.0] * 9]))) / math.log(10)
    assert sched.progress_value == pytest.approx(expected)


def test_state_dict_round_trips():
    gen = torch.Generator().manual_seed(4)
    param = nn.Parameter(torch.zeros(6))
    sched = CONGA(torch.optim.SGD([param], lr=0.2), kappa=0.5)
    for _ in range(5):
        param.grad = torch.randn(6, generator=gen)
        sched.observe(torch.randn(8, 4, generator=gen))
        sched.step()
    state = copy.deepcopy(sched.state_dict())
    other = CONGA(torch.optim.SGD([nn.Parameter(torch.zeros(6))], lr=0.2))
    other.load_state_dict(state)
    assert other.kappa == 0.5 and other.last_epoch == sched.last_epoch
    grad, logits = torch.randn(6, generator=gen), torch.randn(8, 4, generator=gen)
    for s in (sched, other):
        s.optimizer.param_groups[0]["params"][0].grad = grad.clone()
        s.observe(logits)
        s.step()
    assert other.get_last_lr() == sched.get_last_lr()


def test_result_is_a_training_result():
    sched = CONGA(_optimizer(), upper=1.0)
    for _ in range(3):
        sched.observe(torch.randn(5, 3))
        sched.step()
    trace = sched.result()
    assert isinstance(trace, TrainingResult)
    assert list(trace.history["step"]) == [0, 1, 2, 3]
    assert {"eta_lo", "eta_hi", "progress", "snr"} <= set(trace.metrics)
    assert trace.history["lr"].iloc[-1] == pytest.approx(sched.get_last_lr()[0])
    # the caller's loop sets the steps: the record counts them and has nothing to miss; the
    # unobserved first row (NaN entropy) is not a divergence
    assert trace.iterations.status == "converged" and trace.n_iter == 4
    assert trace.iterations.last_value == trace.history["loss"].iloc[-1]


def test_old_spellings_warn_and_still_work():
    with pytest.warns(FutureWarning, match="`progress=` is now spelled `schedule=`"):
        old = CONGA(_optimizer(), progress="steps", total_steps=10)
    assert old.schedule == "steps"
    with pytest.raises(TypeError, match="got both `schedule` and its old spelling"):
        CONGA(_optimizer(), progress="steps", schedule="steps", total_steps=10)
    old.step()
    with pytest.warns(FutureWarning, match=r"CONGA.trace\(\) is now CONGA.result\(\)"):
        trace = old.trace()
    pd.testing.assert_frame_equal(trace.history, old.result().history)
    state = old.state_dict()
    state["progress"] = state.pop("schedule")  # a state saved before the rename
    other = CONGA(_optimizer())
    other.load_state_dict(state)
    assert other.schedule == "steps" and not hasattr(other, "progress")


# -- bad input --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"lower": 1.5}, ValueError, r"`lower` must lie in \[0, 1\]"),
        ({"upper": 0.0}, ValueError, r"`upper` must lie in \(0, 1\]"),
        ({"lower": "auto"}, ValueError, "`lower` must be one of"),
        ({"upper": None}, TypeError, "`upper` must be 'snr'"),
        ({"kappa": -1.0}, ValueError, "`kappa`"),
        ({"ema": 1.0}, ValueError, "`ema`"),
        ({"schedule": "steps"}, ValueError, "`total_steps` is required"),
        ({"snr": "welford"}, ValueError, "`snr` must be one of"),
        ({"conf_threshold": "eata"}, ValueError, "`conf_threshold`"),
    ],
)
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        CONGA(_optimizer(), **kwargs)


def test_bad_observations():
    sched = CONGA(_optimizer(), snr="batch")
    with pytest.raises(ValueError, match="from the same batch"):
        sched.observe(torch.zeros(8, 3), per_sample_grads=torch.zeros(7, 5))
    with pytest.raises(ValueError, match="needs `per_sample_grads`"):
        sched.observe(torch.zeros(8, 3))
    with pytest.raises(ValueError, match=r"2-D \(batch, classes\)"):
        sched.observe(torch.zeros(8))
    with pytest.raises(TypeError, match="`logits` must be a torch.Tensor"):
        sched.observe(np.zeros((8, 3)))
    sched.observe(torch.zeros(8, 3), per_sample_grads=torch.ones(8, 5))
    with pytest.raises(ValueError, match="earlier batches had 3"):
        sched.observe(torch.zeros(8, 4), per_sample_grads=torch.ones(8, 5))
    with pytest.raises(ValueError, match="finite"):
        sched.observe(torch.full((8, 3), float("nan")), per_sample_grads=torch.ones(8, 5))
    with pytest.raises(RuntimeError, match="after loss.backward"):
        CONGA(_optimizer()).observe(torch.zeros(8, 3))


# -- Tent -------------------------------------------------------------------------------------
def _small_net(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))


def test_tent_adapts_only_norm_affine_parameters(device):
    net = _small_net().to(device)
    before = copy.deepcopy(net.state_dict())
    tent = Tent(net, lr=0.05)
    x = torch.randn(32, 4, device=device)
    entropies = [float(softmax_entropy(tent(x))) for _ in range(20)]
    after = net.state_dict()
    assert not torch.equal(after["1.weight"], before["1.weight"])
    for key in ("0.weight", "0.bias", "3.weight", "3.bias"):
        assert torch.equal(after[key], before[key])
    assert net[1].running_mean is None  # batch statistics at test time
    assert entropies[-1] < entropies[0]  # entropy minimisation on a repeated batch
    result = tent.result()
    assert isinstance(result, TrainingResult) and result.n_steps == 20
    assert result.converged and result.n_iter == 20
    tent.reset()
    assert torch.equal(net.state_dict()["1.weight"], before["1.weight"])
    assert tent.history == []


def test_tent_feeds_conga_and_uses_its_lr():
    tent = Tent(_small_net(), lr=0.5, scheduler=lambda opt: CONGA(opt))
    x = torch.randn(32, 4)
    for _ in range(5):
        tent(x)
    trace = tent.scheduler.result()
    # the LR Tent used at each step is the one CONGA wrote for that batch
    np.testing.assert_allclose(tent.result().history["lr"], trace.history["lr"].iloc[1:])
    # the same batch five times gives nearly steady gradients (a high SNR, so eta_hi is about
    # the base rate) and a small entropy drop: the schedule never exceeds the base rate
    assert (trace.history["lr"].iloc[1:] <= 0.5 * (1 + 1e-12)).all()
    assert trace.history["lr"].iloc[1:].min() < 0.5


def test_tent_bad_input():
    with pytest.raises(ValueError, match="no normalisation layer"):
        Tent(nn.Linear(3, 2))
    with pytest.raises(TypeError, match="`model` must be a torch.nn.Module"):
        configure_norm_params("net")
    with pytest.raises(ValueError, match="`lr`"):
        Tent(_small_net(), lr=0.0)
    with pytest.raises(TypeError, match="must return a torch.optim.Optimizer"):
        Tent(_small_net(), optimizer=lambda params: None)
    with pytest.raises(ValueError, match="has not adapted"):
        Tent(_small_net()).result()


def test_tent_with_a_non_finite_entropy_is_diverged():
    net = _small_net()
    with torch.no_grad():
        net[3].bias.fill_(float("nan"))
    tent = Tent(net)
    tent(torch.randn(8, 4))
    with pytest.warns(ConvergenceWarning, match="Tent.forward diverged after 1"):
        result = tent.result()
    assert result.iterations.status == "diverged"


# -- acceptance 4: Tent + CONGA is robust where Tent + constant LR collapses ---------------------
BASE_LRS = (1e-3, 1e-2, 1e-1, 1.0, 3.0, 10.0)
SEEDS = (0, 1, 2, 3, 4)


def _online_accuracy(tent, x, y, order):
    correct = sum(int((tent(x[idx]).argmax(1) == y[idx]).sum()) for idx in order.split(32))
    return correct / len(y)


def test_conga_keeps_tent_robust_across_base_learning_rates():
    images, labels, train, test = digits_split(1000, random_state=0)
    x_train = torch.tensor(images[train], dtype=torch.float32)
    y_train, y_test = torch.tensor(labels[train]), torch.tensor(labels[test])
    source, worst_const, worst_conga = [], [], []
    for seed in SEEDS:
        net = digits_source_model(x_train, y_train, random_state=seed)
        corrupted = corrupt_images(images[test], "gaussian_noise", 2.0, random_state=seed)
        x_test = torch.tensor(corrupted, dtype=torch.float32)
        order = torch.randperm(len(y_test), generator=torch.Generator().manual_seed(seed))
        with torch.no_grad():
            source.append(float((net(x_test).argmax(1) == y_test).float().mean()))
        const = [
            _online_accuracy(Tent(copy.deepcopy(net), lr=lr), x_test, y_test, order)
            for lr in BASE_LRS
        ]
        conga = [
            _online_accuracy(
                Tent(copy.deepcopy(net), lr=lr, scheduler=lambda opt: CONGA(opt)),
                x_test,
                y_test,
                order,
            )
            for lr in BASE_LRS
        ]
        worst_const.append(min(const))
        worst_conga.append(min(conga))
    source, worst_const, worst_conga = map(np.mean, (source, worst_const, worst_conga))
    # Calibrated once with these seeds (observed: source 0.776, worst constant 0.554,
    # worst CONGA 0.785); the spec's margins: >= 5 points above the constant LR's worst case,
    # and no more than 1 point below the unadapted source model
    assert worst_conga >= worst_const + 0.05
    assert worst_conga >= source - 0.01


def test_digits_source_model_is_reproducible_and_leaves_the_global_rng():
    images, labels, train, test = digits_split(1000, random_state=0)
    assert len(train) == 1000 and len(np.intersect1d(train, test)) == 0
    x = torch.tensor(images[train[:200]], dtype=torch.float32)
    y = torch.tensor(labels[train[:200]])
    state = torch.random.get_rng_state()
    first = digits_source_model(x, y, epochs=2, random_state=3)
    assert torch.equal(torch.random.get_rng_state(), state)
    second = digits_source_model(x, y, epochs=2, random_state=3)
    other = digits_source_model(x, y, epochs=2, random_state=4)
    weights = [m.state_dict()["1.weight"] for m in (first, second, other)]
    assert torch.equal(weights[0], weights[1]) and not torch.equal(weights[0], weights[2])
    assert not first.training  # eval mode: Tent, not the caller, switches the norms on
    with pytest.raises(ValueError, match="`inputs` must be"):
        digits_source_model(x[:, 0], y)
    with pytest.raises(ValueError, match="`n_train` must leave test rows"):
        digits_split(len(labels))
