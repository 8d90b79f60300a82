"""Network statistics and the SyNGLER comparison of synthetic graphs with an observed one."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import ClassVar

import networkx as nx
import numpy as np
import pandas as pd
from scipy import sparse, stats
from scipy.sparse import linalg as sparse_linalg

from statcore.network.baselines import BASELINES, baseline_graphs
from statcore.network.graph import as_adjacency, check_graph_size
from statcore.results import Results, Summary
from statcore.results.plotting import get_ax
from statcore.validation import check_positive_int, check_random_state, describe

# full spectra are O(n^3): above this size only the leading eigenvalues are compared
FULL_SPECTRUM_LIMIT = 1500
N_LEADING = 3


def _triangles(A: sparse.csr_matrix) -> float:
    return float((A @ A).multiply(A).sum() / 6.0)


def _local_clustering(A: sparse.csr_matrix) -> np.ndarray:
    degree = np.asarray(A.sum(axis=1)).ravel()
    closed = np.asarray((A @ A).multiply(A).sum(axis=1)).ravel() / 2.0
    pairs = degree * (degree - 1) / 2.0
    return np.divide(closed, pairs, out=np.zeros_like(closed), where=pairs > 0)


def _laplacian_spectrum(A: sparse.csr_matrix, k: int | None = None) -> np.ndarray:
    """Eigenvalues of the normalised Laplacian I - D^-1/2 A D^-1/2 (all, or the k largest)."""
    degree = np.asarray(A.sum(axis=1)).ravel()
    inv_sqrt = np.divide(1.0, np.sqrt(degree), out=np.zeros_like(degree), where=degree > 0)
    scaled = sparse.diags(inv_sqrt) @ A @ sparse.diags(inv_sqrt)
    laplacian = sparse.identity(A.shape[0]) - scaled
    if k is None:
        return np.linalg.eigvalsh(laplacian.toarray())
    return np.sort(sparse_linalg.eigsh(laplacian, k=k, which="LA", return_eigenvectors=False))


def network_statistics(graph) -> pd.DataFrame:
    """One row of descriptive statistics of a simple undirected graph.

    Columns: ``nodes, edges, density, mean_degree, max_degree, triangle_density`` (triangles over
    n choose 3, the paper's "Tri."), ``global_clustering`` (transitivity, the paper's "Clus."),
    ``assortativity`` (degree), ``lcc_share`` (nodes in the largest component) and
    ``laplacian_1..3`` (the largest normalised-Laplacian eigenvalues).

    Returns
    -------
    DataFrame
        One row. A statistic that a graph this small or this sparse does not define is NaN,
        and ``frame.attrs["notes"]`` says which and why: ``density`` needs 2 nodes,
        ``triangle_density`` 3, ``global_clustering`` a node of degree 2 or more,
        ``assortativity`` edges between nodes of unequal degrees, ``laplacian_k`` k nodes.

    Raises
    ------
    ValueError
        For a graph without nodes.

    References
    ----------
    Jiang, F. et al. (2026). SyNGLER: Synthetic network generation via latent embedding
    reconstruction. ICML 2026 (evaluation metrics).
    """
    A, _ = as_adjacency(graph)
    check_graph_size(A, name="graph", min_nodes=1, edges=False, purpose="network statistics")
    n = A.shape[0]
    degree = np.asarray(A.sum(axis=1)).ravel()
    edges = A.nnz // 2
    triangles = _triangles(A)
    triples = float((degree * (degree - 1)).sum() / 2.0)
    n_comp, labels = sparse.csgraph.connected_components(A, directed=False)
    notes = []
    if n < 2:
        notes.append("density is NaN: a graph with one node has no pairs")
    if n < 3:
        notes.append("triangle_density is NaN: a graph with fewer than 3 nodes has no triples")
    if not triples:
        notes.append("global_clustering is NaN: no node has two neighbours")
    assortativity = _assortativity(A, degree)
    if np.isnan(assortativity):
        notes.append("assortativity is NaN: no edges, or all edge ends have the same degree")
    row = {
        "nodes": n,
        "edges": edges,
        "density": edges / (n * (n - 1) / 2) if n >= 2 else np.nan,
        "mean_degree": degree.mean(),
        "max_degree": int(degree.max()),
        "triangle_density": triangles / (n * (n - 1) * (n - 2) / 6) if n >= 3 else np.nan,
        "global_clustering": 3 * triangles / triples if triples else np.nan,
        "assortativity": assortativity,
        "lcc_share": np.bincount(labels).max() / n,
    }
    if n >= N_LEADING + 2:
        leading = _laplacian_spectrum(A, k=N_LEADING)[::-1]
    else:
        # ARPACK needs k < n - 1: a graph this small takes its full spectrum, and the
        # eigenvalues it does not have are NaN
        leading = np.full(N_LEADING, np.nan)
        spectrum = _laplacian_spectrum(A)[::-1][:N_LEADING]
        leading[: len(spectrum)] = spectrum
        if n < N_LEADING:
            missing = ", ".join(f"laplacian_{k}" for k in range(n + 1, N_LEADING + 1))
            notes.append(f"{missing} NaN: the graph has {n} node(s)")
    for k, value in enumerate(leading, start=1):
        row[f"laplacian_{k}"] = value
    frame = pd.DataFrame([row])
    frame.attrs["notes"] = tuple(notes)
    return frame


def _assortativity(A: sparse.csr_matrix, degree: np.ndarray) -> float:
    """Pearson correlation of the degrees at the two ends of an edge (Newman 2002)."""
    rows, cols = A.nonzero()
    x, y = degree[rows], degree[cols]
    if len(x) == 0 or x.std() == 0:
        return np.nan
    return float(np.corrcoef(x, y)[0, 1])


def _gaussian_tv_mmd(observed: np.ndarray, generated: list[np.ndarray], sigma: float) -> float:
    """Squared MMD between {observed} and the generated histograms, k = exp(-TV^2 / (2 sigma^2))."""

    def kernel(p, q):
        tv = 0.5 * np.abs(p - q).sum()
        return np.exp(-(tv**2) / (2 * sigma**2))

    m = len(generated)
    within = sum(kernel(generated[a], generated[b]) for a in range(m) for b in range(m)) / m**2
    cross = sum(kernel(observed, g) for g in generated) / m
    return float(kernel(observed, observed) + within - 2 * cross)


def _histogram(values: np.ndarray, bins: np.ndarray) -> np.ndarray:
    counts, _ = np.histogram(values, bins=bins)
    return counts / max(counts.sum(), 1)


def _graph_metrics(adjacencies: list, observed) -> dict[str, float]:
    n_obs = observed["n"]
    triangle, clustering, degrees, spectra, deg_hist, clus_hist = [], [], [], [], [], []
    for A in adjacencies:
        n = A.shape[0]
        degree = np.asarray(A.sum(axis=1)).ravel()
        triples = (degree * (degree - 1)).sum() / 2.0
        tri = _triangles(A)
        triangle.append(tri / (n * (n - 1) * (n - 2) / 6))
        clustering.append(3 * tri / triples if triples else 0.0)
        degrees.append(degree / (n - 1))
        spectra.append(_spectrum_for(A, n_obs))
        deg_hist.append(_histogram(degree, observed["degree_bins"]))
        clus_hist.append(_histogram(_local_clustering(A), observed["clustering_bins"]))
    triangle, clustering = np.array(triangle), np.array(clustering)
    pooled_degree, pooled_spectrum = np.concatenate(degrees), np.concatenate(spectra)
    t_obs, c_obs = observed["triangle_density"], observed["global_clustering"]
    return {
        "triangle_rel_rmse": float(np.sqrt(np.mean((triangle - t_obs) ** 2)) / t_obs)
        if t_obs > 0
        else np.nan,
        "triangle_rel_bias": float((triangle.mean() - t_obs) / t_obs) if t_obs > 0 else np.nan,
        "clustering_rmse": float(np.sqrt(np.mean((clustering - c_obs) ** 2))),
        "clustering_bias": float(clustering.mean() - c_obs),
        "degree_w1": stats.wasserstein_distance(pooled_degree, observed["degree"]),
        "degree_ks": stats.ks_2samp(pooled_degree, observed["degree"]).statistic,
        "degree_energy": stats.energy_distance(pooled_degree, observed["degree"]),
        "spectrum_energy": stats.energy_distance(pooled_spectrum, observed["spectrum"]),
        "degree_mmd": _gaussian_tv_mmd(observed["degree_hist"], deg_hist, sigma=1.0),
        "clustering_mmd": _gaussian_tv_mmd(observed["clustering_hist"], clus_hist, sigma=0.1),
    }


def _spectrum_for(A, n_reference):
    if n_reference <= FULL_SPECTRUM_LIMIT:
        return _laplacian_spectrum(A)
    return _laplacian_spectrum(A, k=min(100, A.shape[0] - 2))


def _plot_comparison(results, ax=None, metrics=None, **kwargs):
    """Grouped bars of each metric by generator on a symmetric-log axis.

    Distances span orders of magnitude, so the axis is logarithmic away from zero; it is
    symmetric (``symlog``) because the bias metrics are signed and a plain log axis would drop
    their negative bars. The legend sits outside the axes, clear of the bars.
    """
    ax = get_ax(ax)
    frame = results.table
    metrics = list(dict.fromkeys(frame["metric"])) if metrics is None else list(metrics)
    generators = list(dict.fromkeys(frame["generator"]))
    width = 0.8 / len(generators)
    for k, name in enumerate(generators):
        rows = frame[frame["generator"] == name].set_index("metric").reindex(metrics)
        ax.bar(
            np.arange(len(metrics)) + k * width, rows["value"], width=width, label=name, **kwargs
        )
    ax.set_xticks(np.arange(len(metrics)) + 0.4 - width / 2, metrics, rotation=45, ha="right")
    shown = frame.loc[frame["metric"].isin(metrics), "value"].abs()
    shown = shown[np.isfinite(shown) & (shown > 0)]
    # linear within the smallest non-zero magnitude shown, logarithmic beyond it
    ax.set_yscale("symlog", linthresh=float(shown.min()) if len(shown) else 1.0)
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xlabel("metric")
    ax.set_ylabel("distance to the observed graph (symlog scale)\nlower is better; biases: near 0")
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="generator")
    ax.set_title(results.method)
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class NetworkComparison(Results):
    """Distances of synthetic graphs to an observed graph, per generator (lower is better)."""

    table: pd.DataFrame
    observed_statistics: pd.DataFrame

    _plots: ClassVar[dict] = {"bars": _plot_comparison}

    def tidy(self) -> pd.DataFrame:
        """``generator, metric, value``."""
        return self.table.copy()

    def wide(self) -> pd.DataFrame:
        """Metrics as rows, generators as columns."""
        return self.table.pivot(index="metric", columns="generator", values="value").reindex(
            list(dict.fromkeys(self.table["metric"]))
        )[list(dict.fromkeys(self.table["generator"]))]

    def summary(self, alpha: float = 0.05) -> Summary:
        """Report: the observed graph's statistics and the distances (:meth:`wide`)."""
        return Summary(
            title=self.method,
            info=self._info(),
            tables={"observed": self.observed_statistics, "distances": self.wide()},
            notes=self.notes,
        )


