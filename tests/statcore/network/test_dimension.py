"""Choosing the latent dimension by an information criterion."""

import warnings

import numpy as np
import pytest

from statcore.exceptions import ConvergenceWarning
from statcore.network import LatentSpaceModel
from statcore.network.simulate import sample_latent_graph, sparse_latent_design


@pytest.mark.parametrize("true_dim", [2, 3])
def test_bic_recovers_the_true_dimension(true_dim):
    Z, alpha, rho = sparse_latent_design(400, true_dim, random_state=10 + true_dim)
    # the paper's design scaled by 1.6: geometry clear enough to be detectable at n = 400 (at
    # scale 1 the second dimension's likelihood gain is below the ~n/2 that n noise
    # parameters buy, and no information criterion can find it)
    graph = sample_latent_graph(Z * 1.6, alpha, rho, random_state=20 + true_dim)
    with warnings.catch_warnings():
        # over-fitted dimensions may hit maxiter; their fits still rank as worse
        warnings.simplefilter("ignore", ConvergenceWarning)
        selection = LatentSpaceModel(graph, dim=2).select_dim(range(1, 5), maxiter=300)
    table = selection.tidy()
    assert selection.dim == true_dim
    assert list(table.columns) == [
        "dim",
        "loglik",
        "df",
        "aic",
        "bic",
        "converged",
        "n_iter",
        "selected",
    ]
    assert table["selected"].sum() == 1 and table.loc[table["selected"], "dim"].item() == true_dim
    # the likelihood rises with the dimension; BIC = -2 llf + df log(n)
    assert np.all(np.diff(table["loglik"]) > 0)
    np.testing.assert_allclose(table["bic"], -2 * table["loglik"] + table["df"] * np.log(400))
    assert selection.fits[true_dim].dim == true_dim


def test_auto_dimension_and_bad_input():
    Z, alpha, rho = sparse_latent_design(150, 2, random_state=3)
    graph = sample_latent_graph(Z * 1.6, alpha, rho, random_state=4)
    model = LatentSpaceModel(graph, dim="auto")
    model.auto_dims = range(1, 4)  # keep the test short
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = model.fit(maxiter=300)
    table = res.dim_selection
    assert "chosen by BIC" in res.notes[-1] and table["selected"].sum() == 1
    # the returned fit is the candidate of smallest BIC, and its own bic is the table's
    assert res.dim == table.loc[table["bic"].idxmin(), "dim"]
    assert res.bic == pytest.approx(table["bic"].min(), rel=1e-12)
    with pytest.raises(ValueError, match="`dim` must be one of 'auto'"):
        LatentSpaceModel(graph, dim="best")
    with pytest.raises(ValueError, match="`criterion` must be one of"):
        LatentSpaceModel(graph).select_dim(criterion="dic")
    with pytest.raises(ValueError, match="`dims` must hold positive ints"):
        LatentSpaceModel(graph).select_dim(dims=[0, 1])
