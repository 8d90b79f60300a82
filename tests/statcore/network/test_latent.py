"""Latent space model: kernel twins, constraints, the MLE against direct optimisation, consistency."""

import networkx as nx
import numpy as np
import pytest
from scipy import optimize, sparse
from scipy.special import expit

from statcore.exceptions import ConvergenceWarning
from statcore.network import LatentSpaceModel, _kernels
from statcore.network.latent import _centre_and_rotate
from statcore.network.simulate import sample_latent_graph, sparse_latent_design


def dense_logits(Z, alpha, rho):
    theta = alpha[:, None] + alpha[None, :] + Z @ Z.T + rho
    np.fill_diagonal(theta, 0.0)
    return theta


def dense_loglik(A, Z, alpha, rho):
    theta = dense_logits(Z, alpha, rho)
    iu = np.triu_indices(len(A), 1)
    return float((A[iu] * theta[iu] - np.logaddexp(0.0, theta[iu])).sum())


N_SMALL = 150


@pytest.fixture
def small_graph():
    # at n = 150 the likelihood has a finite maximum; much smaller sparse graphs can be
    # separated by the latent positions (see test_separated_graph_warns)
    Z, alpha, rho = sparse_latent_design(N_SMALL, 2, random_state=3)
    return sample_latent_graph(Z, alpha, rho, random_state=4), (Z, alpha, rho)


def test_pair_sums_match_dense_numpy(small_graph):
    graph, (Z, alpha, rho) = small_graph
    A = nx.to_scipy_sparse_array(graph, nodelist=range(N_SMALL), format="csr").astype(float)
    A.sort_indices()
    n, r = Z.shape
    assert n == N_SMALL
    out = [np.empty((n, r)), np.empty(n), np.empty(n), np.empty(n), np.empty((n, r + 1, r + 1))]
    _kernels.pair_sums(Z, alpha, rho, A.indptr.astype(np.int64), A.indices.astype(np.int64), *out)
    dense = A.toarray()
    P = expit(dense_logits(Z, alpha, rho))
    np.fill_diagonal(P, 0.0)
    R = dense - P
    W = P * (1 - P)
    features = np.column_stack([np.ones(n), Z])
    # identical sums in a different order: agreement to rounding
    np.testing.assert_allclose(out[0], R @ Z, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out[1], R.sum(axis=1), rtol=1e-10, atol=1e-10)
    assert 0.5 * out[2].sum() == pytest.approx(dense_loglik(dense, Z, alpha, rho), rel=1e-12)
    np.testing.assert_allclose(
        out[4], np.einsum("ij,jk,jl->ikl", W, features, features), rtol=1e-10
    )
    assert _kernels.mean_probability(Z, alpha, rho) == pytest.approx(
        P[np.triu_indices(n, 1)].mean(), rel=1e-12
    )


def test_constraints_leave_logits_unchanged(rng):
    Z = rng.normal(size=(30, 3)) + 0.7
    alpha = rng.normal(size=30)
    Z2, alpha2, rho2 = _centre_and_rotate(Z, alpha, -1.0, True)
    np.testing.assert_allclose(
        dense_logits(Z2, alpha2, rho2), dense_logits(Z, alpha, -1.0), atol=1e-12
    )
    assert abs(alpha2.sum()) < 1e-12 and np.abs(Z2.mean(axis=0)).max() < 1e-12
    gram = Z2.T @ Z2
    assert np.abs(gram - np.diag(np.diag(gram))).max() < 1e-10 and np.all(Z2[0] > 0)


