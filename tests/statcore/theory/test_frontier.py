"""Frontier learning under weak monotonicity (statcore.theory.pareto_masks, frontier_selector,
frontier_design).

The acceptance checks are derived for statcore, not taken from the paper: frontier invariance,
skyline = brute force, the best model on the frontier under exact monotonicity, the few-shot gain
of frontier ERM, the aggregation rate and the fallback of the mixed prior.
"""

import math

import numpy as np
import pandas as pd
import pytest

from statcore.theory import FrontierDesign, FrontierSelector, pareto_cover, pareto_frontier
from statcore.theory.frontier_selector import _comparison_scale
from statcore.theory.pareto_masks import _brute_force_mask


def _risks(rng, M, K, levels=None):
    """Random risks; ``levels`` rounds them to a grid so ties and copies occur."""
    R = rng.uniform(size=(M, K))
    return np.round(R * levels) / levels if levels else R


# ---------------------------------------------------------------------------- frontier


@pytest.mark.parametrize("K", [1, 2, 3, 6])
@pytest.mark.parametrize("eps", [0.0, 0.1])
@pytest.mark.parametrize("levels", [None, 5])
def test_fast_skyline_equals_brute_force(K, eps, levels):
    rng = np.random.default_rng(K * 10 + int(eps * 100) + (levels or 0))
    for _ in range(5):
        R = _risks(rng, 400, K, levels)
        assert np.array_equal(pareto_frontier(R, eps=eps), _brute_force_mask(R, np.full(K, eps)))


