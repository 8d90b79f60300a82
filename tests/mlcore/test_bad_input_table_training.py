"""Every public entry of mlcore's training areas (active, quant, augment, inverse) refuses bad
input with an error naming the argument (issue 38); the harness and its kinds are in
``tests/_bad_input.py``. The specific faults fixed here are tested at the end."""

import contextlib
import math
import tempfile

import numpy as np
import pandas as pd
import pytest
import torch
from _bad_input import Row, make_table_tests

from mlcore import active, augment, inverse, quant
from mlcore.quant import QuantOp, RooflineCostModel

_g = torch.Generator().manual_seed(0)


def _t(*shape):
    return torch.randn(*shape, generator=_g)


# ---- active
ENV = active.ActiveRoomEnv()
_threads = torch.get_num_threads()
torch.set_num_threads(1)
DETECTOR = active.pretrained_detector(ENV, n_views=40, n_steps=2, random_state=1)
torch.set_num_threads(_threads)
ENV.reset(seed=0)
GRID = ENV.grid.copy()
LOGP, LOGP_OLD, ADV = _t(4, 3), _t(4, 3), _t(4)
REWARDS = _t(8)
POSES, CONF, ACTS = _t(3, 4), torch.rand(3, generator=_g), torch.tensor([0, 1])

# ---- quant
torch.manual_seed(0)
TPLM = quant.TinyTPLM(16, d_model=8, n_heads=2, n_layers=1, d_ff=16, max_len=16)
IDS = torch.randint(0, 16, (2, 6), generator=_g)
OPS = quant.linear_ops(TPLM, tokens=10, tp_size=2, **TPLM.tp_plan())[:2]
QOPS = [QuantOp("a", "gemm", M=8, N=64, K=64), QuantOp("b", "comm", M=8, N=64, consumer="a")]
SENS = pd.DataFrame({16: 0.0, 8: [0.01, 0.02], 4: [0.1, 0.2]}, index=["a", "b"])
CM = RooflineCostModel("abstract")
XQ = _t(4, 8)
Q8, S8 = quant.quantize(XQ, 8, group_size=4)
Q4 = quant.quantize(XQ, 4)[0]
PACKED = quant.pack_int4(Q4)
WQ = _t(3, 8)
CORPUS = quant.synthetic_corpus(200, vocab_size=16, random_state=0)
SHARDS = [_t(2, 8), _t(2, 8)]


@contextlib.contextmanager
def _one_rank_group():
    """A gloo process group of one rank in this process (no worker is launched)."""
    import torch.distributed as dist

    with tempfile.TemporaryDirectory() as folder:
        dist.init_process_group("gloo", init_method=f"file://{folder}/store", rank=0, world_size=1)
        try:
            yield
        finally:
            dist.destroy_process_group()


def _collective(fn, partial, bits, group_size):
    with _one_rank_group():
        return fn(partial, bits, group_size=group_size)


def _calibrate(group_size=4, progress=False, clip_negative=True):
    calibrator = quant.SensitivityCalibrator(
        TPLM, [IDS], OPS, bits=(16, 8), group_size=group_size, clip_negative=clip_negative
    )
    return calibrator.fit(progress=progress)


def _quantized(group_size=4):
    with quant.quantized(TPLM, OPS, {op.name: 8 for op in OPS}, group_size=group_size):
        return TPLM(IDS)


def _train_lm(corpus=CORPUS, steps=2, batch_size=2, seq_len=4, lr=1e-3, random_state=0,
              progress=False):  # fmt: skip
    torch.manual_seed(0)
    model = quant.TinyTPLM(16, d_model=8, n_heads=2, n_layers=1, d_ff=16, max_len=16)
    return quant.train_causal_lm(
        model, corpus, steps=steps, batch_size=batch_size, seq_len=seq_len, lr=lr,
        random_state=random_state, progress=progress,
    )  # fmt: skip


# ---- augment
XW = _t(6, 4, 1)
YW = _t(6, 2, 1)
SERIES = np.sin(np.arange(20.0))
_TRAIN = {"epochs": 1}


def _make_model():
    return augment.LinearForecaster(4, 2)


# ---- inverse
IMG = torch.rand(8, 8, generator=_g)
MASK = torch.rand(8, 8, generator=_g) > 0.3

