"""IMDM (mlcore.diffusion): infinite mask embedding, ELBO, sampler, distillation, synthetic task."""

import copy
import math

import numpy as np
import pytest
import torch
from torch import nn

from mlcore.diffusion import (
    IMDMSampler,
    InfiniteMaskEmbedding,
    TinyDenoiser,
    distill_on_couplings,
    imdm_elbo_loss,
    rectified_couplings,
    transition_probabilities,
)
from mlcore.diffusion.synthetic import (
    marginal_entropy,
    pair_kl_to_data,
    pair_validity,
    paired_tokens,
    train_paired_denoiser,
)
from mlcore.functional import masked_diffusion_loss
from mlcore.losses import MaskedDiffusionLoss
from mlcore.results import TrainingResult
from statcore.exceptions import ConvergenceWarning

K, N_SAMPLES = 8, 20_000


# -- acceptance 1: zero-initialised IMDM is MDLM ----------------------------------------------------
def test_zero_initialised_imdm_reproduces_mdlm_exactly():
    torch.manual_seed(0)
    imdm = TinyDenoiser(K, 2, noise_dim=8)
    mdlm = copy.deepcopy(imdm)
    mdlm.embedding.as_mdlm = True
    # a trained MDM's weights (random here) with the noise network at its zero initialisation
    x = torch.tensor([[K, K], [3, K], [K, 5], [1, 2]])
    reference = mdlm(x)
    for seed in range(5):
        eps = imdm.embedding.sample_noise(4, 2, random_state=torch.Generator().manual_seed(seed))
        assert torch.equal(imdm(x, eps), reference)  # max abs diff exactly 0
        assert torch.equal(imdm(x, eps * 100), reference)


def test_unmasked_positions_never_see_eps():
    emb = InfiniteMaskEmbedding(nn.Embedding(6, 4), mask_id=5, noise_dim=3)
    nn.init.normal_(emb.noise_net[2].weight)  # a trained (non-zero) noise network
    ids = torch.tensor([[0, 5, 2, 5]])
    a, _ = emb(ids, torch.zeros(1, 4, 3))
    b, _ = emb(ids, torch.ones(1, 4, 3))
    torch.testing.assert_close(a[:, [0, 2]], b[:, [0, 2]], rtol=0, atol=0)
    assert not torch.allclose(a[:, [1, 3]], b[:, [1, 3]])


def test_noise_types():
    emb = InfiniteMaskEmbedding(nn.Embedding(3, 2), 2, noise_dim=4000, noise_scale=0.5)
    eps = emb.sample_noise(1, 2, random_state=torch.Generator().manual_seed(0))
    assert eps.abs().max() <= 0.5 and eps.std() == pytest.approx(0.5 / math.sqrt(3), rel=0.05)
    gauss = InfiniteMaskEmbedding(nn.Embedding(3, 2), 2, noise_dim=4000, noise_type="randn")
    assert gauss.sample_noise(1, 2).std() == pytest.approx(1.0, rel=0.05)


# -- the ELBO -------------------------------------------------------------------------------------
def test_masked_diffusion_loss_formula():
    gen = torch.Generator().manual_seed(1)
    logits = torch.randn(3, 4, 5, generator=gen, dtype=torch.float64)
    x0 = torch.randint(0, 5, (3, 4), generator=gen)
    masked = torch.rand(3, 4, generator=gen) < 0.5
    t = torch.tensor([0.2, 0.5, 1.0], dtype=torch.float64)
    logp = torch.log_softmax(logits, -1).gather(-1, x0.unsqueeze(-1)).squeeze(-1)
    expected = -(logp * masked).sum(1) / t / 4
    torch.testing.assert_close(
        masked_diffusion_loss(logits, x0, masked, t, reduction="none"), expected
    )
    torch.testing.assert_close(MaskedDiffusionLoss()(logits, x0, masked, t), expected.mean())


def test_imdm_elbo_loss_masks_with_probability_t():
    torch.manual_seed(2)
    model = TinyDenoiser(K, 2)
    x0 = paired_tokens(4000, K, random_state=0)
    gen = torch.Generator().manual_seed(3)
    # with t = 1 every position is masked; the loss is the mean cross-entropy at all positions
    loss = imdm_elbo_loss(model, x0, t=1.0, random_state=gen)
    all_masked = torch.full_like(x0, K)
    ce = nn.functional.cross_entropy(model(all_masked).transpose(1, 2), x0)
    torch.testing.assert_close(loss, ce, rtol=1e-5, atol=1e-6)
    assert float(imdm_elbo_loss(model, x0, random_state=gen).detach()) > 0


