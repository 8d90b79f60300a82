"""Synthetic training episodes of InfoAtlas: paired samples from families with rich dependence.

The authors' code leaves its episode generator unimplemented (``train.py`` withholds
``generate_training_episode``) and the paper says only "rich dependence patterns"; these
families follow the paper's list (Gaussian, Gaussian copula with non-Gaussian marginals,
mixtures, discrete families) plus heavy-tailed (multivariate t) pairs and noisy non-monotone
maps. Three quarters of the episodes are not Gaussian copulas. Fidelity: reconstruction.
"""

from __future__ import annotations

import math

import torch

FAMILIES = ("gaussian", "copula", "student", "mixture", "nonlinear", "discrete")
#: sampling weights of the families; independence (MI = 0) is drawn inside each family too
WEIGHTS = (0.15, 0.1, 0.15, 0.2, 0.25, 0.15)


def _uniform(lo, hi, shape, g):
    return lo + (hi - lo) * torch.rand(shape, generator=g)


def _orthogonal(d, g):
    q, r = torch.linalg.qr(torch.randn(d, d, generator=g))
    return q * torch.sign(torch.diagonal(r))


def _correlated_gaussian(n, d, g):
    """Gaussian pair with per-direction correlations, rotated within each side."""
    rho = _uniform(-0.97, 0.97, (d,), g)
    if torch.rand((), generator=g) < 0.15:
        rho = torch.zeros(d)
    elif torch.rand((), generator=g) < 0.5:
        rho = rho * (torch.rand(d, generator=g) < 0.5)  # some directions independent
    zx = torch.randn(n, d, generator=g)
    zy = rho * zx + torch.sqrt(1 - rho**2) * torch.randn(n, d, generator=g)
    return zx @ _orthogonal(d, g).T, zy @ _orthogonal(d, g).T


def _monotone(a, g):
    pick = int(torch.randint(0, 4, (), generator=g))
    return (torch.exp, lambda v: v**3, torch.tanh, lambda v: torch.sign(v) * v.abs() ** 0.5)[pick](
        a
    )


def _mixture(n, d, g):
    k = int(torch.randint(2, 5, (), generator=g))
    scale = float(_uniform(0.5, 3.0, (), g))
    means = scale * torch.randn(k, 2 * d, generator=g)
    if torch.rand((), generator=g) < 0.2:
        means[:, d:] = 0.0  # only x moves with the component: independent pair
        label = torch.randint(0, k, (n,), generator=g)
        x = means[label, :d] + torch.randn(n, d, generator=g)
        return x, torch.randn(n, d, generator=g)
    label = torch.randint(0, k, (n,), generator=g)
    xs, ys = _correlated_gaussian(n, d, g)
    return xs + means[label, :d], ys + means[label, d:]


def _nonlinear(n, d, g):
    x = torch.randn(n, d, generator=g)
    mix = torch.randn(d, d, generator=g) / math.sqrt(d)
    pick = int(torch.randint(0, 4, (), generator=g))
    h = x @ mix
    f = (torch.sin(2 * h), h**2, h.abs(), torch.tanh(3 * h))[pick]
    sigma = math.exp(float(_uniform(math.log(0.1), math.log(2.0), (), g)))
    return x, f + sigma * torch.randn(n, d, generator=g)


def _student(n, d, g):
    """A correlated Gaussian pair divided by one chi scale: multivariate t with 1 to 10 degrees
    of freedom (tail dependence even where the correlations are 0)."""
    x, y = _correlated_gaussian(n, d, g)
    dof = int(torch.randint(1, 11, (), generator=g))
    # chi-square as a sum of squared normals: drawn from `g`, as torch.distributions cannot
    scale = torch.sqrt(torch.randn(n, dof, generator=g).square().sum(1, keepdim=True) / dof)
    return x / scale, y / scale


def _discrete(n, d, g):
    pick = int(torch.randint(0, 3, (), generator=g))
    if pick == 0:  # correlated Bernoulli, flip probability 1 - q per coordinate
        q = _uniform(0.5, 1.0, (d,), g)
        x = torch.randint(0, 2, (n, d), generator=g).float()
        keep = torch.rand(n, d, generator=g) < q
        return x, torch.where(keep, x, 1 - x)
    if pick == 1:  # shared-component Poisson
        lam0 = _uniform(0.0, 5.0, (d,), g)
        lam = _uniform(0.5, 4.0, (d,), g)
        z0 = torch.poisson(lam0.expand(n, d).contiguous(), generator=g)
        x = z0 + torch.poisson(lam.expand(n, d).contiguous(), generator=g)
        y = z0 + torch.poisson(lam.expand(n, d).contiguous(), generator=g)
        return x, y
    x, y = _correlated_gaussian(n, d, g)  # a Gaussian pair read on a coarse grid
    levels = int(torch.randint(2, 8, (), generator=g))
    return torch.floor(x * levels / 3), torch.floor(y * levels / 3)


def sample_episode(n: int, max_dim: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """One episode: ``n`` pairs from a random family, each side of a random dimension
    ``d <= max_dim`` (the same for both sides)."""
    family = FAMILIES[int(torch.multinomial(torch.tensor(WEIGHTS), 1, generator=g))]
    d = int(torch.randint(1, max_dim + 1, (), generator=g))
    if family == "gaussian":
        return _correlated_gaussian(n, d, g)
    if family == "copula":
        x, y = _correlated_gaussian(n, d, g)
        return _monotone(x, g), _monotone(y, g)
    if family == "student":
        return _student(n, d, g)
    if family == "mixture":
        return _mixture(n, d, g)
    if family == "nonlinear":
        return _nonlinear(n, d, g)
    return _discrete(n, d, g)