ROWS = {
    # ---------------------------------------------------------------- active
    "mlcore.active.evaluate_policies": Row(
        lambda episodes_per_room=1, greedy=True, seed=0, random_state=0, alpha=0.05: (
            active.evaluate_policies(
                {"f": active.ForwardPolicy()}, ENV, DETECTOR, [0],
                episodes_per_room=episodes_per_room, greedy=greedy, seed=seed,
                random_state=random_state, alpha=alpha,
            )
        ),
        {"episodes_per_room": ("positive_int", 1), "greedy": ("bool", True),
         "seed": ("nonneg_int", 0), "random_state": ("random_state", 0),
         "alpha": ("fraction", 0.05)},
    ),
    "mlcore.active.grpo_advantages": Row(
        lambda rewards=REWARDS, group_size=4, eps=1e-8: active.grpo_advantages(
            rewards, group_size, eps=eps
        ),
        {"rewards": ("tensor", REWARDS), "group_size": ("positive_int", 4),
         "eps": ("positive", 1e-8)},
    ),
    "mlcore.active.grpo_loss": Row(
        lambda logp=LOGP, logp_old=LOGP_OLD, advantages=ADV, logp_ref=LOGP_OLD, clip=0.2,
        beta=0.1: active.grpo_loss(
            logp, logp_old, advantages, logp_ref=logp_ref, clip=clip, beta=beta
        ),
        {"logp": ("tensor", LOGP), "logp_old": ("tensor", LOGP_OLD),
         "advantages": ("tensor", ADV), "logp_ref": ("tensor", LOGP_OLD),
         "clip": ("positive", 0.2), "beta": ("positive", 0.1)},
        skip={("beta", "positive=0.0"): "beta = 0 is documented: no KL term"},
    ),
    "mlcore.active.history_features": Row(
        lambda poses=POSES, confidences=CONF, actions=ACTS, n_actions=4, length=5: (
            active.history_features(
                poses, confidences, actions, n_actions=n_actions, length=length
            )
        ),
        {"poses": ("tensor", POSES), "confidences": ("tensor", CONF),
         "actions": ("tensor", ACTS), "n_actions": ("positive_int", 4),
         "length": ("positive_int", 5)},
    ),
    "mlcore.active.pretrained_detector": Row(
        lambda n_views=8, n_steps=1, random_state=0: active.pretrained_detector(
            ENV, n_views=n_views, n_steps=n_steps, random_state=random_state
        ),
        {"n_views": ("positive_int", 8), "n_steps": ("positive_int", 1),
         "random_state": ("random_state", 0)},
    ),
    "mlcore.active.render_view": Row(
        lambda grid=GRID, x=2.5, y=2.5, angle=0.0, size=8, fov=1.0, max_range=5.0, fog=6.0: (
            active.render_view(
                grid, x, y, angle, size=size, fov=fov, max_range=max_range, fog=fog
            )
        ),
        {"grid": ("labels", GRID), "x": ("positive", 2.5), "y": ("positive", 2.5),
         "size": ("positive_int", 8), "fov": ("positive", 1.0),
         "max_range": ("positive", 5.0), "fog": ("positive", 6.0)},
        skip={("x", "positive=0.0"): "x = 0 is the grid's edge, a documented position",
              ("y", "positive=0.0"): "y = 0 is the grid's edge, a documented position"},
    ),
    "mlcore.active.rollout": Row(
        lambda greedy=False, random_state=0, history_len=4: active.rollout(
            active.RandomPolicy(random_state=0), ENV, DETECTOR, [(0, 0)], greedy=greedy,
            random_state=random_state, history_len=history_len,
        ),
        {"greedy": ("bool", False), "random_state": ("random_state", 0),
         "history_len": ("positive_int", 4)},
    ),
    # ---------------------------------------------------------------- quant
    "mlcore.quant.SensitivityCalibrator": Row(
        _calibrate,
        {"group_size": ("positive_int", 4), "progress": ("bool", False),
         "clip_negative": ("bool", True)},
    ),
    "mlcore.quant.allocate_precision": Row(
        lambda eps=0.5, coupling="free", memory_budget=1e6, backend="cvxpy": (
            quant.allocate_precision(
                QOPS, CM, SENS, eps, coupling=coupling, memory_budget=memory_budget,
                backend=backend,
            )
        ),
        {"eps": ("positive", 0.5), "coupling": ("option", "free"),
         "memory_budget": ("positive", 1e6), "backend": ("option", "cvxpy")},
        skip={("eps", "positive=0.0"): "eps = 0 is documented: the all-16 allocation",
              ("memory_budget", "option=None"): "None: no memory budget"},
    ),
    "mlcore.quant.allreduce_quantize": Row(
        lambda partial=XQ, bits=8, group_size=4: _collective(
            quant.allreduce_quantize, partial, bits, group_size
        ),
        {"partial": ("tensor", XQ), "bits": ("positive_int", 8),
         "group_size": ("positive_int", 4)},
    ),
    "mlcore.quant.fused_allreduce_quantize": Row(
        lambda partial=XQ, bits=8, group_size=4: _collective(
            quant.fused_allreduce_quantize, partial, bits, group_size
        ),
        {"partial": ("tensor", XQ), "bits": ("positive_int", 8),
         "group_size": ("positive_int", 4)},
    ),
    "mlcore.quant.baseline_allocation": Row(
        lambda scheme="comm-int8": quant.baseline_allocation(QOPS, CM, SENS, scheme),
        {"scheme": ("option", "comm-int8")},
    ),
    "mlcore.quant.batches": Row(
        lambda corpus=CORPUS, seq_len=4, batch_size=2, n_batches=2, random_state=0: (
            quant.batches(
                corpus, seq_len=seq_len, batch_size=batch_size, n_batches=n_batches,
                random_state=random_state,
            )
        ),
        {"corpus": ("tensor", CORPUS), "seq_len": ("positive_int", 4),
         "batch_size": ("positive_int", 2), "n_batches": ("positive_int", 2),
         "random_state": ("random_state", 0)},
    ),
    "mlcore.quant.causal_lm_loss": Row(
        lambda ids=IDS: quant.causal_lm_loss(TPLM, ids), {"ids": ("tensor", IDS)}
    ),
    "mlcore.quant.dequantize": Row(
        lambda q=Q8, scales=S8: quant.dequantize(q, scales),
        {"q": ("tensor", Q8), "scales": ("tensor", S8)},
    ),
    "mlcore.quant.evaluate_loss": Row(lambda: quant.evaluate_loss(TPLM, [IDS]), {}),
    "mlcore.quant.fake_quantize": Row(
        lambda x=XQ, bits=4, group_size=4: quant.fake_quantize(x, bits, group_size=group_size),
        {"x": ("tensor", XQ), "bits": ("positive_int", 4), "group_size": ("positive_int", 4)},
    ),
    "mlcore.quant.linear_ops": Row(
        lambda tokens=10, tp_size=2: quant.linear_ops(
            TPLM, tokens=tokens, tp_size=tp_size, **TPLM.tp_plan()
        ),
        {"tokens": ("positive_int", 10), "tp_size": ("positive_int", 2)},
    ),
    "mlcore.quant.measure_hardware": Row(
        lambda tp_size=2, link_bandwidth=1e9, link_latency=1e-5, size=16, repeats=1: (
            quant.measure_hardware(
                tp_size=tp_size, link_bandwidth=link_bandwidth, link_latency=link_latency,
                size=size, repeats=repeats,
            )
        ),
        {"tp_size": ("positive_int", 2), "link_bandwidth": ("positive", 1e9),
         "link_latency": ("positive", 1e-5), "size": ("positive_int", 16),
         "repeats": ("positive_int", 1)},
        skip={("link_latency", "positive=0.0"): "a zero link latency is documented (HardwareSpec)"},
    ),
    "mlcore.quant.pack_int4": Row(lambda q=Q4: quant.pack_int4(q), {"q": ("tensor", Q4)}),
    "mlcore.quant.pareto_frontier": Row(
        lambda n_eps=3, coupling="free", memory_budget=1e6: quant.pareto_frontier(
            QOPS, CM, SENS, n_eps=n_eps, coupling=coupling, memory_budget=memory_budget
        ),
        {"n_eps": ("positive_int", 3), "coupling": ("option", "free"),
         "memory_budget": ("positive", 1e6)},
        skip={("memory_budget", "option=None"): "None: no memory budget"},
    ),
    "mlcore.quant.payload_linear": Row(
        lambda q=Q8, scales=S8, weight=WQ: quant.payload_linear(q, scales, weight),
        {"q": ("tensor", Q8), "scales": ("tensor", S8), "weight": ("tensor", WQ)},
    ),
    "mlcore.quant.quantize": Row(
        lambda x=XQ, bits=4, group_size=4: quant.quantize(x, bits, group_size=group_size),
        {"x": ("tensor", XQ), "bits": ("positive_int", 4), "group_size": ("positive_int", 4)},
    ),
    "mlcore.quant.quantized": Row(_quantized, {"group_size": ("positive_int", 4)}),
    "mlcore.quant.quantized_linear": Row(
        lambda x=XQ, weight=WQ, bits=8, group_size=4: quant.quantized_linear(
            x, weight, bits=bits, group_size=group_size
        ),
        {"x": ("tensor", XQ), "weight": ("tensor", WQ), "bits": ("positive_int", 8),
         "group_size": ("positive_int", 4)},
    ),
    "mlcore.quant.simulate_tp_allreduce": Row(
        lambda bits=8, group_size=4: quant.simulate_tp_allreduce(
            SHARDS, bits, group_size=group_size
        ),
        {"bits": ("positive_int", 8), "group_size": ("positive_int", 4)},
    ),
    "mlcore.quant.synthetic_corpus": Row(
        lambda n_tokens=50, vocab_size=8, random_state=0: quant.synthetic_corpus(
            n_tokens, vocab_size=vocab_size, random_state=random_state
        ),
        {"n_tokens": ("positive_int", 50), "vocab_size": ("positive_int", 8),
         "random_state": ("random_state", 0)},
    ),
    "mlcore.quant.train_causal_lm": Row(
        _train_lm,
        {"corpus": ("tensor", CORPUS), "steps": ("positive_int", 2),
         "batch_size": ("positive_int", 2), "seq_len": ("positive_int", 4),
         "lr": ("positive", 1e-3), "random_state": ("random_state", 0),
         "progress": ("bool", False)},
    ),
    "mlcore.quant.unpack_int4": Row(
        lambda packed=PACKED: quant.unpack_int4(packed), {"packed": ("tensor", PACKED)}
    ),
    # ---------------------------------------------------------------- augment
    "mlcore.augment.Augmenter": Row(
        lambda X=XW, Y=YW, random_state=0, progress=False: augment.Augmenter().fit(
            X, Y, random_state=random_state, progress=progress
        ),
        {"X": ("tensor", XW), "Y": ("tensor", YW), "random_state": ("random_state", 0),
         "progress": ("bool", False)},
    ),
    "mlcore.augment.Jitter": Row(
        lambda X=XW, Y=YW, sigma=0.1: augment.Jitter(sigma).fit(X, Y).generate(X, Y),
        {"X": ("tensor", XW), "Y": ("tensor", YW), "sigma": ("positive", 0.1)},
    ),
    "mlcore.augment.Scaling": Row(
        lambda X=XW, Y=YW, sigma=0.1: augment.Scaling(sigma).fit(X, Y).generate(X, Y),
        {"X": ("tensor", XW), "Y": ("tensor", YW), "sigma": ("positive", 0.1)},
    ),
    "mlcore.augment.TimeWarp": Row(
        lambda X=XW, Y=YW, n_speed_change=2, max_speed_ratio=1.5: augment.TimeWarp(
            n_speed_change, max_speed_ratio
        ).fit(X, Y).generate(X, Y),
        {"X": ("tensor", XW), "Y": ("tensor", YW), "n_speed_change": ("positive_int", 2),
         "max_speed_ratio": ("positive", 1.5)},
    ),
    "mlcore.augment.ReAugment": Row(
        lambda X=XW, Y=YW, k_folds=2, anchor_fraction=0.5, patch=2, mask_ratio=0.5,
        latent_dim=2, hidden=4, kl_weight=0.1, proximity_weight=2.0, pretrain_steps=1,
        rl_steps=1, lr=1e-3, momentum=0.9, random_state=0: augment.ReAugment(
            _make_model, k_folds=k_folds, anchor_fraction=anchor_fraction, patch=patch,
            mask_ratio=mask_ratio, latent_dim=latent_dim, hidden=hidden, kl_weight=kl_weight,
            proximity_weight=proximity_weight, pretrain_steps=pretrain_steps,
            rl_steps=rl_steps, lr=lr, momentum=momentum, train_options=_TRAIN,
        ).fit(X, Y, random_state=random_state),
        {"X": ("tensor", XW), "Y": ("tensor", YW), "k_folds": ("positive_int", 2),
         "anchor_fraction": ("fraction_or_one", 0.5), "patch": ("positive_int", 2),
         "mask_ratio": ("fraction", 0.5), "latent_dim": ("positive_int", 2),
         "hidden": ("positive_int", 4), "kl_weight": ("positive", 0.1),
         "proximity_weight": ("positive", 2.0), "pretrain_steps": ("positive_int", 1),
         "rl_steps": ("positive_int", 1), "lr": ("positive", 1e-3),
         "momentum": ("fraction_or_zero", 0.9), "random_state": ("random_state", 0)},
        skip={("kl_weight", "positive=0.0"): "kl_weight = 0 is documented (no KL term)",
              ("proximity_weight", "positive=0.0"): "proximity_weight = 0 is documented"},
    ),
    "mlcore.augment.ZooDisagreement": Row(
        lambda X=XW, Y=YW, k_folds=2, random_state=0: augment.ZooDisagreement(
            _make_model, k_folds=k_folds, train_options=_TRAIN
        ).fit(X, Y, random_state=random_state),
        {"X": ("tensor", XW), "Y": ("tensor", YW), "k_folds": ("positive_int", 2),
         "random_state": ("random_state", 0)},
    ),
    "mlcore.augment.compare_augmenters": Row(
        lambda X=XW, Y=YW, X_test=XW, Y_test=YW, seeds=1, n_copies=1, random_state=0: (
            augment.compare_augmenters(
                _make_model, X, Y, X_test, Y_test, {"none": None, "jitter": augment.Jitter()},
                seeds=seeds, n_copies=n_copies, train_options=_TRAIN,
                random_state=random_state,
            )
        ),
        {"X": ("tensor", XW), "Y": ("tensor", YW), "X_test": ("tensor", XW),
         "Y_test": ("tensor", YW), "seeds": ("positive_int", 1),
         "n_copies": ("positive_int", 1), "random_state": ("random_state", 0)},
    ),
    "mlcore.augment.make_windows": Row(
        lambda series=SERIES, lookback=4, horizon=2, stride=1: augment.make_windows(
            series, lookback, horizon, stride=stride
        ),
        {"series": ("vector", SERIES), "lookback": ("positive_int", 4),
         "horizon": ("positive_int", 2), "stride": ("positive_int", 1)},
    ),
    "mlcore.augment.regime_windows": Row(
        lambda n=6, lookback=4, odd_fraction=0.2, phi=0.5, burn_in=3, random_state=0: (
            augment.regime_windows(
                n, lookback, odd_fraction=odd_fraction, phi=phi, burn_in=burn_in,
                random_state=random_state,
            )
        ),
        {"n": ("positive_int", 6), "lookback": ("positive_int", 4),
         "odd_fraction": ("fraction_or_zero", 0.2), "phi": ("fraction", 0.5),
         "burn_in": ("nonneg_int", 3), "random_state": ("random_state", 0)},
        skip={("phi", "fraction=0.0"): "phi lies in (-1, 1): 0 and -0.2 are legitimate",
              ("phi", "fraction=-0.2"): "phi lies in (-1, 1): 0 and -0.2 are legitimate"},
    ),
    "mlcore.augment.reinforce_loss": Row(
        lambda log_prob=ADV, reward=ADV: augment.reinforce_loss(log_prob, reward),
        {"log_prob": ("tensor", ADV), "reward": ("tensor", ADV)},
    ),
    "mlcore.augment.train_forecaster": Row(
        lambda X=XW, Y=YW, epochs=1, lr=1e-2, batch_size=3, weight_decay=0.1, random_state=0,
        progress=False: augment.train_forecaster(
            _make_model(), X, Y, epochs=epochs, lr=lr, batch_size=batch_size,
            weight_decay=weight_decay, random_state=random_state, progress=progress,
        ),
        {"X": ("tensor", XW), "Y": ("tensor", YW), "epochs": ("positive_int", 1),
         "lr": ("positive", 1e-2), "batch_size": ("positive_int", 3),
         "weight_decay": ("positive", 0.1), "random_state": ("random_state", 0),
         "progress": ("bool", False)},
        skip={("weight_decay", "positive=0.0"): "weight_decay = 0 is the default"},
    ),
    "mlcore.augment.train_with_augmentation": Row(
        lambda X=XW, Y=YW, n_copies=1, random_state=0, progress=False: (
            augment.train_with_augmentation(
                _make_model, X, Y, augment.Jitter(), n_copies=n_copies, train_options=_TRAIN,
                random_state=random_state, progress=progress,
            )
        ),
        {"X": ("tensor", XW), "Y": ("tensor", YW), "n_copies": ("positive_int", 1),
         "random_state": ("random_state", 0), "progress": ("bool", False)},
    ),
    # ---------------------------------------------------------------- inverse
    "mlcore.inverse.LotteryPriorSolver": Row(
        lambda y=IMG, n_seeds=1, lambda_cplx=1e-3, steps=2, lr_latent=0.2, lr_net=2e-3,
        n_levels=2, latent_step=0.125, decode="continuous", entropy_model="factorized",
        random_state=0, log_every=1: inverse.LotteryPriorSolver(
            n_seeds=n_seeds, noise_sigma=0.1, lambda_cplx=lambda_cplx, steps=steps,
            lr_latent=lr_latent, lr_net=lr_net, n_levels=n_levels, latent_step=latent_step,
            decode=decode, entropy_model=entropy_model,
        ).fit(y, random_state=random_state, log_every=log_every),
        {"y": ("tensor", IMG), "n_seeds": ("positive_int", 1),
         "lambda_cplx": ("positive", 1e-3), "steps": ("positive_int", 2),
         "lr_latent": ("positive", 0.2), "lr_net": ("positive", 2e-3),
         "n_levels": ("positive_int", 2), "latent_step": ("positive", 0.125),
         "decode": ("option", "continuous"), "entropy_model": ("option", "factorized"),
         "random_state": ("random_state", 0), "log_every": ("positive_int", 1)},
        skip={("lambda_cplx", "positive=0.0"): "lambda_cplx = 0 is documented (no penalty)"},
    ),
    "mlcore.inverse.bicubic_upsample": Row(
        lambda y=IMG, factor=2: inverse.bicubic_upsample(y, factor),
        {"y": ("tensor", IMG), "factor": ("positive_int", 2)},
    ),
    "mlcore.inverse.deep_image_prior": Row(
        lambda y=IMG, steps=2: inverse.deep_image_prior(steps=steps, noise_sigma=0.1).fit(
            y, random_state=0
        ),
        {"y": ("tensor", IMG), "steps": ("positive_int", 2)},
    ),
    "mlcore.inverse.estimate_noise_sigma": Row(
        lambda y=IMG: inverse.estimate_noise_sigma(y), {"y": ("tensor", IMG)}
    ),
    "mlcore.inverse.inpaint_biharmonic": Row(
        lambda y=IMG, mask=MASK: inverse.inpaint_biharmonic(y, mask),
        {"y": ("tensor", IMG), "mask": ("tensor", MASK)},
    ),
    "mlcore.inverse.nl_means": Row(
        lambda y=IMG, sigma=0.1, h_factor=0.8: inverse.nl_means(y, sigma=sigma, h_factor=h_factor),
        {"y": ("tensor", IMG), "sigma": ("positive", 0.1), "h_factor": ("positive", 0.8)},
    ),
    "mlcore.inverse.psnr": Row(
        lambda x=IMG, reference=IMG * 0.9, data_range=1.0: inverse.psnr(
            x, reference, data_range=data_range
        ),
        {"x": ("tensor", IMG), "reference": ("tensor", IMG * 0.9),
         "data_range": ("positive", 1.0)},
    ),
    "mlcore.inverse.random_pixel_mask": Row(
        lambda keep=0.5, random_state=0: inverse.random_pixel_mask(
            (4, 4), keep, random_state=random_state
        ),
        {"keep": ("fraction_or_one", 0.5), "random_state": ("random_state", 0)},
    ),
    "mlcore.inverse.total_variation": Row(
        lambda x=IMG, eps=1e-6: inverse.total_variation(x, eps=eps),
        {"x": ("tensor", IMG), "eps": ("positive", 1e-6)},
    ),
    "mlcore.inverse.tv_reconstruct": Row(
        lambda y=IMG, weight=0.08, steps=2, lr=0.02, init=IMG: inverse.tv_reconstruct(
            y, weight=weight, steps=steps, lr=lr, init=init
        ),
        {"y": ("tensor", IMG), "weight": ("positive", 0.08), "steps": ("positive_int", 2),
         "lr": ("positive", 0.02), "init": ("tensor", IMG)},
        skip={("weight", "positive=0.0"): "weight = 0 is documented (data term only)"},
    ),
}  # fmt: skip