def compare_networks(observed, synthetic, baselines=None, *, name="SyNGLER", random_state=None):
    """Compare synthetic graphs with the observed one, beside baseline generators.

    Parameters
    ----------
    observed : graph
        The real (reference) graph.
    synthetic : graph or list of graphs, or dict name -> list of graphs
        The graphs to evaluate (e.g. ``SynglerResults.sample(n_graphs=20)``).
    baselines : None, list of str or dict
        ``None`` (default) or names among ``"erdos_renyi"``, ``"configuration"``, ``"chung_lu"``,
        ``"dcsbm"``: as many graphs as ``synthetic`` holds are drawn from each, fitted to
        ``observed``. ``[]`` for none. A dict maps names to ready lists of graphs.
    name : str
        Label of ``synthetic`` when it is not a dict.
    random_state : None, int or Generator
        For the baseline draws.

    Returns
    -------
    NetworkComparison
        ``tidy()``: ``generator, metric, value`` with the paper's metrics: triangle density
        relative RMSE and bias, transitivity RMSE and bias, degree-centrality W1 / KS / energy
        distance (pooled over graphs), normalised-Laplacian spectrum energy distance, and
        Gaussian-TV MMD of the degree and local-clustering histograms.

    Raises
    ------
    ValueError
        When ``observed`` has fewer than 3 nodes or no edges, or a graph to compare has fewer
        than 3 nodes (triangle densities need three).

    Warns
    -----
    UserWarning
        When a generator's graphs do not have as many nodes as ``observed``: the metrics are
        normalised by size, but such a comparison is rarely what was meant.

    References
    ----------
    Jiang, F. et al. (2026). SyNGLER: Synthetic network generation via latent embedding
    reconstruction. ICML 2026.
    """
    rng = check_random_state(random_state)
    A, _ = as_adjacency(observed, name="observed")
    check_graph_size(A, name="observed", min_nodes=3, edges=True, purpose="a network comparison")
    n = A.shape[0]
    groups = _as_groups(synthetic, name)
    n_graphs = max(len(g) for g in groups.values())
    if baselines is None:
        baselines = list(BASELINES)
    if isinstance(baselines, str):
        baselines = [baselines]
    if isinstance(baselines, dict):
        groups.update(_as_groups(baselines, None))
    else:
        for baseline in baselines:
            groups[baseline] = baseline_graphs(observed, baseline, n_graphs, random_state=rng)
    adjacencies = {label: _adjacencies(graphs, label, n) for label, graphs in groups.items()}
    degree = np.asarray(A.sum(axis=1)).ravel()
    stats_row = network_statistics(A)
    reference = {
        "n": n,
        "triangle_density": stats_row["triangle_density"].iloc[0],
        "global_clustering": stats_row["global_clustering"].iloc[0],
        "degree": degree / (n - 1),
        "spectrum": _spectrum_for(A, n),
        "degree_bins": np.arange(0, max(degree.max(), 1) * 3 + 2) - 0.5,
        "clustering_bins": np.linspace(0.0, 1.0, 101),
    }
    reference["degree_hist"] = _histogram(degree, reference["degree_bins"])
    reference["clustering_hist"] = _histogram(_local_clustering(A), reference["clustering_bins"])
    rows = []
    for label, graphs in adjacencies.items():
        for metric, value in _graph_metrics(graphs, reference).items():
            rows.append({"generator": label, "metric": metric, "value": value})
    return NetworkComparison(
        method="Synthetic network comparison",
        nobs=n,
        table=pd.DataFrame(rows),
        observed_statistics=stats_row,
        notes=(f"{n_graphs} graph(s) per generator; distances to the observed graph.",),
    )


