"""MetaEns (Phan et al., ICML 2026): acceptance checks on score matrices from numpy detectors
(no PyOD needed) and on the shipped ADBench score tables."""

import itertools

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from statcore.cluster import _kernels as K
from statcore.outliers import MetaEns, discounted_greedy, load_score_tables
from statcore.outliers._scores import (
    ScoreStats,
    average_precision,
    discount,
    jaccard_matrix,
    roc_auc,
    top_mask,
)
from statcore.outliers.metaens import _Table, gain_label


# small tables scored by numpy detectors (kNN from the cluster kernels): no PyOD needed
def simple_scores(X, rng):
    names, cols = [], []
    for k in (2, 5, 10, 20):
        d, _ = K.knn(X, k)
        names += [f"KNN_k{k}", f"KNNmean_k{k}"]
        cols += [d[:, -1], d.mean(axis=1)]
    Z = (X - X.mean(0)) / X.std(0)
    names += ["ZMAX_a", "ZSUM_a"]
    cols += [np.abs(Z).max(1), (Z**2).sum(1)]
    for j in range(4):
        w = rng.normal(size=X.shape[1])
        p = Z @ w
        names.append(f"PROJ_{j}")
        cols.append(np.abs(p - np.median(p)))
    return names, np.column_stack(cols)


def make_tables(n_tables, rng, n=200):
    out = {}
    for t in range(n_tables):
        d = int(rng.integers(3, 8))
        n_out = int(rng.integers(10, 25))
        X = rng.normal(size=(n, d)) * rng.uniform(0.5, 2, d)
        kind = t % 3
        if kind == 0:
            X[:n_out] += rng.normal(size=(n_out, d)) * 4  # global
        elif kind == 1:
            X[:n_out] = (
                X[n_out : 2 * n_out] + rng.normal(size=(n_out, d)) * 0.1 + 1.5
            )  # local cluster
        else:
            X[:n_out, 0] += 6  # one-feature
        y = np.zeros(n, int)
        y[:n_out] = 1
        names, S = simple_scores(X, rng)
        out[f"t{t}"] = (S, y)
    return out, names


@pytest.fixture(scope="module")
def sim():
    return make_tables(8, np.random.default_rng(3))


def test_average_precision_and_auc_equal_sklearn_with_ties():
    rng = np.random.default_rng(0)
    y = (rng.random(300) < 0.1).astype(int)
    S = np.round(rng.normal(size=(300, 6)), 1)  # rounding makes many ties
    ap = [average_precision_score(y, S[:, j]) for j in range(6)]
    auc = [roc_auc_score(y, S[:, j]) for j in range(6)]
    # the same sums in another order: agreement to rounding error
    np.testing.assert_allclose(average_precision(y, S), ap, atol=1e-12)
    np.testing.assert_allclose(roc_auc(y, S), auc, atol=1e-12)


def test_jaccard_by_matmul_equals_set_jaccard():
    rng = np.random.default_rng(1)
    S = rng.normal(size=(97, 7))
    mask = top_mask(S, 0.1)
    assert (mask.sum(axis=0) == 9).all()  # max(1, floor(0.1 * 97))
    J = jaccard_matrix(mask)
    sets = [set(np.flatnonzero(mask[:, j])) for j in range(7)]
    for a, b in itertools.product(range(7), repeat=2):
        assert J[a, b] == pytest.approx(len(sets[a] & sets[b]) / len(sets[a] | sets[b]))
    np.testing.assert_array_equal(np.diag(J), 1.0)


def test_discount_is_in_unit_interval_and_non_increasing_as_the_set_grows():
    rng = np.random.default_rng(2)
    J = jaccard_matrix(top_mask(rng.normal(size=(200, 12)), 0.1))
    q, order = 0, rng.permutation(np.arange(1, 12))
    gammas = [discount(J[q, order[: s + 1]].max(), 1.0) for s in range(len(order))]
    assert all(0 < g <= 1 for g in gammas)
    assert all(b <= a for a, b in itertools.pairwise(gammas))
    assert discount(0.0, 1.0) == 1.0 and discount(1.0, 1.0) == 0.5