def test_fit_reaches_the_mle_of_direct_optimisation(small_graph):
    graph, _ = small_graph
    res = LatentSpaceModel(graph, dim=2).fit(penalty=0.0)
    A = nx.to_numpy_array(graph, nodelist=range(N_SMALL))
    n = N_SMALL

    def negative(theta):
        Z, alpha, rho = theta[: 2 * n].reshape(n, 2), theta[2 * n : 3 * n], theta[-1]
        P = expit(dense_logits(Z, alpha, rho))
        np.fill_diagonal(P, 0.0)
        R = A - P
        grad = np.concatenate([(2 * R @ Z).ravel() / 2 * 2, R.sum(axis=1), [R.sum() / 2]])
        return -dense_loglik(A, Z, alpha, rho), -grad

    start = np.concatenate(
        [res.embeddings.to_numpy().ravel() * 0.9, res.alpha.to_numpy(), [res.rho]]
    )
    direct = optimize.minimize(
        negative, start, jac=True, method="L-BFGS-B", options={"maxiter": 5000, "gtol": 1e-8}
    )
    # both are maxima of the same function: ours may not be below L-BFGS's by more than rounding
    assert res.llf >= -direct.fun - 1e-6 * abs(direct.fun)
    assert res.llf == pytest.approx(dense_loglik(A, *res._arrays()), rel=1e-12)
    # calibration: expected edge count equals the observed one
    P = expit(dense_logits(*res._arrays()))
    assert P[np.triu_indices(n, 1)].sum() == pytest.approx(graph.number_of_edges(), rel=1e-9)
    assert res.converged and res.alpha.sum() == pytest.approx(0.0, abs=1e-10)


def test_newton_and_authors_pgd_reach_the_same_likelihood(small_graph):
    graph, _ = small_graph
    model = LatentSpaceModel(graph, dim=2)
    newton = model.fit(penalty=0.0)
    pgd = model.fit(method="pgd", maxiter=20000, tol=1e-12, penalty=0.0)
    # PGD's slow tail stops within 1e-6 of the maximum; Newton needs far fewer iterations
    assert pgd.llf == pytest.approx(newton.llf, rel=1e-6)
    assert newton.n_iter < pgd.n_iter / 5


@pytest.mark.slow
@pytest.mark.parametrize(("n", "limit"), [(500, 0.40), (1000, 0.28), (2000, 0.22)])
def test_fitted_probabilities_meet_the_acceptance_targets(n, limit):
    """Acceptance check 1 on the paper's sparse design (r = 2, rho = -0.4 log n)."""
    Z, alpha, rho = sparse_latent_design(n, 2, random_state=0)
    graph = sample_latent_graph(Z, alpha, rho, random_state=1000)
    res = LatentSpaceModel(graph, dim=2).fit()
    P = expit(dense_logits(Z, alpha, rho))
    np.fill_diagonal(P, 0.0)
    error = np.linalg.norm(res.edge_probabilities().to_numpy() - P) / np.linalg.norm(P)
    # acceptance limits |P_hat - P|_F / |P|_F <= 0.40 / 0.28 / 0.22 at n = 500 / 1000 / 2000.
    # Measured here 0.292 / 0.228 / 0.164; over design seeds 0-9 (graph seed + 1000) the error
    # spans 0.25-0.35 at n = 500 and 0.20-0.28 at n = 1000 (one seed of ten at 0.282), and
    # 0.16-0.22 at n = 2000 over seeds 0-4: the limits sit at the top of the MLE's own spread
    assert error <= limit
    # acceptance limit |rho_hat - rho| <= 0.15; measured -0.06 to -0.12 at n = 500, -0.03 at 2000
    assert abs(res.rho - rho) <= 0.15
    # an MLE beats the truth on its own data, by about (r + 1) n / 2 (the fitted parameters'
    # chi-square); measured 773 at n = 500 against 750
    A = nx.to_numpy_array(graph)
    assert res.llf > dense_loglik(A, Z, alpha, rho) + (2 + 1) * n / 4


