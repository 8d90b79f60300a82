"""DataShifts at its defaults: the relative epsilon, the tolerance tied to the sample size, the
p = 2 variant, the gradient-based Lipschitz factor, and the authors' package's numbers frozen."""

import numpy as np
import pytest

from statcore.shift import DataShifts, simulate


def model(sample, **kwargs):
    keys = ("x_source", "y_source", "x_target", "y_target")
    return DataShifts(*(sample[k] for k in keys), **kwargs)


def test_relative_epsilon_follows_the_units():
    sample = simulate.linear_shift(120, dim=3, mean_shift=1.0, random_state=0)
    scaled = {k: 10.0 * v for k, v in sample.items() if k.startswith(("x_", "y_"))}
    base, big = model(sample).fit(random_state=0), model(scaled).fit(random_state=0)
    # the same problem in other units: the scale, epsilon and both shifts scale by 10 (the
    # iterates match up to rounding, far inside the 1e-6 asked)
    assert big.cost_scale == pytest.approx(10 * base.cost_scale, rel=1e-12)
    assert big.epsilon == pytest.approx(10 * base.epsilon, rel=1e-12)
    assert big.relative_epsilon == pytest.approx(base.relative_epsilon) == pytest.approx(0.01)
    np.testing.assert_allclose(big.params, 10 * base.params, rtol=1e-6)
    absolute = model(sample, epsilon=0.05)
    assert absolute.epsilon == 0.05 and absolute.relative_epsilon == pytest.approx(
        0.05 / absolute.cost_scale
    )
    assert model(sample, relative_epsilon=0.05).epsilon == pytest.approx(0.05 * base.cost_scale)
    assert base.glance()["relative_epsilon"].iloc[0] == pytest.approx(0.01)


def test_epsilon_arguments_are_checked():
    sample = simulate.linear_shift(20, dim=2, random_state=0)
    with pytest.raises(ValueError, match="`relative_epsilon` goes with epsilon='auto'"):
        model(sample, epsilon=0.1, relative_epsilon=0.02)
    with pytest.raises(ValueError, match="`epsilon` must be one of"):
        model(sample, epsilon="small")
    with pytest.raises(ValueError, match="`relative_epsilon` must"):
        model(sample, relative_epsilon=-1.0)
    with pytest.raises(ValueError, match="`tol` must be one of"):
        model(sample).fit(tol="tight")
    x = np.zeros((10, 2))
    with pytest.raises(ValueError, match="no cost scale for epsilon='auto'"):
        DataShifts(x, np.zeros(10), x, np.zeros(10))


def test_default_fit_is_within_two_percent_of_a_tight_solve():
    sample = simulate.linear_shift(300, dim=5, mean_shift=2.0, random_state=4)
    m = model(sample)
    default = m.fit(random_state=0)
    tight = m.fit(random_state=0, tol=1e-8, maxiter=200_000)
    assert default.tol == pytest.approx(0.5 / np.sqrt(300)) and tight.converged
    # the acceptance bound of issue 19: the loose, noise-tied tolerance moves the estimates by
    # far less than their sampling error (a few percent at N = 300); 2% is the target
    np.testing.assert_allclose(default.params, tight.params, rtol=0.02)


def test_sqeuclidean_estimates_w2():
    sample = simulate.linear_shift(400, dim=2, mean_shift=2.0, random_state=1)
    res = model(sample, x_metric="sqeuclidean").fit(random_state=0)
    # N(0, I) against N(2u, I): W2 = 2 exactly. The p = 1 formula on squared costs gave 4.27;
    # the p = 2 formula's sampling error at N = 400, d = 2 is about 0.05 (the p = 1 version's
    # tolerance for the same design is 0.15)
    assert res.covariate_shift == pytest.approx(2.0, abs=0.15)
    euclidean = model(sample).fit(random_state=0)
    # for a pure translation W1 = W2 = 2: both variants agree within their sampling errors
    assert res.covariate_shift == pytest.approx(euclidean.covariate_shift, abs=0.2)