# -- acceptance 2: the sampler's posterior ----------------------------------------------------------
@pytest.mark.parametrize("t, s", [(1.0, 0.75), (0.5, 0.25), (0.3, 0.29), (0.9, 0.1), (0.2, 0.0)])
def test_posterior_probabilities_sum_to_one_and_match_mdlm(t, s):
    p = transition_probabilities(t, s)
    assert sum(p.values()) == pytest.approx(1.0, abs=1e-12)
    assert p["same"] + p["reset"] == pytest.approx(s / t, abs=1e-12)  # (1 - a_s)/(1 - a_t)
    assert min(p.values()) >= 0
    mdlm = transition_probabilities(t, s, posterior="mdlm")
    assert mdlm["reset"] == 0 and mdlm["same"] == pytest.approx(s / t, abs=1e-12)
    assert transition_probabilities(t, s, reset=False)["reset"] == 0


def test_sampler_unmasks_everything_at_the_expected_rate(device):
    torch.manual_seed(4)
    model = TinyDenoiser(K, 2).to(device)
    sampler = IMDMSampler(model, steps=4)
    samples = sampler.sample(
        5000, 2, random_state=torch.Generator(device).manual_seed(5), device=device
    )
    assert samples.device.type == device
    assert ((samples >= 0) & (samples < K)).all()  # no mask left after the last step
    assert sum(sampler.unmask_counts) == 10_000
    # step 1 unmasks a quarter of the 10,000 positions; binomial sd 43, so 200 is > 4 sd
    assert abs(sampler.unmask_counts[0] - 2500) < 200


def test_reset_channel_redraws_eps_and_mdlm_posterior_keeps_it():
    class Recorder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = InfiniteMaskEmbedding(nn.Embedding(K + 1, 4), K, noise_dim=2)
            self.seen = []

        def forward(self, xt, eps):
            self.seen.append(eps.clone())
            return torch.zeros(*xt.shape, K)

    for posterior, changes in (("imdm", True), ("mdlm", False)):
        rec = Recorder()
        IMDMSampler(rec, steps=8, posterior=posterior).sample(
            2000, 2, random_state=torch.Generator().manual_seed(6)
        )
        changed = any(not torch.equal(a, b) for a, b in zip(rec.seen, rec.seen[1:], strict=False))
        assert changed == changes


