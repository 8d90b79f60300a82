"""Latent space fitting and graph sampling beside the authors' dense numpy path and networkx."""

import warnings

import networkx as nx
import numpy as np
from scipy.special import expit

from statcore.exceptions import ConvergenceWarning
from statcore.network import LatentSpaceModel
from statcore.network.sampling import sample_edge_arrays
from statcore.network.simulate import sample_latent_graph, sparse_latent_design

N_FIT = 2000
Z, ALPHA, RHO = sparse_latent_design(N_FIT, 2, random_state=0)
GRAPH = sample_latent_graph(Z, ALPHA, RHO, random_state=1)
A_DENSE = nx.to_numpy_array(GRAPH, nodelist=range(N_FIT))
MODEL = LatentSpaceModel(GRAPH, dim=2)
ITERATIONS = 20


def authors_pgd_iterations():
    """The authors' phase-2 iteration with dense n x n matrices (R = A - sigmoid(Theta))."""
    Zc, alpha = Z.copy(), ALPHA.copy()
    n, r = Zc.shape
    for _ in range(ITERATIONS):
        theta = alpha[:, None] + alpha[None, :] + Zc @ Zc.T + RHO
        R = A_DENSE - expit(theta)
        np.fill_diagonal(R, 0.0)
        Zc = Zc + 2 * (0.5 / (2 * (Zc**2).sum() / r)) * R @ Zc
        alpha = alpha + 2 * (0.5 / (2 * n)) * R.sum(axis=1)
        Zc -= Zc.mean(axis=0)
    return Zc, alpha


def statcore_pgd_iterations():
    with warnings.catch_warnings():
        # a fixed number of iterations on purpose: stopping early is the point, not a problem
        warnings.simplefilter("ignore", ConvergenceWarning)
        return MODEL.fit(method="pgd", maxiter=ITERATIONS, tol=1e-300, penalty=0.0)


N_SAMPLE = 100_000
Z_BIG, ALPHA_BIG, RHO_BIG = sparse_latent_design(N_SAMPLE, 2, sparse_level=0.8, random_state=2)
Z_BIG *= 0.3
EXPECTED_DEGREES = (
    np.exp(ALPHA_BIG + RHO_BIG / 2) * np.exp(ALPHA_BIG + RHO_BIG / 2).sum()
).tolist()


def statcore_sample_100k():
    return sample_edge_arrays(Z_BIG, ALPHA_BIG, RHO_BIG, np.random.default_rng(0))


N_DENSE = 3000
Z_D, ALPHA_D, RHO_D = sparse_latent_design(N_DENSE, 2, random_state=3)


def statcore_sample_dense_3000():
    return sample_edge_arrays(Z_D, ALPHA_D, RHO_D, np.random.default_rng(0), method="dense")


def numpy_sample_dense_3000():
    """The authors' generation: the full probability matrix, one Bernoulli per pair."""
    P = expit(ALPHA_D[:, None] + ALPHA_D[None, :] + Z_D @ Z_D.T + RHO_D)
    draws = np.random.default_rng(0).random(P.shape) < P
    return np.nonzero(np.triu(draws, 1))


CASES = [
    {
        "name": f"latent space fit, {ITERATIONS} PGD iterations, n={N_FIT}",
        "ours": statcore_pgd_iterations,
        "anchor": authors_pgd_iterations,
        "anchor_name": "authors' dense numpy PGD (re-implemented)",
    },
    {
        "name": f"sample one graph, n={N_DENSE} (dense regime)",
        "ours": statcore_sample_dense_3000,
        "anchor": numpy_sample_dense_3000,
        "anchor_name": "dense numpy Bernoulli (authors' path)",
    },
    {
        "name": f"sample one sparse graph, n={N_SAMPLE} (latent space vs Chung-Lu)",
        "ours": statcore_sample_100k,
        "anchor": lambda: nx.expected_degree_graph(EXPECTED_DEGREES, seed=0, selfloops=False),
        "anchor_name": f"networkx {nx.__version__} expected_degree_graph",
    },
]