EXEMPT: dict[str, str] = {
    "mlcore.active.check_pose_env": "a check itself: its one argument is an environment, "
    "refused by name when it is not a pose env (test_sea2.py)",
    "mlcore.active.state_dict_hash": "its one argument is a module, read only by its state dict",
    "mlcore.quant.check_rewrite": "spawns worker processes; checked in test_cocoquant*.py",
    "mlcore.quant.run_tensor_parallel": "spawns worker processes; checked in test_cocoquant*.py",
}

#: The areas whose every entry has a row.
AREAS = ("mlcore.active", "mlcore.quant", "mlcore.augment", "mlcore.inverse")

(
    test_every_public_entry_has_a_row,
    test_bad_input_gives_an_error_naming_the_argument,
    test_good_row_runs,
    test_good_row_leaves_its_inputs_unmodified,
) = make_table_tests(ROWS, EXEMPT, AREAS)


# ---- the faults found by the table, each failing on the old code


def test_active_entries_refuse_what_they_used_to_accept():
    with pytest.raises(ValueError, match="`rewards` must not be empty"):
        active.grpo_advantages(torch.zeros(0), 2)  # was an empty tensor of advantages
    with pytest.raises(ValueError, match="`eps`"):
        active.grpo_advantages(REWARDS, 4, eps=-1.0)  # was a sign flip for tied-ish groups
    with pytest.raises(ValueError, match="`clip`"):
        active.grpo_loss(LOGP, LOGP_OLD, ADV, clip=0.0)  # was a surrogate with the ratio pinned
    with pytest.raises(TypeError, match="`greedy` must be True or False"):
        active.rollout(active.ForwardPolicy(), ENV, DETECTOR, [(0, 0)], greedy="no")  # truthy
    with pytest.raises(ValueError, match="`seed`"):
        active.evaluate_policies({"f": active.ForwardPolicy()}, ENV, DETECTOR, [0], seed=-1)
    with pytest.raises(ValueError, match="`n_views`"):
        active.pretrained_detector(ENV, n_views=0, n_steps=1)  # was a raw numpy stack error
    with pytest.raises(TypeError, match="`n_steps`"):
        active.pretrained_detector(ENV, n_views=8, n_steps=2.5)  # was a raw range() error