# -- acceptance 3 and 4: the synthetic task ----------------------------------------------------------
@pytest.fixture(scope="module")
def elbo_trained():
    """A denoiser trained on (a, a) pairs with the ELBO only (600 Adam steps, batch 256)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return train_paired_denoiser(K, random_state=0)
    finally:
        torch.set_num_threads(threads)


def test_one_step_mdm_is_capped_by_the_factorisation_error(elbo_trained):
    mdlm = copy.deepcopy(elbo_trained)
    mdlm.embedding.as_mdlm = True
    samples = IMDMSampler(mdlm, 1).sample(
        N_SAMPLES, 2, random_state=torch.Generator().manual_seed(1)
    )
    # independent positions with uniform marginals: validity 1/K; binomial sd 0.0023 at 20k
    assert pair_validity(samples) == pytest.approx(1 / K, abs=0.01)
    # its KL to the data is the mutual information I(x1; x2) = log K
    assert pair_kl_to_data(samples, K) == pytest.approx(math.log(K), abs=0.05)
    many = IMDMSampler(mdlm, 16).sample(N_SAMPLES, 2, random_state=torch.Generator().manual_seed(1))
    assert pair_validity(many) > 0.9  # sequential unmasking recovers the dependence


def test_elbo_only_imdm_is_still_mdm_in_one_step(elbo_trained):
    gen = torch.Generator().manual_seed(1)
    imdm = pair_validity(IMDMSampler(elbo_trained, 1).sample(N_SAMPLES, 2, random_state=gen))
    mdlm = copy.deepcopy(elbo_trained)
    mdlm.embedding.as_mdlm = True
    gen = torch.Generator().manual_seed(1)
    mdm = pair_validity(IMDMSampler(mdlm, 1).sample(N_SAMPLES, 2, random_state=gen))
    # eps is independent of the data under the ELBO: the gain must come from distillation
    assert abs(imdm - mdm) <= 0.02


def test_distilled_one_step_imdm_is_valid_with_uniform_marginals(elbo_trained):
    teacher = IMDMSampler(elbo_trained, 16)
    eps, x0 = rectified_couplings(teacher, 16_384, 2, random_state=torch.Generator().manual_seed(2))
    student = copy.deepcopy(elbo_trained)
    record = distill_on_couplings(
        student, eps, x0, steps=3000, lr=3e-3, random_state=torch.Generator().manual_seed(3)
    )
    assert isinstance(record, TrainingResult) and record.n_iter == 3000
    # a fixed budget of steps that all ran with a finite loss completes the run
    assert record.converged and record.iterations.status == "converged"
    assert record.iterations.maxiter == 3000 and record.iterations.tol is None
    samples = IMDMSampler(student, 1, greedy=True).sample(
        N_SAMPLES, 2, random_state=torch.Generator().manual_seed(4)
    )
    # Observed with these seeds: validity 0.916, marginal entropy 2.067 (log 8 = 2.079); the
    # spec's thresholds are 0.9 and 0.98 log K. One-step MDM cannot pass both: its greedy
    # samples are one constant pair (entropy 0), its sampled ones valid 1/K of the time
    assert pair_validity(samples) >= 0.9
    assert marginal_entropy(samples, K) >= 0.98 * math.log(K)


def test_distillation_with_a_non_finite_loss_is_diverged():
    torch.manual_seed(0)
    student = TinyDenoiser(K, 2)
    with torch.no_grad():
        student.net[-1].bias.fill_(float("nan"))
    eps, x0 = torch.zeros(8, 2, 16), paired_tokens(8, K, random_state=0)
    with pytest.warns(ConvergenceWarning, match="distill_on_couplings diverged after 3"):
        res = distill_on_couplings(student, eps, x0, steps=3, log_every=1, random_state=0)
    assert res.iterations.status == "diverged" and not res.converged


def test_random_state_seeds_or_continues_a_generator():
    emb = InfiniteMaskEmbedding(nn.Embedding(3, 2), 2, noise_dim=4)
    torch.testing.assert_close(
        emb.sample_noise(2, 3, random_state=7),
        emb.sample_noise(2, 3, random_state=torch.Generator().manual_seed(7)),
        rtol=0,
        atol=0,
    )
    gen = torch.Generator().manual_seed(7)
    first = emb.sample_noise(2, 3, random_state=gen)
    assert not torch.equal(first, emb.sample_noise(2, 3, random_state=gen))  # stream continues
    # a numpy Generator seeds a torch one by one draw: reproducible, and its stream moves on
    torch.testing.assert_close(
        emb.sample_noise(2, 3, random_state=np.random.default_rng(0)),
        emb.sample_noise(2, 3, random_state=np.random.default_rng(0)),
        rtol=0,
        atol=0,
    )
    with pytest.raises(TypeError, match="`random_state` must be None"):
        emb.sample_noise(2, 3, random_state="seed")


def test_old_generator_keyword_warns_and_still_works():
    model = TinyDenoiser(K, 2)
    new = IMDMSampler(model, 2).sample(4, 2, random_state=torch.Generator().manual_seed(1))
    with pytest.warns(FutureWarning, match="`generator=` is now spelled `random_state=`"):
        old = IMDMSampler(model, 2).sample(4, 2, generator=torch.Generator().manual_seed(1))
    assert torch.equal(old, new)


# -- bad input ------------------------------------------------------------------------------------
def test_bad_input():
    model = TinyDenoiser(K, 2)
    with pytest.raises(ValueError, match="must be clean data"):
        imdm_elbo_loss(model, torch.full((3, 2), K))
    with pytest.raises(TypeError, match="expose its InfiniteMaskEmbedding"):
        imdm_elbo_loss(nn.Linear(2, 2), torch.zeros(3, 2, dtype=torch.long))
    with pytest.raises(
        ValueError, match=r"`eps` must be a 3-D \(batch=3, length=2, noise_dim=16\)"
    ):
        model(torch.zeros(3, 2, dtype=torch.long), torch.zeros(3, 2, 4))
    with pytest.raises(ValueError, match="`steps`"):
        IMDMSampler(model, 0)
    with pytest.raises(ValueError, match="`posterior` must be one of"):
        IMDMSampler(model, 4, posterior="sedd")
    with pytest.raises(ValueError, match="`s`"):
        transition_probabilities(0.5, 0.7)
    with pytest.raises(ValueError, match="`mask_id`"):
        InfiniteMaskEmbedding(nn.Embedding(4, 2), mask_id=4)
    with pytest.raises(ValueError, match="`noise_type` must be one of"):
        InfiniteMaskEmbedding(nn.Embedding(4, 2), 3, noise_type="learnable")
    with pytest.raises(ValueError, match="couplings of one shape"):
        distill_on_couplings(model, torch.zeros(5, 2, 16), torch.zeros(4, 2, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\(n, 2\) token pairs"):
        pair_validity(np.zeros((3, 3)))


def test_train_paired_denoiser_is_reproducible_and_leaves_the_global_rng():
    state = torch.random.get_rng_state()
    first = train_paired_denoiser(4, steps=2, batch_size=8, random_state=3)
    assert torch.equal(torch.random.get_rng_state(), state)
    second = train_paired_denoiser(4, steps=2, batch_size=8, random_state=3)
    for a, b in zip(first.parameters(), second.parameters(), strict=True):
        assert torch.equal(a, b)
    with pytest.raises(ValueError, match="n_tokens"):
        train_paired_denoiser(1)
