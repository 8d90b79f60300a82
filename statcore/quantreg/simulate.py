"""Data-generating designs of federated quantile regression with heterogeneous features.

Three designs: every agent sees every feature (``homogeneous_agents``),
agents see different blocks of independent features under a location shift, where the
ensemble is identified (``block_agents``), and an agent omits a feature correlated with its
own under heteroscedastic noise, where it is not (``omitted_correlated_agents``).

References
----------
One-shot weighted ensemble estimation for federated quantile regression: optimal statistical
guarantees under heterogeneous structured data (ICML 2026); the designs are a reconstruction
of its simulation settings, not its code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from statcore.validation import check_positive_int, check_random_state, check_scalar


@dataclass(frozen=True)
class FederatedDesign:
    """Simulated agents and the truth they were drawn from.

    Attributes
    ----------
    agents : dict
        Agent name -> DataFrame holding ``y`` and the agent's features.
    slopes : Series
        The true global slopes (the same at every quantile level in these designs).
    features_by_agent : dict
        Agent name -> its feature names.
    pooled : DataFrame
        All rows with every feature (NaN where an agent lacks it): for the oracle comparison
        only, never given to the federated estimator.
    """

    agents: dict
    slopes: pd.Series
    features_by_agent: dict
    pooled: pd.DataFrame


def _ar1(p: int, rho: float) -> np.ndarray:
    idx = np.arange(p)
    return rho ** np.abs(idx[:, None] - idx[None, :])


def _assemble(parts, slopes, names):
    agents = {name: frame for name, frame in parts}
    features = {name: [c for c in frame.columns if c != "y"] for name, frame in parts}
    pooled = pd.concat([frame.assign(agent=name) for name, frame in parts], ignore_index=True)
    return FederatedDesign(
        agents=agents,
        slopes=pd.Series(slopes, index=names),
        features_by_agent=features,
        pooled=pooled,
    )


def homogeneous_agents(
    n_agents: int = 10,
    n_per_agent: int = 1000,
    p: int = 5,
    rho: float = 0.5,
    df: float = 3.0,
    random_state=None,
) -> FederatedDesign:
    """Every agent sees all features: ``y = 1 + x'1 + t_df``, ``x ~ N(0, AR1(rho))`` (check A)."""
    n_agents = check_positive_int(n_agents, name="n_agents")
    n_per_agent = check_positive_int(n_per_agent, name="n_per_agent")
    p = check_positive_int(p, name="p")
    rng = check_random_state(random_state)
    names = [f"x{j + 1}" for j in range(p)]
    chol = np.linalg.cholesky(_ar1(p, rho))
    beta = np.ones(p)
    parts = []
    for k in range(n_agents):
        X = rng.standard_normal((n_per_agent, p)) @ chol.T
        y = 1.0 + X @ beta + rng.standard_t(df, n_per_agent)
        parts.append((f"agent{k}", pd.DataFrame(X, columns=names).assign(y=y)))
    return _assemble(parts, beta, names)


#: which of the four feature blocks each agent sees (overlapping; every block seen 3 or 4 times)
BLOCKS_BY_AGENT = ((0, 1), (1, 2), (2, 3), (0, 1, 2), (1, 2, 3), (0, 3))
N_PER_AGENT = (600, 800, 1000, 1200, 1400, 1500)


def block_agents(
    n_per_agent=N_PER_AGENT,
    blocks_by_agent=BLOCKS_BY_AGENT,
    n_blocks: int = 4,
    block_size: int = 2,
    within_corr: float = 0.5,
    random_state=None,
) -> FederatedDesign:
    """Agents see different blocks of independent features; N(0, 1) location-shift noise.

    ``y = 1 + x'beta + e`` with ``beta_j = 1 + j / p`` and the blocks independent (correlation
    ``within_corr`` inside a block). The features an agent lacks are independent of its own and
    enter by a location shift, so each agent's sub-model has the global slopes: the ensemble is
    identified.
    """
    rng = check_random_state(random_state)
    check_scalar(
        within_corr,
        name="within_corr",
        low=-1.0,
        high=1.0,
        low_inclusive=False,
        high_inclusive=False,
    )
    if len(n_per_agent) != len(blocks_by_agent):
        raise ValueError(
            f"`n_per_agent` ({len(n_per_agent)}) and `blocks_by_agent` ({len(blocks_by_agent)}) "
            "must have one entry per agent"
        )
    p = n_blocks * block_size
    names = [f"x{j + 1}" for j in range(p)]
    beta = 1.0 + np.arange(p) / p
    corr = np.full((block_size, block_size), within_corr) + (1 - within_corr) * np.eye(block_size)
    chol = np.linalg.cholesky(corr)
    parts = []
    for k, (n, blocks) in enumerate(zip(n_per_agent, blocks_by_agent, strict=True)):
        n = check_positive_int(n, name=f"n_per_agent[{k}]")
        X = np.concatenate(
            [rng.standard_normal((n, block_size)) @ chol.T for _ in range(n_blocks)], axis=1
        )
        y = 1.0 + X @ beta + rng.standard_normal(n)
        cols = [b * block_size + i for b in sorted(blocks) for i in range(block_size)]
        frame = pd.DataFrame(X[:, cols], columns=[names[c] for c in cols]).assign(y=y)
        parts.append((f"agent{k}", frame))
    return _assemble(parts, beta, names)


def omitted_correlated_agents(
    n_per_agent: int = 20_000, corr: float = 0.6, random_state=None
) -> FederatedDesign:
    """Two agents, one lacking a correlated feature under heteroscedastic noise (check C).

    ``y = x1 + x2 + (1 + 0.5 |x2|) e`` with ``corr(x1, x2) = corr``: agent ``full`` sees
    ``x1, x2``; agent ``partial`` sees only ``x1``, and its sub-model is not linear with the
    global slope, so its estimate of the ``x1`` slope is biased away from 1 at upper quantiles.
    """
    rng = check_random_state(random_state)
    n = check_positive_int(n_per_agent, name="n_per_agent")
    corr = check_scalar(
        corr, name="corr", low=-1.0, high=1.0, low_inclusive=False, high_inclusive=False
    )
    chol = np.linalg.cholesky(np.array([[1.0, corr], [corr, 1.0]]))
    parts = []
    for name, cols in (("full", ["x1", "x2"]), ("partial", ["x1"])):
        X = rng.standard_normal((n, 2)) @ chol.T
        y = X[:, 0] + X[:, 1] + (1 + 0.5 * np.abs(X[:, 1])) * rng.standard_normal(n)
        frame = pd.DataFrame(X, columns=["x1", "x2"])[cols].assign(y=y)
        parts.append((name, frame))
    return _assemble(parts, np.ones(2), ["x1", "x2"])