def test_gain_labels_equal_brute_force(sim):
    tables, names = sim
    S, y = tables["t1"]
    table = _Table("t1", S, y, names, 0.1)
    norm = (S - S.min(0)) / (S.max(0) - S.min(0))
    for p, q in [(0, 3), (5, 9), (12, 2)]:
        brute = average_precision_score(y, (norm[:, p] + norm[:, q]) / 2) - average_precision_score(
            y, norm[:, p]
        )
        assert table.pair_gain[p, q] == pytest.approx(brute, abs=1e-12)
    base = [1, 4, 7]
    brute = average_precision_score(y, norm[:, base + [10]].mean(1)) - average_precision_score(
        y, norm[:, base].mean(1)
    )
    assert gain_label(y, norm, base, 10, clip=1.0) == pytest.approx(brute, abs=1e-12)
    assert abs(gain_label(y, norm, [0], 11, clip=1e-4)) <= 1e-4  # clipping holds


def test_step1_targets_are_the_clipped_pair_gains(sim):
    tables, names = sim
    me = MetaEns(names, n_primaries=2, gain_clip=0.02)
    table = _Table("t2", *tables["t2"], names, 0.1)
    X, g, _ = me._step1_rows(table)
    p = int(np.argsort(-table.ap, kind="stable")[0])
    q = [j for j in range(len(names)) if j != p]
    np.testing.assert_allclose(g[: len(q)], np.clip(table.pair_gain[p, q], -0.02, 0.02))
    assert X.shape[1] == 63 and (X[:, 60:] == 0).all()  # step-1 rows: empty set


def _plain_greedy(gain, J, primary, *, beta1, beta, min_gain, min_extra):
    chosen = [primary]
    while True:
        cands = [q for q in range(len(gain)) if q not in chosen]
        if not cands:
            return chosen
        b = beta1 if len(chosen) == 1 else beta
        vals = {
            q: gain[q] / (1 + b * max(J[q, s] for s in chosen))
            for q in cands
            if len(chosen) == 1 or gain[q] >= min_extra
        }
        if not vals:
            return chosen
        q = max(vals, key=lambda k: (vals[k], -k))
        if (len(chosen) == 1 and vals[q] < min_gain) or (len(chosen) > 1 and vals[q] <= 0):
            return chosen
        chosen.append(q)


def test_zero_penalty_is_plain_discounted_greedy_and_penalty_changes_it():
    rng = np.random.default_rng(4)
    J = jaccard_matrix(top_mask(rng.normal(size=(150, 15)), 0.1))
    gain = rng.uniform(-0.01, 0.05, 15)

    def predict(partners, cands):
        return gain[cands]

    kw = dict(
        discount_strength=1.0, first_discount_strength=0.001, min_gain=0.001, min_gain_extra=0.005
    )
    penalties = np.where(np.arange(15) % 2 == 0, 0.04, 0.0)
    chosen, steps = discounted_greedy(predict, J, 3, range(15), 0.0 * penalties, **kw)
    assert chosen == _plain_greedy(
        gain, J, 3, beta1=0.001, beta=1.0, min_gain=0.001, min_extra=0.005
    )
    assert len(chosen) > 2 and list(steps["index"]) == chosen[1:]
    penalised, _ = discounted_greedy(predict, J, 3, range(15), penalties, **kw)
    assert penalised != chosen
    assert all(q % 2 == 1 for q in penalised[2:])  # penalised families drop out after step 1


def test_fit_select_and_evaluate(sim):
    tables, names = sim
    fit = MetaEns(names, prior_min_count=50).fit(tables, n_estimators=(30, 30), random_state=0)
    assert all(v >= 0 for v in fit.family_prior.values())
    S, y = tables["t0"]
    sel = fit.select(scores=S)
    assert sel.selected[0] == sel.primary and len(set(sel.indices)) == len(sel.indices)
    assert (sel.predicted_gains >= 0).all()  # P(G>0) x max(0, E[G|G>0])
    norm = (S - S.min(0)) / (S.max(0) - S.min(0))
    np.testing.assert_allclose(sel.combined_score, norm[:, list(sel.indices)].mean(1))
    ev = sel.evaluate(y)
    assert ev.loc["MetaEns", "average_precision"] == pytest.approx(
        average_precision_score(y, sel.combined_score)
    )
    assert ev.loc["mega-ensemble", "size"] == len(names)
    assert fit.select(scores=S).selected == sel.selected  # deterministic given the fit


