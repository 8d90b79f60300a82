"""Every public entry of statcore's newer areas refuses bad input with an error naming the
argument (issue 38); the harness and its kinds are in ``tests/_bad_input.py``."""

import numpy as np
import pytest
from _bad_input import Row, make_table_tests

from statcore import geometry, select

_rng = np.random.default_rng(0)
X = _rng.normal(size=(40, 3))
Y = X @ _rng.normal(size=(3, 2)) + 0.1 * _rng.normal(size=(40, 2))
x1, y1 = X[:, 0].copy(), Y[:, 0].copy()
R1 = np.abs(_rng.normal(size=40)) + 0.5
R2 = R1 * (1.0 + np.abs(_rng.normal(size=40)))

ROWS = {
    "statcore.geometry.AlignmentStudy": Row(
        lambda k=3, n_resamples=9, random_state=0, metric="cka": (
            geometry.AlignmentStudy({"a": X, "b": Y, "c": X + 0.1}).fit(
                metric=metric, k=k, n_resamples=n_resamples, random_state=random_state
            )
        ),
        {"k": ("positive_int", 3), "n_resamples": ("positive_int", 9),
         "random_state": ("random_state", 0), "metric": ("option", "cka")},
    ),
    "statcore.geometry.GlobalID": Row(
        lambda X=X, variance_share=0.9, discard_fraction=0.1: geometry.GlobalID(X).fit(
            variance_share=variance_share, discard_fraction=discard_fraction
        ),
        {"X": ("matrix", X), "variance_share": ("fraction_or_one", 0.9),
         "discard_fraction": ("fraction_or_zero", 0.1)},
    ),
    "statcore.geometry.LocalID": Row(
        lambda X=X, method="mle", k=5, n_resamples=5, random_state=0: geometry.LocalID(X).fit(
            method=method, k=k, n_resamples=n_resamples, random_state=random_state
        ),
        {"X": ("matrix", X), "method": ("option", "mle"), "k": ("positive_int", 5),
         "n_resamples": ("nonneg_int", 5), "random_state": ("random_state", 0)},
    ),
    "statcore.geometry.alignment": Row(
        lambda A=X, B=Y, metric="mutual_knn", k=3, n_resamples=9, alternative="greater",
        random_state=0: geometry.alignment(
            A, B, metric=metric, k=k, n_resamples=n_resamples, alternative=alternative,
            random_state=random_state,
        ),
        {"A": ("matrix", X), "B": ("matrix", Y), "metric": ("option", "mutual_knn"),
         "k": ("positive_int", 3), "n_resamples": ("nonneg_int", 9),
         "alternative": ("option", "greater"), "random_state": ("random_state", 0)},
    ),
    "statcore.geometry.correlated_bernoulli_mi": Row(
        lambda q=0.75: geometry.correlated_bernoulli_mi(q), {"q": ("unit_interval", 0.75)}
    ),
    "statcore.geometry.correlated_bernoulli_sample": Row(
        lambda n=20, q=0.75, random_state=0: geometry.correlated_bernoulli_sample(
            n, q=q, random_state=random_state
        ),
        {"n": ("positive_int", 20), "q": ("unit_interval", 0.75),
         "random_state": ("random_state", 0)},
    ),
    "statcore.geometry.gaussian_copula_mi": Row(
        lambda rho=0.5, dim=1: geometry.gaussian_copula_mi(rho, dim),
        {"dim": ("positive_int", 1)},
    ),
    "statcore.geometry.gaussian_copula_sample": Row(
        lambda n=20, rho=0.5, dim=1, marginals="beta", random_state=0: (
            geometry.gaussian_copula_sample(
                n, rho=rho, dim=dim, marginals=marginals, random_state=random_state
            )
        ),
        {"n": ("positive_int", 20), "dim": ("positive_int", 1),
         "marginals": ("option", "beta"), "random_state": ("random_state", 0)},
    ),
    "statcore.geometry.ksg_independence_test": Row(
        lambda x=x1, y=y1, k=3, scale="standardize", n_resamples=9, random_state=0: (
            geometry.ksg_independence_test(
                x, y, k=k, scale=scale, n_resamples=n_resamples, random_state=random_state
            )
        ),
        {"x": ("vector", x1), "y": ("vector", y1), "k": ("positive_int", 3),
         "scale": ("option", "standardize"), "n_resamples": ("positive_int", 9),
         "random_state": ("random_state", 0)},
    ),
    "statcore.geometry.ksg_mutual_information": Row(
        lambda x=x1, y=y1, k=3, scale="standardize", alpha=0.05: (
            geometry.ksg_mutual_information(x, y, k=k, scale=scale, alpha=alpha)
        ),
        {"x": ("vector", x1), "y": ("vector", y1), "k": ("positive_int", 3),
         "scale": ("option", "standardize"), "alpha": ("fraction", 0.05)},
    ),
    "statcore.geometry.shared_poisson_mi": Row(
        lambda lam0=2.0, lam=2.0: geometry.shared_poisson_mi(lam0, lam),
        {"lam0": ("positive", 2.0), "lam": ("positive", 2.0)},
    ),
    "statcore.geometry.shared_poisson_sample": Row(
        lambda n=20, lam0=2.0, lam=2.0, random_state=0: geometry.shared_poisson_sample(
            n, lam0=lam0, lam=lam, random_state=random_state
        ),
        {"n": ("positive_int", 20), "lam0": ("positive", 2.0), "lam": ("positive", 2.0),
         "random_state": ("random_state", 0)},
    ),
    "statcore.geometry.twonn_dimension": Row(
        lambda r1=R1, r2=R2, discard_fraction=0.1: geometry.twonn_dimension(
            r1, r2, discard_fraction
        ),
        {"r1": ("vector", R1), "r2": ("vector", R2), "discard_fraction": ("fraction_or_zero", 0.1)},
    ),
    "statcore.select.CoresetSelector": Row(
        lambda embeddings=X, metric="cosine", n_neighbors=5, budget=10, method="process_aware",
        penalty="max", peripheral_quantile=0.1, random_state=0: (
            select.CoresetSelector(embeddings, metric=metric, n_neighbors=n_neighbors).select(
                budget, method=method, penalty=penalty,
                peripheral_quantile=peripheral_quantile, random_state=random_state,
            )
        ),
        {"embeddings": ("matrix", X), "metric": ("option", "cosine"),
         "n_neighbors": ("positive_int", 5), "budget": ("positive_int", 10),
         "method": ("option", "process_aware"), "penalty": ("option", "max"),
         "peripheral_quantile": ("fraction", 0.1), "random_state": ("random_state", 0)},
    ),
}  # fmt: skip