def test_results_objects(small_graph):
    import matplotlib

    matplotlib.use("Agg")
    graph, _ = small_graph
    res = LatentSpaceModel(graph, dim=2).fit()
    n = N_SMALL
    assert list(res.embeddings.columns) == ["z1", "z2"] and res.embeddings.shape == (n, 2)
    assert list(res.tidy().columns) == ["node", "degree", "alpha", "z1", "z2"]
    glance = res.glance()
    assert glance.loc[0, "edges"] == graph.number_of_edges()
    # k = (n - 1) alphas + (n r - r - r(r-1)/2) positions + rho
    assert res.df_model == (n - 1) + (2 * n - 2 - 1) + 1
    assert res.bic == pytest.approx(-2 * res.llf + res.df_model * np.log(n))
    full = res.edge_probabilities()
    assert full.shape == (n, n) and np.all(np.diag(full.to_numpy()) == 0)
    pairs = res.edge_probabilities([0, 1], [2, 3])
    np.testing.assert_allclose(pairs, [full.loc[0, 2], full.loc[1, 3]], rtol=1e-12)
    np.testing.assert_allclose(res.edge_probabilities(5).to_numpy()[0], full.loc[5].to_numpy())
    assert "node parameters" in res.summary().as_text()
    assert res.plot().get_title().endswith("latent positions")
    with pytest.raises(ValueError, match="labels that are not nodes"):
        res.edge_probabilities(["nope"])


def test_labels_flow_from_networkx():
    graph = nx.relabel_nodes(nx.karate_club_graph(), {k: f"m{k}" for k in range(34)})
    # on the karate club the line search collapses with the gradient still far from zero
    # (several nodes sit on the soft bound): a stall, reported since issue 17, not convergence
    with pytest.warns(ConvergenceWarning, match="LatentSpaceModel.fit stalled"):
        res = LatentSpaceModel(graph, dim=2).fit()
    assert res.embeddings.index[0] == "m0" and res.alpha.index.name == "node"
    assert res.iterations.status == "stalled" and res.converged is False


def test_non_convergence_warns_and_is_recorded(small_graph):
    graph, _ = small_graph
    with pytest.warns(ConvergenceWarning, match="LatentSpaceModel.fit reached maxiter=2"):
        res = LatentSpaceModel(graph, dim=2).fit(maxiter=2)
    assert res.converged is False and res.n_iter == 2
    assert res.iterations.status == "maxiter" and res.iterations.maxiter == 2


def test_bad_input():
    with pytest.raises(ValueError, match="no edges"):
        LatentSpaceModel(nx.empty_graph(5))
    with pytest.raises(ValueError, match="`dim` must be smaller"):
        LatentSpaceModel(nx.path_graph(4), dim=3)
    with pytest.raises(TypeError, match="`graph` must be a networkx graph"):
        LatentSpaceModel("graph")
    with pytest.raises(ValueError, match="must be square"):
        LatentSpaceModel(np.zeros((3, 4)))
    with pytest.warns(UserWarning, match="directed; it is symmetrised"):
        LatentSpaceModel(nx.DiGraph(nx.cycle_graph(8)))
    weighted = nx.cycle_graph(8)
    nx.set_edge_attributes(weighted, 3.0, "weight")
    with pytest.warns(UserWarning, match="weighted"):
        LatentSpaceModel(nx.to_numpy_array(weighted))
    loops = nx.cycle_graph(8)
    loops.add_edge(0, 0)
    with pytest.warns(UserWarning, match="self-loops"):
        LatentSpaceModel(loops)
    isolated = nx.cycle_graph(8)
    isolated.add_node(99)
    with pytest.warns(UserWarning, match="1 isolated node"):
        LatentSpaceModel(isolated)
    with pytest.raises(ValueError, match="`method` must be one of 'newton', 'pgd'"):
        LatentSpaceModel(nx.cycle_graph(8)).fit(method="sgd")


def test_input_graph_is_not_modified():
    graph = nx.karate_club_graph()
    before = sorted(graph.edges(data=True))
    sparse_input = nx.to_scipy_sparse_array(graph, weight=None, format="csr")
    data_before = sparse_input.data.copy()
    # both karate fits stall (see test_labels_flow_from_networkx)
    with pytest.warns(ConvergenceWarning, match="stalled"):
        LatentSpaceModel(graph).fit()
        LatentSpaceModel(sparse.csr_matrix(sparse_input)).fit()
    assert sorted(graph.edges(data=True)) == before
    np.testing.assert_array_equal(sparse_input.data, data_before)


