"""What a network user sees: inputs left alone, small and empty graphs, bad arguments, the
sample() call, the comparison's warnings and plot (issue 18)."""

import warnings

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from statcore.network import (
    ForestFlow,
    LatentSpaceModel,
    SyNGLER,
    baseline_graphs,
    compare_networks,
    network_statistics,
)
from statcore.network.simulate import sample_latent_graph, sparse_latent_design


def _graph(n=40, seed=0):
    Z, alpha, rho = sparse_latent_design(n, 2, 0.2, random_state=seed)
    return sample_latent_graph(Z, alpha, rho, random_state=seed)


@pytest.fixture(scope="module")
def graph():
    return _graph()


@pytest.fixture(scope="module")
def fit(graph):
    return SyNGLER(graph, dim=2).fit()


def _weighted_with_loops(graph):
    """The graph as a float64 CSR matrix with weights in (1, 3) and three self-loops."""
    A = sparse.csr_matrix(nx.to_scipy_sparse_array(graph, format="csr", dtype=np.float64))
    weights = sparse.triu(A, 1).multiply(np.random.default_rng(1).uniform(1, 3, A.shape))
    W = sparse.csr_matrix(weights + weights.T)
    W.setdiag(np.r_[2.0, 0.0, 5.0, 7.0, np.zeros(A.shape[0] - 4)])
    # unsorted indices too, so that sort_indices() on the caller's matrix would show
    W.indices, W.data = W.indices.copy(), W.data.copy()
    return W


@pytest.mark.parametrize(
    "call",
    [
        lambda W: LatentSpaceModel(W, dim=2),
        lambda W: SyNGLER(W, dim=2),
        lambda W: network_statistics(W),
        lambda W: compare_networks(W, [W], baselines=["erdos_renyi"], random_state=0),
        lambda W: baseline_graphs(W, "dcsbm", 1, random_state=0),
    ],
    ids=["LatentSpaceModel", "SyNGLER", "network_statistics", "compare_networks", "baselines"],
)
def test_a_weighted_sparse_graph_with_self_loops_is_not_modified(graph, call):
    W = _weighted_with_loops(graph)
    before = W.copy()
    with pytest.warns(UserWarning, match="weighted|self-loops"):
        call(W)
    assert W.has_sorted_indices == before.has_sorted_indices
    np.testing.assert_array_equal(W.data, before.data)
    np.testing.assert_array_equal(W.indices, before.indices)
    np.testing.assert_array_equal(W.indptr, before.indptr)
    assert W.diagonal()[[0, 2, 3]].tolist() == [2.0, 5.0, 7.0]


def test_the_weighted_copy_fits_as_the_plain_graph(graph):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        weighted = LatentSpaceModel(_weighted_with_loops(graph), dim=2)
    plain = LatentSpaceModel(graph, dim=2)
    assert (weighted.adjacency != plain.adjacency).nnz == 0


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_statistics_of_tiny_graphs_are_nan_with_a_reason_and_no_warning(n):
    graph = nx.path_graph(n)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        row = network_statistics(graph).iloc[0]
    assert row["nodes"] == n and row["edges"] == n - 1
    notes = " ".join(network_statistics(graph).attrs["notes"])
    assert np.isnan(row["density"]) == (n < 2)
    assert np.isnan(row["triangle_density"]) == (n < 3)
    if n < 3:
        assert "triangle_density is NaN" in notes
    laplacian = row[["laplacian_1", "laplacian_2", "laplacian_3"]].to_numpy(dtype=float)
    assert np.isnan(laplacian).tolist() == [k > n for k in (1, 2, 3)]
    if n == 1:
        assert "density is NaN" in notes and "laplacian_2, laplacian_3 NaN" in notes


def test_small_graph_spectrum_matches_the_dense_eigenvalues():
    graph = nx.cycle_graph(4)
    A = nx.to_numpy_array(graph)
    d = A.sum(axis=1)
    L = np.eye(4) - A / np.sqrt(np.outer(d, d))
    top = np.sort(np.linalg.eigvalsh(L))[::-1][:3]
    row = network_statistics(graph).iloc[0]
    np.testing.assert_allclose(row[["laplacian_1", "laplacian_2", "laplacian_3"]], top)


def test_statistics_of_a_graph_without_edges_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = network_statistics(nx.empty_graph(5))
    assert np.isnan(frame.loc[0, "assortativity"]) and frame.loc[0, "edges"] == 0
    assert any("assortativity is NaN" in note for note in frame.attrs["notes"])