def _absolute_loss_gradients(coef):
    def gradients(x):
        # d/dx |y - w'x| = -sign(y - w'x) w: the sign is arbitrary here, the bound sees |g.u|
        signs = np.where(np.arange(len(x)) % 2 == 0, 1.0, -1.0)
        return signs[:, None] * coef[None, :]

    return gradients


def test_gradient_factor_recovers_a_known_lipschitz_constant():
    sample = simulate.linear_shift(200, dim=2, mean_shift=1.0, random_state=0)
    coef = np.array([3.0, -4.0])  # h(x) = w'x under absolute loss: L_h L'_l = |w| = 5
    res = model(sample).fit(random_state=0)
    grads = _absolute_loss_gradients(coef)
    bound = res.bound(0.1, "gradients", gradients=grads)
    factor = bound.params["covariate_term"] / res.covariate_shift
    # max_ij |w.u_ij| <= |w| always; with 200 x 200 pair directions in the plane one lies within
    # a fraction of a degree of w, so the maximum is |w| to 1e-4 (2% asked)
    assert factor <= 5.0 * (1 + 1e-12)
    assert factor == pytest.approx(5.0, rel=0.02)
    assert "estimated from loss gradients" in bound.notes[0]
    pair = (grads(sample["x_source"]), None)
    by_array = res.bound(0.1, "gradients", gradients=pair)
    assert by_array.params["covariate_term"] <= bound.params["covariate_term"] + 1e-12
    w2 = model(sample, x_metric="sqeuclidean").fit(random_state=0)
    w2_factor = w2.bound(0.1, "gradients", gradients=grads).params["covariate_term"]
    # p = 2: the root-mean-square of |w.u| over the coupling, at most |w|
    assert 0 < w2_factor / w2.covariate_shift <= 5.0 * (1 + 1e-12)


def test_gradient_factor_refuses_what_it_cannot_do():
    sample = simulate.linear_shift(30, dim=2, random_state=0)
    res = model(sample).fit(random_state=0)
    with pytest.raises(ValueError, match="needs `gradients`"):
        res.bound(0.1, "gradients")
    with pytest.raises(ValueError, match="must have shape"):
        res.bound(0.1, "gradients", gradients=(np.ones((3, 2)), None))
    with pytest.raises(ValueError, match="`gradients` goes with lipschitz_h='gradients'"):
        res.bound(0.1, 1.0, gradients=(None, np.ones((30, 2))))
    city = model(sample, x_metric="cityblock").fit(random_state=0)
    with pytest.raises(ValueError, match="x_metric='cityblock'"):
        city.bound(0.1, "gradients", gradients=(None, np.ones((30, 2))))


def test_reference_numbers_of_the_authors_package():
    """Frozen from the authors' ``datashifts`` 0.8.4 (geomloss/KeOps, float32, eps = 0.01),
    measured on one draw of each design (seed not recorded; issue 19): N = 1,500 per domain,
    d = 10, labels ``w'x + 0.5 e``.

    - mean shift 4 along a unit vector: covariate shift 3.93;
    - no covariate shift, target labels + 3: concept shift 3.13.

    Our seed differs, so the tolerances are Monte Carlo ones: for the covariate shift
    3 sqrt(2) times its bootstrap standard error here (0.027), two independent draws; for the
    concept shift 3 times its spread over draws measured here (seeds 0-2: 3.10, 3.00, 2.97,
    s.d. 0.07).
    """
    shifted = simulate.linear_shift(1500, dim=10, mean_shift=4.0, random_state=0)
    assert model(shifted).fit(random_state=0).covariate_shift == pytest.approx(3.93, abs=0.12)
    labels = simulate.linear_shift(1500, dim=10, random_state=0)
    labels["y_target"] = labels["y_target"] + 3.0
    assert model(labels).fit(random_state=0).concept_shift == pytest.approx(3.13, abs=0.21)
