"""Bad input at every public mlcore entry: a clear error naming the argument, never a raw torch
index, broadcast, dtype or attribute error, and never a silent wrong number (issue 18)."""

import math
import warnings

import numpy as np
import pytest
import torch
from torch import nn

from mlcore._device import get_device, seed_everything, torch_generator
from mlcore.diffusion import (
    IMDMSampler,
    InfiniteMaskEmbedding,
    TinyDenoiser,
    distill_on_couplings,
    imdm_elbo_loss,
    rectified_couplings,
    transition_probabilities,
)
from mlcore.diffusion.synthetic import marginal_entropy, pair_kl_to_data, pair_validity
from mlcore.functional import masked_diffusion_loss, softmax_entropy
from mlcore.losses import EntropyLoss, MaskedDiffusionLoss
from mlcore.nn import (
    HIPERotaryEmbedding,
    MambaBlock,
    MambaLM,
    RotaryEmbedding,
    TinyTransformer,
    half_width,
    hipe_gains,
    local_copy_sequences,
    mixer_ssm_inputs,
    rope_frequencies,
    selective_scan,
)
from mlcore.nn.mamba import selective_scan_chunked
from mlcore.pruning import (
    apply_ssm_mask,
    magnitude_prune,
    sparsegpt_prune_linear,
    sparsessm_prune,
    ssm_statistics,
    time_weights,
    wanda_prune_linear,
)
from mlcore.tta import CONGA, Tent, corrupt_images

NAN, INF = math.nan, math.inf
VOCAB, LENGTH, NOISE = 5, 3, 4


def _f(*shape, fill=None, dtype=torch.float32):
    if fill is None:
        return torch.randn(*shape, generator=torch.Generator().manual_seed(0), dtype=dtype)
    return torch.full(shape, fill, dtype=dtype)


def _ids(*shape, fill=0):
    return torch.full(shape, fill, dtype=torch.long)


def _denoiser():
    torch.manual_seed(0)
    return TinyDenoiser(VOCAB, LENGTH, d_model=8, hidden=16, noise_dim=NOISE)


def _mixer():
    torch.manual_seed(0)
    return MambaBlock(8, d_state=4)


def _linear():
    torch.manual_seed(0)
    return nn.Linear(6, 4)


def _optimizer():
    return torch.optim.SGD(nn.Linear(3, 4).parameters(), lr=0.1)


def _classifier():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))


def _mdl(logits=None, x0=None, masked=None, t=None):
    return masked_diffusion_loss(
        _f(2, 3, 5) if logits is None else logits,
        _ids(2, 3) if x0 is None else x0,
        torch.ones(2, 3, dtype=torch.bool) if masked is None else masked,
        torch.ones(2) if t is None else t,
    )


def _scan(fn, **bad):
    args = {"u": _f(2, 3, 4), "delta": _f(2, 3, 4), "A": _f(4, 2), "B": _f(2, 3, 2)}
    args["C"] = _f(2, 3, 2)
    args.update(bad)
    return fn(args.pop("u"), args.pop("delta"), args.pop("A"), args.pop("B"), args.pop("C"), **args)


def _nan_weight(layer):
    with torch.no_grad():
        layer.weight[0, 0] = NAN
    return layer


def _distill(eps=None, x0=None, steps=1):
    eps = _f(2, LENGTH, NOISE) if eps is None else eps
    x0 = _ids(2, LENGTH) if x0 is None else x0
    return distill_on_couplings(_denoiser(), eps, x0, steps=steps)


HIPE = HIPERotaryEmbedding(8, 2, [1.0, 2.0])
Q = _f(1, 2, 5, 8)

