"""Ahead-of-time compilation of the method areas' numba kernels: :func:`warmup`.

It sits above the method areas: it imports every one of them, and none of them imports it (they
import :mod:`statcore._numba`, the njit shim), so the import graph has no circle.
"""

import time
import warnings

import numpy as np
import pandas as pd

from statcore.validation import check_option


def _read_only(array):
    # pandas' copy-on-write hands out read-only arrays (DataFrame.to_numpy(), a column's
    # values), and numba compiles a kernel once more for a read-only argument: the areas are
    # warmed with both, as the vignettes and users pass both
    array = np.array(array)
    array.flags.writeable = False
    return array


def _warm_quantreg(rng):
    from statcore.quantreg import QuantReg

    X = rng.normal(size=(40, 2))
    y = X @ [1.0, -0.5] + rng.normal(size=40)
    for method in ("fn", "conquer"):
        QuantReg(y, X, q=[0.25, 0.5]).fit(method=method)
    # the preprocessing kernels run only once the pilot subsample is under a quarter of the rows
    X = rng.normal(size=(400, 2))
    QuantReg(X @ [1.0, -0.5] + rng.normal(size=400), X).fit(method="pfn", cov_type="nid")


def _warm_quantized(rng):
    from statcore.quantized import (
        QuantizedMatrixCompletion,
        QuantizedNVMM,
        QuantizedRegression,
        Quantizer,
    )

    quantizer = Quantizer.uniform(0.5, n_bits=3)
    x = rng.normal(size=60)
    codes = quantizer.quantize(x)
    for family in ("gaussian", "t"):
        QuantizedNVMM.from_codes(codes, quantizer, family=family).fit(maxiter=5)
    X = rng.normal(size=(60, 1))
    QuantizedRegression(quantizer.quantize(X[:, 0] + x), X, quantizer=quantizer).fit(maxiter=5)
    codes = quantizer.quantize(rng.normal(size=120)).reshape(12, 10).astype(float)
    codes[0, 0] = np.nan
    QuantizedMatrixCompletion(codes, quantizer, rank=1).fit(maxiter=3)


def _warm_manifold(rng):
    from statcore.manifold import Sphere, dcov_test, frechet_mean, mmdd_test, simulate

    sphere = Sphere(2)
    Y, X = simulate.draw("sphere", "mean_shift", 30, random_state=rng)
    mmdd_test(Y, X, sphere, n_resamples=19, random_state=rng)
    # several X columns take the panel kernels, not the scalar-X route
    mmdd_test(Y, np.column_stack([X, X**2]), sphere, n_resamples=19, random_state=rng)
    frechet_mean(Y, sphere)
    dcov_test(Y, X, sphere, n_resamples=19, random_state=rng)


def _warm_ot(rng):
    from statcore.ot import sinkhorn_divergence, sinkhorn_points

    x, y = rng.normal(size=(30, 2)), rng.normal(size=(25, 2))
    sinkhorn_points(x, y, epsilon=0.5)
    sinkhorn_divergence(x, y, epsilon=0.5)
    # the threaded cost blocks serve only problems of PARALLEL_PAIRS pairs and more, too large
    # for a warm-up call: compiled directly, with the argument types PointCost.block passes
    from statcore.ot import _kernels

    code = _kernels.METRIC_CODES["sqeuclidean"]
    _kernels.pairwise_points_parallel(x, np.ascontiguousarray(y.T), code)


