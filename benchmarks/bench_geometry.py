"""Local intrinsic dimension and alignment beside scikit-dimension and a dense reference.

- kNN-based local dimension (Levina-Bickel MLE per point, k = 20) at n = 50,000, d = 100:
  ours is one exact blocked kNN search (the clustering area's kernel) plus an O(nk) numba
  pass; the anchor is scikit-dimension's ``MLE().fit`` with ``n_neighbors=20``, which computes
  the same per-point estimates (``dimension_pw_``; its pooled value equals our harmonic
  aggregate to 1e-6). scikit-dimension 0.5.0's ``MLE`` is a local estimator without a
  ``fit_pw`` method; ``fit`` is its pointwise path. Both sides are dominated by the exact
  kNN search, so the ratio is the kNN kernels' ratio.
- The same in low dimension, where the peers search neighbours with trees: a swiss roll
  (scikit-learn's ``make_swiss_roll``, 3 coordinates plus 7 of 0.05 noise, rotated into
  d = 10) at n = 20,000 and 100,000, local MLE (k = 20) against ``MLE().fit``, and the
  global TwoNN against ``TwoNN().fit``; ours takes the shared KD-tree there
  (:func:`statcore.neighbours.search_algorithm`).
- KSG mutual information (k = 3) at n = 10,000 with one coordinate a side, against
  scikit-learn's ``mutual_info_regression`` (KD-tree and radius counts, the same estimator
  after its own standardising and jitter).
- Unbiased CKA with 199 permutations at n = 1,000, p = 64: ours reuses the Gram matrices
  and sums ``K[i, j] L[p_i, p_j]`` in numba per permutation; the anchor recomputes
  platonic-rep's dense formula (Song et al. eq. 5) in numpy for each permutation.
"""

import numpy as np
import skdim
import sklearn
from sklearn.datasets import make_swiss_roll
from sklearn.feature_selection import mutual_info_regression

from statcore.geometry import GlobalID, LocalID, alignment, ksg_mutual_information

N, D, LATENT = 50_000, 100, 10
_data = {}


def setup():
    if not _data:
        rng = np.random.default_rng(0)
        _data["X"] = rng.uniform(size=(N, LATENT)) @ rng.normal(size=(LATENT, D))
        _data["A"] = rng.normal(size=(1000, 64))
        _data["B"] = _data["A"] @ rng.normal(size=(64, 64)) + rng.normal(size=(1000, 64))


def swiss_roll(n):
    if n not in _data:
        rng = np.random.default_rng(1)
        roll = make_swiss_roll(n, noise=0.05, random_state=1)[0]
        X = np.hstack([roll, 0.05 * rng.standard_normal((n, 7))])
        _data[n] = X @ np.linalg.qr(rng.standard_normal((10, 10)))[0]
    return _data[n]


def ksg_pair():
    if "xy" not in _data:
        rng = np.random.default_rng(2)
        x = rng.standard_normal(10_000)
        _data["xy"] = x, x + rng.standard_normal(10_000)
    return _data["xy"]


def _low_dim_cases():
    cases = []
    for n in (20_000, 100_000):
        cases.append(
            {
                "name": f"local ID (Levina-Bickel MLE, k=20), swiss roll n={n}, d=10",
                "setup": lambda n=n: swiss_roll(n),
                "ours": lambda n=n: LocalID(swiss_roll(n)).fit(k=20).estimates["harmonic"],
                "anchor": lambda n=n: skdim.id.MLE().fit(swiss_roll(n), n_neighbors=20).dimension_,
                "anchor_name": f"scikit-dimension {skdim.__version__} MLE().fit",
            }
        )
    cases.append(
        {
            "name": "global ID (TwoNN), swiss roll n=20000, d=10",
            "setup": lambda: swiss_roll(20_000),
            "ours": lambda: GlobalID(swiss_roll(20_000)).fit().estimates["twonn"],
            "anchor": lambda: skdim.id.TwoNN().fit(swiss_roll(20_000)).dimension_,
            "anchor_name": f"scikit-dimension {skdim.__version__} TwoNN().fit",
        }
    )
    cases.append(
        {
            "name": "KSG mutual information (k=3), n=10000, d_x = d_y = 1",
            "setup": ksg_pair,
            "ours": lambda: ksg_mutual_information(*ksg_pair()).estimate,
            "anchor": lambda: mutual_info_regression(
                ksg_pair()[0][:, None], ksg_pair()[1], n_neighbors=3, random_state=0
            )[0],
            "anchor_name": f"scikit-learn {sklearn.__version__} mutual_info_regression",
        }
    )
    return cases


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
    *_low_dim_cases(),
]
