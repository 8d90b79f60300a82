"""Baseline generators fitted to an observed graph: Erdős–Rényi, configuration, Chung–Lu, DC-SBM."""

from __future__ import annotations

import networkx as nx
import numpy as np
from scipy.cluster.vq import kmeans2
from scipy.sparse import linalg as sparse_linalg

from statcore.network.graph import as_adjacency, check_graph_size, to_networkx
from statcore.validation import check_option, check_positive_int, check_random_state

BASELINES = ("erdos_renyi", "configuration", "chung_lu", "dcsbm")


def baseline_graphs(observed, kind: str, n_graphs: int, random_state=None, n_blocks: int = 4):
    """``n_graphs`` graphs from a baseline model fitted to ``observed``.

    - ``"erdos_renyi"``: G(n, p) with p the observed density.
    - ``"configuration"``: the configuration model on the observed degrees, self-loops and
      multi-edges removed.
    - ``"chung_lu"``: expected-degree (Chung–Lu) graphs with the observed degrees.
    - ``"dcsbm"``: degree-corrected stochastic block model, ``n_blocks`` blocks from spectral
      clustering, P_ij = min(1, theta_i theta_j omega_kl) with the maximum-likelihood theta and
      omega (Karrer & Newman 2011).
    """
    check_option(kind, name="kind", options=BASELINES)
    n_graphs = check_positive_int(n_graphs, name="n_graphs")
    n_blocks = check_positive_int(n_blocks, name="n_blocks")
    rng = check_random_state(random_state)
    A, _ = as_adjacency(observed, name="observed")
    check_graph_size(A, name="observed", min_nodes=3, edges=True, purpose="a baseline fit")
    n = A.shape[0]
    degree = np.asarray(A.sum(axis=1)).ravel()
    seeds = rng.integers(0, 2**31 - 1, size=n_graphs).tolist()
    if kind == "erdos_renyi":
        p = (A.nnz / 2) / (n * (n - 1) / 2)
        return [nx.fast_gnp_random_graph(n, p, seed=s) for s in seeds]
    if kind == "configuration":
        graphs = []
        for s in seeds:
            multi = nx.configuration_model(degree.astype(int).tolist(), seed=s)
            simple = nx.Graph(multi)
            simple.remove_edges_from(nx.selfloop_edges(simple))
            graphs.append(simple)
        return graphs
    if kind == "chung_lu":
        return [nx.expected_degree_graph(degree.tolist(), seed=s, selfloops=False) for s in seeds]
    return _dcsbm(A, degree, min(n_blocks, n - 1), seeds)


def _dcsbm(A, degree, n_blocks, seeds):
    n = A.shape[0]
    _, vectors = sparse_linalg.eigsh(A.astype(float), k=n_blocks, which="LA")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    embedding = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    _, labels = kmeans2(embedding, n_blocks, seed=seeds[0], minit="++")
    block = np.eye(n_blocks)[labels]
    block_degree = block.T @ degree
    omega = block.T @ (A @ block)
    theta = degree / np.where(block_degree[labels] > 0, block_degree[labels], 1.0)
    graphs = []
    for s in seeds:
        rng = np.random.default_rng(s)
        rows, cols = [], []
        for i in range(n - 1):
            p = np.minimum(1.0, theta[i] * theta[i + 1 :] * omega[labels[i], labels[i + 1 :]])
            hits = np.nonzero(rng.random(n - 1 - i) < p)[0]
            rows.append(np.full(len(hits), i))
            cols.append(hits + i + 1)
        graphs.append(to_networkx(n, np.concatenate(rows), np.concatenate(cols)))
    return graphs