@pytest.mark.parametrize(
    "empty, message",
    [
        (nx.Graph(), "`graph` has no nodes"),
        (np.zeros((0, 0)), "`graph` has no nodes"),
        (nx.empty_graph(6), r"`graph` has no edges \(6 isolated nodes\)"),
        (sparse.csr_matrix((6, 6)), r"`graph` has no edges \(6 isolated nodes\)"),
        (nx.path_graph(2), "`graph` needs at least 3 nodes"),
    ],
)
@pytest.mark.parametrize("entry", [LatentSpaceModel, SyNGLER])
def test_an_empty_graph_says_so(entry, empty, message):
    with pytest.raises(ValueError, match=message):
        entry(empty, dim=1)


def test_network_statistics_refuses_a_graph_without_nodes():
    with pytest.raises(ValueError, match="`graph` has no nodes"):
        network_statistics(nx.Graph())


def test_compare_networks_refuses_tiny_or_empty_graphs(graph):
    with pytest.raises(ValueError, match="`observed` has no edges"):
        compare_networks(nx.empty_graph(5), [graph], baselines=[])
    with pytest.raises(ValueError, match="`observed` needs at least 3 nodes"):
        compare_networks(nx.path_graph(2), [graph], baselines=[])
    with pytest.raises(ValueError, match=r"`SyNGLER\[1\]` needs at least 3 nodes"):
        compare_networks(graph, [graph, nx.path_graph(2)], baselines=[])


def test_sample_takes_the_number_of_graphs_first(fit, graph):
    graphs = fit.sample(5, random_state=0)
    assert len(graphs) == 5
    assert all(g.number_of_nodes() == graph.number_of_nodes() for g in graphs)
    one = fit.sample(random_state=0)
    assert isinstance(one, list) and len(one) == 1
    # the k-th graph comes from the k-th stream: the first of five is the one of one
    assert nx.utils.graphs_equal(one[0], graphs[0])
    sized = fit.sample(n_nodes=12, n_graphs=2, random_state=0)
    assert [g.number_of_nodes() for g in sized] == [12, 12]
    assert [g.number_of_nodes() for g in fit.sample(2, 12, random_state=0)] == [12, 12]