def _warm_shift(rng):
    from statcore.shift import DataShifts

    xs, xt = rng.normal(size=(40, 2)), rng.normal(size=(30, 2)) + 0.3
    ys, yt = xs @ [1.0, -1.0], xt @ [1.0, -1.0]
    # both kernel precisions: float32 at the default tolerance, float64 below FLOAT32_TOL
    res = DataShifts(xs, ys, xt, yt).fit(n_resamples=5, random_state=0)
    DataShifts(xs, ys, xt, yt).fit(n_resamples=5, random_state=0, tol=1e-6)
    gradients = (np.sign(ys)[:, None] * xs, np.sign(yt)[:, None] * xt)
    res.bound(0.1, "gradients", gradients=gradients)
    res.bound(0.1, 1.0, 1.0, target_error=0.2)
    # the threaded kernel passes serve problems of PARALLEL_PAIRS pairs and more only: compiled
    # directly, in both precisions, with the argument types KernelCost passes
    from statcore.ot import _kernels

    cost, h = rng.random((20, 16)), np.zeros(16)
    for dtype in (np.float64, np.float32):
        kernel, out = np.empty(cost.shape, dtype=dtype), np.empty(20)
        _kernels.stabilised_kernel(cost, h, 0.5, kernel, out, dtype == np.float32)
        _kernels.kernel_product(kernel, np.ones(16, dtype=dtype), np.empty(20))
        _kernels.kernel_product_t(kernel, np.ones(20, dtype=dtype), np.empty(16))


def _warm_network(rng):
    import networkx as nx

    from statcore.network import LatentSpaceModel
    from statcore.network.sampling import sample_edge_arrays

    graph = nx.gnp_random_graph(30, 0.2, seed=int(rng.integers(2**31)))
    LatentSpaceModel(graph, dim=2).fit(maxiter=5)
    Z, alpha = rng.normal(size=(30, 2)), rng.normal(size=30)
    for method in ("envelope", "dense"):
        sample_edge_arrays(Z, alpha, -1.0, random_state=0, method=method)


def _warm_cluster(rng):
    from statcore.cluster import (
        Coreset,
        FairRangeKClustering,
        HardnessFingerprint,
        SizeConstrainedAnchorClustering,
    )
    from statcore.ot import sinkhorn_box

    labels = np.repeat([0, 1, 2], 40)
    X = rng.normal(size=(120, 3)) + 3.0 * labels[:, None]
    HardnessFingerprint(X, labels).fit(n_resamples=5, h1=False, random_state=0)
    HardnessFingerprint(X, labels, representation="raw").fit(n_resamples=5, random_state=0)
    SizeConstrainedAnchorClustering(X, 3, n_anchors=20).fit(maxiter=3, random_state=0)
    for points in (X, _read_only(X)):
        for method in ("sensitivity", "uniform", "lightweight", "resilient"):
            fit = Coreset(points, 3).fit(size=40, method=method, random_state=0)
        fit.solve("lloyd", random_state=0)
    groups = np.where(np.arange(20) % 2 == 0, "a", "b")
    fair = FairRangeKClustering(
        X[::4], X[::6], n_clusters=3, capacities=20, groups=groups,
        ranges={"a": (1, 2), "b": (1, 2)},
    )  # fmt: skip
    fair.fit(method="tree", random_state=0)
    cost = rng.uniform(size=(30, 3))
    for method in ("sweeps", "newton"):
        sinkhorn_box(None, cost, 0.1, lower=0.2, upper=0.5, maxiter=50, method=method)


def _warm_select(rng):
    from statcore.select import CoresetSelector

    X = rng.normal(size=(60, 4))
    for embeddings in (X, _read_only(X), X.astype(np.float32)):
        selector = CoresetSelector(embeddings, metric="cosine", n_neighbors=5)
        for method in ("process_aware", "graph_cut", "vote_k", "k_centre"):
            selector.select(5, method=method, random_state=0)
        for optimizer in ("incremental", "lazy", "naive"):
            selector.select(5, method="facility_location", optimizer=optimizer)