def test_separated_graph_warns():
    """A small sparse graph whose likelihood has no finite maximum is reported, not hidden."""
    Z, alpha, rho = sparse_latent_design(60, 2, random_state=3)
    graph = sample_latent_graph(Z, alpha, rho, random_state=4)
    model = LatentSpaceModel(graph, dim=2)
    with pytest.warns(ConvergenceWarning, match="no finite maximum"):
        res = model.fit(penalty=0.0, bound=None)
    assert res.converged is False
    # a ridge on the node parameters gives it a finite maximum
    assert model.fit(penalty=0.1, bound=None).converged
    # so does the default soft bound: the separated nodes stop near it instead of running off
    bounded = model.fit(penalty=0.0)
    Zb, ab, _ = bounded._arrays()
    assert bounded.converged
    # the soft penalty grows quadratically past the bound (20): twice it is never reached
    assert np.abs(ab).max() < 40 and np.einsum("ij,ij->i", Zb, Zb).max() < 40
    assert "soft bound" in bounded.notes[-1]


def test_case_control_fit_is_close_to_the_exact_fit():
    Z, alpha, rho = sparse_latent_design(400, 2, random_state=31)
    graph = sample_latent_graph(Z, alpha, rho, random_state=32)
    model = LatentSpaceModel(graph, dim=2)
    exact = model.fit()
    sampled = model.fit(nonedges=150, random_state=0)
    again = model.fit(nonedges=150, random_state=0)
    iu = np.triu_indices(400, 1)
    truth = expit(dense_logits(Z, alpha, rho))[iu]

    def rmse(res):
        return np.sqrt(np.mean((res.edge_probabilities().to_numpy()[iu] - truth) ** 2))

    # half of the non-neighbours per node, drawn with replacement: the case-control fit pays
    # for its sampling noise but stays near the exact fit's accuracy (observed 0.053 vs 0.045)
    assert rmse(sampled) < 1.3 * rmse(exact)
    assert sampled.llf < exact.llf  # the exact likelihood is maximised by the exact fit
    np.testing.assert_array_equal(sampled.embeddings, again.embeddings)
    assert "Case-control likelihood" in sampled.notes[0]
    with pytest.raises(ValueError, match="`nonedges` must be one of 'all', 'auto'"):
        model.fit(nonedges="some")


def test_estimator_conventions_and_iteration_record(small_graph):
    from statcore.base import Estimator
    from statcore.results import IterationRecord

    graph, _ = small_graph
    model = LatentSpaceModel(graph, dim=2)
    assert isinstance(model, Estimator) and model.nobs == N_SMALL
    assert repr(model) == f"LatentSpaceModel(dim=2, edges={graph.number_of_edges()}, nobs=150)"
    res = model.fit(maxiter=500)
    again = model.fit(maxiter=500)
    assert res is not again and res.model is model
    assert res.fit_options["maxiter"] == 500 and res.fit_options["method"] == "newton"
    record = res.iterations
    assert isinstance(record, IterationRecord) and record.status == "converged"
    assert record.function == "LatentSpaceModel.fit" and record.tol == 1e-10
    assert res.converged and res.n_iter == record.n_iter
    assert record.last_value < record.tol
    # the record's history is the results' table of accepted iterations
    assert res.history is record.history and list(res.history.columns) == [
        "iteration",
        "loglik",
        "objective",
        "step",
    ]
    assert repr(LatentSpaceModel(graph, dim="auto")).startswith("LatentSpaceModel(dim='auto'")


def test_divergence_is_one_warning_with_its_cause():
    Z, alpha, rho = sparse_latent_design(60, 2, random_state=3)
    graph = sample_latent_graph(Z, alpha, rho, random_state=4)
    with pytest.warns(ConvergenceWarning) as caught:
        res = LatentSpaceModel(graph, dim=2).fit(penalty=0.0, bound=None)
    assert len([w for w in caught if w.category is ConvergenceWarning]) == 1
    assert res.iterations.status == "diverged" and "no finite maximum" in str(caught[0].message)
