"""Graph input: networkx graphs, scipy.sparse or dense adjacency -> a symmetric 0/1 CSR matrix."""

from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
from scipy import sparse

from statcore.validation import describe


def _is_real(dtype) -> bool:
    """Booleans, integers and reals: the entries an adjacency matrix may hold (not complex)."""
    return np.issubdtype(dtype, np.bool_) or (
        np.issubdtype(dtype, np.number) and not np.issubdtype(dtype, np.complexfloating)
    )


def as_adjacency(graph, *, name: str = "graph") -> tuple[sparse.csr_matrix, list]:
    """A simple undirected graph as a symmetric 0/1 CSR matrix (sorted indices) and node labels.

    Directed graphs are symmetrised (an edge either way is an edge), weights are dropped and
    self-loops removed, each with a warning, since the latent space model is for simple
    undirected graphs. The matrix returned is always a new one: the caller's graph or matrix is
    never modified.
    """
    if isinstance(graph, nx.Graph):
        if graph.is_multigraph():
            warnings.warn(f"`{name}` is a multigraph; parallel edges count once", stacklevel=3)
        nodes = list(graph.nodes())
        if graph.is_directed():
            warnings.warn(f"`{name}` is directed; it is symmetrised", stacklevel=3)
        if not nodes:
            return sparse.csr_matrix((0, 0), dtype=np.float64), nodes
        adjacency = _edge_counts(graph, nodes)
    elif sparse.issparse(graph):
        if not _is_real(graph.dtype):
            raise TypeError(
                f"`{name}` adjacency must be real; got a sparse matrix of {graph.dtype}"
            )
        # a copy: csr_matrix() of a CSR matrix shares its arrays, and the clean-up below
        # (dropping zeros and self-loops, setting weights to 1, sorting) works in place
        adjacency = sparse.csr_matrix(graph, copy=True)
        nodes = list(range(adjacency.shape[0]))
    else:
        try:
            dense = np.asarray(graph)
        except (TypeError, ValueError):
            dense = None
        if dense is None or dense.ndim != 2 or not _is_real(dense.dtype):
            raise TypeError(
                f"`{name}` must be a networkx graph, a scipy.sparse matrix or a square real "
                f"array; got {describe(graph)}"
            )
        adjacency = sparse.csr_matrix(dense)
        nodes = list(range(dense.shape[0]))
    if adjacency.shape[0] != adjacency.shape[1]:
        raise ValueError(f"`{name}` adjacency must be square; got shape {adjacency.shape}")
    adjacency = sparse.csr_matrix(adjacency, dtype=np.float64)
    if not np.all(np.isfinite(adjacency.data)):
        raise ValueError(
            f"`{name}` adjacency must be finite; got {int((~np.isfinite(adjacency.data)).sum())} "
            "NaN or infinite entries"
        )
    if np.any(adjacency.data < 0):
        raise ValueError(f"`{name}` adjacency must be non-negative; got {adjacency.data.min():g}")
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


def _edge_counts(graph, nodes) -> sparse.csr_matrix:
    """``nx.to_scipy_sparse_array(graph, nodelist=nodes, weight=None)`` without its per-edge
    Python work: the edge count of each node pair (both directions of an undirected edge, a
    self-loop once), 5-10 times faster on graphs of 1e5 edges."""
    index = {node: k for k, node in enumerate(nodes)}
    pairs = np.fromiter(
        (index[node] for edge in graph.edges() for node in edge[:2]), dtype=np.int64
    ).reshape(-1, 2)
    rows, cols = pairs[:, 0], pairs[:, 1]
    if not graph.is_directed():
        off = rows != cols
        rows, cols = np.concatenate([rows, cols[off]]), np.concatenate([cols, rows[off]])
    n = len(nodes)
    return sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))


def check_graph_size(
    adjacency: sparse.csr_matrix, *, name: str, min_nodes: int, edges: bool, purpose: str
) -> None:
    """Refuse a graph too small for ``purpose``: fewer than ``min_nodes`` nodes, or no edges.

    One message for every network entry, so that an empty or tiny graph is named as such
    instead of surfacing as a division by zero or an eigen-solver error further in.
    """
    n = adjacency.shape[0]
    if n == 0:
        raise ValueError(f"`{name}` has no nodes; {purpose} needs at least {min_nodes}")
    if n < min_nodes:
        raise ValueError(f"`{name}` needs at least {min_nodes} nodes for {purpose}; got {n}")
    if edges and adjacency.nnz == 0:
        raise ValueError(f"`{name}` has no edges ({n} isolated nodes); {purpose} needs edges")


def to_networkx(n_nodes: int, rows: np.ndarray, cols: np.ndarray) -> nx.Graph:
    """An undirected graph on nodes 0..n-1 with the given edges."""
    graph = nx.Graph()
    graph.add_nodes_from(range(n_nodes))
    graph.add_edges_from(zip(rows.tolist(), cols.tolist(), strict=True))
    return graph
