"""Representational alignment between two sets of features of the same stimuli, its permutation
test, and :class:`AlignmentStudy`: alignment, local dimension and generalisation across models.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from statcore import neighbours as K
from statcore.base import Estimator
from statcore.geometry import _kernels as G
from statcore.geometry.lid import LOCAL_METHODS, LocalID
from statcore.results import Results, TestResult
from statcore.results.plotting import panel_axes, plot_matrix
from statcore.validation import (
    align_rows,
    as_float_array,
    check_option,
    check_positive_int,
    check_random_state,
    check_scalar,
    describe,
)

METRICS = ("mutual_knn", "cka", "unbiased_cka", "cknna", "rsa")
_NEEDS_K = ("mutual_knn", "cknna")
_NAMES = {
    "mutual_knn": "mutual k-nearest-neighbour alignment",
    "cka": "linear CKA",
    "unbiased_cka": "unbiased linear CKA",
    "cknna": "CKNNA",
    "rsa": "RSA (Spearman correlation of correlation-distance RDMs)",
}


def _check_pair(A, B) -> tuple[np.ndarray, np.ndarray]:
    A, B = align_rows(A=A, B=B)
    A = as_float_array(A, name="A", ndim=2, min_rows=4)
    B = as_float_array(B, name="B", ndim=2, min_rows=4)
    if len(A) != len(B):
        raise ValueError(
            f"`A` and `B` must hold the same stimuli (rows); `A` has {len(A)} rows, `B` has "
            f"{len(B)}"
        )
    return A, B


def _check_alignment_k(k, n: int) -> int:
    k = check_positive_int(k, name="k")
    if k >= n - 1:
        raise ValueError(f"`k` must be smaller than n - 1 = {n - 1} (n rows); got {k}")
    return k


def _unit_rows(X: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return np.ascontiguousarray(X / np.where(norms > 0, norms, 1.0))


def _centred_gram(X: np.ndarray) -> np.ndarray:
    Xc = K.centred(X)
    return Xc @ Xc.T


def _hsic_unbiased_parts(Kt: np.ndarray) -> tuple[np.ndarray, float]:
    """Row sums and total of a Gram matrix with its diagonal zeroed."""
    return Kt.sum(axis=1), float(Kt.sum())


def _unbiased_hsic(frob, rows_k, sum_k, rows_l, sum_l, n):
    """Song et al. (2012, eq. 5): ``[tr(KL) + 1'K1 1'L1 / ((n-1)(n-2)) - 2 1'KL1 / (n-2)] /
    (n (n-3))`` with zero diagonals; ``frob`` is ``tr(K L)``."""
    return (frob + sum_k * sum_l / ((n - 1) * (n - 2)) - 2.0 * (rows_k @ rows_l) / (n - 2)) / (
        n * (n - 3)
    )


class _Scorer:
    """One metric's statistic for the observed pairing and for permuted rows of ``B``.

    Everything that does not depend on the pairing (neighbour lists, Gram matrices, their
    normalisers) is computed once, so each permutation costs O(n k) for the neighbour metrics,
    O(n p_A p_B) for linear CKA and O(n^2) for unbiased CKA and RSA.
    """

    def __init__(self, A, B, metric, k):
        self.metric, self.k, self.n = metric, k, len(A)
        if metric in _NEEDS_K:
            self.A, self.B = _unit_rows(A), _unit_rows(B)
            self.idx_a = K.knn(self.A, k, metric="cosine")[1]
            self.idx_b = K.knn(self.B, k, metric="cosine")[1]
            if metric == "cknna":
                ident = np.arange(self.n)[None, :]
                kk = G.cknna_hsic(self.A, self.A, self.idx_a, self.idx_a, ident)[0]
                ll = G.cknna_hsic(self.B, self.B, self.idx_b, self.idx_b, ident)[0]
                self.norm = np.sqrt(kk * ll)
        elif metric == "cka":
            self.A, self.B = K.centred(A), K.centred(B)
            self.norm = np.linalg.norm(self.A.T @ self.A) * np.linalg.norm(self.B.T @ self.B)
        elif metric == "unbiased_cka":
            self.Kt, self.Lt = _centred_gram(A), _centred_gram(B)
            np.fill_diagonal(self.Kt, 0.0)
            np.fill_diagonal(self.Lt, 0.0)
            self.rk, self.sk = _hsic_unbiased_parts(self.Kt)
            self.rl, self.sl = _hsic_unbiased_parts(self.Lt)
            n = self.n
            kk = _unbiased_hsic(np.sum(self.Kt * self.Kt), self.rk, self.sk, self.rk, self.sk, n)
            ll = _unbiased_hsic(np.sum(self.Lt * self.Lt), self.rl, self.sl, self.rl, self.sl, n)
            self.norm = np.sqrt(kk * ll) if kk > 0 and ll > 0 else np.nan
        else:
            iu = np.triu_indices(self.n, 1)
            ranks = []
            for X in (A, B):
                R = np.zeros((self.n, self.n))
                R[iu] = stats.rankdata(1.0 - np.corrcoef(X)[iu])
                R[iu] -= R[iu].mean()
                ranks.append(R + R.T)
            self.Ra, self.Rb = ranks
            self.norm = np.sqrt(np.sum(self.Ra**2) * np.sum(self.Rb**2))

    def __call__(self, perms: np.ndarray) -> np.ndarray:
        """The statistic for each row of ``perms`` (B's rows reordered by it)."""
        n, metric = self.n, self.metric
        if metric == "mutual_knn":
            return G.mutual_knn_counts(self.idx_a, self.idx_b, perms) / (n * self.k)
        if metric == "cknna":
            return G.cknna_hsic(self.A, self.B, self.idx_a, self.idx_b, perms) / self.norm
        if metric == "cka":
            return np.array([np.sum((self.A.T @ self.B[p]) ** 2) / self.norm for p in perms])
        if metric == "unbiased_cka":
            frob = G.permuted_frobenius(self.Kt, self.Lt, perms)
            cross = np.array([self.rk @ self.rl[p] for p in perms])
            total = (frob + self.sk * self.sl / ((n - 1) * (n - 2)) - 2.0 * cross / (n - 2)) / (
                n * (n - 3)
            )
            return total / self.norm
        return G.permuted_frobenius(self.Ra, self.Rb, perms) / self.norm


def alignment(
    A,
    B,
    *,
    metric: str = "mutual_knn",
    k: int = 10,
    n_resamples: int = 999,
    alternative: str = "greater",
    random_state=None,
) -> TestResult:
    """Alignment of two representations of the same ``n`` stimuli, with a permutation p-value.

    Parameters
    ----------
    A, B : array_like of shape (n, p_A) and (n, p_B)
        Features of the same stimuli in the same row order (two models, or a model and brain
        responses). Nothing is modified.
    metric : {"mutual_knn", "cka", "unbiased_cka", "cknna", "rsa"}
        - ``"mutual_knn"``: mean over stimuli of ``|N_k^A(i) ∩ N_k^B(i)| / k``, cosine
          neighbours (Huh et al. 2024); 1 for identical neighbourhoods, about ``k / (n - 1)``
          for independent ones;
        - ``"cka"``: linear CKA ``|A_c' B_c|_F^2 / (|A_c' A_c|_F |B_c' B_c|_F)`` on centred
          columns (Kornblith et al. 2019); positive bias of order ``p / n`` under independence;
        - ``"unbiased_cka"``: CKA from Song et al.'s (2012) unbiased HSIC of the linear Gram
          matrices, centred near 0 under independence;
        - ``"cknna"``: Huh et al.'s CKNNA, unbiased HSIC restricted to pairs that are mutual
          ``k``-nearest (inner-product) neighbours in both spaces, of unit-norm rows;
        - ``"rsa"``: Spearman correlation of the upper triangles of the correlation-distance
          dissimilarity matrices (Kriegeskorte et al. 2008).
    k : int
        Neighbours for ``"mutual_knn"`` and ``"cknna"`` (at least 2 for ``"cknna"``; below
        ``n - 1``); ignored otherwise.
    n_resamples : int
        Permutations of ``B``'s rows for the null (0: the statistic only, p-value NaN).
    alternative : {"greater", "less", "two-sided"}
        ``"greater"``: more aligned than random pairings.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    TestResult
        ``statistic`` (= ``estimate``) the alignment, ``pvalue`` ``(1 + #{draws at least as
        extreme}) / (n_resamples + 1)``, the draws in ``null_distribution``.

    Notes
    -----
    The null hypothesis is exchangeability of the pairing: any matching of ``A``'s rows to
    ``B``'s is as likely as the observed one (no shared structure). Every statistic is
    recomputed exactly on each permutation, reusing the parts that do not depend on it.

    Fidelity: reconstruction. The paper (arXiv:2601.22722, abstract only) does not say which
    alignment metric it uses; the metrics follow Huh et al.'s released code
    (minyoungg/platonic-rep ``metrics.py``) without its ``1e-6`` added to denominators, and
    the permutation test is ours.

    References
    ----------
    Yu et al. (2026), arXiv:2601.22722. Huh, M., Cheung, B., Wang, T. and Isola, P. (2024). The
    platonic representation hypothesis. *ICML 2024*. Kornblith, S., Norouzi, M., Lee, H. and
    Hinton, G. (2019). Similarity of neural network representations revisited. *ICML 2019*.
    Song, L., Smola, A., Gretton, A., Bedo, J. and Borgwardt, K. (2012). Feature selection via
    dependence maximization. *JMLR* 13, 1393-1434. Kriegeskorte, N., Mur, M. and Bandettini, P.
    (2008). Representational similarity analysis. *Front. Syst. Neurosci.* 2, 4.
    """
    metric = check_option(metric, name="metric", options=METRICS)
    A, B = _check_pair(A, B)
    n = len(A)
    if metric in _NEEDS_K:
        k = _check_alignment_k(k, n)
        if metric == "cknna" and k < 2:
            raise ValueError(f"`k` must be at least 2 for metric='cknna'; got {k}")
    n_resamples = check_scalar(n_resamples, name="n_resamples", kind=numbers.Integral, low=0)
    alternative = check_option(
        alternative, name="alternative", options=("greater", "less", "two-sided")
    )
    rng = check_random_state(random_state)
    scorer = _Scorer(A, B, metric, k)
    statistic = float(scorer(np.arange(n)[None, :])[0])
    draws, pvalue = None, np.nan
    if n_resamples:
        perms = np.ascontiguousarray(rng.permuted(np.tile(np.arange(n), (n_resamples, 1)), axis=1))
        draws = scorer(perms)
        pvalue = _permutation_pvalue(statistic, draws, alternative)
    detail = f", k={k}" if metric in _NEEDS_K else ""
    return TestResult(
        method=f"Representational alignment: {_NAMES[metric]}{detail}",
        statistic=statistic,
        pvalue=pvalue,
        alternative=alternative,
        distribution="permutation of B's rows" if n_resamples else "",
        null_distribution=draws,
        null_hypothesis="the pairing of A's and B's rows is exchangeable (no shared structure)",
        estimate=statistic,
        n_resamples=n_resamples or None,
        nobs=n,
        statistic_name=metric,
        random_state_used=random_state if isinstance(random_state, numbers.Integral) else None,
    )


def _permutation_pvalue(statistic, draws, alternative) -> float:
    # relative slack: a permutation that reproduces the statistic may differ in the last bits
    slack = 1e-12 * max(1.0, abs(statistic))
    greater = (1 + np.count_nonzero(draws >= statistic - slack)) / (len(draws) + 1)
    less = (1 + np.count_nonzero(draws <= statistic + slack)) / (len(draws) + 1)
    if alternative == "greater":
        return float(greater)
    if alternative == "less":
        return float(less)
    return float(min(1.0, 2 * min(greater, less)))


def _correlation(x, y, kind):
    if kind == "spearman":
        x, y = stats.rankdata(x), stats.rankdata(y)
    x, y = x - x.mean(), y - y.mean()
    denominator = np.sqrt((x @ x) * (y @ y))
    return float(x @ y / denominator) if denominator > 0 else np.nan


def _residual(v, z):
    design = np.column_stack([np.ones_like(z), z])
    coef, *_ = np.linalg.lstsq(design, v, rcond=None)
    return v - design @ coef


def _plot_matrix_kind(results, ax=None, **kwargs):
    """The model-model alignment matrix as a heat map."""
    ax = plot_matrix(
        results.alignment_matrix.to_numpy(),
        ax=ax,
        xlabel="model",
        ylabel="model",
        label=results.metric,
        title="model-model alignment",
        **kwargs,
    )
    names = list(results.alignment_matrix.index)
    ax.set_xticks(range(len(names)), names, rotation=90)
    ax.set_yticks(range(len(names)), names)
    return ax


def _plot_scatter(results, ax=None, **kwargs):
    """Local intrinsic dimension against each other per-model variable, one panel each."""
    table = results.models
    others = [c for c in table.columns if c not in ("lid", "size")]
    axes = panel_axes(len(others), ax, ncols=min(len(others), 3))
    for panel, column in zip(axes, others, strict=True):
        panel.scatter(table["lid"], table[column], **kwargs)
        for name, row in table.iterrows():
            panel.annotate(str(name), (row["lid"], row[column]), fontsize=7)
        panel.set_xlabel("local intrinsic dimension")
        panel.set_ylabel(column)
    return axes


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class AlignmentStudyResults(Results):
    """Alignment, local dimension and generalisation across models, and their correlations.

    Attributes
    ----------
    alignment_matrix : DataFrame
        Model-by-model alignment (diagonal: self-alignment).
    models : DataFrame
        One row per model: ``lid`` (mean local dimension), ``model_alignment`` (mean alignment
        to the other models), ``target_alignment`` / ``target_alignment:<name>`` (alignment to
        each target), ``accuracy`` and ``size`` when given.
    correlations : DataFrame
        One row per pair of per-model variables and kind (``pearson``, ``spearman``, and
        ``partial_pearson`` / ``partial_spearman`` controlling for ``log(size)`` when sizes are
        given): ``estimate``, ``p_value`` (permutation over models), ``nobs``.
    metric : str
    """

    alignment_matrix: pd.DataFrame
    models: pd.DataFrame
    correlations: pd.DataFrame
    metric: str = "mutual_knn"

    _plots: ClassVar[dict] = {"scatter": _plot_scatter, "matrix": _plot_matrix_kind}

    def tidy(self) -> pd.DataFrame:
        """The correlations: ``term`` (``"x ~ y"``), ``level`` (the kind), ``estimate``,
        ``p_value``, ``nobs``."""
        return self.correlations.copy()

    def _repr_lines(self) -> list[str]:
        return [f"  {len(self.models)} models, metric {self.metric}"]


class AlignmentStudy(Estimator):
    """Relate local intrinsic dimension, alignment and generalisation across models.

    Parameters
    ----------
    features : mapping of str to array_like (n, p_model)
        Each model's features of the same ``n`` stimuli, rows in the same order (e.g. from
        :func:`mlcore.analysis.extract_features`). At least 3 models.
    accuracy : mapping of str to float, optional
        Each model's generalisation score (test accuracy); all models or none.
    brain : array_like (n, q) or mapping of str to array_like, optional
        Target responses to the same stimuli (fMRI voxels of a region; several regions as a
        mapping); model-target alignment is measured against each.
    size : mapping of str to float, optional
        Each model's size (parameter count); correlations are then also reported as partial
        correlations controlling for ``log(size)``.

    Notes
    -----
    :meth:`fit` computes, per model, the mean Levina-Bickel local dimension and the mean
    alignment to the other models; per target, each model's alignment to it; then Pearson and
    Spearman correlations across models between every pair of these per-model variables (and
    accuracy), with permutation p-values (``n_resamples`` random relabellings of the models;
    two-sided). The partial correlation correlates the residuals of both variables after a
    least-squares fit on ``log(size)`` (Spearman: of their ranks); its permutation null
    permutes one residual vector, which is exact only asymptotically (Freedman and Lane 1983).

    Fidelity: reconstruction. The paper (arXiv:2601.22722; abstract only) reports that lower
    local dimension goes with stronger model-model and model-brain alignment and better
    generalisation, and that global measures do not; the exact estimator, alignment metric,
    correlation type and size control are not known, and this analysis is ours.

    References
    ----------
    Yu, Ma, Wei, Zhang, Deng, Deng and Liu (2026). Local intrinsic dimension of representations
    predicts alignment and generalization in AI models and human brain. arXiv:2601.22722.
    Huh, M. et al. (2024). The platonic representation hypothesis. *ICML 2024*.
    """

    method_name = "Alignment study"

    def __init__(self, features, *, accuracy=None, brain=None, size=None):
        if not isinstance(features, Mapping) or len(features) < 3:
            raise ValueError(
                "`features` must be a mapping of at least 3 model names to feature arrays; "
                f"got {describe(features)}"
            )
        names = [f"features[{name!r}]" for name in features]
        aligned = align_rows(**dict(zip(names, features.values(), strict=True)))
        self.features = {
            str(name): as_float_array(value, name=label, ndim=2, min_rows=4)
            for name, label, value in zip(features, names, aligned, strict=True)
        }
        rows = {name: len(value) for name, value in self.features.items()}
        if len(set(rows.values())) > 1:
            raise ValueError(
                f"every model in `features` must have one row per stimulus; got rows {rows}"
            )
        self.n_stimuli = next(iter(rows.values()))
        self.accuracy = self._per_model(accuracy, "accuracy")
        self.size = self._per_model(size, "size")
        if self.size is not None and np.any(self.size <= 0):
            raise ValueError("`size` must be positive for every model (its log is used)")
        if brain is None:
            self.brain = {}
        elif isinstance(brain, Mapping):
            self.brain = {
                str(key): as_float_array(value, name=f"brain[{key!r}]", ndim=2)
                for key, value in brain.items()
            }
        else:
            self.brain = {"target": as_float_array(brain, name="brain", ndim=2)}
        for key, value in self.brain.items():
            if len(value) != self.n_stimuli:
                raise ValueError(
                    f"`brain` ({key!r}) must have one row per stimulus ({self.n_stimuli}); got "
                    f"{len(value)}"
                )

    def _per_model(self, values, name):
        if values is None:
            return None
        if not isinstance(values, Mapping) or set(map(str, values)) != set(self.features):
            raise ValueError(
                f"`{name}` must map every model of `features` ({sorted(self.features)}) to a "
                f"number; got {describe(values)}"
            )
        given = {str(key): value for key, value in values.items()}
        return np.array(
            [check_scalar(given[m], name=f"{name}[{m!r}]") for m in self.features], dtype=float
        )

    @property
    def nobs(self) -> int:
        return len(self.features)

    def fit(
        self,
        *,
        metric: str = "mutual_knn",
        k: int = 10,
        lid_method: str = "mle",
        lid_k: int = 20,
        n_resamples: int = 999,
        random_state=None,
    ) -> AlignmentStudyResults:
        """Compute the alignment matrices, the local dimensions and their correlations.

        Parameters
        ----------
        metric : str
            Alignment metric (see :func:`alignment`).
        k : int
            Neighbours of the alignment metric.
        lid_method : {"mle", "twonn", "gride"}
            Local estimator of :class:`LocalID`; the per-model value is its mean.
        lid_k : int
            Neighbourhood size of the local estimator.
        n_resamples : int
            Permutations of the models behind each correlation's p-value.
        random_state : None, int, SeedSequence or Generator

        Returns
        -------
        AlignmentStudyResults
        """
        check_option(metric, name="metric", options=METRICS)
        check_option(lid_method, name="lid_method", options=LOCAL_METHODS)
        # checked even where the metric does not read it (cka), so a typo never waits
        k = check_positive_int(k, name="k")
        lid_k = check_positive_int(lid_k, name="lid_k")
        n_resamples = check_positive_int(n_resamples, name="n_resamples")
        rng = check_random_state(random_state)
        names = list(self.features)
        m = len(names)

        def score(a, b):
            return alignment(a, b, metric=metric, k=k, n_resamples=0).statistic

        matrix = np.eye(m)
        for i in range(m):
            matrix[i, i] = score(self.features[names[i]], self.features[names[i]])
            for j in range(i + 1, m):
                matrix[i, j] = matrix[j, i] = score(
                    self.features[names[i]], self.features[names[j]]
                )
        table = pd.DataFrame(index=pd.Index(names, name="model"))
        table["lid"] = [
            LocalID(self.features[name])
            .fit(method=lid_method, k=lid_k, n_resamples=0)
            .estimates["mean"]
            for name in names
        ]
        table["model_alignment"] = (matrix.sum(axis=1) - np.diag(matrix)) / (m - 1)
        for key, target in self.brain.items():
            column = "target_alignment" if len(self.brain) == 1 else f"target_alignment:{key}"
            table[column] = [score(self.features[name], target) for name in names]
        if self.accuracy is not None:
            table["accuracy"] = self.accuracy
        if self.size is not None:
            table["size"] = self.size
        correlations = self._correlations(table, n_resamples, rng)
        return AlignmentStudyResults(
            method=f"{self.method_name} ({m} models, {metric})",
            alignment_matrix=pd.DataFrame(matrix, index=names, columns=names),
            models=table,
            correlations=correlations,
            metric=metric,
            notes=(f"{self.n_stimuli} stimuli; p-values from {n_resamples} model permutations",),
            **self._result_fields(),
        )

    def _correlations(self, table, n_resamples, rng) -> pd.DataFrame:
        variables = [c for c in table.columns if c != "size"]
        m = len(table)
        perms = np.array([rng.permutation(m) for _ in range(n_resamples)])
        log_size = np.log(table["size"].to_numpy()) if "size" in table else None
        rows = []
        for a_i, a in enumerate(variables):
            for b in variables[a_i + 1 :]:
                x, y = table[a].to_numpy(float), table[b].to_numpy(float)
                for kind in ("pearson", "spearman"):
                    pairs = [(kind, x, y, kind)]
                    if log_size is not None:
                        xs = stats.rankdata(x) if kind == "spearman" else x
                        ys = stats.rankdata(y) if kind == "spearman" else y
                        zs = stats.rankdata(log_size) if kind == "spearman" else log_size
                        pairs.append(
                            (f"partial_{kind}", _residual(xs, zs), _residual(ys, zs), "pearson")
                        )
                    for level, u, v, how in pairs:
                        r = _correlation(u, v, how)
                        draws = np.array([_correlation(u, v[p], how) for p in perms])
                        p = (
                            _permutation_pvalue(abs(r), np.abs(draws), "greater")
                            if np.isfinite(r)
                            else np.nan
                        )
                        rows.append(
                            {
                                "term": f"{a} ~ {b}",
                                "level": level,
                                "estimate": r,
                                "p_value": p,
                                "nobs": m,
                            }
                        )
        return pd.DataFrame(rows)
