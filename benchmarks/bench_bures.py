"""Bures-Wasserstein barycentre of 50 Gaussians in d = 512 beside POT's fixed point.

Both sides stop at the same tolerance on the same criterion, the Frobenius norm of the
fixed-point residual ``S - sum_k w_k (S^{1/2} C_k S^{1/2})^{1/2}`` (POT's ``diff`` between
successive iterates is exactly this residual). POT's ``eps`` is absolute (its default 1e-7);
ours is relative to ``|S|_F``, so ours gets ``tol = 1e-7 / |sum_k w_k C_k|_F``, computed once in
the setup; the arithmetic mean dominates ``S`` in the Loewner order, so ours is the stricter.
Both take every square root from a batched ``eigh``, so the ratio is the ratio of iteration
counts: POT iterates ``S <- sum_k w_k (S^{1/2} C_k S^{1/2})^{1/2}`` from
``(1/K) sum_k w_k C_k`` (tens of iterations), ours the fixed point of Alvarez-Esteban et al.
(2016) from ``(sum_k w_k C_k^{1/2})^2`` (under ten).

The covariances imitate Ledoit-Wolf estimates of 50 clients' features: sample covariances of
2d draws through a shared mixing matrix plus a client-specific perturbation, plus a ridge.

One call of POT takes minutes on a small machine, so the case runs once per side
(``repeat: 1``); ``python benchmarks/bench_bures.py`` times one call of each directly.
"""

import time

import numpy as np
import ot

from statcore.ot.bures import bures_wasserstein_barycentre

K, D, POT_EPS = 50, 512, 1e-7
_data = {}


def setup():
    if not _data:
        rng = np.random.default_rng(0)
        base = rng.normal(size=(D, D)) / np.sqrt(D)
        covs = np.empty((K, D, D))
        for k in range(K):
            mix = base + 0.5 * rng.normal(size=(D, D)) / np.sqrt(D)
            X = rng.normal(size=(2 * D, D)) @ mix.T
            covs[k] = X.T @ X / (2 * D) + 0.05 * np.eye(D)
        _data["covs"] = covs
        _data["means"] = rng.normal(size=(K, D))
        _data["weights"] = rng.dirichlet(np.full(K, 5.0))
        scale = np.linalg.norm(np.einsum("k,kij->ij", _data["weights"], covs))
        _data["tol"] = POT_EPS / scale


def ours():
    return bures_wasserstein_barycentre(
        _data["means"], _data["covs"], _data["weights"], tol=_data["tol"]
    )


def pot():
    return ot.gaussian.bures_wasserstein_barycenter(
        _data["means"], _data["covs"], _data["weights"], eps=POT_EPS, log=True
    )


CASES = [
    {
        "name": f"Bures-Wasserstein barycentre, K={K}, d={D}, POT eps={POT_EPS:g}",
        "setup": setup,
        "ours": ours,
        "anchor": pot,
        "anchor_name": f"POT {ot.__version__} bures_wasserstein_barycenter (fixed point)",
        "repeat": 1,
    },
]


if __name__ == "__main__":
    setup()
    start = time.perf_counter()
    res = ours()
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    _, cov_pot, log = pot()
    pot_s = time.perf_counter() - start
    gap = np.abs(cov_pot - res.covariance).max() / np.abs(res.covariance).max()
    print(
        f"ours {ours_s:.1f} s ({res.n_iter} iterations), POT {pot_s:.1f} s "
        f"({log.get('num_iter', '?')} iterations): speed-up {pot_s / ours_s:.2f}x; "
        f"max relative difference of the covariances {gap:.2g}"
    )