# (entry, call, error, message fragment)
CASES = [
    # -- losses ----------------------------------------------------------------------------------
    (
        "softmax_entropy",
        lambda: softmax_entropy([[1.0, 2.0]]),
        TypeError,
        "`logits` must be a torch.Tensor",
    ),
    (
        "softmax_entropy",
        lambda: softmax_entropy(_ids(2, 3)),
        TypeError,
        "`logits` must be a floating-point",
    ),
    (
        "softmax_entropy",
        lambda: softmax_entropy(_f(2, 3), dim=5),
        ValueError,
        r"`dim` must lie in \[-2, 1\]",
    ),
    (
        "softmax_entropy",
        lambda: softmax_entropy(_f(0, 3)),
        ValueError,
        "`logits` has an empty batch",
    ),
    (
        "softmax_entropy",
        lambda: softmax_entropy(_f(2, 3), reduction="avg"),
        ValueError,
        "`reduction` must be one of",
    ),
    ("EntropyLoss", lambda: EntropyLoss(dim="classes"), TypeError, "`dim` must be an integer"),
    (
        "masked_diffusion_loss",
        lambda: _mdl(logits=[1.0]),
        TypeError,
        "`logits` must be a torch.Tensor",
    ),
    (
        "masked_diffusion_loss",
        lambda: _mdl(logits=_ids(2, 3, 5)),
        TypeError,
        "`logits` must be a floating-point",
    ),
    (
        "masked_diffusion_loss",
        lambda: _mdl(x0=_ids(2, 3, fill=7)),
        ValueError,
        r"`x0` must hold token ids in \[0, 4\]; got ids from 7",
    ),
    (
        "masked_diffusion_loss",
        lambda: _mdl(x0=_f(2, 3)),
        TypeError,
        "`x0` must be an integer tensor",
    ),
    (
        "masked_diffusion_loss",
        lambda: _mdl(x0=_ids(2, 4)),
        ValueError,
        r"`x0` must be a 2-D \(batch=2, length=3\)",
    ),
    (
        "masked_diffusion_loss",
        lambda: _mdl(masked=torch.ones(2, 3)),
        TypeError,
        "`masked` must be a boolean",
    ),
    (
        "masked_diffusion_loss",
        lambda: _mdl(t=torch.zeros(2)),
        ValueError,
        r"`t` must lie in \(0, 1\]",
    ),
    (
        "masked_diffusion_loss",
        lambda: _mdl(t=torch.tensor([0.5, NAN])),
        ValueError,
        "`t` must be finite",
    ),
    (
        "masked_diffusion_loss",
        lambda: _mdl(t=torch.ones(3)),
        ValueError,
        r"`t` must be a 1-D \(batch=2\)",
    ),
    (
        "MaskedDiffusionLoss",
        lambda: MaskedDiffusionLoss()(
            _f(0, 3, 5), _ids(0, 3), torch.ones(0, 3, dtype=torch.bool), torch.ones(0)
        ),
        ValueError,
        "empty batch",
    ),
    # -- rotary embeddings -----------------------------------------------------------------------
    (
        "rope_frequencies",
        lambda: rope_frequencies(8, dtype=torch.int64),
        TypeError,
        "`dtype` must be None or a floating-point",
    ),
    (
        "RotaryEmbedding",
        lambda: RotaryEmbedding(8, dtype=torch.int64),
        TypeError,
        "`dtype` must be None or a floating-point",
    ),
    (
        "HIPERotaryEmbedding",
        lambda: HIPERotaryEmbedding(8, 2, [1.0, 2.0], dtype=torch.int32),
        TypeError,
        "`dtype`",
    ),
    (
        "HIPERotaryEmbedding",
        lambda: HIPERotaryEmbedding(8, 2, {1.0: 2.0, 3.0: 4.0}),
        TypeError,
        "`sigmas` must be a non-empty sequence",
    ),
    (
        "HIPERotaryEmbedding",
        lambda: HIPERotaryEmbedding(8, 2, torch.ones(2, 1)),
        TypeError,
        "1-D sequence of widths",
    ),
    (
        "HIPERotaryEmbedding",
        lambda: HIPERotaryEmbedding(8, 2, [1.0, NAN]),
        ValueError,
        r"`sigmas\[1\]` must be finite",
    ),
    ("hipe_gains", lambda: hipe_gains(8, "ab"), TypeError, "`sigmas` must be a non-empty sequence"),
    (
        "RotaryEmbedding.forward",
        lambda: RotaryEmbedding(8)([Q], Q),
        TypeError,
        "`q` must be a torch.Tensor",
    ),
    (
        "RotaryEmbedding.forward",
        lambda: RotaryEmbedding(8)(Q.long(), Q.long()),
        TypeError,
        "`q` must be a floating-point",
    ),
    (
        "HIPERotaryEmbedding.forward",
        lambda: HIPE(Q, Q.bool()),
        TypeError,
        "`k` must be a floating-point",
    ),
    (
        "HIPERotaryEmbedding.forward",
        lambda: HIPE(Q, Q.double()),
        ValueError,
        "`k` must have the dtype and device of `q`",
    ),
    (
        "HIPERotaryEmbedding.forward",
        lambda: HIPE(Q, Q, positions=["a"] * 5),
        TypeError,
        "`positions` must be a tensor or sequence of numbers",
    ),
    (
        "HIPERotaryEmbedding.forward",
        lambda: HIPE(Q, Q, positions=torch.tensor([0, 1, NAN, 3, 4])),
        ValueError,
        "`positions` must be finite",
    ),
    (
        "HIPERotaryEmbedding.forward",
        lambda: HIPE(Q, Q, positions=torch.zeros(3, 5)),
        ValueError,
        "with time=5 and batch=1; got",
    ),
    (
        "half_width",
        lambda: half_width(torch.ones(2, 0)),
        ValueError,
        "`kernel` must have at least one delta entry",
    ),
    (
        "half_width",
        lambda: half_width(torch.ones(3)),
        ValueError,
        r"`kernel` must be a 2-D \(heads, delta\)",
    ),
    # -- transformer, Mamba ----------------------------------------------------------------------
    (
        "TinyTransformer",
        lambda: TinyTransformer(11, 16, 1, 2, dtype=torch.int64),
        TypeError,
        "`dtype`",
    ),
    (
        "TinyTransformer.forward",
        lambda: TinyTransformer(11, 16, 1, 2)(_ids(2, 3, fill=11)),
        ValueError,
        r"`ids` must hold token ids in \[0, 10\]; got ids from 11",
    ),
    (
        "TinyTransformer.forward",
        lambda: TinyTransformer(11, 16, 1, 2)(_ids(2, 3, fill=-1)),
        ValueError,
        "got ids from -1",
    ),
    (
        "TinyTransformer.forward",
        lambda: TinyTransformer(11, 16, 1, 2)(_ids(2, 3).bool()),
        TypeError,
        "`ids` must be an integer tensor",
    ),
    (
        "TinyTransformer.forward",
        lambda: TinyTransformer(11, 16, 1, 2, pos="learned", max_len=2)(_ids(2, 3)),
        ValueError,
        "`ids` has 3 time steps",
    ),
    (
        "local_copy_sequences",
        lambda: local_copy_sequences(2, 5, 3, 2, random_state="seed"),
        TypeError,
        "`random_state` must be None",
    ),
    (
        "selective_scan",
        lambda: selective_scan([1.0], [1.0], [1.0], [1.0], [1.0]),
        TypeError,
        "`u` must be a torch.Tensor",
    ),
    (
        "selective_scan",
        lambda: _scan(selective_scan, u=_ids(2, 3, 4)),
        TypeError,
        "`u` must be a floating-point",
    ),
    (
        "selective_scan",
        lambda: _scan(selective_scan, u=_f(2, 0, 4), delta=_f(2, 0, 4)),
        ValueError,
        "`u` must have at least one length entry",
    ),
    (
        "selective_scan",
        lambda: _scan(selective_scan, delta=_f(2, 3, 4, dtype=torch.float64)),
        ValueError,
        "`delta` must have the dtype and device of `u`",
    ),
    (
        "selective_scan",
        lambda: _scan(selective_scan, D=_f(3)),
        ValueError,
        r"`D` must be a 1-D \(d_inner=4\)",
    ),
    (
        "selective_scan",
        lambda: _scan(selective_scan, mask=torch.ones(3, 3)),
        ValueError,
        r"`mask` must be a 2-D \(d_inner=4, d_state=2\)",
    ),
    (
        "selective_scan_chunked",
        lambda: _scan(selective_scan_chunked, delta=_f(2, 3, 5)),
        ValueError,
        r"`delta` must be a 3-D \(batch=2, length=3, d_inner=4\)",
    ),
    (
        "selective_scan_chunked",
        lambda: _scan(selective_scan_chunked, B=_f(2, 3, 3)),
        ValueError,
        r"`B` must be a 3-D \(batch=2, length=3, d_state=2\)",
    ),
    (
        "mixer_ssm_inputs",
        lambda: mixer_ssm_inputs(_mixer(), _f(2, 5, 7)),
        ValueError,
        r"`x` must be a 3-D \(batch, length, d_model=8\)",
    ),
    (
        "mixer_ssm_inputs",
        lambda: mixer_ssm_inputs(nn.Linear(2, 2), _f(2, 5, 8)),
        TypeError,
        "`mixer` must have Mamba's parameters",
    ),
    ("MambaBlock", lambda: MambaBlock(8, dtype=torch.int64), TypeError, "`dtype`"),
    (
        "MambaBlock.forward",
        lambda: _mixer()(_f(2, 5, 8, dtype=torch.float64)),
        ValueError,
        "`x` must have the dtype and device of `mixer.in_proj.weight`",
    ),
    (
        "MambaBlock.forward",
        lambda: _mixer()(_f(2, 0, 8)),
        ValueError,
        "`x` must have at least one length entry",
    ),
    ("MambaLM", lambda: MambaLM(11, 0, 1), ValueError, r"`d_model` must lie in \[1, inf\]"),
    (
        "MambaLM.forward",
        lambda: MambaLM(11, 8, 1, d_state=4)(_ids(2, 3, fill=20)),
        ValueError,
        r"`ids` must hold token ids in \[0, 10\]",
    ),
    # -- pruning ---------------------------------------------------------------------------------
    ("time_weights", lambda: time_weights(0), ValueError, r"`length` must lie in \[1, inf\]"),
    (
        "ssm_statistics",
        lambda: ssm_statistics(_mixer(), _f(0, 5, 8)),
        ValueError,
        "`calib_inputs` must not be empty",
    ),
    (
        "ssm_statistics",
        lambda: ssm_statistics(_mixer(), _f(2, 5, 7)),
        ValueError,
        r"`calib_inputs` must be a 3-D \(n_samples, length, d_model=8\)",
    ),
    (
        "ssm_statistics",
        lambda: ssm_statistics(_mixer(), _ids(2, 5, 8)),
        ValueError,
        "`calib_inputs` must have the dtype and device",
    ),
    (
        "sparsessm_prune",
        lambda: sparsessm_prune(_mixer(), _f(2, 0, 8)),
        ValueError,
        "`calib_inputs` must not be empty",
    ),
    (
        "sparsessm_prune",
        lambda: sparsessm_prune(_mixer(), _f(2, 5, 8), sparsity=1.0),
        ValueError,
        r"`sparsity` must lie in \[0, 1\)",
    ),
    (
        "sparsessm_prune",
        lambda: sparsessm_prune(_mixer(), _f(2, 5, 8), structure=3),
        TypeError,
        "`structure` must be a pair",
    ),
    (
        "apply_ssm_mask",
        lambda: apply_ssm_mask(nn.Linear(2, 2), torch.ones(2, 2)),
        TypeError,
        "`mixer` must be a Mamba mixer with `A_log`",
    ),
    (
        "apply_ssm_mask",
        lambda: apply_ssm_mask(_mixer(), "all"),
        TypeError,
        "`keep` must be a boolean mask",
    ),
    (
        "apply_ssm_mask",
        lambda: apply_ssm_mask(_mixer(), torch.full((16, 4), 0.5)),
        ValueError,
        "`keep` must be boolean, or hold only 0 and 1",
    ),
    (
        "sparsegpt_prune_linear",
        lambda: sparsegpt_prune_linear(_linear(), _f(10, 6, fill=NAN)),
        ValueError,
        "`inputs` must be finite; found 60 NaN",
    ),
    (
        "sparsegpt_prune_linear",
        lambda: sparsegpt_prune_linear(_linear(), _f(10, 6, fill=INF)),
        ValueError,
        "60 infinite",
    ),
    (
        "sparsegpt_prune_linear",
        lambda: sparsegpt_prune_linear(_linear(), _f(0, 6)),
        ValueError,
        "`inputs` must not be empty",
    ),
    (
        "sparsegpt_prune_linear",
        lambda: sparsegpt_prune_linear(_linear(), _ids(10, 6)),
        TypeError,
        "`inputs` must be a floating-point",
    ),
    (
        "sparsegpt_prune_linear",
        lambda: sparsegpt_prune_linear(_nan_weight(_linear()), _f(10, 6)),
        ValueError,
        "`layer.weight` must be finite",
    ),
    (
        "wanda_prune_linear",
        lambda: wanda_prune_linear(_linear(), _f(10, 6, fill=NAN)),
        ValueError,
        "`inputs` must be finite",
    ),
    (
        "wanda_prune_linear",
        lambda: wanda_prune_linear(_linear(), _f(0, 6)),
        ValueError,
        "`inputs` must not be empty",
    ),
    (
        "wanda_prune_linear",
        lambda: wanda_prune_linear(_nan_weight(_linear()), _f(10, 6)),
        ValueError,
        "`layer.weight` must be finite",
    ),
    (
        "magnitude_prune",
        lambda: magnitude_prune(torch.tensor([[NAN, 1.0], [2.0, 3.0]])),
        ValueError,
        "`target` must be finite",
    ),
    (
        "magnitude_prune",
        lambda: magnitude_prune(_nan_weight(_linear())),
        ValueError,
        "`target.weight` must be finite",
    ),
    (
        "magnitude_prune",
        lambda: magnitude_prune(torch.ones(0, 4)),
        ValueError,
        "`target` must not be empty",
    ),
    (
        "magnitude_prune",
        lambda: magnitude_prune(torch.ones(2, 2), -0.1),
        ValueError,
        r"`sparsity` must lie in \[0, 1\)",
    ),
    (
        "magnitude_prune",
        lambda: magnitude_prune(torch.ones(2, 2), "0.5"),
        TypeError,
        "`sparsity` must be a real number",
    ),
    # -- test-time adaptation --------------------------------------------------------------------
    ("CONGA", lambda: CONGA("sgd"), TypeError, "`optimizer` must be a torch.optim.Optimizer"),
    (
        "CONGA",
        lambda: CONGA(_optimizer(), last_epoch="start"),
        TypeError,
        "`last_epoch` must be an integer",
    ),
    (
        "CONGA",
        lambda: CONGA(_optimizer(), last_epoch=-2),
        ValueError,
        r"`last_epoch` must lie in \[-1, inf\]",
    ),
    ("CONGA", lambda: CONGA(_optimizer(), kappa=0), ValueError, r"`kappa` must lie in \(0, inf\]"),
    (
        "CONGA.observe",
        lambda: CONGA(_optimizer()).observe(_f(2, 3).bool()),
        TypeError,
        "`logits` must be a real",
    ),
    (
        "CONGA.observe",
        lambda: CONGA(_optimizer(), snr="batch").observe(_f(2, 3), [[1.0]]),
        TypeError,
        "`per_sample_grads` must be a torch.Tensor",
    ),
    (
        "CONGA.observe",
        lambda: CONGA(_optimizer(), snr="batch").observe(_f(2, 3), _f(2, 3, 1)),
        ValueError,
        r"`per_sample_grads` must be a 2-D \(batch, n_params\)",
    ),
    ("Tent", lambda: Tent(_classifier(), lr=-1), ValueError, r"`lr` must lie in \(0, inf\]"),
    ("Tent", lambda: Tent(_classifier(), steps=0), ValueError, r"`steps` must lie in \[1, inf\]"),
    ("Tent.forward", lambda: Tent(_classifier())("batch"), TypeError, "`x` must be a torch.Tensor"),
    (
        "Tent.forward",
        lambda: Tent(_classifier())(_f(0, 4)),
        ValueError,
        "`x` must be a batch of at least 2",
    ),
    (
        "Tent.forward",
        lambda: Tent(_classifier())(_f(1, 4)),
        ValueError,
        "batch norms need the batch's own statistics",
    ),
    (
        "Tent.forward",
        lambda: Tent(_classifier())(_f(3, 4, fill=NAN)),
        ValueError,
        "`x` must be finite",
    ),
    (
        "corrupt_images",
        lambda: corrupt_images(np.full((2, 3, 3), 5.0), "contrast"),
        ValueError,
        r"`images` must have values in \[0, 1\]",
    ),
    (
        "corrupt_images",
        lambda: corrupt_images(np.zeros((2, 3, 3)), "blur", random_state=-1),
        ValueError,
        "`random_state` must be a non-negative",
    ),
    # -- masked diffusion ------------------------------------------------------------------------
    (
        "InfiniteMaskEmbedding",
        lambda: InfiniteMaskEmbedding(nn.Embedding(5, 4), 4, dtype=torch.int64),
        TypeError,
        "`dtype`",
    ),
    (
        "InfiniteMaskEmbedding.forward",
        lambda: _denoiser().embedding(_ids(2, 3, fill=9)),
        ValueError,
        r"`ids` must hold token ids in \[0, 5\]",
    ),
    (
        "InfiniteMaskEmbedding.forward",
        lambda: _denoiser().embedding(_ids(2, 3), eps=[1.0]),
        TypeError,
        "`eps` must be a torch.Tensor",
    ),
    (
        "InfiniteMaskEmbedding.forward",
        lambda: _denoiser().embedding(_ids(2, 3), eps=_ids(2, 3, 4)),
        TypeError,
        "`eps` must be a floating-point",
    ),
    (
        "InfiniteMaskEmbedding.sample_noise",
        lambda: _denoiser().embedding.sample_noise(-1, 3),
        ValueError,
        r"`batch` must lie in \[1, inf\]",
    ),
    (
        "InfiniteMaskEmbedding.sample_noise",
        lambda: _denoiser().embedding.sample_noise(2, "3"),
        TypeError,
        "`length` must be an integer",
    ),
    (
        "InfiniteMaskEmbedding.sample_noise",
        lambda: _denoiser().embedding.sample_noise(2, 3, dtype=torch.int64),
        TypeError,
        "`dtype`",
    ),
    (
        "TinyDenoiser.forward",
        lambda: _denoiser()([[0, 1, 2]]),
        TypeError,
        "`xt` must be a torch.Tensor",
    ),
    (
        "TinyDenoiser.forward",
        lambda: _denoiser()(_ids(2, 4)),
        ValueError,
        r"`xt` must be a 2-D \(batch, length=3\)",
    ),
    (
        "imdm_elbo_loss",
        lambda: imdm_elbo_loss(_denoiser(), _ids(2, 3, fill=7)),
        ValueError,
        r"`x0` must hold token ids in \[0, 5\]",
    ),
    (
        "imdm_elbo_loss",
        lambda: imdm_elbo_loss(_denoiser(), _ids(0, 3)),
        ValueError,
        "`x0` must not be empty",
    ),
    (
        "imdm_elbo_loss",
        lambda: imdm_elbo_loss(_denoiser(), _ids(2, 3), t="late"),
        TypeError,
        "`t` must be a real number",
    ),
    (
        "imdm_elbo_loss",
        lambda: imdm_elbo_loss(_denoiser(), _ids(2, 3), t=torch.ones(3)),
        ValueError,
        r"`t` must be a number or a \(batch,\) = \(2,\) tensor",
    ),
    (
        "imdm_elbo_loss",
        lambda: imdm_elbo_loss(_denoiser(), _ids(2, 3), t=torch.ones(2, dtype=torch.bool)),
        TypeError,
        "`t` must be a real",
    ),
    (
        "transition_probabilities",
        lambda: transition_probabilities(NAN, 0.1),
        ValueError,
        "`t` must be finite",
    ),
    (
        "IMDMSampler.sample",
        lambda: IMDMSampler(_denoiser(), 2).sample(2, 3, eps=[1.0]),
        TypeError,
        "`eps` must be a torch.Tensor",
    ),
    (
        "IMDMSampler.sample",
        lambda: IMDMSampler(_denoiser(), 2).sample(2, 3, eps=_f(2, 3, 4, fill=NAN)),
        ValueError,
        "`eps` must be finite",
    ),
    (
        "IMDMSampler.sample",
        lambda: IMDMSampler(_denoiser(), 2).sample(2, 3, eps=_f(2, 3, 5)),
        ValueError,
        r"`eps` must be a 3-D \(n=2, length=3, noise_dim=4\)",
    ),
    (
        "rectified_couplings",
        lambda: rectified_couplings(IMDMSampler(_denoiser(), 2), 2, 3, random_state=1.5),
        TypeError,
        "`random_state` must be None",
    ),
    (
        "distill_on_couplings",
        lambda: _distill(eps=[1.0]),
        TypeError,
        "`eps` must be a torch.Tensor",
    ),
    (
        "distill_on_couplings",
        lambda: _distill(eps=_f(0, 3, 4), x0=_ids(0, 3)),
        ValueError,
        "`eps` must not be empty",
    ),
    (
        "distill_on_couplings",
        lambda: _distill(eps=_f(2, 3, 4, fill=NAN)),
        ValueError,
        "`eps` must be finite",
    ),
    (
        "distill_on_couplings",
        lambda: _distill(x0=_ids(2, 3, fill=9)),
        ValueError,
        r"`x0` must hold token ids in \[0, 5\]",
    ),
    (
        "distill_on_couplings",
        lambda: _distill(x0=_ids(2, 3, fill=VOCAB)),
        ValueError,
        "must be clean data",
    ),
    (
        "distill_on_couplings",
        lambda: _distill(x0=_f(2, 3)),
        TypeError,
        "`x0` must be an integer tensor",
    ),
    ("distill_on_couplings", lambda: _distill(eps=_f(2, 3, 5)), ValueError, "with noise_dim=4"),
    (
        "distill_on_couplings",
        lambda: _distill(steps=0),
        ValueError,
        r"`steps` must lie in \[1, inf\]",
    ),
    (
        "distill_on_couplings",
        lambda: distill_on_couplings(nn.Linear(2, 2), _f(2, 3, 4), _ids(2, 3)),
        TypeError,
        "expose its InfiniteMaskEmbedding",
    ),
    (
        "pair_validity",
        lambda: pair_validity(np.full((3, 2), 0.5)),
        TypeError,
        "`samples` must hold integer token ids",
    ),
    (
        "pair_validity",
        lambda: pair_validity(np.zeros((0, 2), dtype=int)),
        ValueError,
        "`samples` must hold at least one pair",
    ),
    (
        "marginal_entropy",
        lambda: marginal_entropy(np.full((3, 2), 9), 4),
        ValueError,
        r"`samples` must hold token ids in \[0, 3\]; got ids from 9",
    ),
    (
        "pair_kl_to_data",
        lambda: pair_kl_to_data(np.full((3, 2), -1), 4),
        ValueError,
        "got ids from -1",
    ),
    # -- augment, inverse, quant: seeds reach torch only through mlcore._device ---------------------
    (
        "AugmenterResult.generate",
        lambda: (
            __import__("mlcore.augment", fromlist=["Jitter"])
            .Jitter()
            .fit(_f(4, 6, 1), _f(4, 2, 1))
            .generate(_f(4, 6, 1), _f(4, 2, 1), random_state="seed")
        ),
        TypeError,
        "`random_state` must be None",
    ),
    (
        "ZooDisagreement.fit",
        lambda: (
            __import__("mlcore.augment", fromlist=["ZooDisagreement"])
            .ZooDisagreement(nn.Flatten, k_folds=2)
            .fit(_f(4, 6, 1), _f(4, 2, 1), random_state=1.5)
        ),
        TypeError,
        "`random_state` must be None",
    ),
    (
        "LotteryPriorSolver.fit",
        lambda: (
            __import__("mlcore.inverse", fromlist=["LotteryPriorSolver"])
            .LotteryPriorSolver(steps=1, noise_sigma=0.1)
            .fit(_f(8, 8), random_state=-1)
        ),
        ValueError,
        "`random_state` must be a non-negative integer",
    ),
    (
        "check_rewrite",
        lambda: __import__("mlcore.quant", fromlist=["check_rewrite"]).check_rewrite(
            random_state="x"
        ),
        TypeError,
        "`random_state` must be None",
    ),
    # -- devices and seeds -----------------------------------------------------------------------
    ("get_device", lambda: get_device(3), TypeError, "`device` must be None"),
    ("seed_everything", lambda: seed_everything(-1), ValueError, "`seed` must lie in"),
    (
        "torch_generator",
        lambda: torch_generator(0.5),
        TypeError,
        "`random_state` must be None, a non-negative int, a numpy Generator or a torch.Generator",
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        pytest.param(call, error, message, id=f"{entry}-{i}")
        for i, (entry, call, error, message) in enumerate(CASES)
    ],
)
def test_bad_input_gives_a_clear_error(call, error, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(error, match=message):
            call()


# -- HIPE: integer queries and keys were rounded to zeros ------------------------------------------
def test_rotary_embeddings_refuse_integer_queries_and_keys():
    q = torch.ones(1, 2, 5, 8, dtype=torch.int64)
    for module in (HIPERotaryEmbedding(8, 2, [1.0, 2.0]), RotaryEmbedding(8)):
        with pytest.raises(
            TypeError, match="`q` must be a floating-point tensor; got dtype torch.int64"
        ):
            module(q, q)
        with pytest.raises(TypeError, match="`k` must be a floating-point tensor"):
            module(q.float(), q)
    # the factory dtype was the other door to integer frequencies and scales
    with pytest.raises(TypeError, match="`dtype` must be None or a floating-point torch.dtype"):
        HIPERotaryEmbedding(8, 2, [1.0, 2.0], dtype=torch.int64)


# -- CONGA: a NaN SNR read as min(1, NaN) = 1, the full base LR -------------------------------------
def _conga_step(sched, net, grad_fill=None):
    x = torch.randn(8, 3, generator=torch.Generator().manual_seed(sched.n_observed))
    net.zero_grad()
    logits = net(x)
    logits.logsumexp(1).mean().backward()
    if grad_fill is not None:
        for p in net.parameters():
            p.grad.fill_(grad_fill)
    sched.observe(logits.detach())
    sched.step()
    return sched.get_last_lr()[0]


@pytest.mark.parametrize("bad", [NAN, INF])
def test_conga_holds_its_schedule_on_non_finite_gradients(bad):
    torch.manual_seed(0)
    net = nn.Linear(3, 4)
    sched = CONGA(torch.optim.SGD(net.parameters(), lr=0.1), kappa=1e-3)
    for _ in range(3):
        _conga_step(sched, net)
    hi, snr, moments = sched.upper_frac, sched.snr_value, (sched.grad_m.clone(), sched.grad_v)
    assert hi < 1.0
    with pytest.warns(UserWarning, match="the gradients hold NaN or infinite entries"):
        _conga_step(sched, net, grad_fill=bad)
    # the SNR bound and the gradient moments are those of the last finite batch
    assert sched.upper_frac == hi and sched.snr_value == snr
    assert torch.equal(sched.grad_m, moments[0]) and sched.grad_v == moments[1]
    assert sched.records[-1]["eta_hi"] == pytest.approx(0.1 * hi)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once: the second bad batch is only counted
        _conga_step(sched, net, grad_fill=bad)
    assert sched.n_nonfinite == 2
    assert "2 observed batch(es) had non-finite gradients" in sched.result().notes[0]
    _conga_step(sched, net)  # a finite batch moves the bound again
    assert sched.n_nonfinite == 2 and torch.isfinite(sched.grad_m).all()


def test_conga_batch_snr_holds_on_non_finite_or_single_sample_gradients():
    sched = CONGA(_optimizer(), snr="batch", kappa=1e-3)
    gen = torch.Generator().manual_seed(0)
    sched.observe(torch.randn(4, 3, generator=gen), torch.randn(4, 5, generator=gen) + 1.0)
    hi = sched.upper_frac
    grads = torch.randn(4, 5, generator=gen)
    grads[1, 2] = NAN
    with pytest.warns(UserWarning, match="keeps its last value"):
        sched.observe(torch.randn(4, 3, generator=gen), grads)
    assert sched.upper_frac == hi and sched.n_nonfinite == 1
    # one sample has no spread: not an infinite SNR (the full LR), the last SNR
    sched.observe(torch.randn(1, 3, generator=gen), torch.randn(1, 5, generator=gen))
    assert sched.upper_frac == hi


# -- SparseSSM: NaN scores were ranked (a NaN sorts as the largest, so it was kept) -----------------
def test_sparsessm_refuses_non_finite_calibration():
    x = torch.randn(2, 5, 8, generator=torch.Generator().manual_seed(0))
    mixer = _mixer()
    before = mixer.A_log.detach().clone()
    with_nan = x.clone()
    with_nan[1, 2, 3] = NAN
    with pytest.raises(ValueError, match="`calib_inputs` must be finite; found 1 NaN"):
        sparsessm_prune(mixer, with_nan)
    # finite inputs that overflow the float32 scan: the statistics are named, with the mixer
    with pytest.raises(ValueError, match=r"cannot score the states of `mixer` \(MambaBlock"):
        sparsessm_prune(mixer, x * 1e15)
    assert torch.equal(mixer.A_log, before)  # nothing was pruned
    with torch.no_grad():
        mixer.A_log[3, 1] = INF
    with pytest.raises(
        ValueError, match="`mixer.A_log` must be finite; found 0 NaN and 1 infinite"
    ):
        sparsessm_prune(mixer, x)


# -- IMDM: t outside the diffusion's time interval gave 0 or a negative bound ------------------------
@pytest.mark.parametrize("t", [-1, 0, 0.0, 1.5, -torch.ones(2), torch.tensor([0.5, 0.0])])
def test_imdm_elbo_loss_checks_the_time(t):
    with pytest.raises(ValueError, match=r"`t` must lie in \(0, 1\]"):
        imdm_elbo_loss(_denoiser(), _ids(2, 3), t=t, random_state=0)


def test_imdm_elbo_loss_time_forms_agree():
    model, x0 = _denoiser(), torch.randint(0, VOCAB, (4, 3), generator=torch.Generator())
    losses = [
        imdm_elbo_loss(model, x0, t=t, random_state=0)
        for t in (0.5, torch.tensor(0.5), torch.full((4,), 0.5, dtype=torch.float64))
    ]
    assert losses[0] == losses[1] == losses[2]


# -- random_state is checked even where it would not be used ------------------------------------------
def test_random_state_is_checked_even_when_eps_is_given():
    model = _denoiser()
    eps = torch.zeros(2, 3, NOISE)
    with pytest.raises(TypeError, match="`random_state` must be None"):
        model.embedding(_ids(2, 3), eps, random_state="seed")
    with pytest.raises(ValueError, match="`random_state` must lie in"):
        model.embedding(_ids(2, 3), eps, random_state=-1)
    with pytest.raises(TypeError, match="`random_state` must be None"):
        IMDMSampler(model, 2).sample(2, 3, eps=eps, random_state="seed")
    with pytest.raises(TypeError, match="`random_state` must be None"):
        imdm_elbo_loss(model, _ids(2, 3), t=1.0, eps=eps, random_state=0.5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available here")
def test_a_generator_on_another_device_is_refused_at_entry():
    with pytest.raises(ValueError, match="`random_state` is a torch.Generator on cpu"):
        torch_generator(torch.Generator(), "cuda")
    model = _denoiser().cuda()
    with pytest.raises(ValueError, match="draws are on cuda"):
        IMDMSampler(model, 2).sample(2, 3, random_state=torch.Generator())


# -- what still works: empty batches through modules, values unchanged ------------------------------
def test_modules_pass_an_empty_batch_through():
    lm = TinyTransformer(11, 16, 1, 2)
    assert lm(_ids(0, 3)).shape == (0, 3, 11)
    assert lm(_ids(2, 0)).shape == (2, 0, 11)
    assert softmax_entropy(_f(0, 3), reduction="sum") == 0