def test_lodo_keeps_the_held_out_set_out_of_every_fitted_piece(sim):
    tables, names = sim
    small = dict(list(tables.items())[:5])
    me = MetaEns(names, prior_min_count=50)
    res = me.lodo(small, n_estimators=(10, 10), n_random=3, random_state=0)
    assert len(res.folds) == 5
    for fold in res.folds:
        for piece in ("rows", "policy", "ranking", "selector"):
            assert fold["held_out"] not in fold[piece]
            assert len(fold[piece]) == 4
    leak = me.lodo(small, n_estimators=(10, 10), n_random=3, random_state=0, authors_leak=True)
    assert all(f["held_out"] in f["policy"] and f["held_out"] not in f["rows"] for f in leak.folds)
    assert set(res.wide().columns) == {
        "MetaEns",
        "mega-ensemble",
        "best single",
        "ELECT top-1",
        "ELECT top-k",
        "random",
    }


def test_bad_input_names_the_argument(sim):
    tables, names = sim
    S, y = tables["t0"]
    me = MetaEns(names)
    fit = MetaEns(names, prior_min_count=50).fit(
        dict(list(tables.items())[:3]), n_estimators=(5, 5), random_state=0
    )
    bad = S.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="`scores` must not contain NaN"):
        fit.select(scores=bad)
    with pytest.raises(ValueError, match="`scores` must have one column per detector"):
        fit.select(scores=S[:, :5])
    with pytest.raises(TypeError, match="exactly one of `data`"):
        fit.select()
    with pytest.raises(ValueError, match=r"meta_datasets\['a'\].*y has 10 entries"):
        me.fit({"a": (S, y[:10]), "b": (S, y)})
    with pytest.raises(ValueError, match=r"meta_datasets\['a'\] scores.*NaN"):
        me.fit({"a": (bad, y), "b": (S, y)})
    with pytest.raises(ValueError, match="`y` must have"):
        fit.select(scores=S).evaluate(y[:-1])
    with pytest.raises(ValueError, match="`detectors`"):
        MetaEns(["A_1", "A_1"])
    before = S.copy()
    fit.select(scores=S)
    np.testing.assert_array_equal(S, before)  # inputs are not modified


def test_score_statistics_are_label_free_and_bounded(sim):
    tables, names = sim
    st = ScoreStats.from_scores(tables["t3"][0], names)
    F = st.pair_features(0)
    assert F.shape == (len(names), 20) and np.isfinite(F).all()
    assert ((st.norm >= 0) & (st.norm <= 1)).all()
    assert ((F[:, 7] >= 0) & (F[:, 7] <= 1)).all()  # pseudo-AP


def test_shipped_score_tables_load_with_labels_and_finite_scores():
    tables, names = load_score_tables()
    # the leave-one-data-set-out study needs >= 20 tables and >= 30 detectors
    assert len(tables) >= 20 and len(names) >= 30
    for scores, y in tables.values():
        assert scores.shape == (len(y), len(names)) and np.isfinite(scores).all()
        assert set(np.unique(y)) == {0, 1}


def test_pair_features_equal_a_direct_computation(sim):
    tables, names = sim
    S = tables["t4"][0]
    st = ScoreStats.from_scores(S, names)
    norm = (S - S.min(0)) / (S.max(0) - S.min(0))
    p = 3
    F = st.pair_features(p)
    top = st.mask[:, p].astype(int)
    for q in (0, 7, 13):
        union = st.mask[:, p] | st.mask[:, q]
        diff = norm[union, q] - norm[union, p]
        direct = [
            np.corrcoef(S[union, p], S[union, q])[0, 1],
            np.maximum(diff, 0).mean(),
            np.abs(diff).mean(),
            average_precision_score(top, norm[:, q]),
            roc_auc_score(top, norm[:, q]),
            np.linalg.norm(np.sort(norm[:, p]) - np.sort(norm[:, q])),
        ]
        # the kernels sum in another order than numpy / scikit-learn: rounding error only
        np.testing.assert_allclose(F[q, [1, 4, 12, 7, 8, 10]], direct, atol=1e-10)
    assert (F[:, 14] == 0).all()  # the authors' same_as_ensemble_count, 0 throughout
