"""Nothing a user passes in is modified: every public entry, every argument, compared exactly.

Each case builds tiny inputs (numpy arrays, pandas objects with a non-default index, scipy.sparse
matrices, networkx graphs, torch tensors), keeps a deep copy, runs the entry the way a user
would (constructor, fit, a results method) and compares every argument with its copy. Models
that are *meant* to change (a pruned layer, an adapted network, an optimizer stepped by a
scheduler) are not inputs here: their data (calibration inputs, batches) are.

``test_every_public_entry_has_a_case`` lists the ``__all__`` of every statcore method area and
fails when a public callable that takes data has no case here and no reason to be left out.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import warnings

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from statcore.compat import import_geomstats
from statcore.results import Results

AREAS = (
    "statcore.quantized",
    "statcore.quantreg",
    "statcore.ridge",
    "statcore.network",
    "statcore.manifold",
    "statcore.shift",
    "statcore.ot",
    "statcore.cluster",
    "statcore.select",
    "statcore.geometry",
    "statcore.outliers",
    "statcore.theory",
    "statcore.distributed",
    "mlcore.active",
)

# Public names of those areas that take no user data, so no mutation case applies.
EXCLUDED = {
    # Sea²'s building blocks that take sizes, seeds or thresholds, never user data
    "mlcore.active.ActiveRoomEnv": "takes sizes only (an environment; rooms are seeds)",
    "mlcore.active.PoseTransformerPolicy": "takes sizes only",
    "mlcore.active.TinyDetector": "takes sizes only",
    "mlcore.active.RandomPolicy": "takes a size and a seed",
    "mlcore.active.ForwardPolicy": "takes sizes only",
    "mlcore.active.RuleExplorer": "takes sizes and thresholds only",
    "mlcore.active.Rollouts": "a record made by rollout",
    # constructors of execution backends and their helpers: they take worker counts or a
    # dask client, never data (MonteCarloStudy, which runs user code on a grid, has a case)
    "statcore.distributed.Backend": "abstract base class",
    "statcore.distributed.DaskBackend": "wraps a dask client",
    "statcore.distributed.ProcessBackend": "takes a worker count",
    "statcore.distributed.SerialBackend": "takes nothing",
    "statcore.distributed.ThreadBackend": "takes a worker count",
    "statcore.distributed.borrowed_backend": "takes a backend or a worker count",
    "statcore.distributed.get_backend": "takes a backend name or a worker count",
    "statcore.distributed.is_dask_client": "inspects an object's type only",
    "statcore.distributed.is_dask_backend": "inspects a backend argument only",
    "statcore.distributed.as_dask_array": "inspects an object's type only",
    "statcore.distributed.compute_delayed": "maps a task over dask items (SLOTAlign's case)",
    # manifold classes take dimensions only; their methods are covered through the
    # per-manifold cases (exp, log, dist, Fréchet mean)
    "statcore.manifold.Manifold": "abstract base class",
    # scalar designs: sizes, levels and seeds in, fresh draws out
    "statcore.ridge.paper_design": "takes sizes and scalars",
    # the mutual-information ground-truth designs take sizes and parameters, and draw samples
    "statcore.geometry.correlated_bernoulli_mi": "takes scalars",
    "statcore.geometry.correlated_bernoulli_sample": "takes sizes and scalars",
    "statcore.geometry.crossed_mixture_mi": "takes scalars",
    "statcore.geometry.crossed_mixture_sample": "takes sizes and scalars",
    "statcore.geometry.squared_noise_mi": "takes scalars",
    "statcore.geometry.squared_noise_sample": "takes sizes and scalars",
    "statcore.geometry.student_t_mi": "takes scalars",
    "statcore.geometry.student_t_sample": "takes sizes and scalars",
    "statcore.geometry.gaussian_copula_mi": "takes scalars",
    "statcore.geometry.gaussian_copula_sample": "takes sizes and scalars",
    "statcore.geometry.shared_poisson_mi": "takes scalars",
    "statcore.geometry.shared_poisson_sample": "takes sizes and scalars",
    # SLOT-Align's cosine schedule takes a step count and two levels
    "statcore.ot.cosine_tau_schedule": "takes sizes and scalars",
    # MetaEns's pool is a list of family names; a family is read off a detector's name; the
    # score tables are read from a file
    "statcore.outliers.DetectorPool": "takes family names",
    "statcore.outliers.detector_family": "takes a detector name",
    "statcore.outliers.load_score_tables": "takes a path",
}

COVERED: set[str] = set()
CASES: list = []


def case(*covers: str, marks=()):
    """Register a case builder: it returns ``(inputs, call)`` and ``call(**inputs)`` runs it."""

    def register(build):
        COVERED.update(covers)
        CASES.append(pytest.param(build, id=build.__name__.removeprefix("case_"), marks=marks))
        return build

    return register


# -- comparison --------------------------------------------------------------------------------


def assert_same(after, before, where: str = "argument") -> None:
    """``after`` equals ``before`` exactly: type, dtype, shape, values (NaN equal NaN), labels."""
    assert type(after) is type(before), f"{where}: type {type(before)} became {type(after)}"
    if isinstance(before, np.ndarray):
        assert after.dtype == before.dtype, f"{where}: dtype {before.dtype} -> {after.dtype}"
        assert after.shape == before.shape, f"{where}: shape {before.shape} -> {after.shape}"
        np.testing.assert_array_equal(after, before, err_msg=f"{where} was modified")
    elif isinstance(before, pd.DataFrame):
        pd.testing.assert_frame_equal(after, before, check_exact=True, obj=where)
        assert after.attrs == before.attrs, f"{where}: attrs were modified"
    elif isinstance(before, pd.Series):
        pd.testing.assert_series_equal(after, before, check_exact=True, obj=where)
    elif isinstance(before, pd.Index):
        pd.testing.assert_index_equal(after, before, exact=True, obj=where)
    elif sparse.issparse(before):
        assert after.format == before.format and after.dtype == before.dtype, where
        assert after.shape == before.shape, f"{where}: shape {before.shape} -> {after.shape}"
        if before.format in ("csr", "csc"):
            assert after.has_sorted_indices == before.has_sorted_indices, f"{where}: sorted"
            for part in ("data", "indices", "indptr"):
                np.testing.assert_array_equal(
                    getattr(after, part), getattr(before, part), err_msg=f"{where}.{part}"
                )
        else:
            np.testing.assert_array_equal(after.toarray(), before.toarray(), err_msg=where)
    elif isinstance(before, nx.Graph):
        assert after.graph == before.graph, f"{where}: graph attributes were modified"
        assert list(after.nodes(data=True)) == list(before.nodes(data=True)), f"{where}: nodes"
        assert list(after.edges(data=True)) == list(before.edges(data=True)), f"{where}: edges"
    elif type(before).__module__.startswith("torch"):
        _assert_same_tensor(after, before, where)
    elif isinstance(before, dict):
        assert list(after) == list(before), f"{where}: keys {list(before)} -> {list(after)}"
        for key in before:
            assert_same(after[key], before[key], f"{where}[{key!r}]")
    elif isinstance(before, list | tuple):
        assert len(after) == len(before), f"{where}: length {len(before)} -> {len(after)}"
        for k, (a, b) in enumerate(zip(after, before, strict=True)):
            assert_same(a, b, f"{where}[{k}]")
    else:
        assert after == before, f"{where}: {before!r} became {after!r}"


def _assert_same_tensor(after, before, where):
    import torch

    if isinstance(before, torch.Generator):
        assert torch.equal(after.get_state(), before.get_state()), f"{where}: generator state"
        return
    assert after.dtype == before.dtype and after.device == before.device, where
    assert after.shape == before.shape, f"{where}: shape {before.shape} -> {after.shape}"
    assert after.requires_grad == before.requires_grad, f"{where}: requires_grad"
    same = torch.equal(after, before) or bool(
        torch.isclose(after, before, rtol=0, atol=0, equal_nan=True).all()
        if after.is_floating_point()
        else False
    )
    assert same, f"{where} was modified"


def test_assert_same_sees_each_kind_of_change():
    """The comparison itself: each kind of in-place change is caught."""
    frame = pd.DataFrame({"a": [1.0, 2.0]}, index=[10, 11])
    graph = nx.path_graph(3)
    graph[0][1]["weight"] = 2.0
    changes = [
        (np.array([1.0, np.nan]), lambda x: x.__setitem__(0, 2.0)),
        (frame, lambda x: x.__setitem__("a", [1.0, 3.0])),
        (frame, lambda x: setattr(x, "index", pd.Index([11, 10]))),
        (frame["a"].copy(), lambda x: setattr(x, "name", "b")),
        (sparse.csr_matrix(np.eye(3) * 2), lambda x: x.data.__setitem__(slice(None), 1.0)),
        (graph, lambda x: x[0][1].__setitem__("weight", 1.0)),
        (graph, lambda x: x.remove_edge(1, 2)),
        ({"x": [1, 2]}, lambda x: x["x"].append(3)),
    ]
    for value, change in changes:
        before = copy.deepcopy(value)
        assert_same(value, before)
        after = copy.deepcopy(value)
        change(after)
        with pytest.raises(AssertionError):
            assert_same(after, before)


# -- shared tiny inputs ------------------------------------------------------------------------


def _rng(seed=0):
    return np.random.default_rng(seed)


def _index(n):
    """A non-default index: labels in a scrambled order."""
    return pd.Index([f"r{k}" for k in _rng(99).permutation(n)], name="id")


def _regression_frame(n=40, seed=0):
    rng = _rng(seed)
    X = pd.DataFrame({"x1": rng.standard_normal(n), "x2": rng.standard_normal(n)}, index=_index(n))
    y = pd.Series(1.0 + X["x1"] - 0.5 * X["x2"] + rng.standard_normal(n), name="y")
    return y, X


def _latent_graph(n=30, seed=1):
    from statcore.network.simulate import sample_latent_graph, sparse_latent_design

    Z, alpha, rho = sparse_latent_design(n, 2, 0.2, random_state=seed)
    graph = sample_latent_graph(Z, alpha, rho, random_state=seed)
    graph.graph["name"] = "tiny"
    for u, v in graph.edges:
        graph[u][v]["weight"] = 1.0 + (u + v) % 3
    return graph


def _weighted_sparse(graph):
    """A weighted float64 CSR matrix with self-loops: what as_adjacency used to overwrite."""
    A = sparse.csr_matrix(nx.to_scipy_sparse_array(graph, format="csr", dtype=np.float64))
    A.setdiag(np.arange(A.shape[0]) % 2 * 3.0)
    return A


# -- statcore.quantized ------------------------------------------------------------------------


def _quantized_data(n=80, seed=0):
    from statcore.quantized import Quantizer

    q = Quantizer.uniform(0.5, 3)
    x = _rng(seed).standard_normal(n)
    return q, x


@case("statcore.quantized.Quantizer")
def case_quantizer():
    from statcore.quantized import Quantizer

    def call(thresholds, x, dither):
        q = Quantizer(thresholds)
        codes = q.quantize(x, dither=dither)
        q.cells(codes, dither=dither)
        q.midpoints(codes, dither=dither)

    x = _rng().standard_normal(20)
    return {"thresholds": np.array([-1.0, 0.0, 1.0]), "x": x, "dither": 0.1 * x}, call


@case("statcore.quantized.midpoint_impute")
def case_midpoint_impute():
    from statcore.quantized import midpoint_impute

    lower = np.array([-np.inf, -1.0, 0.0, 1.0])
    upper = np.array([-1.0, 0.0, 1.0, np.inf])
    return {"lower": lower, "upper": upper}, lambda lower, upper: midpoint_impute(lower, upper)


@case("statcore.quantized.QuantizedNVMM")
def case_quantized_nvmm():
    from statcore.quantized import QuantizedNVMM

    q, x = _quantized_data()
    codes = pd.Series(q.quantize(x), index=_index(len(x)), name="x")

    def call(codes, lower, upper):
        QuantizedNVMM.from_codes(codes, q).fit(cov_type=None, maxiter=20).summary()
        QuantizedNVMM(lower, upper).fit(cov_type=None, maxiter=20).tidy()

    lower = np.floor(x * 2) / 2
    return {"codes": codes, "lower": lower, "upper": lower + 0.5}, call


@case("statcore.quantized.QuantizedRegression")
def case_quantized_regression():
    from statcore.quantized import QuantizedRegression

    q, _ = _quantized_data()
    y, X = _regression_frame(60)
    dither = 0.1 * _rng(3).uniform(-1, 1, size=len(y))
    codes = pd.Series(q.quantize(y.to_numpy(), dither=dither), index=y.index, name="y")

    def call(codes, X, dither):
        res = QuantizedRegression(codes, X, quantizer=q, dither=dither).fit(maxiter=30)
        res.summary()
        res.predict(X)
        frame = pd.concat([codes, X], axis=1)
        QuantizedRegression.from_formula("y ~ x1 + x2", frame, quantizer=q).fit(maxiter=30)

    return {"codes": codes, "X": X, "dither": dither}, call


@case("statcore.quantized.QuantizedCovariance")
def case_quantized_covariance():
    from statcore.quantized import QuantizedCovariance, Quantizer

    q2 = Quantizer.uniform(0.5, 3, n_dims=2)
    x = _rng(1).standard_normal((60, 2))
    codes = pd.DataFrame(q2.quantize(x), columns=["a", "b"], index=_index(60))

    def call(codes):
        QuantizedCovariance(codes, q2).fit(cov_type=None, maxiter=20).summary()

    return {"codes": codes}, call


@case("statcore.quantized.QuantizedMatrixCompletion")
def case_quantized_completion():
    from statcore.quantized import QuantizedMatrixCompletion

    q, _ = _quantized_data()
    rng = _rng(2)
    X = rng.standard_normal((12, 2)) @ rng.standard_normal((2, 8))
    dither = 0.1 * rng.uniform(-1, 1, size=X.shape)
    codes = q.quantize(X.ravel(), dither=dither.ravel()).reshape(X.shape).astype(float)
    mask = rng.random(X.shape) < 0.8
    codes[~mask] = np.nan

    def call(codes, mask, dither):
        QuantizedMatrixCompletion(codes, q, 1, mask=mask, dither=dither).fit(maxiter=20).summary()

    return {"codes": codes, "mask": mask, "dither": dither}, call


@case("statcore.quantized.QuantizedCompressedSensing")
def case_quantized_sensing():
    from statcore.quantized import QuantizedCompressedSensing

    q, _ = _quantized_data()
    rng = _rng(4)
    A = rng.standard_normal((30, 40))
    dither = 0.1 * rng.uniform(-1, 1, size=30)
    codes = q.quantize(A[:, 0] - A[:, 1], dither=dither)

    def call(codes, A, dither):
        QuantizedCompressedSensing(codes, q, A, penalty=0.3, dither=dither).fit(
            maxiter=30
        ).summary()

    return {"codes": codes, "A": A, "dither": dither}, call


# -- statcore.quantreg -------------------------------------------------------------------------


@case("statcore.quantreg.QuantReg")
def case_quantreg():
    from statcore.quantreg import QuantReg

    y, X = _regression_frame()

    def call(y, X, q):
        res = QuantReg(y, X, q=q).fit()
        res.summary()
        res.predict(X)
        QuantReg.from_formula("y ~ x1 + x2", pd.concat([y, X], axis=1), q=0.5).fit().tidy()

    return {"y": y, "X": X, "q": [0.25, 0.5]}, call


@case("statcore.quantreg.anova")
def case_quantreg_weights_anova_and_intervals():
    from statcore.quantreg import QuantReg, anova

    y, X = _regression_frame()
    w = pd.Series(np.linspace(0.5, 2.0, len(y)), index=y.index)

    def call(y, X, w):
        fits = QuantReg(y, X, q=[0.25, 0.75], weights=w).fit(cov_type="nid")
        anova(fits)
        anova(fits, joint=False)
        fits.predict(X, interval="confidence")
        QuantReg(y, X, q=0.5, weights=w).fit(
            cov_type="bootstrap", bootstrap_method="wild", n_resamples=5, random_state=0
        )

    return {"y": y, "X": X, "w": w}, call


@case("statcore.quantreg.FederatedQuantReg")
def case_federated_quantreg():
    from statcore.quantreg import FederatedQuantReg

    agents = {}
    for k in range(3):
        y, X = _regression_frame(50, seed=k)
        agents[f"agent{k}"] = pd.concat([y, X], axis=1)

    def call(agents):
        res = FederatedQuantReg(agents, q=0.5, response="y").fit()
        res.summary()
        res.stability()
        FederatedQuantReg.from_formula("y ~ x1 + x2", agents).fit().tidy()

    return {"agents": agents}, call


# -- statcore.ridge ----------------------------------------------------------------------------


@case("statcore.ridge.SelfDistilledRidge")
def case_self_distilled_ridge():
    from statcore.ridge import SelfDistilledRidge

    y, X = _regression_frame(50)

    def call(y, X, penalty):
        res = SelfDistilledRidge(y, X, penalty=penalty).fit()
        res.summary()
        res.predict(X)
        frame = pd.concat([y, X], axis=1)
        SelfDistilledRidge.from_formula("y ~ x1 + x2", frame, penalty=penalty).fit().predict(X)

    return {"y": y, "X": X, "penalty": np.array([0.5, 1.0, 2.0])}, call


def _spectrum():
    return np.linspace(0.5, 2.0, 20), np.full(20, 0.05)


@case("statcore.ridge.asymptotic_risk", "statcore.ridge.AsymptoticRisk")
def case_asymptotic_risk():
    from statcore.ridge import asymptotic_risk

    spectrum, signal = _spectrum()

    def call(penalty, spectrum, signal):
        asymptotic_risk(penalty, 0.2, 0.5, spectrum, signal, 1.0)

    return {"penalty": np.array([0.5, 1.0]), "spectrum": spectrum, "signal": signal}, call


@case("statcore.ridge.optimal_xi")
def case_optimal_xi():
    from statcore.ridge import optimal_xi

    spectrum, signal = _spectrum()
    inputs = {"penalty": np.array([0.5, 1.0]), "spectrum": spectrum, "signal": signal}
    return inputs, lambda penalty, spectrum, signal: optimal_xi(penalty, 0.5, spectrum, signal, 1)


@case("statcore.ridge.solve_kappa")
def case_solve_kappa():
    from statcore.ridge import solve_kappa

    spectrum, _ = _spectrum()
    inputs = {"penalty": np.array([0.5, 1.0]), "spectrum": spectrum}
    return inputs, lambda penalty, spectrum: solve_kappa(penalty, 0.5, spectrum)


@case("statcore.ridge.RidgeDesign")
def case_ridge_design():
    from statcore.ridge import RidgeDesign

    p = 5
    covariance = np.diag(np.linspace(1.0, 2.0, p))
    eigenvalues, eigenvectors = np.linalg.eigh(covariance)
    inputs = {
        "covariance": covariance,
        "beta": np.full(p, 0.3),
        "eigenvalues": eigenvalues,
        "eigenvectors": eigenvectors,
    }

    def call(covariance, beta, eigenvalues, eigenvectors):
        RidgeDesign(covariance, beta, 1.0, eigenvalues, eigenvectors).sample(10, random_state=0)

    return inputs, call


# -- statcore.network --------------------------------------------------------------------------


@case("statcore.network.LatentSpaceModel")
def case_latent_space_model():
    from statcore.network import LatentSpaceModel

    def call(graph, sparse_graph):
        res = LatentSpaceModel(graph, dim=2).fit(maxiter=30)
        res.summary()
        res.edge_probabilities()
        LatentSpaceModel(sparse_graph, dim=1).fit(maxiter=30, nonedges=5, random_state=0)

    graph = _latent_graph()
    return {"graph": graph, "sparse_graph": _weighted_sparse(graph)}, call


@case("statcore.network.SyNGLER")
def case_syngler():
    from statcore.network import SyNGLER

    def call(graph, sparse_graph):
        SyNGLER(graph, dim=2, generator="kde").fit(maxiter=30).sample(2, random_state=0)
        SyNGLER(sparse_graph, dim=2).fit(maxiter=30).summary()

    graph = _latent_graph()
    return {"graph": graph, "sparse_graph": _weighted_sparse(graph)}, call


@case("statcore.network.network_statistics")
def case_network_statistics():
    from statcore.network import network_statistics

    graph = _latent_graph()

    def call(graph, sparse_graph, dense):
        for g in (graph, sparse_graph, dense):
            network_statistics(g)

    dense = _weighted_sparse(graph).toarray()
    return {"graph": graph, "sparse_graph": _weighted_sparse(graph), "dense": dense}, call


@case("statcore.network.compare_networks", "statcore.network.baseline_graphs")
def case_compare_networks():
    from statcore.network import baseline_graphs, compare_networks

    graph = _latent_graph()
    synthetic = [_latent_graph(seed=2), _weighted_sparse(_latent_graph(seed=3))]

    def call(observed, synthetic, sparse_observed):
        compare_networks(observed, synthetic, baselines=["erdos_renyi"], random_state=0).wide()
        compare_networks(sparse_observed, {"a": synthetic}, baselines=[]).summary()
        baseline_graphs(sparse_observed, "dcsbm", 1, random_state=0)

    inputs = {"observed": graph, "synthetic": synthetic, "sparse_observed": _weighted_sparse(graph)}
    return inputs, call


@case("statcore.network.ForestFlow")
def case_forest_flow():
    from statcore.network import ForestFlow

    data = pd.DataFrame(_rng(5).standard_normal((30, 2)), columns=["a", "b"], index=_index(30))

    def call(data):
        ForestFlow(data).fit(n_t=3, duplicate_K=2, n_estimators=3).sample(5, random_state=0)

    return {"data": data}, call


@case("statcore.network.ForestDiffusion")
def case_forest_diffusion():
    from statcore.network import ForestDiffusion

    data = pd.DataFrame(_rng(6).standard_normal((30, 2)), columns=["a", "b"], index=_index(30))

    def call(data):
        ForestDiffusion(data).fit(n_t=3, duplicate_K=2, n_estimators=3).sample(5, random_state=0)

    return {"data": data}, call


@case("statcore.network.simulate.sample_latent_graph")
def case_sample_latent_graph():
    from statcore.network.simulate import sample_latent_graph

    rng = _rng(6)
    inputs = {"Z": rng.standard_normal((20, 2)), "alpha": rng.standard_normal(20)}
    return inputs, lambda Z, alpha: sample_latent_graph(Z, alpha, -1.0, random_state=0)


# -- statcore.manifold -------------------------------------------------------------------------


def _manifold_points(name, n=12, seed=7):
    from statcore.manifold import SO3, SPD, Euclidean, Hyperbolic, Sphere

    manifold = {
        "sphere": Sphere(2),
        "spd": SPD(2),
        "hyperbolic": Hyperbolic(2),
        "so3": SO3(),
        "euclidean": Euclidean(2),
    }[name]
    return manifold, manifold.random_point(n, random_state=seed)


@pytest.mark.parametrize("name", ["sphere", "spd", "hyperbolic", "so3", "euclidean"])
def test_manifold_methods_leave_points_alone(name):
    manifold, Y = _manifold_points(name)
    inputs = {"Y": Y, "base": Y[0].copy(), "other": Y[1].copy()}
    snapshot = copy.deepcopy(inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = manifold.log(inputs["base"], inputs["other"])
        tangent = {"v": v}
        tangent_snapshot = copy.deepcopy(tangent)
        manifold.exp(inputs["base"], tangent["v"])
        manifold.dist(inputs["base"], inputs["other"])
        manifold.log_coords(inputs["base"], inputs["Y"])
    for key in inputs:
        assert_same(inputs[key], snapshot[key], key)
    assert_same(tangent["v"], tangent_snapshot["v"], "v")


COVERED.update(
    f"statcore.manifold.{n}" for n in ("Sphere", "SPD", "Hyperbolic", "SO3", "Euclidean")
)


@case("statcore.manifold.frechet_mean", "statcore.manifold.FrechetMeanResult")
def case_frechet_mean():
    from statcore.manifold import frechet_mean

    manifold, Y = _manifold_points("spd")
    return {"Y": Y}, lambda Y: frechet_mean(Y, manifold, maxiter=20).summary()


@case(
    "statcore.manifold.mmdd",
    "statcore.manifold.mmdd_test",
    "statcore.manifold.MMDDTestResult",
    "statcore.manifold.dcov_test",
)
def case_mmdd():
    from statcore.manifold import dcov_test, mmdd, mmdd_test

    manifold, _ = _manifold_points("sphere")
    # points around the north pole: one open hemisphere, so the Fréchet mean is unique
    tilt = 0.3 * _rng(12).standard_normal((20, 2))
    Y = np.column_stack([tilt, np.ones(20)])
    Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    X = pd.DataFrame(_rng(8).standard_normal((20, 2)), columns=["u", "v"], index=_index(20))

    def call(Y, X, base_point):
        mmdd(Y, X, manifold, base_point=base_point)
        mmdd_test(Y, X, manifold, n_resamples=19, random_state=0).summary()
        dcov_test(Y, X, manifold, n_resamples=19, random_state=0)

    return {"Y": Y, "X": X, "base_point": Y[0].copy()}, call


@case("statcore.manifold.from_geomstats", "statcore.manifold.GeomstatsManifold")
def case_geomstats():
    # the manifold extra is installed by `make`; its numpy shim lives in statcore.compat
    import_geomstats()
    from geomstats.geometry.hypersphere import Hypersphere

    from statcore.manifold import frechet_mean, from_geomstats

    manifold = from_geomstats(Hypersphere(2))
    _, Y = _manifold_points("sphere")
    return {"Y": Y}, lambda Y: frechet_mean(Y, manifold, maxiter=5)


# -- statcore.shift and statcore.ot ------------------------------------------------------------


@case("statcore.shift.DataShifts", "statcore.shift.DataShiftsResults")
def case_data_shifts():
    from statcore.shift import DataShifts

    rng = _rng(9)
    n = 24
    xs = pd.DataFrame(rng.standard_normal((n, 2)), columns=["a", "b"], index=_index(n))
    xt = rng.standard_normal((n, 2)) + 0.5
    inputs = {
        "xs": xs,
        "ys": pd.Series(rng.standard_normal(n), index=xs.index),
        "xt": xt,
        "yt": rng.standard_normal(n),
        "ws": np.full(n, 2.0),
        "wt": rng.uniform(0.5, 1.5, n),
    }

    def call(xs, ys, xt, yt, ws, wt):
        model = DataShifts(xs, ys, xt, yt, ws, wt, epsilon=0.5)
        res = model.fit(n_resamples=3, random_state=0, maxiter=300, tol=1e-3)
        res.summary()
        res.bound(0.3, 1.0, 1.0)
        source = pd.concat([ys.rename("y"), xs], axis=1)
        target = pd.DataFrame(xt, columns=["a", "b"]).assign(y=yt)
        DataShifts.from_formula("y ~ a + b", source, target, epsilon=0.5).fit(maxiter=300, tol=1e-3)

    return inputs, call


COVERED.add("statcore.shift.ShiftBoundResults")


@case(
    "statcore.ot.cost_matrix",
    "statcore.ot.sinkhorn",
    "statcore.ot.sinkhorn_points",
    "statcore.ot.sinkhorn_divergence",
)
def case_ot():
    from statcore.ot import cost_matrix, sinkhorn, sinkhorn_divergence, sinkhorn_points

    rng = _rng(10)
    inputs = {
        "x": rng.standard_normal((10, 2)),
        "y": pd.DataFrame(rng.standard_normal((8, 2)), index=_index(8)),
        "a": np.full(10, 0.1),
        "b": rng.uniform(1, 2, 8),
    }

    def call(x, y, a, b):
        cost = cost_matrix(x, y)
        frozen = cost.copy()
        sinkhorn(a, b / b.sum(), cost, 0.5, maxiter=500)
        assert_same(cost, frozen, "cost")
        sinkhorn_points(x, y, a, b, epsilon=0.5, maxiter=500)
        sinkhorn_divergence(x, y, a, b, epsilon=0.5, maxiter=500)

    return inputs, call


@case("statcore.ot.sinkhorn_box")
def case_sinkhorn_box():
    from statcore.ot import sinkhorn_box

    rng = _rng(11)

    def call(a, cost, lower, upper):
        sinkhorn_box(a, cost, 0.5, lower=lower, upper=upper, maxiter=500)

    return {
        "a": np.full(12, 1 / 12),
        "cost": rng.uniform(size=(12, 3)),
        "lower": np.full(3, 0.2),
        "upper": pd.Series([0.5, 0.5, 0.5]),
    }, call


# -- statcore.cluster --------------------------------------------------------------------------


def _clusters(n=60, seed=12):
    rng = _rng(seed)
    labels = np.repeat([0, 1, 2], n // 3)
    X = rng.standard_normal((n, 2)) + 4.0 * np.array([[0, 0], [1, 0], [0, 1]])[labels]
    return X, labels


@case("statcore.cluster.HardnessFingerprint", "statcore.cluster.fingerprint_map")
def case_hardness_fingerprint():
    from statcore.cluster import HardnessFingerprint, fingerprint_map

    X, labels = _clusters()

    def call(X, labels, frame):
        first = HardnessFingerprint(X, labels).fit(n_resamples=20, random_state=0)
        second = HardnessFingerprint(frame, pd.Series(labels, index=frame.index)).fit(
            n_resamples=20, h1=False, random_state=0
        )
        first.tidy()
        fingerprint_map([first, second, first])

    return {"X": X, "labels": labels, "frame": pd.DataFrame(X, index=_index(len(X)))}, call


@case(
    "statcore.cluster.ClusteringBenchmark",
    "statcore.cluster.clustering_accuracy",
    "statcore.cluster.external_scores",
)
def case_clustering_benchmark():
    from statcore.cluster import ClusteringBenchmark, clustering_accuracy, external_scores

    X, labels = _clusters()

    def call(X, labels, predicted):
        ClusteringBenchmark({"three": (X, labels)}, ["kmeans"]).fit(seeds=1, random_state=0)
        clustering_accuracy(labels, predicted)
        external_scores(labels, predicted)

    return {"X": X, "labels": labels, "predicted": labels[::-1].copy()}, call


@case("statcore.cluster.SizeConstrainedAnchorClustering")
def case_size_constrained_anchor_clustering():
    from statcore.cluster import SizeConstrainedAnchorClustering

    X, _ = _clusters(90)

    def call(X, size_bounds):
        res = SizeConstrainedAnchorClustering(X, 3, n_anchors=20, size_bounds=size_bounds).fit(
            maxiter=5, random_state=0
        )
        res.predict(X)

    return {"X": X, "size_bounds": np.array([0.8, 1.2])}, call


@case(
    "statcore.cluster.Coreset",
    "statcore.cluster.disagreement",
    "statcore.cluster.eps_close",
    "statcore.cluster.resilience",
)
def case_coreset():
    from statcore.cluster import Coreset, disagreement, eps_close, resilience

    X, labels = _clusters(300)

    def call(X, weights, labels, chunks):
        res = Coreset(X, 3, weights=weights).fit(size=60, random_state=0)
        solution = res.solve(random_state=0)
        res.cost(solution.centres)
        Coreset.from_chunks(chunks, 3, size=40, random_state=0)
        disagreement(labels, labels[::-1])
        eps_close(X, 0.05, random_state=0)
        resilience(X, 3, eps_grid=[0.05], size=60, n_seeds=1, compare_kmeans=False, random_state=0)

    inputs = {"X": X, "weights": np.ones(len(X)), "labels": labels}
    inputs["chunks"] = [X[:150], X[150:]]
    return inputs, call


@case("statcore.cluster.FairRangeKClustering")
def case_fair_range():
    from statcore.cluster import FairRangeKClustering

    rng = _rng(13)
    clients = pd.DataFrame(rng.uniform(size=(20, 2)), index=_index(20))
    facilities = rng.uniform(size=(6, 2))

    def call(clients, facilities, capacities, groups):
        model = FairRangeKClustering(
            clients,
            facilities,
            k=2,
            capacities=capacities,
            groups=groups,
            ranges={"a": (1, 1), "b": (1, 1)},
        )
        model.fit(method="milp")
        model.fit(method="tree", random_state=0)

    return {
        "clients": clients,
        "facilities": facilities,
        "capacities": np.full(6, 12),
        "groups": np.array(["a", "a", "a", "b", "b", "b"]),
    }, call


# -- statcore.select, statcore.geometry, statcore.outliers ------------------------------------


@case("statcore.select.CoresetSelector")
def case_coreset_selector():
    from statcore.select import CoresetSelector

    def call(embeddings, frame):
        CoresetSelector(embeddings, n_neighbors=5).select(6, random_state=0).summary()
        CoresetSelector(frame, metric="euclidean", n_neighbors=5).select(
            6, method="facility_location"
        )

    X, _ = _clusters()
    return {"embeddings": X, "frame": pd.DataFrame(X, index=_index(len(X)))}, call


@case(
    "statcore.geometry.LocalID",
    "statcore.geometry.GlobalID",
    "statcore.geometry.alignment",
    "statcore.geometry.AlignmentStudy",
    "statcore.geometry.twonn_dimension",
)
def case_geometry():
    from statcore.geometry import AlignmentStudy, GlobalID, LocalID, alignment, twonn_dimension

    rng = _rng(14)
    A = rng.standard_normal((80, 5))

    def call(A, B, accuracy, r1, r2):
        LocalID(A).fit(k=10, n_resamples=20, random_state=0)
        GlobalID(A).fit()
        alignment(A, B, metric="cka", n_resamples=19, random_state=0)
        AlignmentStudy({"a": A, "b": B, "c": 2.0 * A}, accuracy=accuracy).fit(
            k=5, lid_k=10, n_resamples=19, random_state=0
        )
        twonn_dimension(r1, r2)

    return {
        "A": A,
        "B": pd.DataFrame(A @ rng.standard_normal((5, 4))),
        "accuracy": {"a": 0.5, "b": 0.7, "c": 0.6},
        "r1": rng.uniform(1, 2, 50),
        "r2": rng.uniform(2, 3, 50),
    }, call


@case("statcore.outliers.MetaEns", "statcore.outliers.discounted_greedy")
def case_metaens():
    from statcore.cluster import _kernels as K
    from statcore.outliers import MetaEns, discounted_greedy

    rng = _rng(15)
    names = [f"KNN_k{k}" for k in (2, 5)] + [f"LOF_c{c}" for c in (1, 2)]

    def table(shift):
        X = rng.standard_normal((60, 3))
        y = (np.arange(60) < 6).astype(int)
        X[y == 1] += shift
        dist, _ = K.knn(X, 5)
        scores = np.column_stack([dist[:, 1], dist[:, 4], dist[:, :3].mean(1), dist.sum(1)])
        return scores, y

    tables = {f"t{i}": table(2.0 + i) for i in range(4)}

    def call(tables, jaccard, gains):
        fit = MetaEns(names, prior_min_count=5).fit(tables, n_estimators=(5, 5), random_state=0)
        fit.select(scores=tables["t0"][0])
        discounted_greedy(lambda partners, cands: gains[cands], jaccard, 0, range(4))

    return {
        "tables": tables,
        "jaccard": np.eye(4) * 0.5 + 0.25,
        "gains": rng.uniform(0, 0.1, 4),
    }, call


@case("statcore.outliers.score_pool")
def case_score_pool():
    pytest.importorskip("pyod")
    from statcore.outliers import DetectorPool, score_pool

    def call(X):
        score_pool(X, DetectorPool(families=("HBOS", "KNN")), random_state=0)

    return {"X": _rng(16).standard_normal((50, 3))}, call


# -- statcore.distributed ----------------------------------------------------------------------


def _study_fn(random_state, n, shift):
    return {"mean": float(random_state.normal(shift, 1.0, size=n).mean())}


@case("statcore.distributed.MonteCarloStudy", "statcore.distributed.MonteCarloResult")
def case_monte_carlo_study():
    from statcore.distributed import MonteCarloStudy

    def call(grid):
        MonteCarloStudy(_study_fn, grid, 3, random_state=0).run().summary()

    return {"grid": {"n": [5, 10], "shift": np.array([0.0, 1.0])}}, call


# -- mlcore ------------------------------------------------------------------------------------


def _torch():
    return pytest.importorskip("torch")


@case("mlcore.functional.softmax_entropy", "mlcore.losses.EntropyLoss")
def case_entropy_loss():
    torch = _torch()
    from mlcore.functional import softmax_entropy
    from mlcore.losses import EntropyLoss

    logits = torch.randn(6, 4, generator=torch.Generator().manual_seed(0), requires_grad=True)

    def call(logits):
        softmax_entropy(logits).backward()
        EntropyLoss(reduction="sum")(logits)

    return {"logits": logits}, call


@case("mlcore.functional.masked_diffusion_loss", "mlcore.losses.MaskedDiffusionLoss")
def case_masked_diffusion_loss():
    torch = _torch()
    from mlcore.functional import masked_diffusion_loss
    from mlcore.losses import MaskedDiffusionLoss

    gen = torch.Generator().manual_seed(1)
    inputs = {
        "logits": torch.randn(3, 5, 7, generator=gen),
        "x0": torch.randint(0, 7, (3, 5), generator=gen),
        "masked": torch.rand(3, 5, generator=gen) < 0.5,
        "t": torch.rand(3, generator=gen) * 0.9 + 0.05,
    }

    def call(logits, x0, masked, t):
        masked_diffusion_loss(logits, x0, masked, t)
        MaskedDiffusionLoss()(logits, x0, masked, t)

    return inputs, call


@case("mlcore.nn.HIPERotaryEmbedding", "mlcore.nn.RotaryEmbedding", "mlcore.nn.hipe_scales")
def case_hipe():
    torch = _torch()
    from mlcore.nn import HIPERotaryEmbedding, RotaryEmbedding, hipe_scales

    gen = torch.Generator().manual_seed(2)
    sigmas = np.array([1.0, 4.0])
    inputs = {
        "q": torch.randn(1, 2, 6, 8, generator=gen),
        "k": torch.randn(1, 2, 6, 8, generator=gen),
        "sigmas": sigmas,
    }

    def call(q, k, sigmas):
        HIPERotaryEmbedding(8, 2, sigmas)(q, k)
        RotaryEmbedding(8)(q, k)
        hipe_scales(8, sigmas)

    return inputs, call


@case("mlcore.nn.selective_scan")
def case_selective_scan():
    torch = _torch()
    from mlcore.nn import selective_scan

    gen = torch.Generator().manual_seed(3)
    b, length, d, n = 2, 5, 3, 4
    inputs = {
        "u": torch.randn(b, length, d, generator=gen),
        "delta": torch.rand(b, length, d, generator=gen),
        "A": -torch.rand(d, n, generator=gen),
        "B": torch.randn(b, length, n, generator=gen),
        "C": torch.randn(b, length, n, generator=gen),
        "D": torch.randn(d, generator=gen),
    }
    return inputs, lambda **kw: selective_scan(**kw)


@case("mlcore.pruning.sparsessm_prune", "mlcore.pruning.ssm_statistics")
def case_sparsessm_prune():
    torch = _torch()
    from mlcore.pruning import MambaBlock, sparsessm_prune, ssm_statistics

    torch.manual_seed(0)
    block = MambaBlock(6, d_state=4, expand=2, d_conv=3, dtype=torch.float64)
    x = torch.randn(3, 7, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(4))

    def call(calib_inputs):
        ssm_statistics(copy.deepcopy(block), calib_inputs)
        # the block is meant to be pruned in place; its calibration inputs are not
        sparsessm_prune(block, calib_inputs, 0.5).summary()

    return {"calib_inputs": x}, call


@case(
    "mlcore.pruning.wanda_prune_linear",
    "mlcore.pruning.sparsegpt_prune_linear",
    "mlcore.pruning.magnitude_prune",
)
def case_linear_pruning():
    torch = _torch()
    from mlcore.pruning import magnitude_prune, sparsegpt_prune_linear, wanda_prune_linear

    x = torch.randn(64, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(5))

    def call(inputs):
        torch.manual_seed(1)
        for prune in (wanda_prune_linear, sparsegpt_prune_linear):
            layer = torch.nn.Linear(8, 4, dtype=torch.float64)
            prune(layer, inputs, 0.5)
        magnitude_prune(torch.nn.Linear(8, 4), 0.5)

    return {"inputs": x}, call


@case(
    "mlcore.diffusion.imdm_elbo_loss",
    "mlcore.diffusion.IMDMSampler",
    "mlcore.diffusion.TinyDenoiser",
)
def case_imdm():
    torch = _torch()
    from mlcore.diffusion import IMDMSampler, TinyDenoiser, imdm_elbo_loss

    torch.manual_seed(2)
    model = TinyDenoiser(5, 2, noise_dim=4, hidden=16)
    gen = torch.Generator().manual_seed(6)
    inputs = {
        "x0": torch.randint(0, 5, (8, 2), generator=gen),
        "eps": torch.rand(8, 2, 4, generator=gen),
        "t": torch.full((8,), 0.5),
    }

    def call(x0, eps, t):
        imdm_elbo_loss(model, x0, eps=eps, t=t, random_state=0).backward()
        IMDMSampler(model, 2).sample(8, 2, eps=eps, random_state=0)

    return inputs, call


@case("mlcore.diffusion.distill_on_couplings", "mlcore.diffusion.rectified_couplings")
def case_distill():
    torch = _torch()
    from mlcore.diffusion import (
        IMDMSampler,
        TinyDenoiser,
        distill_on_couplings,
        rectified_couplings,
    )

    torch.manual_seed(3)
    teacher = IMDMSampler(TinyDenoiser(5, 2, noise_dim=4, hidden=16), 2)
    eps, x0 = rectified_couplings(teacher, 16, 2, random_state=0)

    def call(eps, x0):
        student = TinyDenoiser(5, 2, noise_dim=4, hidden=16)
        distill_on_couplings(student, eps, x0, steps=2, batch_size=8, log_every=1, random_state=0)

    return {"eps": eps, "x0": x0}, call


def _small_net():
    import torch

    torch.manual_seed(0)
    nn = torch.nn
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))


@case("mlcore.tta.Tent", "mlcore.tta.CONGA", "mlcore.tta.configure_norm_params")
def case_tent_conga():
    torch = _torch()
    from mlcore.tta import CONGA, Tent

    batch = torch.randn(16, 4, generator=torch.Generator().manual_seed(7))

    def call(batch):
        # the network and its optimizer are adapted on purpose; the batch is the input
        tent = Tent(_small_net(), lr=0.05, scheduler=lambda opt: CONGA(opt))
        for _ in range(2):
            tent(batch)
        tent.result()

    return {"batch": batch}, call


@case("mlcore.tta.corrupt_images")
def case_corrupt_images():
    from mlcore.tta import corrupt_images

    images = _rng(11).uniform(0, 1, size=(2, 1, 6, 6))

    def call(images):
        for kind in ("gaussian_noise", "blur", "contrast", "shift"):
            corrupt_images(images, kind, random_state=0)

    return {"images": images}, call


@case("mlcore.merging.merge", "mlcore.merging.task_vectors")
def case_merging():
    torch = _torch()
    from mlcore.merging import merge, task_vectors

    def call(base, experts):
        task_vectors(base, experts)
        for method in ("average", "task_arithmetic", "ties", "dare"):
            merge(base, experts, method, random_state=0)

    torch.manual_seed(3)
    net = _small_net()
    base = {k: v.clone() for k, v in net.state_dict().items()}
    experts = [
        {
            k: v + 0.1 * torch.randn_like(v) if v.is_floating_point() else v.clone()
            for k, v in base.items()
        }
        for _ in range(2)
    ]
    return {"base": base, "experts": experts}, call


@case("mlcore.mi.mutual_information")
def case_mutual_information():
    torch = _torch()
    from mlcore.mi import mutual_information

    def call(x, y, xt):
        mutual_information(x, y, method="ksg")
        mutual_information(x, y, method="infoatlas")
        mutual_information(xt, xt**3, method="infoatlas")

    rng = _rng(26)
    x = rng.standard_normal((200, 1))
    y = x + rng.standard_normal((200, 1))
    return {"x": x, "y": y, "xt": torch.tensor(x, dtype=torch.float32)}, call


@case(
    "mlcore.encoders.kshot_split",
    "mlcore.encoders.gzsl_split",
    "mlcore.encoders.base_novel_split",
    "mlcore.encoders.gzsl_scores",
    "mlcore.encoders.ausuc",
    "mlcore.encoders.per_class_accuracy",
)
def case_encoder_splits():
    from mlcore.encoders import (
        ausuc,
        base_novel_split,
        gzsl_scores,
        gzsl_split,
        kshot_split,
        per_class_accuracy,
    )

    def call(labels, scores, classes):
        kshot_split(labels, 2, random_state=0)
        gzsl_split(labels, [3], random_state=0)
        base_novel_split(classes)
        predicted = scores.argmax(axis=1)
        gzsl_scores(labels, predicted, seen=[0, 1, 2], unseen=[3])
        ausuc(scores, labels, seen=[0, 1, 2], unseen=[3])
        per_class_accuracy(labels, predicted)

    labels = np.repeat(np.arange(4), 5)
    scores = _rng(30).standard_normal((20, 4))
    return {"labels": labels, "scores": scores, "classes": ["a", "b", "c", "d"]}, call


def _tiny_clip_digits(n=24):
    """The shipped tiny CLIP and a few of its downstream digits (images, labels, names)."""
    _torch()
    from mlcore.encoders import digits_domain, tiny_clip

    domain = digits_domain("downstream", random_state=0)
    return (
        tiny_clip(device="cpu"),
        domain.images[:n].clone(),
        domain.labels[:n].copy(),
        list(domain.classnames),
    )


@case(
    "mlcore.encoders.zero_shot_weights",
    "mlcore.encoders.encode_images",
    "mlcore.encoders.zero_shot_logits",
)
def case_zero_shot():
    from mlcore.encoders import encode_images, zero_shot_logits, zero_shot_weights

    encoder, images, _, classnames = _tiny_clip_digits()

    def call(images, classnames):
        weights = zero_shot_weights(encoder, classnames)
        zero_shot_logits(encoder, encode_images(encoder, images), weights)

    return {"images": images, "classnames": classnames}, call


@case("mlcore.fewshot.BOIFHead", "mlcore.fewshot.TipAdapter")
def case_boif():
    from mlcore.encoders import encode_images, zero_shot_weights
    from mlcore.fewshot import BOIFHead, TipAdapter

    encoder, images, labels, classnames = _tiny_clip_digits(40)
    features = encode_images(encoder, images)
    weights = zero_shot_weights(encoder, classnames)

    def call(features, labels, weights):
        BOIFHead(weights, encoder.logit_scale).fit(features, labels, epochs=2, random_state=0)
        TipAdapter(weights, encoder.logit_scale).fit(features, labels)

    return {"features": features, "labels": labels, "weights": weights}, call


@case("mlcore.prompt.PromptLearner")
def case_prompt_learner():
    from mlcore.prompt import PromptLearner

    encoder, images, labels, classnames = _tiny_clip_digits()

    def call(images, labels, classnames):
        PromptLearner(encoder, classnames, random_state=0).fit(images, labels, maxiter=2)

    return {"images": images, "labels": labels, "classnames": classnames}, call


@case("mlcore.gzsl.PUFE")
def case_pufe():
    torch = _torch()
    from mlcore.gzsl import PUFE, simulate_gzsl

    sim = simulate_gzsl(random_state=0)
    seen = sim.seen_mask[sim.labels]
    noise = _rng(32).normal(scale=0.3, size=sim.attributes[sim.labels].shape)
    semantic = sim.attributes[sim.labels] + noise

    def call(z_train, z_test, prototypes, seen_mask):
        PUFE(random_state=0).fit(z_train, z_test, prototypes=prototypes, seen_mask=seen_mask)

    inputs = {
        "z_train": semantic[seen][:100],
        "z_test": torch.as_tensor(semantic[100:300]),
        "prototypes": sim.attributes,
        "seen_mask": sim.seen_mask,
    }
    return inputs, call


@case("mlcore.weak.CLAPORLoss", "mlcore.weak.candidate_targets")
def case_clapor():
    torch = _torch()
    from mlcore.weak import CLAPORLoss, candidate_targets

    gen = torch.Generator().manual_seed(31)
    logits = torch.randn(8, 4, generator=gen, requires_grad=True)
    candidates = torch.rand(8, 4, generator=gen) < 0.5
    candidates[:, 0] = True
    prior = torch.tensor([0.4, 0.3, 0.2, 0.1])

    def call(logits, candidates, prior):
        targets = candidate_targets(logits.detach(), candidates, eps_out=0.01)
        CLAPORLoss(tau=1.0, penalty=0.5)(logits, targets, prior).backward()

    return {"logits": logits, "candidates": candidates, "prior": prior}, call


@case("mlcore.augment.ReAugment", "mlcore.augment.compare_augmenters", "mlcore.augment.Jitter")
def case_reaugment():
    _torch()
    from mlcore.augment import Jitter, LinearForecaster, ReAugment, compare_augmenters, make_windows

    X, Y = make_windows(np.sin(np.arange(60) / 3.0), 12, 4)

    def make():
        return LinearForecaster(12, 4)

    def call(X, Y):
        ReAugment(
            make, k_folds=2, pretrain_steps=5, rl_steps=3, hidden=8, train_options={"epochs": 5}
        ).fit(X, Y, random_state=0).generate(X, Y, random_state=0)
        compare_augmenters(
            make,
            X,
            Y,
            X,
            Y,
            {"none": None, "jitter": Jitter()},
            seeds=2,
            train_options={"epochs": 5},
        )

    return {"X": X, "Y": Y}, call


@case("mlcore.inverse.LotteryPriorSolver", "mlcore.quant.SensitivityCalibrator")
def case_lottery_prior_and_sensitivity():
    torch = _torch()
    from mlcore.inverse import LotteryPriorSolver
    from mlcore.quant import SensitivityCalibrator, TinyTPLM, linear_ops

    gen = torch.Generator().manual_seed(5)
    inputs = {"y": torch.rand(8, 8, generator=gen), "ids": torch.randint(0, 8, (2, 6))}

    def call(y, ids):
        LotteryPriorSolver(n_seeds=1, steps=2, noise_sigma=0.1).fit(y, x_true=y, random_state=0)
        model = TinyTPLM(8, d_model=8, n_heads=2, n_layers=1, d_ff=16)
        ops = linear_ops(model, tokens=10, tp_size=2, **model.tp_plan())[:1]
        SensitivityCalibrator(model, [ids], ops, bits=(16, 8)).fit()

    return inputs, call


@case("mlcore.active.grpo_advantages", "mlcore.active.grpo_loss", "mlcore.active.history_features")
def case_sea2_grpo():
    torch = _torch()
    from mlcore.active import grpo_advantages, grpo_loss, history_features

    gen = torch.Generator().manual_seed(0)
    inputs = {
        "rewards": torch.rand(8, generator=gen),
        "logp": torch.randn(8, 3, generator=gen, requires_grad=True),
        "logp_old": torch.randn(8, 3, generator=gen),
        "logp_ref": torch.randn(8, 3, generator=gen),
        "mask": torch.rand(8, 3, generator=gen) > 0.3,
        "poses": torch.rand(3, 4, generator=gen),
        "conf": torch.rand(3, generator=gen),
        "actions": torch.tensor([0, 2]),
    }

    def call(rewards, logp, logp_old, logp_ref, mask, poses, conf, actions):
        adv = grpo_advantages(rewards, 4)
        grpo_loss(logp, logp_old, adv, logp_ref=logp_ref, mask=mask, beta=0.1).backward()
        history_features(poses, conf, actions, n_actions=4, length=5)

    return inputs, call


@case(
    "mlcore.active.Sea2Agent",
    "mlcore.active.FrozenPerception",
    "mlcore.active.rollout",
    "mlcore.active.PerceptionReward",
    "mlcore.active.evaluate_policies",
    "mlcore.active.check_pose_env",
    "mlcore.active.state_dict_hash",
    "mlcore.active.pretrained_detector",
    "mlcore.active.render_view",
)
def case_sea2_agent():
    _torch()
    from mlcore.active import (
        ActiveRoomEnv,
        ForwardPolicy,
        FrozenPerception,
        PerceptionReward,
        PoseTransformerPolicy,
        Sea2Agent,
        TinyDetector,
        check_pose_env,
        evaluate_policies,
        pretrained_detector,
        render_view,
        rollout,
        state_dict_hash,
    )

    env = ActiveRoomEnv(max_steps=4)
    env.make_room(0)
    # Modules and the environment are built inside (assert_same compares data only); that the
    # caller's policy and detector are left as they were is asserted by hash in
    # tests/mlcore/test_sea2_e2e.py and test_sea2.py.
    inputs = {"rooms": np.arange(3), "grid": env.grid.copy()}

    def call(rooms, grid):
        policy, detector = PoseTransformerPolicy(history_len=4), TinyDetector(4)
        check_pose_env(env)
        render_view(grid, 2.5, 2.5, 0.3)
        perception = FrozenPerception(detector)
        state_dict_hash(detector)
        pretrained_detector(env, n_views=50, n_steps=2)
        data = rollout(policy, env, perception, [(0, 0), (1, 1)], random_state=0)
        PerceptionReward(lambda_geo=0.1)(data)
        agent = Sea2Agent(policy, detector)
        agent.sft(env, rooms, n_episodes=2, n_steps=2, random_state=0)
        agent.grpo(env, rooms, n_iter=1, n_groups=1, group_size=2, random_state=0)
        evaluate_policies({"p": policy, "f": ForwardPolicy()}, env, perception, rooms).summary()

    return inputs, call


@case("statcore.geometry.ksg_mutual_information", "statcore.geometry.ksg_independence_test")
def case_ksg():
    from statcore.geometry import ksg_independence_test, ksg_mutual_information

    def call(x, y, frame):
        ksg_mutual_information(x, y).summary()
        ksg_mutual_information(frame[["a"]], frame["b"], scale="rank")
        ksg_independence_test(x, y, n_resamples=19, random_state=0)

    rng = _rng(25)
    x = rng.standard_normal((60, 2))
    y = x[:, 0] + rng.standard_normal(60)
    frame = pd.DataFrame({"a": x[:, 0], "b": y}, index=_index(60))
    return {"x": x, "y": y, "frame": frame}, call


# -- statcore.theory ---------------------------------------------------------------------------


@case(
    "statcore.theory.CPGradientFlow",
    "statcore.theory.solve_characteristics",
)
def case_cp_flow():
    from statcore.theory import CPGradientFlow, solve_characteristics

    def call(target, t_grid, x0):
        flow = CPGradientFlow(2, 3, 4, target=target)
        flow.simulate(t_grid, n_seeds=2, random_state=0).summary()
        flow.taylor(4, random_state=0)
        flow.predict(t_grid)
        CPGradientFlow(2, 4, 8, symmetric=True).characteristics(t_grid, n_points=20)
        solve_characteristics(lambda t, x: -x, lambda t, x: 0 * x, lambda x: 1 + 0 * x, x0, t_grid)

    inputs = {
        "target": np.eye(3),
        "t_grid": np.linspace(0.0, 0.5, 5),
        "x0": np.linspace(0.5, 1.5, 4),
    }
    return inputs, call


@case(
    "statcore.theory.MagnitudePruning",
    "statcore.theory.ConditionalPerceptron",
    "statcore.theory.PrunedReLUNetwork",
    "statcore.theory.compute_gap",
    "statcore.theory.depth_correlations",
    "statcore.theory.depth_fixed_point",
    "statcore.theory.early_exit_mass",
    "statcore.theory.excess_error",
    "statcore.theory.excess_error_exponent",
    "statcore.theory.fit_exponent",
    "statcore.theory.kappa_for_alignment",
    "statcore.theory.local_exponent",
    "statcore.theory.magnitude_prune",
    "statcore.theory.pruning_alignment",
    "statcore.theory.pruning_alignment_sd",
    "statcore.theory.relu_correlation",
    "statcore.theory.sign_disagreement",
)
def case_pruning():
    from statcore import theory as T

    def call(kappa, tau, rho, weights, gap, error):
        T.MagnitudePruning(200).simulate(kappa, n_reps=2, n_inputs=50, random_state=0).summary()
        perceptron = T.ConditionalPerceptron(rho=0.8, d=200)
        perceptron.simulate(tau, n_reps=2, n_inputs=200, random_state=0)
        perceptron.predict(tau)
        T.PrunedReLUNetwork(0.3, 2, width=50).simulate(tau=1.0, n_reps=2, random_state=0)
        T.compute_gap(tau, 0.8, 0.3)
        T.depth_correlations(0.3, 3)
        T.depth_fixed_point(0.3)
        # rho is a scalar where tau is the grid; the array rho goes to the functions vectorised in it
        T.early_exit_mass(tau, 0.8)
        T.excess_error(tau, 0.8)
        T.excess_error_exponent(rho)
        T.fit_exponent(gap, error)
        T.kappa_for_alignment(0.8)
        T.local_exponent(tau, 0.8)
        T.magnitude_prune(weights, 0.5)
        T.pruning_alignment(kappa)
        T.pruning_alignment_sd(kappa, 1000)
        T.relu_correlation(rho)
        T.sign_disagreement(rho)

    inputs = {
        "kappa": np.array([0.1, 0.3, 0.5]),
        "tau": np.array([0.5, 1.0, 2.0]),
        "rho": np.array([0.6, 0.8, 0.9]),
        "weights": _rng(21).standard_normal(20),
        "gap": np.array([0.3, 0.2, 0.1]),
        "error": np.array([0.03, 0.01, 0.002]),
    }
    return inputs, call


@case(
    "statcore.theory.FrontierSelector",
    "statcore.theory.FrontierDesign",
    "statcore.theory.pareto_frontier",
    "statcore.theory.pareto_cover",
)
def case_frontier():
    from statcore.theory import FrontierDesign, FrontierSelector, pareto_cover, pareto_frontier

    def call(risks, predictions, y, n_grid):
        models = list(risks.index)
        res = FrontierSelector(models, risks).fit(
            predictions=predictions, y=y, n_resamples=5, random_state=0
        )
        res.summary()
        res.tidy()
        mask = pareto_frontier(risks)
        pareto_cover(risks[mask], 0.1)
        design = FrontierDesign(60, 8, random_state=0)
        design.predict(n_grid)
        design.simulate(n_grid, n_reps=3, random_state=0)

    rng = _rng(22)
    risks = pd.DataFrame(
        rng.uniform(0.1, 1.0, size=(6, 2)), index=[f"m{j}" for j in range(6)], columns=["a", "b"]
    )
    y = rng.standard_normal(30)
    predictions = y[:, None] + rng.standard_normal((30, 6))
    return {"risks": risks, "predictions": predictions, "y": y, "n_grid": np.array([10, 20])}, call


# -- statcore.ot: Bures-Wasserstein and SLOT-Align ---------------------------------------------


@case(
    "statcore.ot.bures_wasserstein_barycentre",
    "statcore.ot.bures_wasserstein_map",
    "statcore.ot.gaussian_w2",
    "statcore.ot.GaussianMap",
)
def case_bures():
    from statcore.ot import bures_wasserstein_barycentre, bures_wasserstein_map, gaussian_w2

    def call(means, covs, weights, points):
        res = bures_wasserstein_barycentre(means, covs, weights)
        res.summary()
        T = bures_wasserstein_map(means[0], covs[0], res.mean, res.covariance)
        T(points, 0.5)
        T.push(means[1], covs[1])
        gaussian_w2(means[0], covs[0], means[1], covs[1])

    rng = _rng(23)
    roots = rng.standard_normal((3, 3, 3))
    covs = roots @ roots.transpose(0, 2, 1) + np.eye(3)
    inputs = {
        "means": rng.standard_normal((3, 3)),
        "covs": covs,
        "weights": np.array([0.2, 0.3, 0.5]),
        "points": rng.standard_normal((10, 3)),
    }
    return inputs, call


@case(
    "statcore.ot.SLOTAlign",
    "statcore.ot.ClientStatistics",
    "statcore.ot.CommonPCA",
    "statcore.ot.ledoit_wolf",
    "statcore.ot.federated_linear_probe",
)
def case_slot_align():
    from statcore.ot import SLOTAlign, federated_linear_probe, ledoit_wolf

    def call(clients, train, features):
        res = SLOTAlign(clients).fit(pca=0.9)
        res.summary()
        res.transform(features, "a", tau=0.4)
        SLOTAlign([ledoit_wolf(x) for x in clients.values()]).fit()
        federated_linear_probe(train, train, alignment=None, local_epochs=1, random_state=0)

    rng = _rng(24)
    clients = {"a": rng.standard_normal((30, 4)), "b": 1 + 2 * rng.standard_normal((40, 4))}
    train = {name: (x, (x[:, 0] > x[:, 0].mean()).astype(int)) for name, x in clients.items()}
    return {"clients": clients, "train": train, "features": rng.standard_normal((5, 4))}, call


# -- the tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("build", CASES)
def test_inputs_are_not_modified(build):
    inputs, call = build()
    snapshot = copy.deepcopy(inputs)
    with warnings.catch_warnings():
        # the cases fit on purpose with few iterations and tiny inputs: only mutation matters
        warnings.simplefilter("ignore")
        call(**inputs)
    for name in inputs:
        assert_same(inputs[name], snapshot[name], name)


def _public_callables(module_name):
    module = importlib.import_module(module_name)
    for name in module.__all__:
        value = getattr(module, name)
        if inspect.ismodule(value) or not callable(value):
            continue  # submodules (simulate) and constants (METRICS, BACKENDS)
        if inspect.isclass(value) and issubclass(value, Warning):
            continue
        if inspect.isclass(value) and issubclass(value, Results):
            # results are made by fits, never by users from data; each case calls a
            # results method (summary, predict, ...) on the one its fit returns
            continue
        yield f"{module_name}.{name}"


def test_every_public_entry_has_a_case():
    public = {entry for area in AREAS for entry in _public_callables(area)}
    missing = sorted(public - COVERED - set(EXCLUDED))
    assert not missing, f"public entries with no mutation case: {missing}"
    stale = sorted(set(EXCLUDED) - public)
    assert not stale, f"exclusions that are no longer public: {stale}"
