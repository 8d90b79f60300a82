"""Local intrinsic dimension and alignment beside scikit-dimension and a dense reference.

- kNN-based local dimension (Levina-Bickel MLE per point, k = 20) at n = 50,000, d = 100:
  ours is one exact blocked kNN search (the clustering area's kernel) plus an O(nk) numba
  pass; the anchor is scikit-dimension's ``MLE().fit`` with ``n_neighbors=20``, which computes
  the same per-point estimates (``dimension_pw_``; its pooled value equals our harmonic
  aggregate to 1e-6). scikit-dimension 0.5.0's ``MLE`` is a local estimator without a
  ``fit_pw`` method; ``fit`` is its pointwise path. Both sides are dominated by the exact
  kNN search, so the ratio is the kNN kernels' ratio.
- Unbiased CKA with 199 permutations at n = 1,000, p = 64: ours reuses the Gram matrices
  and sums ``K[i, j] L[p_i, p_j]`` in numba per permutation; the anchor recomputes
  platonic-rep's dense formula (Song et al. eq. 5) in numpy for each permutation.
"""

import numpy as np
import skdim

from statcore.geometry import LocalID, alignment

N, D, LATENT = 50_000, 100, 10
_data = {}


def setup():
    if not _data:
        rng = np.random.default_rng(0)
        _data["X"] = rng.uniform(size=(N, LATENT)) @ rng.normal(size=(LATENT, D))
        _data["A"] = rng.normal(size=(1000, 64))
        _data["B"] = _data["A"] @ rng.normal(size=(64, 64)) + rng.normal(size=(1000, 64))


def ours_lid():
    return LocalID(_data["X"]).fit(k=20, n_resamples=0).estimates["harmonic"]


def skdim_lid():
    return skdim.id.MLE().fit(_data["X"], n_neighbors=20).dimension_


def ours_ucka():
    return alignment(
        _data["A"], _data["B"], metric="unbiased_cka", n_resamples=199, random_state=0
    ).pvalue


def _hsic_u(K, L):
    n = len(K)
    return (
        np.sum(K * L.T) + K.sum() * L.sum() / ((n - 1) * (n - 2)) - 2 * np.sum(K @ L) / (n - 2)
    ) / (n * (n - 3))


def dense_ucka():
    A = _data["A"] - _data["A"].mean(0)
    B = _data["B"] - _data["B"].mean(0)
    K, L = A @ A.T, B @ B.T
    np.fill_diagonal(K, 0)
    np.fill_diagonal(L, 0)
    rng = np.random.default_rng(0)
    return [_hsic_u(K, L[p][:, p]) for p in (rng.permutation(1000) for _ in range(200))]


CASES = [
    {
        "name": f"local ID (Levina-Bickel MLE, k=20), n={N}, d={D}",
        "setup": setup,
        "ours": ours_lid,
        "anchor": skdim_lid,
        "anchor_name": f"scikit-dimension {skdim.__version__} MLE().fit",
        "repeat": 1,
    },
    {
        "name": "unbiased CKA + 199 permutations, n=1000, p=64",
        "setup": setup,
        "ours": ours_ucka,
        "anchor": dense_ucka,
        "anchor_name": "dense numpy (platonic-rep formula)",
    },
]