def test_quantisers_refuse_a_0d_tensor_nan_scales_and_name_x():
    with pytest.raises(ValueError, match="`x` must have a last axis"):
        quant.quantize(torch.tensor(1.0), 8)  # was a raw IndexError
    with pytest.raises(ValueError, match="`scales` must be finite"):
        quant.dequantize(Q8, torch.full_like(S8, math.nan))  # was a silent NaN tensor
    with pytest.raises(ValueError, match="`scales` must be finite"):
        quant.payload_linear(Q8, torch.full_like(S8, math.nan), WQ)
    with pytest.raises(ValueError, match="`weight` must not be empty"):
        quant.payload_linear(Q8, S8, WQ[:0])  # was an empty output
    with pytest.raises(ValueError, match="`x` must be finite"):
        quant.quantized_linear(torch.full((2, 8), math.nan), WQ, bits=8)  # named `input`
    with pytest.raises(ValueError, match="`x` must have a last axis of `weight`'s 8 inputs"):
        quant.quantized_linear(_t(2, 6), WQ, bits=16)  # was a raw shape error from F.linear
    with pytest.raises(ValueError, match=r"`shards\[0\]` must have a last"):
        quant.simulate_tp_allreduce([torch.tensor(1.0)], 8)  # was a raw IndexError
    with pytest.raises(ValueError, match=r"`shards\[1\]` must be finite"):
        quant.simulate_tp_allreduce([SHARDS[0], torch.full((2, 8), math.nan)], 8)  # named `x`
    with pytest.raises(TypeError, match="`activation_bits` must be a sequence"):
        quant.quantized_linear(XQ, WQ, bits=8, activation_bits=8)  # was a raw TypeError