def _warm_geometry(rng):
    from statcore.geometry import LocalID, alignment, ksg_mutual_information

    X = rng.normal(size=(80, 3))
    for method in ("mle", "twonn", "gride"):
        LocalID(X).fit(method=method, k=10, n_resamples=5, random_state=0)
    for metric in ("mutual_knn", "cka", "unbiased_cka", "cknna", "rsa"):
        alignment(X, X**2, metric=metric, k=5, n_resamples=5, random_state=0)
    ksg_mutual_information(X[:, :1], X[:, 1:])
    ksg_mutual_information(np.round(X[:, :1]), np.round(X[:, 1:]))
    ksg_mutual_information(_read_only(X[:, :1]), _read_only(X[:, 1:]))
    # over 2^20 pairs in low dimension the shared search takes its tree path and kernels
    wide = rng.normal(size=(1100, 2))
    LocalID(wide).fit(k=5)
    ksg_mutual_information(wide[:, :1], wide[:, 1:])


def _warm_outliers(rng):
    from statcore.outliers import MetaEns, load_score_tables

    tables, names = load_score_tables()
    few = {
        name: (scores[:300], y[:300])
        for name, (scores, y) in list(tables.items())[:4]
        if y[:300].any()
    }
    fit = MetaEns(names, prior_min_count=50).fit(few, n_estimators=(5, 5), random_state=0)
    fit.select(scores=next(iter(few.values()))[0])


def _warm_theory(rng):
    from statcore.theory import FrontierSelector, pareto_frontier

    # two and three benchmarks take their own sweeps, four the sort-filter skyline
    for n_benchmarks in (2, 3, 4):
        risks = rng.uniform(size=(30, n_benchmarks))
        pareto_frontier(risks)
        pareto_frontier(pd.DataFrame(risks))
    y = rng.normal(size=20)
    # a DataFrame of risks reaches the kernels as a read-only Fortran-ordered array
    FrontierSelector(list(range(6)), pd.DataFrame(rng.uniform(size=(6, 2)))).fit(
        predictions=y[:, None] + rng.normal(size=(20, 6)), y=y, n_resamples=5, random_state=0
    )


#: The areas with numba kernels and a small call through each one's public API. Public calls,
#: not the kernels themselves: they reach the kernels with the argument types of real use.
_AREAS = {
    "quantreg": _warm_quantreg,
    "quantized": _warm_quantized,
    "manifold": _warm_manifold,
    "ot": _warm_ot,
    "shift": _warm_shift,
    "network": _warm_network,
    "cluster": _warm_cluster,
    "select": _warm_select,
    "geometry": _warm_geometry,
    "outliers": _warm_outliers,
    "theory": _warm_theory,
}


def warmup(areas=None) -> dict[str, float]:
    """Compile (or load from the cache) the numba kernels of the method areas ahead of use.

    Each area runs one small fit through its public API on made-up data, so the kernels that a
    first real call would otherwise compile, for 5 to 15 seconds in all on a cold cache, are
    compiled now and kept in numba's on-disk cache (see :mod:`statcore._numba`). Later processes
    load them in well under a second. The small fits' results and warnings are discarded.

    Parameters
    ----------
    areas : sequence of str, optional
        Which of ``"quantreg"``, ``"quantized"``, ``"manifold"``, ``"ot"``, ``"shift"``,
        ``"network"``, ``"cluster"``, ``"select"``, ``"geometry"``, ``"outliers"``, ``"theory"``
        to warm; all of them by default.

    Returns
    -------
    dict
        Seconds taken per area, in the order run.

    Examples
    --------
    >>> import statcore
    >>> seconds = statcore.warmup(["quantreg"])  # doctest: +SKIP
    """
    if areas is None:
        areas = list(_AREAS)
    elif isinstance(areas, str):
        areas = [areas]
    areas = [check_option(area, name="areas", options=tuple(_AREAS)) for area in areas]
    rng = np.random.default_rng(0)
    seconds = {}
    for area in areas:
        start = time.perf_counter()
        with warnings.catch_warnings():
            # The made-up fits are cut short (maxiter) on purpose: their warnings mean nothing.
            warnings.simplefilter("ignore")
            _AREAS[area](rng)
        seconds[area] = time.perf_counter() - start
    return seconds