def _adjacencies(graphs: list, label: str, n_observed: int) -> list:
    """The graphs of one generator as adjacency matrices; warns if their size is not observed's.

    Every metric is defined for graphs of another size (densities and degree centralities are
    normalised by n), but they then compare unlike things, which is rarely what was meant:
    ``SynglerResults.sample`` draws graphs of the observed size unless told otherwise.
    """
    out = []
    for k, graph in enumerate(graphs):
        A, _ = as_adjacency(graph, name=f"{label}[{k}]")
        check_graph_size(
            A, name=f"{label}[{k}]", min_nodes=3, edges=False, purpose="a network comparison"
        )
        out.append(A)
    sizes = sorted({A.shape[0] for A in out})
    if sizes != [n_observed]:
        warnings.warn(
            f"the `{label}` graphs have {', '.join(map(str, sizes))} nodes and the observed "
            f"graph {n_observed}: the metrics compare graphs of different sizes",
            UserWarning,
            stacklevel=3,
        )
    return out


def _as_groups(graphs, name) -> dict[str, list]:
    if isinstance(graphs, dict):
        return {str(k): _as_list(v, str(k)) for k, v in graphs.items()}
    return {name: _as_list(graphs, name)}


def _as_list(graphs, label) -> list:
    items = (
        [graphs]
        if isinstance(graphs, nx.Graph) or not isinstance(graphs, list | tuple)
        else list(graphs)
    )
    if not items:
        raise ValueError(f"`{label}` holds no graphs")
    for item in items:
        if not (
            isinstance(item, nx.Graph) or sparse.issparse(item) or isinstance(item, np.ndarray)
        ):
            raise TypeError(f"`{label}` must hold graphs; got {describe(item)}")
    check_positive_int(len(items), name="number of graphs")
    return items
