"""Variational MI estimators trained per data set: MINE, InfoNCE and SMILE.

Each trains a critic ``T(x, y)`` (an MLP on the concatenated, standardised pair) on one half of
the samples by its own objective (MINE and SMILE: the minibatch's pairs against shuffled pairs;
InfoNCE: minibatch score matrices ``f[i, j] = T(x_i, y_j)``), and reads its bound on the other
half, so that the estimate is not inflated by the critic's fit to
the points it is read on.

References
----------
Belghazi, Baratin, Rajeswar, Ozair, Bengio, Courville and Hjelm (2018). Mutual information
neural estimation. *ICML 2018*.
van den Oord, Li and Vinyals (2018). Representation learning with contrastive predictive coding.
arXiv:1807.03748.
Song, J. and Ermon, S. (2020). Understanding the limitations of variational mutual information
estimators. *ICLR 2020*.
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch
from torch import nn

from mlcore._device import seeded_torch, torch_generator
from mlcore._iterations import budget_result
from mlcore.mi._data import as_pair
from statcore.geometry.mutual_information import (
    MutualInformationResult,
    normal_interval,
    permutation_independence_result,
)
from statcore.results import TestResult
from statcore.validation import (
    check_alpha,
    check_option,
    check_positive,
    check_positive_int,
    check_scalar,
)

OBJECTIVES = ("mine", "infonce", "smile")
NAMES = {"mine": "MINE", "infonce": "InfoNCE", "smile": "SMILE"}


class ConcatCritic(nn.Module):
    """``T(x, y) = MLP([x, y])``, evaluated on all pairs of a batch at once."""

    def __init__(self, d_x: int, d_y: int, hidden: int = 64, layers: int = 2):
        super().__init__()
        widths = [d_x + d_y] + [hidden] * layers
        mods = []
        for a, b in zip(widths[:-1], widths[1:], strict=True):
            mods += [nn.Linear(a, b), nn.ReLU()]
        self.net = nn.Sequential(*mods, nn.Linear(hidden, 1))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Scores of the pairs ``T(x_i, y_i)``, (n,)."""
        return self.net(torch.cat([x, y], dim=-1)).squeeze(-1)

    def matrix(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Score matrix ``f[i, j] = T(x_i, y_j)``, (n_x, n_y)."""
        nx, ny = len(x), len(y)
        pairs = torch.cat(
            [x.unsqueeze(1).expand(nx, ny, -1), y.unsqueeze(0).expand(nx, ny, -1)], dim=-1
        )
        return self.net(pairs).squeeze(-1)


#: shuffles of y per minibatch that form the product-of-marginals sample of MINE and SMILE
_SHUFFLES = 4
#: block size of InfoNCE's held-out read (the bound is at most log of it: 4.85 nats)
_NCE_BLOCK = 128


def _log_mean_exp(a: torch.Tensor) -> torch.Tensor:
    return torch.logsumexp(a.flatten(), 0) - math.log(a.numel())


def _marginal_scores(critic, x, y, g, shuffles):
    """``T(x_i, y_pi(i))`` for ``shuffles`` random permutations, (shuffles, n)."""
    n = len(x)
    perms = [torch.randperm(n, generator=g).to(x.device) for _ in range(shuffles)]
    return torch.stack([critic(x, y[p]) for p in perms])


def _step_loss(objective, critic, x, y, g, clip, state):
    """The training loss of one minibatch and the bound it estimates."""
    if objective == "infonce":
        f = critic.matrix(x, y)
        bound = (torch.diagonal(f) - torch.logsumexp(f, dim=1)).mean() + math.log(len(x))
        return -bound, bound
    t = critic(x, y)
    u = _marginal_scores(critic, x, y, g, _SHUFFLES)
    if objective == "smile":
        bound = t.mean() - _log_mean_exp(u.clamp(-clip, clip))
        # Jensen-Shannon (f-GAN) bound: SMILE's gradient source (Song and Ermon 2020)
        js = -nn.functional.softplus(-t).mean() - nn.functional.softplus(u).mean()
        return -(js + (bound - js).detach()), bound
    bound = t.mean() - _log_mean_exp(u)
    # Belghazi et al.'s bias-corrected gradient: the partition term's gradient is divided by a
    # moving average of E exp T rather than by the minibatch value
    mean_exp = torch.exp(u).mean()
    ema = state.get("ema")
    state["ema"] = mean_exp.detach() if ema is None else 0.99 * ema + 0.01 * mean_exp.detach()
    return -(t.mean() - mean_exp / state["ema"]), bound


def _standardise(train: torch.Tensor, *others: torch.Tensor):
    mu, sd = train.mean(0), train.std(0).clamp_min(1e-8)
    return [(a - mu) / sd for a in (train, *others)]


def fit_critic(
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    objective: str,
    hidden: int,
    batch_size: int,
    maxiter: int,
    lr: float,
    clip: float,
    g: torch.Generator,
):
    """Train a :class:`ConcatCritic` on ``(x, y)`` by the objective's bound; return it and its
    :class:`TrainingResult`."""
    with seeded_torch(g):
        critic = ConcatCritic(x.shape[1], y.shape[1], hidden).to(x.device)
    opt = torch.optim.Adam(critic.parameters(), lr=lr)
    n, b = len(x), min(batch_size, len(x))
    state, records, start = {}, [], time.perf_counter()
    for step in range(1, maxiter + 1):
        rows = torch.randperm(n, generator=g)[:b].to(x.device)
        loss, bound = _step_loss(objective, critic, x[rows], y[rows], g, clip, state)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 25 == 0 or step == maxiter:
            records.append({"step": step, "loss": loss.detach(), "bound": bound.detach()})
    result = budget_result(
        records,
        method=f"{NAMES[objective]} critic training",
        wall_time_s=time.perf_counter() - start,
        device=x.device,
        function=NAMES[objective],
        n_iter=maxiter,
        maxiter=maxiter,
        criterion=f"training loss after a fixed budget of {maxiter} steps",
        remedy="lower `lr`",
    )
    return critic.eval(), result


@torch.no_grad()
def _held_out_terms(objective, critic, x, y, clip, g, n_permutations: int = 10):
    """Per-row quantities of the bound on held-out pairs: ``T(x_i, y_i)`` and the row's
    log mean exp of the marginal scores (``n_permutations`` permutations of ``y``, clipped for
    SMILE; InfoNCE: the row's log mean exp over its block of ``_NCE_BLOCK`` rows)."""
    if objective == "infonce":
        diag, row_lme = [], []
        for s in range(0, len(x), _NCE_BLOCK):
            f = critic.matrix(x[s : s + _NCE_BLOCK], y[s : s + _NCE_BLOCK])
            diag.append(torch.diagonal(f))
            row_lme.append(torch.logsumexp(f, dim=1) - math.log(f.shape[1]))
        diag, row_lme = torch.cat(diag), torch.cat(row_lme)
    else:
        diag = critic(x, y)
        u = _marginal_scores(critic, x, y, g, n_permutations)
        if objective == "smile":
            u = u.clamp(-clip, clip)
        row_lme = torch.logsumexp(u, dim=0) - math.log(n_permutations)
    return diag.double().cpu().numpy(), row_lme.double().cpu().numpy()


def _read_bound(objective, diag, row_lme) -> tuple[float, np.ndarray]:
    """The bound and its per-row influence values (delta method)."""
    if objective == "infonce":
        terms = diag - row_lme
        return float(terms.mean()), terms
    shift = row_lme.max()
    e = np.exp(row_lme - shift)  # rows' mean exp T, up to a common factor
    value = float(diag.mean() - (np.log(e.mean()) + shift))
    return value, diag - e / e.mean()


def _split(n: int, g: torch.Generator, test_size: float) -> tuple[torch.Tensor, torch.Tensor]:
    order = torch.randperm(n, generator=g)
    n_test = max(2, int(round(test_size * n)))
    return order[n_test:], order[:n_test]


def _check_options(objective, hidden, batch_size, maxiter, lr, clip, test_size):
    objective = check_option(objective, name="method", options=OBJECTIVES)
    check_positive_int(hidden, name="hidden")
    check_positive_int(batch_size, name="batch_size", minimum=2)
    check_positive_int(maxiter, name="maxiter")
    check_positive(lr, name="lr")
    check_positive(clip, name="clip")
    check_scalar(test_size, name="test_size", low=0.0, high=1.0, low_inclusive=False,
                 high_inclusive=False)  # fmt: skip
    return objective


def _fit_on_split(xt, yt, g, *, objective, hidden, batch_size, maxiter, lr, clip, test_size):
    """Train a critic on one part of the rows (each side standardised by the training
    part's moments); return it, its training record and the held-out rows."""
    train, test = _split(len(xt), g, test_size)
    train, test = train.to(xt.device), test.to(xt.device)
    xtr, xte = _standardise(xt[train], xt[test])
    ytr, yte = _standardise(yt[train], yt[test])
    critic, training = fit_critic(
        xtr, ytr, objective=objective, hidden=hidden, batch_size=batch_size,
        maxiter=maxiter, lr=lr, clip=clip, g=g,
    )  # fmt: skip
    return critic, training, xte, yte


def critic_mutual_information(
    x,
    y,
    *,
    method: str = "mine",
    hidden: int = 64,
    batch_size: int = 128,
    maxiter: int = 1000,
    lr: float = 1e-3,
    clip: float = 5.0,
    test_size: float = 0.5,
    alpha: float = 0.05,
    random_state=None,
) -> MutualInformationResult:
    """MINE, InfoNCE or SMILE estimate of I(X; Y) in nats, with a held-out interval.

    Parameters
    ----------
    x : array_like or Tensor of shape (n,) or (n, d_x)
    y : array_like or Tensor of shape (n,) or (n, d_y)
        Paired samples; tensors stay on their device. Nothing is modified.
    method : {"mine", "infonce", "smile"}
        MINE: Donsker-Varadhan bound, bias-corrected (moving-average) gradient (Belghazi et al.
        2018). InfoNCE: ``E[f_ii - log mean_j exp f_ij]`` over minibatch score matrices, at
        most ``log`` of the batch size in training and ``log 128`` when read (blocks of 128
        held-out rows). SMILE: DV with the partition term's
        scores clipped to ``[-clip, clip]``, trained through the Jensen-Shannon bound (Song and
        Ermon 2020).
    hidden : int
        Width of the critic's two hidden layers.
    batch_size, maxiter, lr
        Adam minibatch size, steps and learning rate.
    clip : float
        SMILE's clipping threshold (the paper's tau; 5 is its usual value).
    test_size : float
        Share of the samples held out to read the bound.
    alpha : float
        Level of the interval.
    random_state : None, int, numpy or CPU torch Generator

    Returns
    -------
    MutualInformationResult
        Normal interval from the held-out rows' influence values (delta method for the
        log-mean-exp term); ``model`` holds the critic and ``notes`` its training record.

    Notes
    -----
    Fidelity: paper objectives; the critic (concatenation MLP, 2 x 64 ReLU) and the held-out read
    follow the authors' baselines in spirit, not line by line.

    References
    ----------
    Belghazi et al. (2018), ICML; van den Oord, Li and Vinyals (2018), arXiv:1807.03748;
    Song and Ermon (2020), ICLR.
    """
    objective = _check_options(method, hidden, batch_size, maxiter, lr, clip, test_size)
    alpha = check_alpha(alpha)
    xt, yt = as_pair(x, y)
    g = torch_generator(random_state, "cpu")
    critic, training, xte, yte = _fit_on_split(
        xt, yt, g, objective=objective, hidden=hidden, batch_size=batch_size,
        maxiter=maxiter, lr=lr, clip=clip, test_size=test_size,
    )  # fmt: skip
    value, influence = _read_bound(
        objective, *_held_out_terms(objective, critic, xte, yte, clip, g)
    )
    se = float(influence.std(ddof=1) / np.sqrt(len(influence)))
    low, high = normal_interval(value, se, alpha)
    return MutualInformationResult(
        method=f"{NAMES[objective]} mutual information (held-out bound)",
        nobs=len(xt),
        estimate=value,
        std_error=se,
        conf_low=low,
        conf_high=high,
        alpha=alpha,
        interval=f"normal, delta method over {len(xte)} held-out rows",
        model=critic,
        iterations=training.iterations,
        fit_options={"method": objective, "hidden": hidden, "batch_size": batch_size,
                     "maxiter": maxiter, "lr": lr, "clip": clip, "test_size": test_size},
    )  # fmt: skip


def critic_independence_test(
    x,
    y,
    *,
    method: str = "mine",
    n_resamples: int = 199,
    hidden: int = 64,
    batch_size: int = 128,
    maxiter: int = 1000,
    lr: float = 1e-3,
    clip: float = 5.0,
    test_size: float = 0.5,
    random_state=None,
) -> TestResult:
    """Held-out permutation test of independence with a trained critic's bound as statistic.

    The critic is trained on one part of the samples; the statistic is its bound on the other
    part, and the null distribution the same bound with the held-out ``y`` permuted (the critic
    fixed). The critic does not depend on the held-out rows, so under independence the held-out
    pairs are exchangeable and the p-value is exact, without retraining per permutation.

    Parameters
    ----------
    x, y, method, hidden, batch_size, maxiter, lr, clip, test_size, random_state
        As in :func:`critic_mutual_information`.
    n_resamples : int
        Permutations of the held-out ``y``.

    Returns
    -------
    TestResult
    """
    objective = _check_options(method, hidden, batch_size, maxiter, lr, clip, test_size)
    n_resamples = check_positive_int(n_resamples, name="n_resamples")
    xt, yt = as_pair(x, y)
    g = torch_generator(random_state, "cpu")
    critic, _, xte, yte = _fit_on_split(
        xt, yt, g, objective=objective, hidden=hidden, batch_size=batch_size,
        maxiter=maxiter, lr=lr, clip=clip, test_size=test_size,
    )  # fmt: skip

    def stat(yy):
        return _read_bound(objective, *_held_out_terms(objective, critic, xte, yy, clip, g))[0]

    statistic = stat(yte)
    null = np.array(
        [
            stat(yte[torch.randperm(len(yte), generator=g).to(yte.device)])
            for _ in range(n_resamples)
        ]
    )
    return permutation_independence_result(
        f"{NAMES[objective]} held-out permutation test of independence",
        len(xt),
        statistic,
        null,
        permuted="permutation of held-out y",
        statistic_name="MI bound (nats)",
    )
