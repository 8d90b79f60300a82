"""Old spellings of renamed names keep working for one release, with a FutureWarning; the
predict-and-simulate tools are estimators whose options the base records."""

import numpy as np
import pytest

from statcore.base import Estimator
from statcore.theory import CPGradientFlow, FrontierDesign, PrunedReLUNetwork


def test_pruned_network_input_dim_is_now_d():
    with pytest.warns(FutureWarning, match="input_dim"):
        old = PrunedReLUNetwork(0.5, 2, width=20, input_dim=30)
    new = PrunedReLUNetwork(0.5, 2, width=20, d=30)
    assert old.d == new.d == 30
    with pytest.warns(FutureWarning, match="input_dim"):
        assert new.input_dim == 30


def test_cp_flow_results_theory_is_now_theory_name():
    res = CPGradientFlow(2, 3, 4).simulate([0.0, 0.1], n_seeds=2, random_state=0)
    with pytest.warns(FutureWarning, match="theory_name"):
        assert res.theory == res.theory_name == "NTK"


def test_frontier_design_is_an_estimator_whose_simulate_options_are_recorded():
    design = FrontierDesign(n_models=40, n_arc=10, random_state=0)
    assert isinstance(design, Estimator)
    res = design.simulate([10, 20], n_reps=3, random_state=np.random.default_rng(1))
    assert res.fit_options["n_reps"] == 3
    assert res.model is design
