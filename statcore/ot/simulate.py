"""Data-generating designs for SLOT-Align: federated clients whose features differ by a
client-specific affine distortion, and a digits proxy with joint domain and label shift.

Both are reconstructions, not the paper's benchmarks: they keep the structure the method
targets (one representation seen through client-specific affine maps; Dirichlet label skew over
clients, as in the authors' code) at a size a test can run.

References
----------
SLOT-Align authors' code, github.com/daniebera/SLOT-Align.
"""

from __future__ import annotations

import numpy as np

from statcore.compat import import_optional
from statcore.validation import (
    check_positive,
    check_positive_int,
    check_random_state,
    check_scalar,
)


def affine_clients(
    sizes=(120, 80, 15), *, dim: int = 20, random_state=None
) -> dict[str, np.ndarray]:
    """Clients that share a mixing matrix but differ by a client-specific affine distortion.

    Client ``k`` draws ``n_k`` standard normal rows, mixes them by a common ``B`` and then by
    its own ``I + 0.5 G_k / sqrt(dim)`` (``G_k`` standard normal), and adds its own offset. A
    client with fewer rows than ``dim`` exercises the shrinkage of the covariance estimate.

    Parameters
    ----------
    sizes : sequence of int
        Rows per client; the clients are named ``"c0"``, ``"c1"``, ...
    dim : int
        Feature dimension.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    dict of str to ndarray of shape (n_k, dim)
    """
    dim = check_positive_int(dim, name="dim")
    sizes = [check_positive_int(n, name="sizes") for n in sizes]
    rng = check_random_state(random_state)
    base = rng.normal(size=(dim, dim)) / np.sqrt(dim)
    clients = {}
    for k, n in enumerate(sizes):
        A = np.eye(dim) + 0.5 * rng.normal(size=(dim, dim)) / np.sqrt(dim)
        clients[f"c{k}"] = rng.normal(size=(n, dim)) @ base.T @ A.T + rng.normal(size=dim)
    return clients


def digits_domains(
    *,
    n_domains: int = 4,
    dim: int = 32,
    alpha: float = 0.5,
    train_share: float = 0.7,
    random_state=None,
):
    """Federated proxy with joint domain and label shift, from scikit-learn's bundled digits.

    Every domain renders all digits through a fixed random-feature encoder (random cosine
    features of a domain-specific gain and offset of the pixels), then a domain-specific
    affine distortion of the features. Per class, a Dirichlet(``alpha``) draw over domains sets
    the share of that class each client keeps for training (the label skew of the SLOT-Align
    experiments). Test sets are each domain's held-out rows, without label skew.

    Parameters
    ----------
    n_domains : int
        Clients (domains), named ``"domain0"``, ``"domain1"``, ...
    dim : int
        Dimension of the random-feature encoder.
    alpha : float
        Dirichlet concentration of the label skew; smaller is more skewed.
    train_share : float in (0, 1)
        Share of the (shuffled) digits each domain uses for training.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    train, test : dict of str to (ndarray, ndarray)
        Per domain, features of shape (n, dim) and integer labels 0-9.

    Raises
    ------
    ImportError
        Without scikit-learn (``pip install statcore[network]`` brings it).
    """
    n_domains = check_positive_int(n_domains, name="n_domains")
    dim = check_positive_int(dim, name="dim")
    alpha = check_positive(alpha, name="alpha")
    train_share = check_scalar(
        train_share,
        name="train_share",
        low=0.0,
        high=1.0,
        low_inclusive=False,
        high_inclusive=False,
    )
    datasets = import_optional("sklearn.datasets", "network")
    X, y = datasets.load_digits(return_X_y=True)
    rng = check_random_state(random_state)
    order = rng.permutation(len(X))
    X, y = X[order] / 16.0, y[order]
    W = rng.normal(size=(64, dim)) / 4.0
    phase = rng.uniform(0, 2 * np.pi, size=dim)
    keep_share = rng.dirichlet(np.full(n_domains, alpha), size=10).T
    n_train = int(train_share * len(X))
    train, test = {}, {}
    for k in range(n_domains):
        gain, offset = rng.uniform(0.5, 1.5), rng.normal(scale=0.3, size=64)
        Z = np.cos((gain * X + offset) @ W + phase)
        A = np.eye(dim) + 0.4 * rng.normal(size=(dim, dim)) / np.sqrt(dim)
        Z = Z @ A.T + rng.normal(size=dim)
        ztr, ytr = Z[:n_train], y[:n_train]
        kept = np.concatenate(
            [
                np.flatnonzero(ytr == c)[: int(keep_share[k, c] * np.sum(ytr == c))]
                for c in range(10)
            ]
        )
        train[f"domain{k}"] = (ztr[kept], ytr[kept])
        test[f"domain{k}"] = (Z[n_train:], y[n_train:])
    return train, test
