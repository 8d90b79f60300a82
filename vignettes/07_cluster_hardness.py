# %% [markdown]
# # Clustering hardness: fingerprints, a compute-aware benchmark and ranking reversals
#
# CHB (*Diagnostic Toolkit for Hardness-Aware Clustering Evaluation*, ICML 2026, poster 65800)
# describes each (dataset, representation) pair by a **hardness fingerprint** (separation,
# cohesion and scale heterogeneity, topology), runs clusterers under standardised
# **compute-aware tracks**, and reads the results *conditionally on the fingerprint*: which
# method wins depends on the regime. The paper's coordinate definitions, budgets and
# attribution rule are not public, so everything below is statcore's reconstruction (see the
# "Fidelity" notes of `HardnessFingerprint` and `ClusteringBenchmark`).

# %%
import matplotlib.pyplot as plt
import pandas as pd

from statcore.cluster.benchmark import ClusteringBenchmark
from statcore.cluster.hardness import HardnessFingerprint
from statcore.cluster.simulate import load_benchmark_datasets

pd.set_option("display.precision", 3)

# %% [markdown]
# ## The offline datasets
# scikit-learn's bundled iris, wine, breast cancer and digits, and seeded generators of the
# regimes CHB probes: blobs (equal, varied scales, unbalanced sizes, sheared), two moons and
# two concentric circles (a loop: the H1 regime).

# %%
datasets = load_benchmark_datasets(n_samples=300, random_state=0)
pd.DataFrame(
    {
        name: {"n": d.nobs, "d": d.X.shape[1], "classes": d.n_clusters}
        for name, d in datasets.items()
    }
).T

# %% [markdown]
# ## Their fingerprints
# Twelve scale-free coordinates per dataset, computed from the true labels on the raw
# features. The circles stand out on the topology family (a long H1 bar), the blob designs on
# separation, the real data sets on their low kNN purity and margins.

# %%
prints = {
    name: HardnessFingerprint(d.X, d.labels, representation="raw").fit(random_state=0)
    for name, d in datasets.items()
}
coordinates = pd.DataFrame({name: res.coordinates for name, res in prints.items()}).T
coordinates

# %% [markdown]
# ## Fingerprints of the real data sets, raw and standardized
#
# `HardnessFingerprint` (CHB, ICML 2026 poster 65800; a reconstruction, see its docstring's
# "Fidelity" paragraph) maps a (dataset, representation) pair to twelve scale-free
# coordinates in three families: **separation** (silhouette of the true labels,
# Davies-Bouldin, kNN purity, margin ratio), **cohesion and scale heterogeneity** (spread of
# the class radii and densities, balance of the class sizes) and **topology** (long gaps of
# the minimum spanning tree, classes split into pieces, H1 loops of greedy-permutation
# landmarks with a certified bottleneck bound). Standardizing the features is a change of
# representation, and the fingerprint shows what it does to each dataset.

# %%
from sklearn import datasets as sklearn_datasets
from sklearn.preprocessing import StandardScaler

from statcore.cluster import fingerprint_map

fits = {}
for name in ("iris", "wine", "breast_cancer", "digits"):
    data = getattr(sklearn_datasets, f"load_{name}")()
    for rep, X in (("raw", data.data), ("std", StandardScaler().fit_transform(data.data))):
        model = HardnessFingerprint(X, data.target, representation=rep)
        fits[f"{name} {rep}"] = model.fit(n_landmarks=150, n_resamples=100, random_state=0)

# %% [markdown]
# One fingerprint in full: every coordinate with its interval (a within-class bootstrap for
# separation and cohesion; for the largest H1 persistence, the band certified by the
# landmark cover radius). Iris is easy in its raw units: one class (setosa) sits behind a
# long spanning-tree gap (`h0_gaps` = 1).

# %%
fits["iris raw"].tidy().round(3)

# %%
fits["iris raw"].plot()
plt.show()

# %% [markdown]
# Raw versus standardized, coordinate by coordinate. Standardizing helps wine a lot
# (silhouette 0.20 -> 0.28, kNN purity 0.67 -> 0.92: its raw distances are dominated by
# proline, a feature in the hundreds) but lowers the silhouette of iris and breast cancer
# (their raw scales carried the class signal): the representation audit CHB is after.

# %%
table = pd.DataFrame({label: res.coordinates for label, res in fits.items()}).T
table[["silhouette", "knn_purity", "margin_ratio", "radius_ratio", "density_cv", "h0_gaps"]].round(
    3
)

# %% [markdown]
# The eight fingerprints on one plane (principal components of the standardized
# coordinates; arrows: the coordinates that load most).

# %%
fingerprint_map(list(fits.values()), labels=list(fits))
plt.show()

# %% [markdown]
# ## The benchmark over a small grid
# Four methods (k-means, Ward, spectral on a kNN graph, HDBSCAN) on nine datasets (digits is
# left out to keep this page fast) in two representations, the default track (library
# defaults with the true number of clusters) and three seeds; `fingerprint=True` also
# fingerprints every (dataset, representation) pair. Every cell is one row of `tidy()`.

# %%
grid = {name: d for name, d in datasets.items() if name != "digits"}
bench = ClusteringBenchmark(
    grid,
    ["kmeans", "agglomerative", "spectral", "hdbscan"],
    tracks="default",
    representations=("raw", "standardized"),
)
res = bench.fit(seeds=3, fingerprint=True, random_state=0)
print(res)
res.tidy().head()

# %%
res.summary()

# %%
ax = res.plot(metric="ari")
ax.figure.set_size_inches(7, 6)

