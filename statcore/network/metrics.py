"""Network statistics and the SyNGLER comparison of synthetic graphs with an observed one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import networkx as nx
import numpy as np
import pandas as pd
from scipy import sparse, stats
from scipy.sparse import linalg as sparse_linalg

from statcore._validation import check_positive_int, check_random_state, describe
from statcore.network.baselines import BASELINES, baseline_graphs
from statcore.network.graph import as_adjacency
from statcore.results import Results, Summary
from statcore.results._plotting import get_ax

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

    References
    ----------
    Jiang, F. et al. (2026). SyNGLER: Synthetic network generation via latent embedding
    reconstruction. ICML 2026 (evaluation metrics).
    """
    A, _ = as_adjacency(graph)
    n = A.shape[0]
    degree = np.asarray(A.sum(axis=1)).ravel()
    edges = A.nnz // 2
    triangles = _triangles(A)
    triples = float((degree * (degree - 1)).sum() / 2.0)
    n_comp, labels = sparse.csgraph.connected_components(A, directed=False)
    row = {
        "nodes": n,
        "edges": edges,
        "density": edges / (n * (n - 1) / 2),
        "mean_degree": degree.mean(),
        "max_degree": int(degree.max()),
        "triangle_density": triangles / (n * (n - 1) * (n - 2) / 6),
        "global_clustering": 3 * triangles / triples if triples else np.nan,
        "assortativity": _assortativity(A, degree),
        "lcc_share": np.bincount(labels).max() / n,
    }
    leading = _laplacian_spectrum(A, k=min(N_LEADING, n - 2))[::-1]
    for k, value in enumerate(leading, start=1):
        row[f"laplacian_{k}"] = value
    return pd.DataFrame([row])


def _assortativity(A: sparse.csr_matrix, degree: np.ndarray) -> float:
    """Pearson correlation of the degrees at the two ends of an edge (Newman 2002)."""
    rows, cols = A.nonzero()
    x, y = degree[rows], degree[cols]
    if x.std() == 0:
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


def _graph_metrics(graphs: list, observed) -> dict[str, float]:
    n_obs = observed["n"]
    triangle, clustering, degrees, spectra, deg_hist, clus_hist = [], [], [], [], [], []
    for graph in graphs:
        A, _ = as_adjacency(graph)
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
    ax.set_yscale("log")
    ax.set_ylabel("distance to the observed graph (lower is better)")
    ax.legend(frameon=False)
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

    References
    ----------
    Jiang, F. et al. (2026). SyNGLER: Synthetic network generation via latent embedding
    reconstruction. ICML 2026.
    """
    rng = check_random_state(random_state)
    groups = _as_groups(synthetic, name)
    n_graphs = max(len(g) for g in groups.values())
    if baselines is None:
        baselines = list(BASELINES)
    if isinstance(baselines, dict):
        groups.update(_as_groups(baselines, None))
    else:
        for baseline in baselines:
            groups[baseline] = baseline_graphs(observed, baseline, n_graphs, random_state=rng)
    A, _ = as_adjacency(observed, name="observed")
    n = A.shape[0]
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
    for label, graphs in groups.items():
        for metric, value in _graph_metrics(graphs, reference).items():
            rows.append({"generator": label, "metric": metric, "value": value})
    return NetworkComparison(
        method="Synthetic network comparison",
        nobs=n,
        table=pd.DataFrame(rows),
        observed_statistics=stats_row,
        notes=(f"{n_graphs} graph(s) per generator; distances to the observed graph.",),
    )


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
