"""ReAugment's reinforcement-learning actor: a variational masked autoencoder over whole windows,
and REINFORCE with a moving-average baseline for any policy with ``sample``.

Yuan et al., arXiv 2409.06282 (ICML 2026), for the VMAE actor; Williams (1992) for REINFORCE.
Fidelity: reconstruction. The summaries of the paper name a VMAE with feature encoder, decoder,
prior and posterior networks, pretrained with L2 plus KL; the MLP architecture on flattened
windows, the per-window centring and the policy's Gaussian output noise are this library's
choices.
"""

from __future__ import annotations

import math
import time

import torch
from torch import nn

from mlcore._checks import check_tensor
from mlcore._device import torch_generator
from mlcore._iterations import budget_result
from mlcore.augment.baselines import within_window_scale
from mlcore.results import TrainingResult
from statcore.progress import progress as progress_bar
from statcore.validation import (
    check_option,
    check_positive,
    check_positive_int,
    check_scalar,
    describe,
)

__all__ = ["BASELINES", "ReinforceTrainer", "VMAEAugmenter", "reinforce_loss"]

#: The baselines :class:`ReinforceTrainer` offers.
BASELINES = ("ema", "none")


def _gauss_logpdf(x, mu, logvar):
    return -0.5 * (((x - mu) ** 2) / logvar.exp() + logvar + math.log(2 * math.pi)).sum(-1)


