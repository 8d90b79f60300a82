"""Alignment metrics against known oracles, their permutation tests, and the
alignment study across models."""

import numpy as np
import pytest
from scipy import stats
from scipy.stats import ortho_group

from statcore.geometry import AlignmentStudy, alignment
from statcore.results import TestResult

N, P = 1000, 64


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(N, P)), rng.normal(size=(N, P)), ortho_group.rvs(P, random_state=1)


@pytest.mark.parametrize("metric", ["mutual_knn", "cka", "unbiased_cka", "cknna"])
def test_self_and_rotated_scaled_copy_align_perfectly(data, metric):
    A, _, Q = data
    assert alignment(A, A, metric=metric, n_resamples=0).statistic == pytest.approx(1, abs=1e-9)
    # all four see only inner products / cosine neighbours, unchanged by 3 A Q
    assert alignment(A, 3 * A @ Q, metric=metric, n_resamples=0).statistic == pytest.approx(
        1, abs=1e-9
    )


def test_mutual_knn_under_independence_is_near_k_over_n(data):
    A, B, _ = data
    value = alignment(A, B, metric="mutual_knn", k=10, n_resamples=0).statistic
    # expectation k / (n - 1) = 0.0100; sd of the mean of 1000 hypergeometric shares ~0.001
    assert abs(value - 10 / (N - 1)) < 0.004


def test_cka_bias_and_unbiased_cka_near_zero(data):
    A, B, _ = data
    # independent data: biased CKA 0.059 at n = 1000, p = 64 (bias ~ p / n); unbiased |value| <= 0.01
    assert 0.04 < alignment(A, B, metric="cka", n_resamples=0).statistic < 0.08
    for seed in range(3):
        rng = np.random.default_rng(10 + seed)
        X, Y = rng.normal(size=(N, P)), rng.normal(size=(N, P))
        assert abs(alignment(X, Y, metric="unbiased_cka", n_resamples=0).statistic) <= 0.01


def test_matches_direct_formulas_on_a_small_case():
    rng = np.random.default_rng(2)
    A, B = rng.normal(size=(40, 5)), rng.normal(size=(40, 3))
    B[:, 0] += A[:, 0]
    Ac, Bc = A - A.mean(0), B - B.mean(0)
    cka = np.sum((Ac.T @ Bc) ** 2) / (np.linalg.norm(Ac.T @ Ac) * np.linalg.norm(Bc.T @ Bc))
    assert alignment(A, B, metric="cka", n_resamples=0).statistic == pytest.approx(cka, rel=1e-10)

    def hsic_u(K, L):  # Song et al. (2012) eq. 5, written out densely
        n = len(K)
        K, L = K - np.diag(np.diag(K)), L - np.diag(np.diag(L))
        return (
            np.sum(K * L.T) + K.sum() * L.sum() / ((n - 1) * (n - 2)) - 2 * np.sum(K @ L) / (n - 2)
        ) / (n * (n - 3))

    K, L = Ac @ Ac.T, Bc @ Bc.T
    ucka = hsic_u(K, L) / np.sqrt(hsic_u(K, K) * hsic_u(L, L))
    got = alignment(A, B, metric="unbiased_cka", n_resamples=0).statistic
    assert got == pytest.approx(ucka, rel=1e-10)

    # CKNNA as in platonic-rep: top-k inner-product neighbours of unit rows, diagonal excluded
    An = A / np.linalg.norm(A, axis=1, keepdims=True)
    Bn = B / np.linalg.norm(B, axis=1, keepdims=True)
    Ka, Lb = An @ An.T, Bn @ Bn.T

    def mask(G, k=5):
        H = G.copy()
        np.fill_diagonal(H, -np.inf)
        M = np.zeros_like(G)
        np.put_along_axis(M, np.argsort(-H, axis=1)[:, :k], 1.0, axis=1)
        return M

    def sim(G1, G2):
        M = mask(G1) * mask(G2)
        return hsic_u(M * G1, M * G2)

    cknna = sim(Ka, Lb) / np.sqrt(sim(Ka, Ka) * sim(Lb, Lb))
    got = alignment(A, B, metric="cknna", k=5, n_resamples=0).statistic
    assert got == pytest.approx(cknna, rel=1e-9)

    iu = np.triu_indices(40, 1)
    rsa = stats.spearmanr((1 - np.corrcoef(A))[iu], (1 - np.corrcoef(B))[iu])[0]
    assert alignment(A, B, metric="rsa", n_resamples=0).statistic == pytest.approx(rsa, rel=1e-9)