def test_collectives_loss_and_calibration_check_their_arguments_first():
    with _one_rank_group():
        with pytest.raises(ValueError, match="`partial` must have a last"):
            quant.allreduce_quantize(torch.tensor(1.0), 8)  # was a raw IndexError
        with pytest.raises(ValueError, match="`partial` must be finite"):
            quant.fused_allreduce_quantize(torch.full((2, 8), math.nan), 8)
    with pytest.raises(ValueError, match="`ids` must be a 2-D"):
        quant.causal_lm_loss(TPLM, torch.tensor(3))  # was a raw IndexError
    with pytest.raises(ValueError, match="`ids` must have at least 2 positions"):
        quant.causal_lm_loss(TPLM, IDS[:, :1])  # was a raw reshape error
    with pytest.raises(TypeError, match="`clip_negative` must be True or False"):
        quant.SensitivityCalibrator(TPLM, [IDS], OPS, clip_negative="no")  # was truthy
    with pytest.raises(TypeError, match="`progress` must be True or False"):
        quant.SensitivityCalibrator(TPLM, [IDS], OPS, bits=(16, 8)).fit(progress="no")
    with pytest.raises(ValueError, match="`tp_size`"):
        quant.measure_hardware(tp_size=0, size=16, repeats=1)  # was refused after the timing
    with pytest.raises(TypeError, match="`bits` must be a mapping"):
        with quant.quantized(TPLM, OPS, 8):
            pass  # was a raw AttributeError