class VMAEAugmenter(nn.Module):
    """Variational masked autoencoder over whole windows: the RL actor of ReAugment.

    Patches of the window (lookback and horizon together) are masked; a prior network reads the
    masked window, a posterior network the whole window, and a decoder maps the masked window
    and a latent ``z`` back to a full window. As a policy, it draws ``z`` from the prior and the
    augmented window from ``N(decoder(x_masked, z), output_std²)``, so its log-probability is
    ``log p(z | x_masked) + log N(x̃; decoder, output_std²)``.

    Each window is centred on the mean of its visible values and divided by ``scale`` (a
    buffer, the pooled within-window standard deviation, set by :meth:`pretrain`), so the
    networks see shapes rather than levels.

    Parameters
    ----------
    seq_len : int
        Window length ``lookback + horizon``.
    channels : int
    patch : int
        Patch length of the mask (the last patch may be shorter).
    mask_ratio : float
        Fraction of patches masked, in (0, 1).
    latent_dim, hidden : int
    output_std : float, optional
        Policy noise in scaled units; by default the root-mean-square reconstruction error at
        the end of :meth:`pretrain`.

    Notes
    -----
    Fidelity: reconstruction. The summaries name a VMAE with feature encoder, decoder, prior
    and posterior networks, pretrained with L2 plus KL; the MLP architecture, centring and the
    Gaussian output noise are choices made here.
    """

    def __init__(
        self,
        seq_len: int,
        channels: int = 1,
        *,
        patch: int = 4,
        mask_ratio: float = 0.5,
        latent_dim: int = 8,
        hidden: int = 64,
        output_std: float | None = None,
    ):
        super().__init__()
        self.seq_len = check_positive_int(seq_len, name="seq_len", minimum=2)
        self.channels = check_positive_int(channels, name="channels")
        self.patch = check_positive_int(patch, name="patch")
        if self.patch >= self.seq_len:
            raise ValueError(f"`patch` must be shorter than seq_len = {seq_len}; got {patch}")
        self.mask_ratio = check_scalar(
            mask_ratio, name="mask_ratio", low=0, high=1, low_inclusive=False, high_inclusive=False
        )
        self.latent_dim = check_positive_int(latent_dim, name="latent_dim")
        hidden = check_positive_int(hidden, name="hidden")
        self.n_patches = math.ceil(self.seq_len / self.patch)
        self.output_std = (
            None if output_std is None else check_positive(output_std, name="output_std")
        )
        d = self.seq_len * self.channels

        def mlp(n_in, n_out):
            return nn.Sequential(
                nn.Linear(n_in, hidden),
                nn.GELU(),
                nn.Linear(hidden, hidden),
                nn.GELU(),
                nn.Linear(hidden, n_out),
            )

        self.posterior = mlp(d, 2 * self.latent_dim)
        self.prior = mlp(d + self.seq_len, 2 * self.latent_dim)
        self.decoder = mlp(d + self.seq_len + self.latent_dim, d)
        self.register_buffer("scale", torch.ones(self.channels))

    def _check(self, W, name="W"):
        return check_tensor(
            W,
            name=name,
            dims=("n", "seq_len", "channels"),
            sizes={"seq_len": self.seq_len, "channels": self.channels},
            kind="floating",
            nonempty=True,
        )

    def sample_mask(self, n: int, generator: torch.Generator, device) -> torch.Tensor:
        """Boolean (n, seq_len), True where masked: ``round(mask_ratio · n_patches)`` patches
        (at least one, never all) chosen uniformly per window."""
        k = min(max(1, round(self.mask_ratio * self.n_patches)), self.n_patches - 1)
        order = torch.rand(n, self.n_patches, generator=generator).argsort(dim=1)
        patches = torch.zeros(n, self.n_patches, dtype=torch.bool)
        patches.scatter_(1, order[:, :k], True)
        return patches.repeat_interleave(self.patch, dim=1)[:, : self.seq_len].to(device)

    def _normalise(self, W, mask):
        visible = (~mask).unsqueeze(-1).to(W.dtype)
        centre = (W * visible).sum(1, keepdim=True) / visible.sum(1, keepdim=True)
        return (W - centre) / self.scale, centre

    def _parts(self, W, mask):
        xn, centre = self._normalise(W, mask)
        m = mask.to(W.dtype)
        masked = (xn * (1 - m).unsqueeze(-1)).flatten(1)
        cond = torch.cat([masked, m], dim=1)
        mu_p, logvar_p = self.prior(cond).chunk(2, dim=-1)
        return xn, centre, cond, mu_p, logvar_p.clamp(-8, 8)

    def decode(self, cond, z):
        return self.decoder(torch.cat([cond, z], dim=1)).view(-1, self.seq_len, self.channels)

    def elbo_loss(self, W, mask, generator, *, kl_weight: float = 0.1) -> torch.Tensor:
        """Pretraining loss: mean squared reconstruction error (scaled units) plus
        ``kl_weight`` · KL(q(z | x) ‖ p(z | x_masked)) per latent dimension."""
        xn, _, cond, mu_p, logvar_p = self._parts(W, mask)
        mu_q, logvar_q = self.posterior(xn.flatten(1)).chunk(2, dim=-1)
        logvar_q = logvar_q.clamp(-8, 8)
        eps = torch.randn(mu_q.shape, generator=generator).to(W.device, W.dtype)
        z = mu_q + (0.5 * logvar_q).exp() * eps
        recon = (self.decode(cond, z) - xn).pow(2).mean()
        kl = 0.5 * (
            logvar_p - logvar_q + (logvar_q.exp() + (mu_q - mu_p) ** 2) / logvar_p.exp() - 1
        )
        return recon + kl_weight * kl.mean(), recon

    def pretrain(
        self,
        W,
        *,
        steps: int = 300,
        lr: float = 1e-3,
        kl_weight: float = 0.1,
        random_state=None,
        progress: bool = False,
    ) -> TrainingResult:
        """Fit the VMAE to windows (n, seq_len, channels) by its ELBO; sets ``scale`` and, when
        not given, ``output_std``. Returns the training record."""
        self._check(W)
        steps = check_positive_int(steps, name="steps")
        gen = torch_generator(random_state)
        self.to(W.device)
        self.scale.copy_(within_window_scale(W))
        opt = torch.optim.Adam(self.parameters(), lr=check_positive(lr, name="lr"))
        records = []
        start = time.perf_counter()
        for step in progress_bar(range(steps), enabled=progress, desc="VMAEAugmenter.pretrain"):
            loss, recon = self.elbo_loss(
                W, self.sample_mask(len(W), gen, W.device), gen, kl_weight=kl_weight
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            records.append(
                {"step": step, "loss": float(loss.detach()), "recon": float(recon.detach())}
            )
        if self.output_std is None:
            self.output_std = max(math.sqrt(records[-1]["recon"]), 1e-3)
        return budget_result(
            records,
            method="VMAE pretraining",
            function="VMAEAugmenter.pretrain",
            n_iter=steps,
            maxiter=steps,
            criterion="steps",
            remedy="lower `lr`",
            wall_time_s=time.perf_counter() - start,
            device=str(W.device),
        )

    def sample(self, W, *, generator: torch.Generator):
        """Draw augmented windows from the policy.

        Returns
        -------
        W_aug : Tensor (n, seq_len, channels), detached
        log_prob : Tensor (n,)
            ``log π(W_aug | W)``, differentiable in the prior and decoder parameters.
        """
        self._check(W)
        if self.output_std is None:
            raise RuntimeError("`output_std` is unset; call `pretrain` or pass `output_std`")
        mask = self.sample_mask(len(W), generator, W.device)
        _, centre, cond, mu_p, logvar_p = self._parts(W, mask)
        noise = torch.randn(mu_p.shape, generator=generator).to(W.device, W.dtype)
        z = (mu_p + (0.5 * logvar_p).exp() * noise).detach()
        mean = self.decode(cond, z)
        xn = (
            mean + self.output_std * torch.randn(mean.shape, generator=generator).to(mean)
        ).detach()
        log_std = torch.full_like(mean.flatten(1), 2 * math.log(self.output_std))
        log_prob = _gauss_logpdf(z, mu_p, logvar_p) + _gauss_logpdf(
            xn.flatten(1), mean.flatten(1), log_std
        )
        return xn * self.scale + centre, log_prob


def reinforce_loss(log_prob, reward, baseline=0.0) -> torch.Tensor:
    """REINFORCE surrogate ``−mean((r − b) · log π)``; its gradient is the score-function
    estimate of ``−∇ E[r]`` (Williams 1992).

    Parameters
    ----------
    log_prob : Tensor (n,)
        Log-probabilities of the sampled actions, differentiable in the policy.
    reward : Tensor (n,)
        Their rewards (treated as constants).
    baseline : float or Tensor
        Subtracted from the reward; a baseline that does not depend on the action leaves the
        estimator unbiased.
    """
    check_tensor(log_prob, name="log_prob", ndim=1, kind="floating", nonempty=True, finite=True)
    n = log_prob.shape[0]
    check_tensor(reward, name="reward", dims=("n",), sizes={"n": n}, kind="real", finite=True)
    if isinstance(baseline, torch.Tensor):
        check_tensor(baseline, name="baseline", ndim=(0, 1), kind="real", finite=True)
        if baseline.ndim == 1 and baseline.shape[0] not in (1, n):
            raise ValueError(
                f"`baseline` must be a scalar or have the {n} entries of `log_prob`; got shape "
                f"{tuple(baseline.shape)}"
            )
    else:
        baseline = check_scalar(baseline, name="baseline")
    advantage = (reward - baseline).detach()
    return -(advantage * log_prob).mean()


class ReinforceTrainer:
    """REINFORCE with a moving-average baseline for any policy with ``sample``.

    Parameters
    ----------
    policy : nn.Module
        ``policy.sample(inputs, generator=...)`` returns ``(actions, log_prob)``.
    reward_fn : callable
        ``reward_fn(actions, inputs)`` returns rewards (n,); no gradient flows through it, so
        it may call any black box.
    lr : float
        Adam's learning rate.
    baseline : {"ema", "none"}
        ``"ema"``: ``b ← momentum·b + (1 − momentum)·mean(r)``, initialised at the first batch's
        mean reward and updated after each step (so ``b`` never depends on the current actions).
    momentum : float

    References
    ----------
    Williams (1992), "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", Machine Learning 8.
    """

    def __init__(
        self,
        policy: nn.Module,
        reward_fn,
        *,
        lr: float = 1e-3,
        baseline: str = "ema",
        momentum: float = 0.9,
    ):
        if not callable(getattr(policy, "sample", None)):
            raise TypeError(f"`policy` must have a `sample` method; got {describe(policy)}")
        if not callable(reward_fn):
            raise TypeError(f"`reward_fn` must be callable; got {describe(reward_fn)}")
        self.policy = policy
        self.reward_fn = reward_fn
        self.baseline = check_option(baseline, name="baseline", options=BASELINES)
        self.momentum = check_scalar(momentum, name="momentum", low=0, high=1, high_inclusive=False)
        self.optimizer = torch.optim.Adam(policy.parameters(), lr=check_positive(lr, name="lr"))
        self.value = None

    def step(self, inputs, *, generator: torch.Generator) -> dict:
        """One policy-gradient step on a batch; returns the logged values."""
        actions, log_prob = self.policy.sample(inputs, generator=generator)
        with torch.no_grad():
            reward = self.reward_fn(actions, inputs)
        mean = float(reward.mean())
        if self.baseline == "ema" and self.value is None:
            self.value = mean
        b = self.value if self.baseline == "ema" else 0.0
        loss = reinforce_loss(log_prob, reward, b)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        if self.baseline == "ema":
            self.value = self.momentum * self.value + (1 - self.momentum) * mean
        return {"loss": float(loss.detach()), "reward": mean, "baseline": b}
