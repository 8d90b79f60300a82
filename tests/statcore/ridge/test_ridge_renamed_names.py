"""``sigma2`` is now ``noise_variance`` across statcore.ridge: the old spelling still works for
one release, with a FutureWarning."""

import numpy as np
import pytest

from statcore.ridge import RidgeDesign, asymptotic_risk, optimal_xi, paper_design
from statcore.ridge.asymptotics import cross_risk


def test_paper_design_and_its_attribute_accept_sigma2():
    with pytest.warns(FutureWarning, match="sigma2"):
        old = paper_design(20, sigma2=0.5, random_state=0)
    new = paper_design(20, noise_variance=0.5, random_state=0)
    assert old.noise_variance == new.noise_variance == 0.5
    with pytest.warns(FutureWarning, match="sigma2"):
        assert new.sigma2 == 0.5
    with pytest.warns(FutureWarning, match="sigma2"):
        built = RidgeDesign(
            covariance=new.covariance,
            beta=new.beta,
            sigma2=0.5,
            eigenvalues=new.eigenvalues,
            eigenvectors=new.eigenvectors,
        )
    assert built.noise_variance == 0.5


@pytest.mark.parametrize(
    "call",
    [
        lambda **kw: asymptotic_risk(1.0, 0.0, 0.5, np.ones(5), np.ones(5), **kw).teacher,
        lambda **kw: optimal_xi(1.0, 0.5, np.ones(5), np.ones(5), **kw),
        lambda **kw: cross_risk(1.0, 2.0, 0.5, np.ones(5), np.ones(5), **kw),
    ],
    ids=["asymptotic_risk", "optimal_xi", "cross_risk"],
)
def test_risk_functions_accept_sigma2(call):
    with pytest.warns(FutureWarning, match="noise_variance"):
        old = call(sigma2=0.7)
    assert old == pytest.approx(call(noise_variance=0.7))
