"""Every public entry of statcore's newer areas refuses bad input with an error naming the
argument (issue 38); the harness and its kinds are in ``tests/_bad_input.py``."""

import functools

import numpy as np
import pytest
from _bad_input import Row, make_table_tests

from statcore import cluster, geometry, ot, outliers, select, theory

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
    "statcore.geometry.crossed_mixture_mi": Row(
        lambda rho=0.9: geometry.crossed_mixture_mi(rho), {}
    ),
    "statcore.geometry.crossed_mixture_sample": Row(
        lambda n=20, rho=0.9, random_state=0: geometry.crossed_mixture_sample(
            n, rho=rho, random_state=random_state
        ),
        {"n": ("positive_int", 20), "random_state": ("random_state", 0)},
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
    "statcore.geometry.squared_noise_mi": Row(
        lambda sigma=0.5: geometry.squared_noise_mi(sigma), {"sigma": ("positive", 0.5)}
    ),
    "statcore.geometry.squared_noise_sample": Row(
        lambda n=20, sigma=0.5, random_state=0: geometry.squared_noise_sample(
            n, sigma=sigma, random_state=random_state
        ),
        {"n": ("positive_int", 20), "sigma": ("positive", 0.5),
         "random_state": ("random_state", 0)},
    ),
    "statcore.geometry.student_t_mi": Row(
        lambda rho=0.5, dof=3.0: geometry.student_t_mi(rho, dof),
        {"dof": ("positive", 3.0)},
    ),
    "statcore.geometry.student_t_sample": Row(
        lambda n=20, rho=0.5, dof=3.0, random_state=0: geometry.student_t_sample(
            n, rho=rho, dof=dof, random_state=random_state
        ),
        {"n": ("positive_int", 20), "dof": ("positive", 3.0),
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

# --- statcore.theory ---------------------------------------------------------------------
_R_th = np.abs(_rng.normal(size=(12, 2))) + 0.1
_design = theory.FrontierDesign(n_models=20, n_arc=5, random_state=0)
_F_th, _y_th = _design.sample(12, random_state=1)
_BR_TH = _design.benchmark_risks.to_numpy()
_KAPPAS, _RHOS, _CS = np.array([0.3, 0.6]), np.array([0.5, 0.8]), np.array([-0.5, 0.5])
_TAUS = np.array([0.5, 1.0])
_T_GRID = np.array([0.0, 0.1, 0.2])
_X0_CH = np.linspace(0.1, 0.9, 20)
_ONE_BENCHMARK = "a 1-D array is the risks on one benchmark (K = 1)"
_GAP, _ERR = np.array([0.5, 0.25, 0.125]), np.array([0.3, 0.1, 0.04])

ROWS.update({
    "statcore.theory.CPGradientFlow": Row(
        lambda order=2, dim=2, rank=2, symmetric=False, init_scale=1.0, output_scale="ntk",
        t_grid=_T_GRID, n_seeds=2, tol=1e-6, random_state=0: theory.CPGradientFlow(
            order, dim, rank, symmetric=symmetric, init_scale=init_scale,
            output_scale=output_scale,
        ).simulate(t_grid, n_seeds=n_seeds, tol=tol, random_state=random_state),
        {"order": ("positive_int", 2), "dim": ("positive_int", 2), "rank": ("positive_int", 2),
         "symmetric": ("bool", False), "init_scale": ("positive", 1.0),
         "output_scale": ("option", "ntk"), "t_grid": ("vector", _T_GRID),
         "n_seeds": ("positive_int", 2), "random_state": ("random_state", 0)},
        {("output_scale", "option=3"): "a number is the scale alpha itself"},
    ),
    "statcore.theory.ConditionalPerceptron": Row(
        lambda rho=0.8, d=50, weight_law="gaussian", tau=_TAUS, n_reps=2, n_inputs=200,
        random_state=0: theory.ConditionalPerceptron(rho=rho, d=d, weight_law=weight_law).simulate(
            tau, n_reps=n_reps, n_inputs=n_inputs, random_state=random_state
        ),
        {"rho": ("fraction", 0.8), "d": ("positive_int", 50), "weight_law": ("option", "gaussian"),
         "tau": ("vector", _TAUS), "n_reps": ("positive_int", 2),
         "n_inputs": ("positive_int", 200), "random_state": ("random_state", 0)},
    ),
    "statcore.theory.FrontierDesign": Row(
        lambda n_models=20, n_arc=5, target="monotone", mix=0.5, scale=1.0, noise=1.0,
        correlation=0.5, random_state=0, n_grid=(10,), n_reps=2, penalty=1.0: (
            theory.FrontierDesign(
                n_models, n_arc, target=target, mix=mix, scale=scale, noise=noise,
                correlation=correlation, random_state=random_state,
            ).simulate(n_grid, n_reps=n_reps, penalty=penalty)
        ),
        {"n_models": ("positive_int", 20), "n_arc": ("positive_int", 5),
         "target": ("option", "monotone"), "mix": ("unit_interval", 0.5),
         "scale": ("positive", 1.0), "noise": ("positive", 1.0),
         "correlation": ("unit_interval", 0.5), "random_state": ("random_state", 0),
         "n_grid": ("vector", np.array([10])), "n_reps": ("positive_int", 2)},
    ),
    "statcore.theory.FrontierSelector": Row(
        lambda benchmark_risks=_BR_TH, predictions=_F_th, y=_y_th,
        scheme="ew", prior="mixed", penalty=1.0, n_resamples=3, maxiter=20, tol=1e-8,
        random_state=0: theory.FrontierSelector(_design.models, benchmark_risks).fit(
            predictions=predictions, y=y, scheme=scheme, prior=prior, penalty=penalty,
            n_resamples=n_resamples, maxiter=maxiter, tol=tol, random_state=random_state,
        ),
        {"benchmark_risks": ("matrix", _BR_TH),
         "predictions": ("matrix", _F_th), "y": ("vector", _y_th), "scheme": ("option", "ew"),
         "prior": ("option", "mixed"), "maxiter": ("positive_int", 20),
         "tol": ("positive", 1e-8), "random_state": ("random_state", 0)},
        {("benchmark_risks", "wrong ndim"): _ONE_BENCHMARK},
    ),
    "statcore.theory.MagnitudePruning": Row(
        lambda d=50, weight_law="gaussian", kappa=_KAPPAS, n_reps=2, n_inputs=20,
        random_state=0: theory.MagnitudePruning(d, weight_law=weight_law).simulate(
            kappa, n_reps=n_reps, n_inputs=n_inputs, random_state=random_state
        ),
        {"d": ("positive_int", 50), "weight_law": ("option", "gaussian"),
         "kappa": ("vector", _KAPPAS), "n_reps": ("positive_int", 2),
         "n_inputs": ("positive_int", 20), "random_state": ("random_state", 0)},
    ),
    "statcore.theory.PrunedReLUNetwork": Row(
        lambda kappa=0.5, depth=2, width=30, weight_law="gaussian", n_reps=2, n_inputs=3,
        random_state=0: theory.PrunedReLUNetwork(
            kappa, depth, width=width, weight_law=weight_law
        ).simulate(n_reps=n_reps, n_inputs=n_inputs, random_state=random_state),
        {"kappa": ("fraction_or_one", 0.5), "depth": ("positive_int", 2),
         "width": ("positive_int", 30), "weight_law": ("option", "gaussian"),
         "n_reps": ("positive_int", 2), "n_inputs": ("positive_int", 3),
         "random_state": ("random_state", 0)},
    ),
    "statcore.theory.compute_gap": Row(
        lambda tau=_TAUS, rho=0.8, kappa=0.5: theory.compute_gap(tau, rho, kappa),
        {"tau": ("vector", _TAUS), "rho": ("fraction", 0.8), "kappa": ("fraction_or_one", 0.5)},
    ),
    "statcore.theory.depth_correlations": Row(
        lambda kappa=0.5, depth=3, weight_law="gaussian": theory.depth_correlations(
            kappa, depth, weight_law=weight_law
        ),
        {"kappa": ("fraction_or_one", 0.5), "depth": ("positive_int", 3),
         "weight_law": ("option", "gaussian")},
    ),
    "statcore.theory.depth_fixed_point": Row(
        lambda kappa=0.5, weight_law="gaussian": theory.depth_fixed_point(
            kappa, weight_law=weight_law
        ),
        {"kappa": ("fraction_or_one", 0.5), "weight_law": ("option", "gaussian")},
    ),
    "statcore.theory.early_exit_mass": Row(
        lambda tau=_TAUS, rho=0.8: theory.early_exit_mass(tau, rho),
        {"tau": ("vector", _TAUS), "rho": ("fraction", 0.8)},
    ),
    "statcore.theory.excess_error": Row(
        lambda tau=_TAUS, rho=0.8: theory.excess_error(tau, rho),
        {"tau": ("vector", _TAUS), "rho": ("fraction", 0.8)},
    ),
    "statcore.theory.excess_error_exponent": Row(
        lambda rho=_RHOS: theory.excess_error_exponent(rho),
        {"rho": ("vector", _RHOS)},
    ),
    "statcore.theory.fit_exponent": Row(
        lambda gap=_GAP, error=_ERR: theory.fit_exponent(gap, error),
        {"gap": ("vector", _GAP), "error": ("vector", _ERR)},
    ),
    "statcore.theory.kappa_for_alignment": Row(
        lambda rho=0.8, weight_law="gaussian": theory.kappa_for_alignment(
            rho, weight_law=weight_law
        ),
        {"rho": ("fraction", 0.8), "weight_law": ("option", "gaussian")},
    ),
    "statcore.theory.local_exponent": Row(
        lambda tau=_TAUS, rho=0.8: theory.local_exponent(tau, rho),
        {"tau": ("vector", _TAUS), "rho": ("fraction", 0.8)},
    ),
    "statcore.theory.magnitude_prune": Row(
        lambda weights=X, kappa=0.5: theory.magnitude_prune(weights, kappa),
        {"weights": ("matrix", X), "kappa": ("fraction_or_one", 0.5)},
        {("weights", "wrong ndim"): "a 1-D array is one neuron's weights"},
    ),
    "statcore.theory.pareto_cover": Row(
        lambda frontier=_R_th, r=0.1: theory.pareto_cover(frontier, r),
        {"frontier": ("matrix", _R_th), "r": ("positive", 0.1)},
        {("frontier", "wrong ndim"): _ONE_BENCHMARK, ("r", "positive=0.0"): "r = 0 covers by all"},
    ),
    "statcore.theory.pareto_frontier": Row(
        lambda benchmark_risks=_R_th, eps=0.0: theory.pareto_frontier(benchmark_risks, eps),
        {"benchmark_risks": ("matrix", _R_th)},
        {("benchmark_risks", "wrong ndim"): _ONE_BENCHMARK},
    ),
    "statcore.theory.pruning_alignment": Row(
        lambda kappa=_KAPPAS, weight_law="gaussian": theory.pruning_alignment(
            kappa, weight_law=weight_law
        ),
        {"kappa": ("vector", _KAPPAS), "weight_law": ("option", "gaussian")},
    ),
    "statcore.theory.pruning_alignment_sd": Row(
        lambda kappa=_KAPPAS, d=50, weight_law="gaussian": (
            theory.pruning_alignment_sd(kappa, d, weight_law=weight_law)
        ),
        {"kappa": ("vector", _KAPPAS), "d": ("positive_int", 50),
         "weight_law": ("option", "gaussian")},
    ),
    "statcore.theory.relu_correlation": Row(
        lambda c=_CS: theory.relu_correlation(c),
        {"c": ("vector", _CS)},
    ),
    "statcore.theory.sign_disagreement": Row(
        lambda rho=_RHOS: theory.sign_disagreement(rho),
        {"rho": ("vector", _RHOS)},
    ),
    "statcore.theory.solve_characteristics": Row(
        lambda speed=lambda x, F: -x, source=lambda x, F: 0 * F, initial=lambda x: x, x0=_X0_CH,
        t_grid=_T_GRID, tol=1e-8: theory.solve_characteristics(
            speed, source, initial, x0, t_grid, tol=tol
        ),
        {"x0": ("vector", _X0_CH), "t_grid": ("vector", _T_GRID), "tol": ("positive", 1e-8)},
    ),
})  # fmt: skip


# --- statcore.outliers -------------------------------------------------------------------
def _outlier_tables(n_tables=2, n=40, seed=0):
    """Small labelled score tables (numpy detectors: no PyOD) for MetaEns."""
    rng = np.random.default_rng(seed)
    names = [f"{fam}_{j}" for fam in ("ZMAX", "ZSUM", "PROJ") for j in range(2)]
    out = {}
    for t in range(n_tables):
        Z = rng.normal(size=(n, 3))
        Z[:4] += 4.0
        cols = [
            np.abs(Z).max(1),
            np.abs(Z).max(1) + 0.1 * rng.normal(size=n),
            (Z**2).sum(1),
            np.abs(Z).sum(1),
        ] + [np.abs(Z @ rng.normal(size=3)) for _ in range(2)]
        y = np.zeros(n, int)
        y[:4] = 1
        out[f"t{t}"] = (np.column_stack(cols), y)
    return out, names


_OUT_TABLES, _OUT_NAMES = _outlier_tables()
_J_OUT = np.full((6, 6), 0.2) + 0.8 * np.eye(6)
_GAIN_OUT = np.array([0.0, 0.04, 0.03, 0.02, 0.01, 0.006])
_PEN_OUT = np.zeros(6)
_ORDER_OUT = np.arange(6)


def _metaens(**kwargs):
    return outliers.MetaEns(_OUT_NAMES, **kwargs)


ROWS.update({
    "statcore.outliers.MetaEns": Row(
        lambda penalty=0.2, discount_strength=1.0, first_discount_strength=0.001, min_gain=0.001,
        min_gain_extra=0.005, max_size=None, top_fraction=0.1, n_primaries=2,
        rollout_candidates=3, rollout_depth=1, gain_clip=0.1, prior_min_count=20, n_similar=1,
        n_estimators=3, random_state=0: _metaens(
            penalty=penalty, discount_strength=discount_strength,
            first_discount_strength=first_discount_strength, min_gain=min_gain,
            min_gain_extra=min_gain_extra, max_size=max_size, top_fraction=top_fraction,
            n_primaries=n_primaries, rollout_candidates=rollout_candidates,
            rollout_depth=rollout_depth, gain_clip=gain_clip, prior_min_count=prior_min_count,
            n_similar=n_similar,
        ).fit(_OUT_TABLES, n_estimators=n_estimators, random_state=random_state),
        {"penalty": ("positive", 0.2), "discount_strength": ("positive", 1.0),
         "first_discount_strength": ("positive", 0.001), "max_size": ("positive_int", 3),
         "top_fraction": ("fraction", 0.1), "n_primaries": ("positive_int", 2),
         "rollout_candidates": ("positive_int", 3), "rollout_depth": ("positive_int", 1),
         "gain_clip": ("positive", 0.1), "prior_min_count": ("positive_int", 20),
         "n_similar": ("positive_int", 1), "n_estimators": ("positive_int", 3),
         "random_state": ("random_state", 0)},
        {**{(name, "positive=0.0"): "0 turns the penalty or the discount off"
            for name in ("penalty", "discount_strength", "first_discount_strength")},
         ("n_estimators", "positive_int=array([2, 3])"): "a pair: classifier, regressor trees"},
    ),
    "statcore.outliers.detector_family": Row(
        lambda name="LOF_k20": outliers.detector_family(name),
        {"name": ("option", "LOF_k20")},
        {("name", "option='no-such-option'"): "any name is a detector name (a family of its own)"},
    ),
    "statcore.outliers.discounted_greedy": Row(
        lambda predict=lambda partners, cands: _GAIN_OUT[cands], jaccard=_J_OUT, primary=0,
        order=_ORDER_OUT, penalties=_PEN_OUT, discount_strength=1.0,
        first_discount_strength=0.001, max_size=None, stages=(2, None): (
            outliers.discounted_greedy(
                predict, jaccard, primary, order, penalties, discount_strength=discount_strength,
                first_discount_strength=first_discount_strength, max_size=max_size,
                stages=stages,
            )
        ),
        {"jaccard": ("matrix", _J_OUT), "primary": ("nonneg_int", 0),
         "order": ("labels", _ORDER_OUT), "penalties": ("vector", _PEN_OUT),
         "discount_strength": ("positive", 1.0), "first_discount_strength": ("positive", 0.001),
         "max_size": ("positive_int", 3)},
        {**{(name, "positive=0.0"): "0 turns the discount off"
            for name in ("discount_strength", "first_discount_strength")},
         ("order", "empty"): "no candidates: the ensemble is the primary alone"},
    ),
    "statcore.outliers.score_pool": Row(
        lambda X=X, families=("HBOS", "LOF"), standardize=True, random_state=0: (
            outliers.score_pool(
                X, outliers.DetectorPool(families), standardize=standardize,
                random_state=random_state,
            )
        ),
        {"X": ("matrix", X), "families": ("option", ("HBOS", "LOF")),
         "standardize": ("bool", True), "random_state": ("random_state", 0)},
    ),
})  # fmt: skip

# --- statcore.ot -------------------------------------------------------------------------
_P_OT = _rng.normal(size=(8, 2))
_Q_OT = _rng.normal(size=(6, 2)) + 0.5
_A_OT, _B_OT = np.full(8, 1 / 8), np.full(6, 1 / 6)
_C_OT = ot.cost_matrix(_P_OT, _Q_OT)
_M_OT = np.array([[0.0, 0.0], [1.0, 0.5], [0.5, 1.0]])
_S_OT = np.array([np.eye(2), [[2.0, 0.3], [0.3, 1.0]], [[1.0, -0.2], [-0.2, 0.5]]])
_W_OT = np.array([0.2, 0.3, 0.5])
_CLIENTS_OT = {f"c{k}": _rng.normal(size=(20, 3)) * (k + 1) + k for k in range(3)}
_XY_OT = {c: (x, (x[:, 0] > x[:, 0].mean()).astype(int)) for c, x in _CLIENTS_OT.items()}

ROWS.update({
    "statcore.ot.SLOTAlign": Row(
        lambda clients=_CLIENTS_OT, pca=0.99, eigen_floor=1e-8, maxiter=20, tol=1e-8: (
            ot.SLOTAlign(clients).fit(pca=pca, eigen_floor=eigen_floor, maxiter=maxiter, tol=tol)
        ),
        {"pca": ("fraction_or_one", 0.99), "eigen_floor": ("positive", 1e-8),
         "maxiter": ("positive_int", 20), "tol": ("positive", 1e-8)},
    ),
    "statcore.ot.bures_wasserstein_barycentre": Row(
        lambda means=_M_OT, covs=_S_OT, weights=_W_OT, maxiter=20, tol=1e-8: (
            ot.bures_wasserstein_barycentre(means, covs, weights, maxiter=maxiter, tol=tol)
        ),
        {"means": ("matrix", _M_OT), "weights": ("vector", _W_OT),
         "maxiter": ("positive_int", 20), "tol": ("positive", 1e-8)},
    ),
    "statcore.ot.bures_wasserstein_map": Row(
        lambda mean_source=_M_OT[1], cov_source=_S_OT[1], mean_target=_M_OT[2],
        cov_target=_S_OT[2]: ot.bures_wasserstein_map(
            mean_source, cov_source, mean_target, cov_target
        ),
        {"mean_source": ("vector", _M_OT[1]), "cov_source": ("matrix", _S_OT[1]),
         "mean_target": ("vector", _M_OT[2]), "cov_target": ("matrix", _S_OT[2])},
    ),
    "statcore.ot.cosine_tau_schedule": Row(
        lambda n_steps=5, tau_max=0.4, tau_min=0.1: ot.cosine_tau_schedule(
            n_steps, tau_max, tau_min
        ),
        {"n_steps": ("positive_int", 5), "tau_max": ("unit_interval", 0.4),
         "tau_min": ("unit_interval", 0.1)},
    ),
    "statcore.ot.federated_linear_probe": Row(
        lambda tau=0.0, local_epochs=2, learning_rate=0.1, batch_size=16, momentum=0.9,
        weight_decay=1e-5, random_state=0: ot.federated_linear_probe(
            _XY_OT, _XY_OT, tau=tau, local_epochs=local_epochs, learning_rate=learning_rate,
            batch_size=batch_size, momentum=momentum, weight_decay=weight_decay,
            random_state=random_state,
        ),
        {"local_epochs": ("positive_int", 2), "learning_rate": ("positive", 0.1),
         "batch_size": ("positive_int", 16), "momentum": ("fraction_or_zero", 0.9),
         "weight_decay": ("positive", 1e-5), "random_state": ("random_state", 0)},
        {("weight_decay", "positive=0.0"): "0 is no weight decay"},
    ),
    "statcore.ot.gaussian_w2": Row(
        lambda mean1=_M_OT[1], cov1=_S_OT[1], mean2=_M_OT[2], cov2=_S_OT[2], squared=False: (
            ot.gaussian_w2(mean1, cov1, mean2, cov2, squared=squared)
        ),
        {"mean1": ("vector", _M_OT[1]), "cov1": ("matrix", _S_OT[1]),
         "mean2": ("vector", _M_OT[2]), "cov2": ("matrix", _S_OT[2]), "squared": ("bool", False)},
    ),
    "statcore.ot.ledoit_wolf": Row(
        lambda X=X, eigen_floor=1e-8: ot.ledoit_wolf(X, eigen_floor=eigen_floor),
        {"X": ("matrix", X), "eigen_floor": ("positive", 1e-8)},
    ),
    "statcore.ot.cost_matrix": Row(
        lambda x=_P_OT, y=_Q_OT, metric="euclidean": ot.cost_matrix(x, y, metric),
        {"x": ("matrix", _P_OT), "y": ("matrix", _Q_OT), "metric": ("option", "euclidean")},
    ),
    "statcore.ot.sinkhorn": Row(
        lambda a=_A_OT, b=_B_OT, cost=_C_OT, epsilon=0.1, maxiter=200, tol=1e-6, method="log",
        epsilon_scaling=0.5: ot.sinkhorn(
            a, b, cost, epsilon, maxiter=maxiter, tol=tol, method=method,
            epsilon_scaling=epsilon_scaling,
        ),
        {"a": ("vector", _A_OT), "b": ("vector", _B_OT), "cost": ("matrix", _C_OT),
         "epsilon": ("positive", 0.1), "maxiter": ("positive_int", 200),
         "tol": ("positive", 1e-6), "method": ("option", "log"),
         "epsilon_scaling": ("fraction", 0.5)},
    ),
    "statcore.ot.sinkhorn_box": Row(
        lambda a=_A_OT, cost=_C_OT, epsilon=0.1, lower=0.0, upper=0.5, maxiter=200, tol=1e-6,
        method="auto": ot.sinkhorn_box(
            a, cost, epsilon, lower=lower, upper=upper, maxiter=maxiter, tol=tol, method=method
        ),
        {"a": ("vector", _A_OT), "cost": ("matrix", _C_OT), "epsilon": ("positive", 0.1),
         "maxiter": ("positive_int", 200), "tol": ("positive", 1e-6),
         "method": ("option", "auto")},
    ),
    "statcore.ot.sinkhorn_divergence": Row(
        lambda x=_P_OT, y=_Q_OT, a=_A_OT, b=_B_OT, metric="euclidean", epsilon=0.1, maxiter=200,
        tol=1e-6, epsilon_scaling=0.5: ot.sinkhorn_divergence(
            x, y, a, b, metric=metric, epsilon=epsilon, maxiter=maxiter, tol=tol,
            epsilon_scaling=epsilon_scaling,
        ),
        {"x": ("matrix", _P_OT), "y": ("matrix", _Q_OT), "a": ("vector", _A_OT),
         "b": ("vector", _B_OT), "metric": ("option", "euclidean"),
         "epsilon": ("positive", 0.1), "maxiter": ("positive_int", 200),
         "tol": ("positive", 1e-6), "epsilon_scaling": ("fraction", 0.5)},
    ),
    "statcore.ot.sinkhorn_points": Row(
        lambda x=_P_OT, y=_Q_OT, a=_A_OT, b=_B_OT, metric="euclidean", epsilon=0.1, maxiter=200,
        tol=1e-6, epsilon_scaling=0.5, plan=True: ot.sinkhorn_points(
            x, y, a, b, metric=metric, epsilon=epsilon, maxiter=maxiter, tol=tol,
            epsilon_scaling=epsilon_scaling, plan=plan,
        ),
        {"x": ("matrix", _P_OT), "y": ("matrix", _Q_OT), "a": ("vector", _A_OT),
         "b": ("vector", _B_OT), "metric": ("option", "euclidean"),
         "epsilon": ("positive", 0.1), "maxiter": ("positive_int", 200),
         "tol": ("positive", 1e-6), "epsilon_scaling": ("fraction", 0.5),
         "plan": ("bool", True)},
        {("plan", "bool=None"): "None: the plan only when it has at most 2^20 entries"},
    ),
})  # fmt: skip

# --- statcore.cluster --------------------------------------------------------------------
_BLOBS = np.vstack([_rng.normal(size=(15, 2)) + c for c in ([0, 0], [5, 0], [0, 5])])
_LAB = np.repeat([0, 1, 2], 15)
_PRED = np.roll(_LAB, 3)
_NAMES = "any hashable labels (text, complex, -1 for noise) name a class or a cluster"


def _any_labels(*names):
    return {(n, kind): _NAMES for n in names for kind in ("strings", "complex", "negative label")}


_FR_C = _rng.uniform(size=(12, 2))
_FR_F = _rng.uniform(size=(5, 2))
_FR_U = np.full(5, 6.0)


def _small_fingerprint(X=_BLOBS, labels=_LAB, **options):
    options = {
        "n_landmarks": 20,
        "n_neighbors": 5,
        "n_resamples": 0,
        "h1": False,
        "random_state": 0,
        **options,
    }
    return cluster.HardnessFingerprint(X, labels).fit(**options)


@functools.cache
def _two_fingerprints():
    return [_small_fingerprint(), _small_fingerprint(_BLOBS * [1.0, 3.0])]


ROWS.update({
    "statcore.cluster.fingerprint_map": Row(
        lambda n_arrows=2: cluster.fingerprint_map(_two_fingerprints(), n_arrows=n_arrows),
        {"n_arrows": ("nonneg_int", 2)},
    ),
    "statcore.cluster.ClusteringBenchmark": Row(
        lambda seeds=1, budget=2, max_clusters=3, criterion="silhouette", random_state=0: (
            cluster.ClusteringBenchmark({"b": (_BLOBS, _LAB)}, ["kmeans"]).fit(
                seeds=seeds, budget=budget, max_clusters=max_clusters, criterion=criterion,
                random_state=random_state,
            )
        ),
        {"seeds": ("positive_int", 1), "budget": ("positive_int", 2),
         "max_clusters": ("positive_int", 3), "criterion": ("option", "silhouette"),
         "random_state": ("random_state", 0)},
        {("seeds", "positive_int=array([2, 3])"): "the seeds themselves"},
    ),
    "statcore.cluster.Coreset": Row(
        lambda X=_BLOBS, n_clusters=3, objective="kmeans", size=10, method="sensitivity",
        random_state=0: cluster.Coreset(X, n_clusters, objective=objective).fit(
            size=size, method=method, random_state=random_state
        ),
        {"X": ("matrix", _BLOBS), "n_clusters": ("positive_int", 3),
         "objective": ("option", "kmeans"), "size": ("positive_int", 10),
         "method": ("option", "sensitivity"), "random_state": ("random_state", 0)},
    ),
    "statcore.cluster.FairRangeKClustering": Row(
        lambda clients=_FR_C, facilities=_FR_F, n_clusters=2, capacities=_FR_U,
        objective="kmedian", method="tree", n_trees=2, resolution=20, random_state=0: (
            cluster.FairRangeKClustering(
                clients, facilities, n_clusters=n_clusters, capacities=capacities,
                objective=objective,
            ).fit(method=method, n_trees=n_trees, resolution=resolution,
                  random_state=random_state)
        ),
        {"clients": ("matrix", _FR_C), "facilities": ("matrix", _FR_F),
         "n_clusters": ("positive_int", 2), "capacities": ("vector", _FR_U),
         "objective": ("option", "kmedian"), "method": ("option", "tree"),
         "n_trees": ("positive_int", 2), "resolution": ("positive_int", 20),
         "random_state": ("random_state", 0)},
    ),
    "statcore.cluster.HardnessFingerprint": Row(
        lambda X=_BLOBS, labels=_LAB, n_landmarks=20, n_neighbors=5, gap_factor=5.0,
        n_resamples=3, random_state=0: _small_fingerprint(
            X, labels, n_landmarks=n_landmarks, n_neighbors=n_neighbors, gap_factor=gap_factor,
            n_resamples=n_resamples, random_state=random_state,
        ),
        {"X": ("matrix", _BLOBS), "labels": ("labels", _LAB), "n_landmarks": ("positive_int", 20),
         "n_neighbors": ("positive_int", 5), "gap_factor": ("positive", 5.0),
         "n_resamples": ("nonneg_int", 3), "random_state": ("random_state", 0)},
        {("labels", "strings"): _NAMES, ("labels", "complex"): _NAMES},
    ),
    "statcore.cluster.SizeConstrainedAnchorClustering": Row(
        lambda X=_BLOBS, n_clusters=3, n_anchors=15, n_neighbors=3, lam=0.02, maxiter=20,
        tol=1e-6, random_state=0: cluster.SizeConstrainedAnchorClustering(
            X, n_clusters, n_anchors=n_anchors, n_neighbors=n_neighbors
        ).fit(lam=lam, maxiter=maxiter, tol=tol, random_state=random_state),
        {"X": ("matrix", _BLOBS), "n_clusters": ("positive_int", 3),
         "n_anchors": ("positive_int", 15), "n_neighbors": ("positive_int", 3),
         "lam": ("positive", 0.02), "maxiter": ("positive_int", 20), "tol": ("positive", 1e-6),
         "random_state": ("random_state", 0)},
    ),
    "statcore.cluster.clustering_accuracy": Row(
        lambda labels_true=_LAB, labels_pred=_PRED: cluster.clustering_accuracy(
            labels_true, labels_pred
        ),
        {"labels_true": ("labels", _LAB), "labels_pred": ("labels", _PRED)},
        _any_labels("labels_true", "labels_pred"),
    ),
    "statcore.cluster.disagreement": Row(
        lambda labels_a=_LAB, labels_b=_PRED: cluster.disagreement(labels_a, labels_b),
        {"labels_a": ("labels", _LAB), "labels_b": ("labels", _PRED)},
        _any_labels("labels_a", "labels_b"),
    ),
    "statcore.cluster.eps_close": Row(
        lambda X=_BLOBS, eps=0.1, transform="linear", random_state=0: cluster.eps_close(
            X, eps, transform, random_state
        ),
        {"X": ("matrix", _BLOBS), "eps": ("positive", 0.1), "transform": ("option", "linear"),
         "random_state": ("random_state", 0)},
        {("eps", "positive=0.0"): "eps = 0: the copy is X itself"},
    ),
    "statcore.cluster.external_scores": Row(
        lambda labels_true=_LAB, labels_pred=_PRED: cluster.external_scores(
            labels_true, labels_pred
        ),
        {"labels_true": ("labels", _LAB), "labels_pred": ("labels", _PRED)},
        _any_labels("labels_true", "labels_pred"),
    ),
    "statcore.cluster.resilience": Row(
        lambda X=_BLOBS, n_clusters=3, transform="linear", size=10, n_seeds=2,
        objective="kmeans", compare_kmeans=False, random_state=0: cluster.resilience(
            X, n_clusters, transform=transform, eps_grid=(0.1,), size=size, n_seeds=n_seeds,
            objective=objective, compare_kmeans=compare_kmeans, random_state=random_state,
        ),
        {"X": ("matrix", _BLOBS), "n_clusters": ("positive_int", 3),
         "transform": ("option", "linear"), "size": ("positive_int", 10),
         "n_seeds": ("positive_int", 2), "objective": ("option", "kmeans"),
         "compare_kmeans": ("bool", False), "random_state": ("random_state", 0)},
    ),
})  # fmt: skip

#: Entries that take no argument a bad value could be given to, with the reason.
EXEMPT: dict[str, str] = {
    "statcore.outliers.load_score_tables": "takes only the path of the shipped file",
}

#: The areas whose every entry has a row (issue 38 adds the rest area by area).
AREAS = (
    "statcore.geometry",
    "statcore.select",
    "statcore.cluster",
    "statcore.outliers",
    "statcore.ot",
    "statcore.theory",
)


(
    test_every_public_entry_has_a_row,
    test_bad_input_gives_an_error_naming_the_argument,
    test_good_row_runs,
    test_good_row_leaves_its_inputs_unmodified,
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


@pytest.mark.parametrize(
    "call",
    [
        lambda rho: theory.early_exit_mass(1.0, rho),
        lambda rho: theory.excess_error(1.0, rho),
        lambda rho: theory.local_exponent(1.0, rho),
        lambda rho: theory.compute_gap(1.0, rho, 0.5),
        lambda rho: theory.kappa_for_alignment(rho),
        lambda rho: theory.ConditionalPerceptron(rho=rho, d=50),
    ],
)
def test_theory_refuses_an_array_where_rho_is_a_scalar(call):
    # the case: rho = [0.8, 0.3] was silently reduced to 0.8
    with pytest.raises(TypeError, match="`rho` must be a real number"):
        call(np.array([0.8, 0.3]))
    with pytest.raises(TypeError, match="`kappa` must be a real number"):
        theory.compute_gap(1.0, 0.8, np.array([0.5, 0.9]))


def test_frontier_selector_pairs_predictions_and_y_by_their_index():
    import pandas as pd

    labels = [f"s{i}" for i in range(len(_y_th))]
    order = np.random.default_rng(3).permutation(len(_y_th))
    frame = pd.DataFrame(_F_th, index=labels, columns=_design.models)
    series = pd.Series(_y_th, index=labels).iloc[order]
    selector = theory.FrontierSelector(_design.models, _design.benchmark_risks)
    plain = selector.fit(predictions=_F_th, y=_y_th, n_resamples=0)
    framed = selector.fit(predictions=frame, y=series, n_resamples=0)
    pd.testing.assert_series_equal(framed.empirical_risks, plain.empirical_risks, rtol=1e-12)
    assert framed.selected == plain.selected
    assert series.index[0] == labels[order[0]]  # the caller's series is not reordered
    with pytest.raises(ValueError, match="`predictions` and `y` must index the same rows"):
        selector.fit(predictions=frame, y=series.rename(index=lambda s: s + "x"), n_resamples=0)


def test_detector_pool_refuses_unknown_repeated_or_string_families_listing_the_options():
    # the case: a repeated family was accepted (duplicate detector names), a string
    # was split into letters, and no family at all gave an empty pool
    with pytest.raises(ValueError, match=r"`families` must be among \['ABOD', 'COF'"):
        outliers.DetectorPool(families=("LOF", "no-such-family"))
    with pytest.raises(ValueError, match="`families` must not repeat a family"):
        outliers.DetectorPool(families=("LOF", "LOF"))
    with pytest.raises(ValueError, match="`families` must name at least one"):
        outliers.DetectorPool(families=())
    with pytest.raises(TypeError, match=r"`families` must be a sequence.*\('LOF',\)"):
        outliers.DetectorPool(families="LOF")
    assert outliers.DetectorPool(families=["LOF"]).names[0] == "LOF_k5"


def test_outliers_take_random_state_none():
    fit = _metaens(n_primaries=2, rollout_candidates=3, rollout_depth=1, n_similar=1).fit(
        _OUT_TABLES, n_estimators=3, random_state=None
    )
    assert len(fit.select(scores=_OUT_TABLES["t0"][0], random_state=None).selected) >= 1
    scores = outliers.score_pool(X, outliers.DetectorPool(("HBOS",)), random_state=None)
    assert scores.shape == (len(X), 5)