@pytest.mark.parametrize("metric", ["mutual_knn", "cka", "unbiased_cka", "cknna", "rsa"])
def test_permutation_pvalues_small_under_dependence(metric):
    rng = np.random.default_rng(4)
    A = rng.normal(size=(150, 8))
    B = A @ rng.normal(size=(8, 6)) + 0.5 * rng.normal(size=(150, 6))
    res = alignment(A, B, metric=metric, k=10, n_resamples=199, random_state=0)
    assert isinstance(res, TestResult)
    # strong dependence: no permutation comes near, so the p-value is the floor 1 / 200
    assert res.pvalue == pytest.approx(1 / 200)
    statistic, pvalue = res
    assert statistic == res.estimate and len(res.null_distribution) == 199


@pytest.mark.parametrize("metric", ["mutual_knn", "unbiased_cka"])
def test_permutation_pvalues_uniform_under_independence(metric):
    pvalues = []
    for seed in range(60):
        rng = np.random.default_rng(100 + seed)
        A, B = rng.normal(size=(60, 4)), rng.normal(size=(60, 4))
        res = alignment(A, B, metric=metric, k=5, n_resamples=99, random_state=seed)
        pvalues.append(res.pvalue)
    pvalues = np.array(pvalues)
    # valid test: share below 0.1 is Binomial(60, <=0.1), P(> 14) < 1e-3; and not degenerate
    assert np.mean(pvalues <= 0.1) <= 14 / 60
    assert stats.kstest(pvalues, "uniform").pvalue > 0.001


def test_bad_input_names_argument(data):
    A, B, _ = data
    with pytest.raises(ValueError, match="`A` and `B`.*1000.*999"):
        alignment(A, B[:-1])
    with pytest.raises(ValueError, match="`k`"):
        alignment(A[:20], B[:20], k=19)
    bad = B.copy()
    bad[5, 5] = np.nan
    with pytest.raises(ValueError, match="`B`.*NaN"):
        alignment(A, bad)
    with pytest.raises(ValueError, match="`metric`"):
        alignment(A, B, metric="svcca")
    with pytest.raises(ValueError, match="`k`.*cknna"):
        alignment(A, B, metric="cknna", k=1)
    before = A.copy()
    alignment(A, B, metric="cka", n_resamples=3, random_state=0)
    np.testing.assert_array_equal(A, before)


def study_inputs(seed=0):
    """Five 'models' whose features are noisier views of one latent: the noisier the view,
    the higher its local dimension, the weaker its alignment and the lower its 'accuracy'."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(300, 3))
    features, accuracy, size = {}, {}, {}
    for i, noise in enumerate([0.02, 0.3, 0.6, 1.0, 1.5]):
        mix = rng.normal(size=(3, 20))
        features[f"m{i}"] = latent @ mix + noise * rng.normal(size=(300, 20))
        accuracy[f"m{i}"] = 0.95 - 0.3 * noise
        size[f"m{i}"] = 10.0 ** (6 + i % 2)
    brain = latent @ rng.normal(size=(3, 30)) + 0.2 * rng.normal(size=(300, 30))
    return features, accuracy, size, brain


def test_study_recovers_lid_alignment_generalisation_ordering():
    features, accuracy, size, brain = study_inputs()
    res = AlignmentStudy(features, accuracy=accuracy, brain=brain, size=size).fit(
        n_resamples=199, random_state=0
    )
    m = res.models
    assert m["lid"].is_monotonic_increasing
    corr = res.tidy().set_index(["term", "level"])
    for other in ("model_alignment", "target_alignment"):
        # noisier views align worse; the two cleanest may swap places (rho = -0.9)
        assert corr.loc[(f"lid ~ {other}", "spearman"), "estimate"] <= -0.8
    row = corr.loc[("lid ~ accuracy", "spearman")]
    # accuracy falls with the noise, and LID rises with it: rho = -1, whose two-sided
    # permutation p-value over 5! orderings is 2/120, so ~0.02 from 199 random permutations
    assert row["estimate"] == pytest.approx(-1.0)
    assert row["p_value"] < 0.05
    assert ("lid ~ accuracy", "partial_spearman") in corr.index
    assert res.alignment_matrix.shape == (5, 5)
    np.testing.assert_allclose(np.diag(res.alignment_matrix), 1.0)
    assert res.fit_options["metric"] == "mutual_knn"
    assert len(res.summary().as_text()) > 0


def test_study_bad_input():
    features, accuracy, _, brain = study_inputs()
    short = dict(features, m0=features["m0"][:-1])
    with pytest.raises(ValueError, match="`features`"):
        AlignmentStudy(short)
    with pytest.raises(ValueError, match="`accuracy`"):
        AlignmentStudy(features, accuracy={"m0": 0.9})
    with pytest.raises(ValueError, match="`brain`"):
        AlignmentStudy(features, brain=brain[:-2])


def test_study_plots_draw():
    import matplotlib

    matplotlib.use("Agg")
    features, accuracy, _, brain = study_inputs()
    res = AlignmentStudy(features, accuracy=accuracy, brain=brain).fit(n_resamples=9)
    assert len(res.plot()) == 3
    res.plot("matrix")