def test_augment_entries_refuse_complex_series_and_bad_reinforce_inputs():
    with pytest.raises((TypeError, ValueError), match="`series`"):
        augment.make_windows(SERIES + 1j, 4, 2)  # the imaginary part was silently dropped
    with pytest.raises(ValueError, match="`reward` must be a 1-D"):
        augment.reinforce_loss(ADV, ADV[:0])  # was a raw broadcast error
    with pytest.raises(ValueError, match="`log_prob` must be a 1-D"):
        augment.reinforce_loss(torch.tensor(0.5), ADV)  # was a silent mean over a broadcast
    with pytest.raises(ValueError, match="`reward` must be finite"):
        augment.reinforce_loss(ADV, torch.full((4,), math.nan))  # was a NaN loss
    with pytest.raises(TypeError, match="`progress` must be True or False"):
        augment.Jitter().fit(XW, YW, progress="yes")


def test_inverse_metrics_refuse_nan_empty_and_bad_parameters():
    with pytest.raises(ValueError, match="`x` must be finite|`x`.*NaN"):
        inverse.psnr(torch.full((4, 4), math.nan), IMG[:4, :4])  # was NaN dB
    with pytest.raises(ValueError, match="`reference`"):
        inverse.psnr(IMG, torch.full((8, 8), math.inf))  # was a raw math domain error
    with pytest.raises(ValueError, match="must not be empty"):
        inverse.psnr(IMG[:0], IMG[:0])  # was a NaN from an empty mean
    with pytest.raises(ValueError, match="`data_range`"):
        inverse.psnr(IMG, IMG * 0.9, data_range=-1.0)  # was accepted
    with pytest.raises(ValueError, match="`x` must be finite"):
        inverse.total_variation(torch.full((4, 4), math.nan))  # was NaN
    with pytest.raises(ValueError, match="`eps`"):
        inverse.total_variation(IMG, eps=-1.0)  # was a NaN square root
    with pytest.raises(ValueError, match="`h_factor`"):
        inverse.nl_means(IMG, sigma=0.1, h_factor=0.0)  # was accepted
    with pytest.raises(ValueError, match="`y` must not be empty"):
        inverse.nl_means(IMG[:0], sigma=0.1)  # was a raw numpy padding error


def test_inputs_are_not_modified():
    x, w, ids = XQ.clone(), WQ.clone(), IDS.clone()
    quant.quantized_linear(XQ, WQ, bits=4, group_size=4)
    quant.causal_lm_loss(TPLM, IDS)
    img = IMG.clone()
    inverse.total_variation(IMG)
    inverse.psnr(IMG, IMG * 0.9)
    lp = ADV.clone()
    augment.reinforce_loss(ADV, ADV)
    assert torch.equal(XQ, x) and torch.equal(WQ, w) and torch.equal(IDS, ids)
    assert torch.equal(IMG, img) and torch.equal(ADV, lp)