def test_compare_networks_warns_when_sizes_differ(fit, graph):
    smaller = fit.sample(n_graphs=2, n_nodes=25, random_state=0)
    with pytest.warns(
        UserWarning, match=r"`SyNGLER` graphs have 25 nodes and the observed graph 40"
    ):
        compare_networks(graph, smaller, baselines=[], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compare_networks(graph, fit.sample(2, random_state=0), baselines=[], random_state=0)


def test_comparison_plot_shows_negative_bars_and_keeps_the_legend_off_the_bars(fit, graph):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = compare_networks(
        graph, fit.sample(3, random_state=0), baselines=["erdos_renyi"], random_state=0
    )
    assert (res.table["value"] < 0).any()  # the bias metrics are signed
    ax = res.plot()
    assert ax.get_yscale() == "symlog"
    heights = [patch.get_height() for patch in ax.patches]
    low = min(h for h in heights if np.isfinite(h))
    assert low < 0 and ax.get_ylim()[0] <= low
    assert ax.get_xlabel() == "metric" and "lower is better" in ax.get_ylabel()
    ax.figure.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    assert legend.x0 >= ax.get_window_extent().x1
    plt.close(ax.figure)


def test_random_state_is_checked_even_when_the_fit_draws_nothing(graph):
    model = LatentSpaceModel(graph, dim=2)
    with pytest.raises(TypeError, match="`random_state` must be None, a non-negative int"):
        model.fit(nonedges="all", random_state="seed")
    with pytest.raises(ValueError, match="`random_state` must be a non-negative integer"):
        model.fit(random_state=-3)


def _raises(call, error, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(error, match=message):
            call()


_NAN = np.ones((4, 4)) - np.eye(4)
_NAN[0, 1] = np.nan


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda g, f: LatentSpaceModel(_NAN), ValueError, "must be finite; got 1 NaN"),
        (lambda g, f: LatentSpaceModel(np.ones((3, 4))), ValueError, "must be square"),
        (lambda g, f: LatentSpaceModel(np.ones((2, 2, 2))), TypeError, "square real array"),
        (lambda g, f: LatentSpaceModel("graph"), TypeError, "must be a networkx graph"),
        (lambda g, f: LatentSpaceModel(np.eye(4) * 1j), TypeError, "square real array"),
        (lambda g, f: LatentSpaceModel(-nx.to_numpy_array(g)), ValueError, "non-negative"),
        (lambda g, f: LatentSpaceModel(g, dim=-1), ValueError, r"`dim` must lie in \[1"),
        (lambda g, f: LatentSpaceModel(g, dim="two"), ValueError, "`dim` must be one of"),
        (lambda g, f: LatentSpaceModel(g, dim=39), ValueError, "`dim` must be smaller"),
        (
            lambda g, f: LatentSpaceModel(g, degree_heterogeneity="no"),
            TypeError,
            "`degree_heterogeneity` must be True or False",
        ),
        (lambda g, f: LatentSpaceModel(g).fit(method="sgd"), ValueError, "`method` must be"),
        (lambda g, f: LatentSpaceModel(g).fit(maxiter=0), ValueError, "`maxiter` must lie"),
        (lambda g, f: LatentSpaceModel(g).fit(tol=-1.0), ValueError, "`tol` must lie"),
        (lambda g, f: LatentSpaceModel(g).fit(penalty="1"), TypeError, "`penalty` must be"),
        (lambda g, f: LatentSpaceModel(g).fit(nonedges=-2), ValueError, "`nonedges` must lie"),
        (lambda g, f: LatentSpaceModel(g).select_dim(dims=[0]), ValueError, "`dims` must hold"),
        (lambda g, f: SyNGLER(g, generator="gan"), ValueError, "`generator` must be one of"),
        (lambda g, f: SyNGLER(g).fit(bandwidth=0.1), ValueError, "`bandwidth` applies to"),
        (
            lambda g, f: SyNGLER(g, generator="kde").fit(bandwidth=-1.0),
            ValueError,
            "`bandwidth` must lie",
        ),
        (lambda g, f: SyNGLER(g).fit(random_state=1.5), TypeError, "`random_state` must be"),
        (lambda g, f: f.sample(0), ValueError, "`n_graphs` must lie"),
        (lambda g, f: f.sample(2.5), TypeError, "`n_graphs` must be an integer"),
        (lambda g, f: f.sample(n_nodes=1), ValueError, "`n_nodes` must lie"),
        (lambda g, f: f.sample(random_state="x"), TypeError, "`random_state` must be"),
        (lambda g, f: f.sample(method="fast"), ValueError, "`method` must be one of"),
        (lambda g, f: f.sample_parameters(0), ValueError, "`n_nodes` must lie"),
        (lambda g, f: f.latent.edge_probabilities(i=[99]), ValueError, "not nodes"),
        (lambda g, f: network_statistics(np.ones(3)), TypeError, "must be a networkx graph"),
        (lambda g, f: network_statistics(None), TypeError, "must be a networkx graph"),
        (lambda g, f: compare_networks(g, "graphs"), TypeError, "`SyNGLER` must hold graphs"),
        (lambda g, f: compare_networks(g, []), ValueError, "holds no graphs"),
        (lambda g, f: compare_networks(g, [g], baselines="er"), ValueError, "`kind` must be"),
        (lambda g, f: compare_networks(g, [g], random_state=-1), ValueError, "`random_state`"),
        (lambda g, f: baseline_graphs(g, "dcsbm", 1, n_blocks=0), ValueError, "`n_blocks`"),
        (lambda g, f: baseline_graphs(g, "erdos_renyi", 0), ValueError, "`n_graphs` must lie"),
        (lambda g, f: ForestFlow(np.ones((1, 2))), ValueError, "at least 2 rows"),
        (lambda g, f: ForestFlow([[1.0, np.nan], [2, 3]]), ValueError, "must not contain NaN"),
        (lambda g, f: ForestFlow(np.ones((3, 2))).fit(n_t=1), ValueError, "`n_t` must lie"),
    ],
)
def test_bad_network_inputs_raise_a_clear_error(graph, fit, call, error, message):
    _raises(lambda: call(graph, fit), error, message)


def test_a_string_baseline_name_is_one_name(graph, fit):
    res = compare_networks(graph, fit.sample(2, random_state=0), baselines="chung_lu")
    assert set(res.table["generator"]) == {"SyNGLER", "chung_lu"}
    assert isinstance(res.wide(), pd.DataFrame)
