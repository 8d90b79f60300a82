"""Graph input: networkx graphs, scipy.sparse or dense adjacency -> a symmetric 0/1 CSR matrix."""

from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
from scipy import sparse

from statcore._validation import describe


def as_adjacency(graph, *, name: str = "graph") -> tuple[sparse.csr_matrix, list]:
    """A simple undirected graph as a symmetric 0/1 CSR matrix (sorted indices) and node labels.

    Directed graphs are symmetrised (an edge either way is an edge), weights are dropped and
    self-loops removed, each with a warning, since the latent space model is for simple
    undirected graphs.
    """
    if isinstance(graph, nx.Graph):
        if graph.is_multigraph():
            warnings.warn(f"`{name}` is a multigraph; parallel edges count once", stacklevel=3)
        nodes = list(graph.nodes())
        if graph.is_directed():
            warnings.warn(f"`{name}` is directed; it is symmetrised", stacklevel=3)
        adjacency = nx.to_scipy_sparse_array(graph, nodelist=nodes, weight=None, format="csr")
    elif sparse.issparse(graph):
        adjacency = sparse.csr_matrix(graph)
        nodes = list(range(adjacency.shape[0]))
    else:
        try:
            dense = np.asarray(graph)
        except (TypeError, ValueError):
            dense = None
        if dense is None or dense.ndim != 2 or not np.issubdtype(dense.dtype, np.number):
            raise TypeError(
                f"`{name}` must be a networkx graph, a scipy.sparse matrix or a square numeric "
                f"array; got {describe(graph)}"
            )
        adjacency = sparse.csr_matrix(dense)
        nodes = list(range(dense.shape[0]))
    if adjacency.shape[0] != adjacency.shape[1]:
        raise ValueError(f"`{name}` adjacency must be square; got shape {adjacency.shape}")
    adjacency = sparse.csr_matrix(adjacency, dtype=np.float64)
    if not np.all(np.isfinite(adjacency.data)):
        raise ValueError(f"`{name}` adjacency must be finite")
    if np.any(adjacency.data < 0):
        raise ValueError(f"`{name}` adjacency must be non-negative")
    adjacency.eliminate_zeros()
    if adjacency.nnz and np.any(adjacency.data != 1.0):
        warnings.warn(
            f"`{name}` is weighted; weights are dropped (any edge counts as 1)", stacklevel=3
        )
    if (adjacency != adjacency.T).nnz:
        if not isinstance(graph, nx.Graph):
            warnings.warn(f"`{name}` adjacency is not symmetric; it is symmetrised", stacklevel=3)
        adjacency = adjacency + adjacency.T
    if adjacency.diagonal().any():
        warnings.warn(f"`{name}` has self-loops; they are removed", stacklevel=3)
        adjacency.setdiag(0)
    adjacency.eliminate_zeros()
    adjacency.data[:] = 1.0
    adjacency.sort_indices()
    return adjacency, nodes


def to_networkx(n_nodes: int, rows: np.ndarray, cols: np.ndarray) -> nx.Graph:
    """An undirected graph on nodes 0..n-1 with the given edges."""
    graph = nx.Graph()
    graph.add_nodes_from(range(n_nodes))
    graph.add_edges_from(zip(rows.tolist(), cols.tolist(), strict=True))
    return graph