# %% [markdown]
# ## A ranking reversal
# Bin the 18 (dataset, representation) units at the median of the kNN purity of their true
# labels, and rank k-means against HDBSCAN in each bin. Where the classes are locally pure
# (clusters separated by low-density gaps, of any shape: moons and circles included) the
# density method wins; where the classes overlap (the real data sets) it merges them or calls
# them noise, and k-means' compact partition does better. Kendall's tau between the two bins'
# rankings is -1: the order is reversed. The interval is a bootstrap over the seeds, so it
# reflects seed noise only, not the choice of datasets.

# %%
regimes = res.regimes("knn_purity", methods=["kmeans", "hdbscan"], random_state=0)
regimes.summary()

# %%
regimes.plot()
plt.show()

# %% [markdown]
# Over all four methods the rankings of the two bins still disagree on several pairs:

# %%
res.regimes("knn_purity", random_state=0).reversals

# %% [markdown]
# ## Representation audit
# Standardising the features changes the scores and the fingerprints. The audit regresses
# each dataset's gain (mean ARI over methods and seeds, standardized minus raw) on the shifts
# of chosen coordinates; with an intercept the mean gain splits exactly into an unexplained
# part and one contribution per coordinate. Nine datasets support two coordinates at most
# honestly: this is an association across datasets, not a causal effect.

# %%
audit = res.attribute_gain("raw", "standardized", coordinates=["silhouette", "knn_purity"])
audit.contributions()

# %% [markdown]
# ## SC-FAGC: clustering with controlled cluster sizes
#
# SC-FAGC (Liu, ICML 2026) clusters n points through m anchors: k-means anchors, a sparse
# anchor graph $Z$ (each point joined to its $s$ nearest anchors), the anchor affinity
# $W = D^{-1/2} Z^\top Z D^{-1/2}$, then a soft assignment $F$ of the anchors that maximises
# $\mathrm{tr}(F^\top W F)$ plus an entropy term, with every cluster's size held in
# $[\alpha / c, \beta / c]$. Each iteration linearises the objective and solves one
# double-bounded transport problem (`statcore.ot.sinkhorn_box`); labels reach the points
# through the anchor graph. Our implementation is a reconstruction from the abstract (see the
# class docstring's Notes).
#
# Four blobs hold 40%, 30%, 20% and 10% of 4,000 points: size ratios to the balanced $1/4$ of
# 1.6, 1.2, 0.8 and 0.4.

# %%
import numpy as np
from scipy.optimize import linear_sum_assignment

from statcore.cluster import SizeConstrainedAnchorClustering

gen = np.random.default_rng(0)
true_sizes = np.array([0.4, 0.3, 0.2, 0.1])
counts = (true_sizes * 4000).astype(int)
angles = np.arange(4) * np.pi / 2
centres = 3.5 * np.c_[np.cos(angles), np.sin(angles)]
X = np.vstack(
    [
        gen.normal(size=(k, 2)) * np.sqrt(true_sizes[j] / 0.25) + centres[j]
        for j, k in enumerate(counts)
    ]
)
truth = np.repeat(np.arange(4), counts)


def matched(labels):
    """Accuracy after matching clusters to classes, and the matched data-level sizes."""
    table = np.zeros((4, 4))
    np.add.at(table, (truth, labels), 1)
    rows, cols = linear_sum_assignment(-table)
    return table[rows, cols].sum() / len(truth), np.bincount(labels, minlength=4)[cols] / len(truth)


# %% [markdown]
# Two settings of the bounds: loose ones that contain the true ratios, $(\alpha, \beta) =
# (0.3, 1.8)$, and tight ones that do not, $(0.8, 1.2)$, which demand a near-balanced
# partition (every cluster between 20% and 30% of the data).

# %%
sized = {
    bounds: SizeConstrainedAnchorClustering(X, 4, n_anchors=200, size_bounds=bounds).fit(
        random_state=0
    )
    for bounds in [(0.3, 1.8), (0.8, 1.2)]
}
for bounds, res in sized.items():
    acc, sizes = matched(res.labels)
    print(
        f"bounds {bounds}: accuracy {acc:.3f}, data-level sizes {np.round(sizes, 3)}, "
        f"anchor-level sizes {np.round(np.sort(res.anchor_sizes)[::-1], 3)}, "
        f"{res.n_iter} IRW steps"
    )
sized[(0.3, 1.8)].tidy()

# %% [markdown]
# With bounds that contain the truth the constraints stay inactive and the sizes are
# recovered (within 3% of each true size). The tight bounds are met exactly at the anchor
# level (the soft sizes $F^\top 1$ sit on 0.2 and 0.3) and approximately at the data level,
# which the labels inherit through the anchor graph: the largest blob gives its outer part to
# its neighbours, the smallest takes points from them.

# %%
fig, axes = plt.subplots(2, 2, figsize=(10, 8))
for column, (bounds, res) in enumerate(sized.items()):
    axes[0, column].scatter(X[:, 0], X[:, 1], c=res.labels, s=2, cmap="tab10")
    axes[0, column].scatter(*res.anchors.T, c="black", s=6, marker="x")
    axes[0, column].set_title(f"size_bounds={bounds} (x: anchors)")
    res.plot("sizes", ax=axes[1, column])
fig.tight_layout()

# %% [markdown]
# Each step maximises a minorant of the (convex) trace objective over the box-constrained
# transport polytope, so the objective never decreases; `predict` labels new points through
# their own anchor graph and reproduces the training labels.

# %%
res = sized[(0.8, 1.2)]
res.plot("objective")
assert np.all(np.diff(res.iterations.history["objective"]) >= -1e-9)
assert np.array_equal(res.predict(X), res.labels)
res.iterations.history.head()