#: Entries that take no argument a bad value could be given to, with the reason.
EXEMPT: dict[str, str] = {}

#: The areas whose every entry has a row (issue 38 adds the rest area by area).
AREAS = ("statcore.geometry", "statcore.select")


(
    test_every_public_entry_has_a_row,
    test_bad_input_gives_an_error_naming_the_argument,
    test_good_row_runs,
) = make_table_tests(ROWS, EXEMPT, AREAS)


def _shuffled_frames(a, b, seed=0):
    """``a`` and ``b`` as frames on the same labels, ``b``'s rows in another order."""
    import pandas as pd

    labels = [f"s{i}" for i in range(len(a))]
    order = np.random.default_rng(seed).permutation(len(a))
    fa = pd.DataFrame(np.asarray(a).reshape(len(a), -1), index=labels)
    fb = pd.DataFrame(np.asarray(b).reshape(len(b), -1), index=labels).iloc[order]
    return fa, fb


@pytest.mark.parametrize("metric", ["cka", "mutual_knn", "rsa"])
def test_alignment_pairs_frames_by_their_index_not_their_position(metric):
    # the case: CKA went from 0.61 to 0.04 when one frame was reordered
    fa, fb = _shuffled_frames(X, Y)
    paired = geometry.alignment(X, Y, metric=metric, k=3, n_resamples=0).statistic
    framed = geometry.alignment(fa, fb, metric=metric, k=3, n_resamples=0).statistic
    assert framed == pytest.approx(paired, rel=1e-12)  # the same rows: equal up to rounding
    other = fb.rename(index=lambda s: s + "x")
    with pytest.raises(ValueError, match="`A` and `B` must index the same rows"):
        geometry.alignment(fa, other, metric=metric, k=3)


def test_mutual_information_pairs_series_by_their_index():
    import pandas as pd

    labels = [f"s{i}" for i in range(len(x1))]
    order = np.random.default_rng(1).permutation(len(x1))
    sx, sy = pd.Series(x1, index=labels), pd.Series(y1, index=labels).iloc[order]
    paired = geometry.ksg_mutual_information(x1, y1).estimate
    assert geometry.ksg_mutual_information(sx, sy).estimate == pytest.approx(paired, rel=1e-12)
    assert sy.index[0] == labels[order[0]]  # the caller's series is not reordered


def test_alignment_study_aligns_every_model_on_the_first_ones_rows():
    fa, fb = _shuffled_frames(X, Y)
    _, fc = _shuffled_frames(X, X + 0.1, seed=2)
    framed = geometry.AlignmentStudy({"a": fa, "b": fb, "c": fc}).fit(metric="cka", n_resamples=9)
    plain = geometry.AlignmentStudy({"a": X, "b": Y, "c": X + 0.1}).fit(metric="cka", n_resamples=9)
    np.testing.assert_allclose(framed.alignment_matrix, plain.alignment_matrix, rtol=1e-12)