def _frontier_data(kind, rng, M, K):
    if kind == "random":
        return rng.uniform(size=(M, K))
    if kind == "integer":  # heavy ties in every coordinate
        return rng.integers(0, 6, size=(M, K)).astype(float)
    if kind == "duplicated":  # every row has exact copies, frontier rows included
        return rng.uniform(size=(M // 4 + 1, K))[rng.integers(0, M // 4 + 1, size=M)]
    if kind == "cube":  # a small frontier: the pivot prefilter removes almost everything
        return rng.uniform(size=(M, K))
    simplex = rng.dirichlet(np.ones(K), size=M)
    if kind == "simplex":  # risks that trade off: a large frontier
        return simplex + 0.3 * rng.uniform(size=(M, K))
    return np.round(simplex * 4) / 4  # "tied simplex": a grid on the simplex, all copies


@pytest.mark.parametrize("K", [2, 3, 4, 5])
@pytest.mark.parametrize(
    "kind", ["random", "integer", "duplicated", "cube", "simplex", "tied simplex"]
)
def test_sweeps_and_prefilter_equal_brute_force(K, kind):
    # sizes past the prefilter's rounds (16 pivots) and past one block of the brute force
    rng = np.random.default_rng(1000 * K + len(kind))
    for M in (3, 40, 1200):
        R = _frontier_data(kind, rng, M, K)
        for eps in (0.0, 0.02, np.linspace(0.0, 0.05, K)):
            expected = _brute_force_mask(R, np.broadcast_to(eps, (K,)).astype(float))
            assert np.array_equal(pareto_frontier(R, eps=eps), expected), (M, eps)


def test_copies_of_a_frontier_row_all_stay_and_copies_of_a_dominated_row_all_go():
    R = np.array(
        [[1.0, 2.0, 3.0], [2.0, 2.0, 2.0], [1.0, 2.0, 3.0], [1.0, 2.0, 4.0], [1.0, 2.0, 4.0]]
        + [[0.5, 9.0, 9.0]] * 40
    )
    assert pareto_frontier(R).tolist() == [True, True, True, False, False] + [True] * 40
    # the same with the first benchmark tied throughout (the sweep's order needs all keys)
    R[:, 0] = 1.0
    assert np.array_equal(pareto_frontier(R), _brute_force_mask(R, np.zeros(3)))


def test_frontier_of_anticorrelated_cloud_is_large_and_exact():
    # points on a line x + y = 1 are all mutually non-dominated; a shifted copy is dominated
    t = np.linspace(0, 1, 50)
    R = np.vstack([np.column_stack([t, 1 - t]), np.column_stack([t, 1 - t]) + 0.01])
    mask = pareto_frontier(R)
    assert mask[:50].all() and not mask[50:].any()


@pytest.mark.parametrize("K", [2, 4])
def test_frontier_invariant_to_increasing_transforms(K):
    rng = np.random.default_rng(3)
    R = _risks(rng, 500, K, levels=7)
    transforms = [np.exp, np.cbrt, lambda x: np.log1p(10 * x), lambda x: x**3 + x]
    T = np.column_stack([transforms[k % 4](R[:, k]) for k in range(K)])
    assert np.array_equal(pareto_frontier(R), pareto_frontier(T))


def test_eps_keeps_more_models_and_equal_rows_stay_together():
    rng = np.random.default_rng(4)
    R = _risks(rng, 300, 3, levels=4)
    sizes = [pareto_frontier(R, eps=e).sum() for e in (0.0, 0.1, 0.3)]
    assert sizes[0] <= sizes[1] <= sizes[2]
    copies = np.array([[0.2, 0.2], [0.2, 0.2], [0.5, 0.1], [0.3, 0.3]])
    assert pareto_frontier(copies).tolist() == [True, True, True, False]


def test_best_target_model_is_on_frontier_under_exact_monotonicity():
    rng = np.random.default_rng(5)
    for trial in range(50):
        K = 1 + trial % 4
        R = _risks(rng, 200, K, levels=None if trial % 2 else 6)
        a = rng.uniform(size=K)  # a >= 0 with a_k > 0 a.s.; g increasing below
        target = np.expm1(R @ a) if trial % 3 else np.sqrt(R @ a)
        mask = pareto_frontier(R)
        # ties (rounded risks) may make several models best; one of them is on the frontier
        assert target[mask].min() == target.min()


def test_dataframe_input_gives_labelled_mask_and_is_not_modified():
    frame = pd.DataFrame({"b1": [0.1, 0.5, 0.6], "b2": [0.9, 0.5, 0.6]}, index=["x", "y", "z"])
    before = frame.copy()
    mask = pareto_frontier(frame)
    assert isinstance(mask, pd.Series) and mask.to_dict() == {"x": True, "y": True, "z": False}
    pd.testing.assert_frame_equal(frame, before)


# ---------------------------------------------------------------------------- cover


def test_cover_covers_is_a_packing_and_is_nested():
    rng = np.random.default_rng(6)
    R = _risks(rng, 2000, 2)
    P = R[pareto_frontier(R)]
    full = list(pareto_cover(P, 0.0))
    for r in (0.0, 0.02, 0.05, 0.2, 1.0):
        chosen = pareto_cover(P, r)
        dist = np.max(np.abs(P[:, None, :] - P[chosen][None, :, :]), axis=2)
        assert dist.min(axis=1).max() <= r  # every frontier model within r of a centre
        between = np.max(np.abs(P[chosen][:, None] - P[chosen][None]), axis=2)
        np.fill_diagonal(between, np.inf)
        assert between.min() > r  # centres are an r-packing (so N <= packing number)
        assert list(chosen) == full[: len(chosen)]  # nested: larger radii take a prefix
    assert len(pareto_cover(P, 0.0)) == len(np.unique(P, axis=0))
    assert len(pareto_cover(P, 10.0)) == 1


def test_cover_of_dataframe_returns_labels():
    frame = pd.DataFrame([[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]], index=["a", "b", "c"])
    assert list(pareto_cover(frame, 0.6)) == ["a", "c"]


# ---------------------------------------------------------------------------- selector


@pytest.fixture(scope="module")
def design():
    return FrontierDesign(n_models=300, n_arc=30, random_state=0)


def test_selector_aligns_dataframes_on_the_model_labels(design):
    F, y = design.sample(40, random_state=1)
    base = FrontierSelector(design.models, design.benchmark_risks.to_numpy()).fit(
        predictions=F, y=y, n_resamples=0
    )
    perm = np.random.default_rng(2).permutation(design.n_models)
    shuffled_bench = design.benchmark_risks.iloc[perm]
    shuffled_pred = pd.DataFrame(F, columns=design.models).iloc[:, perm]
    other = FrontierSelector(design.models, shuffled_bench).fit(
        predictions=shuffled_pred, y=y, n_resamples=0
    )
    pd.testing.assert_series_equal(other.weights, base.weights, check_names=False)
    assert (other.selected, other.frontier_erm, other.full_erm) == (
        base.selected,
        base.frontier_erm,
        base.full_erm,
    )


def test_selector_reports_sizes_rates_and_picks(design):
    F, y = design.sample(30, random_state=3)
    res = FrontierSelector(design.models, design.benchmark_risks).fit(
        predictions=F, y=y, random_state=0
    )
    risks = res.empirical_risks
    assert res.n_frontier == pareto_frontier(design.benchmark_risks).sum()
    assert res.full_erm == risks.idxmin()
    assert res.frontier_erm == risks[res.on_frontier].idxmin()
    assert res.selected in res.cover and res.on_frontier[res.cover].all()
    assert res.weights.sum() == pytest.approx(1.0, abs=1e-12)  # float sum of a softmax
    # the mixed prior gives every model at least half its uniform mass
    assert res.prior.min() >= 0.5 / res.n_models - 1e-15
    table = res.summary().tables["frontier"]
    for term in ("models |F|", "frontier |P|", "cover N(P, r)", "violation_rate"):
        assert term in table.index
    tidy = res.tidy().set_index("term")["estimate"]
    assert (tidy["n_models"], tidy["n_frontier"]) == (res.n_models, res.n_frontier)
    assert tidy["n_cover"] == len(res.cover)
    low, high = res.conf_int().iloc[0]
    assert 0.0 <= low <= high <= 1.0
    # exact monotonicity: significant flips are type-I errors of a 5 % one-sided test; 0.1
    # leaves room for the dependence between pairs sharing a model (one sample drives them all)
    assert res.significant_violation_rate <= 0.1
    res.plot("frontier")
    res.plot("cover")


def test_violation_rate_detects_a_reversed_target():
    # target risks decreasing in the benchmark risks: every dominated pair flips
    rng = np.random.default_rng(7)
    R = _risks(rng, 60, 2)
    losses = (2.0 - R.sum(axis=1)) + 0.01 * rng.standard_normal((200, 60))
    res = FrontierSelector(list(range(60)), R).fit(losses, n_resamples=50, random_state=0)
    # pair differences are at least the smallest dominance gap; the noise (sd 0.014 / sqrt(200)
    # per pair mean) cannot undo any flip beyond a few near-tied pairs
    assert res.violation_rate > 0.95
    assert res.significant_violation_rate > 0.9


def test_q_aggregation_solves_its_fixed_point(design):
    F, y = design.sample(50, random_state=4)
    res = FrontierSelector(design.models, design.benchmark_risks).fit(
        predictions=F, y=y, scheme="q", n_resamples=0, tol=1e-12
    )
    assert res.converged
    theta, pi, n, beta = res.weights.to_numpy(), res.prior.to_numpy(), len(y), res.temperature
    risks = res.empirical_risks.to_numpy()
    grad = -(F.T @ (y - F @ theta)) / n + 0.5 * risks  # nu = 1/2
    logits = np.log(pi) - n * grad / beta
    fixed = np.exp(logits - logits.max())
    # optimality of the KL-penalised objective: theta is its own Gibbs map; 1e-8 in l1 is the
    # stopping tolerance 1e-12 amplified by the map's Lipschitz constant (n / beta * ||F||^2 / n)
    assert np.abs(fixed / fixed.sum() - theta).sum() < 1e-8


def test_exponential_weights_formula(design):
    F, y = design.sample(20, random_state=5)
    res = FrontierSelector(design.models, design.benchmark_risks).fit(
        predictions=F, y=y, prior="uniform", temperature=2.0, n_resamples=0
    )
    risks = ((F - y[:, None]) ** 2).mean(axis=0)
    w = np.exp(-20 * (risks - risks.min()) / 2.0)
    # same softmax, different summation order: agreement to rounding
    np.testing.assert_allclose(res.weights.to_numpy(), w / w.sum(), rtol=1e-9, atol=1e-15)


def test_comparison_scale_ignores_noise_common_to_all_models():
    rng = np.random.default_rng(8)
    own = 0.1 * rng.standard_normal((500, 20))
    common = 5.0 * rng.standard_normal((500, 1))
    # removing the per-sample mean over 20 models leaves sd 0.1 * sqrt(19 / 20) = 0.097; 0.01
    # covers the sampling error of the median of 20 sd's from 500 draws (about 0.003)
    assert _comparison_scale(own + common) == pytest.approx(0.0975, abs=0.01)


# ---------------------------------------------------------------------------- simulations


def test_frontier_erm_beats_full_erm_with_few_samples():
    sim = FrontierDesign(random_state=0).simulate([10, 25, 50], n_reps=150, random_state=1)
    draws = sim.draws.pivot_table(index=["n", "rep"], columns="learner", values="excess")
    gain = (draws["full ERM"] - draws["frontier ERM"]).groupby("n")
    # paired over the same target samples; 3 standard errors keeps the chance of a false
    # failure under 0.2 % per n when the true gain were zero
    assert (gain.mean() > 3 * gain.sem()).all()


def test_aggregation_rate_has_slope_minus_one():
    sim = FrontierDesign(random_state=0).simulate(
        [25, 50, 100, 200, 400], n_reps=100, random_state=0
    )
    # Exponential weights with a prior spread over near-optimal models: the posterior's mean
    # excess is about beta / n (Laplace), so the log-log slope is -1. Three seeds gave -0.95,
    # -1.00 and -0.97 (spread 0.05); 0.15 is three times that spread.
    assert sim.slope("EW (mixed prior)") == pytest.approx(-1.0, abs=0.15)
    # and the theory curve it is drawn against has slope -1 exactly
    theory = sim.theory["mixed"]
    assert np.polyfit(np.log(theory.index), np.log(theory), 1)[0] == pytest.approx(-1.0)


def test_mixed_prior_falls_back_within_log2_over_n_of_uniform():
    # target unrelated to the benchmarks, collinear model errors (no mixture beats the best
    # model, so excess risks are non-negative); with this seed the target's best model is off
    # the frontier, so the frontier-only prior cannot converge
    design = FrontierDesign(target="unrelated", correlation=1.0, random_state=1)
    assert not pareto_frontier(design.benchmark_risks).iloc[int(np.argmin(design.b))]
    grid = [25, 50, 100, 200]
    sim = design.simulate(grid, n_reps=200, random_state=0)
    draws = sim.draws.pivot_table(index=["n", "rep"], columns="learner", values="excess")
    gap = (draws["EW (mixed prior)"] - draws["EW (uniform prior)"]).groupby("n")
    bound = 4 * math.log(2) / np.array(grid)  # beta log 2 / n with beta = 4 sigma^2 = 4
    # the prior term of the oracle bound grows by beta log 2 / n; 3 paired standard errors for
    # the Monte Carlo error of the mean gap
    assert (gap.mean().to_numpy() <= bound + 3 * gap.sem().to_numpy()).all()
    lost = draws["EW (frontier prior)"] - draws["EW (uniform prior)"]
    assert lost.groupby("n").mean().loc[200] > bound[-1]  # without the fallback it stalls


# ---------------------------------------------------------------------------- bad input


def test_bad_benchmark_risks_name_the_argument():
    with pytest.raises(ValueError, match="`benchmark_risks` must hold non-negative risks"):
        pareto_frontier([[0.1, -0.2], [0.3, 0.4]])
    with pytest.raises(ValueError, match="`benchmark_risks` must not contain NaN"):
        pareto_frontier([[0.1, np.nan], [0.3, 0.4]])
    with pytest.raises(ValueError, match="`eps` must be non-negative"):
        pareto_frontier([[0.1, 0.2]], eps=-1)
    with pytest.raises(ValueError, match="`eps` must be a scalar or hold one slack"):
        pareto_frontier([[0.1, 0.2]], eps=[0.1, 0.1, 0.1])
    with pytest.raises(ValueError, match="`frontier` must hold non-negative"):
        pareto_cover([[-1.0, 0.0]], 0.1)
    with pytest.raises(ValueError, match="`r` must lie in"):
        pareto_cover([[1.0, 0.0]], -0.1)
    with pytest.raises(ValueError, match="duplicate model labels"):
        pareto_frontier(pd.DataFrame([[0.1], [0.2]], index=["a", "a"]))


def test_mismatched_model_lists_are_refused():
    bench = pd.DataFrame([[0.1, 0.2], [0.3, 0.1], [0.2, 0.2]], index=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"`benchmark_risks` and `models` list different models"):
        FrontierSelector(["a", "b", "d"], bench)
    with pytest.raises(ValueError, match="`benchmark_risks` must have one row per model"):
        FrontierSelector(["a", "b"], bench.to_numpy())
    with pytest.raises(ValueError, match="`models` has duplicate labels"):
        FrontierSelector(["a", "a", "b"], bench.to_numpy())
    sel = FrontierSelector(["a", "b", "c"], bench)
    losses = pd.DataFrame(np.ones((5, 3)), columns=["a", "b", "x"])
    with pytest.raises(ValueError, match="`target_losses` and `models` list different models"):
        sel.fit(losses)
    with pytest.raises(ValueError, match="`target_losses` must have one column per model"):
        sel.fit(np.ones((5, 4)))
    with pytest.raises(ValueError, match="`target_losses` must not contain NaN"):
        sel.fit(np.where(np.eye(5, 3) > 0, np.nan, 1.0))
    with pytest.raises(ValueError, match="`y` has 4 values but `predictions` has 5 rows"):
        sel.fit(predictions=np.ones((5, 3)), y=np.ones(4))
    with pytest.raises(ValueError, match="either `target_losses` or `predictions`"):
        sel.fit()
    with pytest.raises(ValueError, match="`scheme='q'` needs `predictions`"):
        sel.fit(np.ones((5, 3)), scheme="q")
    with pytest.raises(ValueError, match="`n_resamples` must be 0"):
        sel.fit(np.ones((5, 3)), n_resamples=1)


def test_q_aggregation_stopped_early_warns_and_is_not_converged(design):
    from statcore.exceptions import ConvergenceWarning

    F, y = design.sample(50, random_state=6)
    with pytest.warns(ConvergenceWarning):
        res = FrontierSelector(design.models, design.benchmark_risks).fit(
            predictions=F, y=y, scheme="q", maxiter=1, n_resamples=0
        )
    assert not res.converged and res.iterations.status == "maxiter"


def test_losses_only_fit_leaves_inputs_alone_and_weights_the_mean_losses():
    rng = np.random.default_rng(9)
    bench = pd.DataFrame(_risks(rng, 50, 3), index=[f"m{j}" for j in range(50)])
    losses = pd.DataFrame(rng.exponential(size=(40, 50)), columns=bench.index)
    before_b, before_l = bench.copy(), losses.copy()
    res = FrontierSelector(list(bench.index), bench).fit(losses, n_resamples=20, random_state=0)
    pd.testing.assert_frame_equal(bench, before_b)
    pd.testing.assert_frame_equal(losses, before_l)
    # without predictions the aggregate is the randomised one: its risk is the weighted mean
    # loss (one dot product; 1e-12 is rounding)
    assert res.aggregate_risk == pytest.approx(res.weights @ res.empirical_risks, rel=1e-12)
    assert res.aggregate_predictions is None
    assert res.fit_options["scheme"] == "ew"
