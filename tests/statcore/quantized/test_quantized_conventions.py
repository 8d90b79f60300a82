"""statcore.quantized on the shared conventions: estimator base, iteration record, formula door,
renamed keywords, the one bootstrap."""

import numpy as np
import pandas as pd
import pytest

from statcore.base import Estimator
from statcore.exceptions import ConvergenceWarning
from statcore.quantized import (
    QuantizedCompressedSensing,
    QuantizedCovariance,
    QuantizedMatrixCompletion,
    QuantizedNVMM,
    QuantizedRegression,
    Quantizer,
)
from statcore.quantized.results import QuantizedResults
from statcore.quantized.simulate import rmvt, rnvmm
from statcore.results import IterationRecord, ResamplingResult


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(7)
    q = Quantizer.uniform(0.5, 3)
    x = rmvt(600, [[1.0, 0.5], [0.5, 1.0]], random_state=rng)
    return q, pd.DataFrame({"a": q.quantize(x[:, 0]), "b": q.quantize(x[:, 1])})


def test_every_model_is_an_estimator_and_reports_a_record():
    q = Quantizer.uniform(0.5, 3)
    x = rnvmm(300, random_state=0)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((40, 60))
    fits = [
        QuantizedNVMM.from_codes(q.quantize(x), q).fit(cov_type=None),
        QuantizedRegression(q.quantize(x), rng.standard_normal(300), quantizer=q).fit(
            cov_type=None
        ),
        QuantizedMatrixCompletion(q.quantize(rng.standard_normal(200)).reshape(20, 10), q, 1).fit(),
        QuantizedCompressedSensing(q.quantize(A[:, 0]), q, A, penalty=0.3).fit(),
    ]
    for res in fits:
        assert isinstance(res.model, Estimator) and isinstance(res, QuantizedResults)
        assert isinstance(res.iterations, IterationRecord)
        assert res.converged == res.iterations.converged and res.n_iter == res.iterations.n_iter
        assert res.fit_options["maxiter"] > 0
        assert repr(res.model).endswith(f"nobs={res.nobs})")
    assert fits[0].fit_options["cov_type"] is None


def test_stopping_at_maxiter_warns_once_and_is_never_converged():
    q = Quantizer.uniform(0.5, 3)
    model = QuantizedNVMM.from_codes(q.quantize(rnvmm(500, random_state=1)), q, family="t")
    with pytest.warns(ConvergenceWarning, match=r"QuantizedNVMM.fit reached maxiter=4") as rec:
        res = model.fit(maxiter=4, cov_type=None)
    assert len(rec) == 1
    assert res.n_iter == 4 and res.converged is False and res.iterations.status == "maxiter"


def test_nvmm_from_formula_takes_the_named_column(frame):
    q, df = frame
    res = QuantizedNVMM.from_formula("~ a", df, quantizer=q).fit(cov_type=None)
    ref = QuantizedNVMM.from_codes(df["a"].to_numpy(), q).fit(cov_type=None)
    np.testing.assert_array_equal(res.params.to_numpy(), ref.params.to_numpy())
    assert "of a" in res.method
    boxes = QuantizedNVMM.from_formula("~ a + b", df, quantizer=Quantizer.uniform(0.5, 3, n_dims=2))
    assert boxes.param_names[:2] == ["mu[a]", "mu[b]"] and "Sigma[b,a]" in boxes.param_names


def test_covariance_from_formula_labels_the_parameters(frame):
    q, df = frame
    q2 = Quantizer.uniform(0.5, 3, n_dims=2)
    res = QuantizedCovariance.from_formula("~ b + a", df, quantizer=q2).fit(cov_type=None)
    assert list(res.params.index) == ["mu[b]", "mu[a]", "Sigma[b,b]", "Sigma[a,b]", "Sigma[a,a]"]
    ref = QuantizedCovariance(df[["b", "a"]].to_numpy(), q2).fit(cov_type=None)
    np.testing.assert_array_equal(res.params.to_numpy(), ref.params.to_numpy())
    assert res.Sigma[0, 1] == pytest.approx(0.5, abs=0.15)
    holed = df.astype(float)
    holed.loc[3, "a"] = np.nan
    with pytest.raises(ValueError, match="missing codes in 1 row"):
        QuantizedCovariance.from_formula("~ a + b", holed, quantizer=q2)
    dropped = QuantizedCovariance.from_formula("~ a + b", holed, quantizer=q2, missing="drop")
    assert dropped.nobs == len(df) - 1
    assert "1 row(s) with missing codes" in dropped.fit(cov_type=None).summary().as_text()
    with pytest.raises(ValueError, match=r"`data` does not have"):
        QuantizedCovariance.from_formula("~ a + c", df, quantizer=q2)
    with pytest.raises(ValueError, match="one-sided"):
        QuantizedCovariance.from_formula("a ~ b", df, quantizer=q2)
    with pytest.raises(ValueError, match="`mean` must be one of"):
        QuantizedCovariance(df.to_numpy(), q2, mean="none")


def test_bootstrap_keeps_its_replicates(frame):
    q, df = frame
    model = QuantizedNVMM.from_codes(df["a"].to_numpy(), q)
    res = model.fit(cov_type="bootstrap", n_resamples=20, random_state=3)
    assert isinstance(res.resampling, ResamplingResult)
    assert res.resampling.replicates.shape == (20, 2)
    np.testing.assert_allclose(res.bse.to_numpy(), res.resampling.bse.to_numpy(), rtol=1e-12)
    assert res.cov_type == "bootstrap (20 resamples)"


def test_old_spellings_still_work_with_a_future_warning():
    q = Quantizer.uniform(0.5, 3)
    model = QuantizedNVMM.from_codes(q.quantize(rnvmm(300, random_state=2)), q)
    with pytest.warns(FutureWarning, match="`se=` is now spelled `cov_type=`"):
        old = model.fit(se=None)
    assert old.fit_options["cov_type"] is None and old.vcov is None
    rng = np.random.default_rng(4)
    A = rng.standard_normal((30, 40))
    cs = QuantizedCompressedSensing(q.quantize(A[:, 0] - A[:, 1]), q, A)
    with pytest.warns(FutureWarning, match="`n_lambdas=` is now spelled `n_penalties=`"):
        res = cs.fit(n_lambdas=3)
    with pytest.warns(FutureWarning, match="`lambda_min_ratio=`"):
        cs.fit(n_penalties=3, lambda_min_ratio=0.5)
    with pytest.warns(FutureWarning, match="lam is now"):
        assert res.lam == res.penalty
    with pytest.warns(FutureWarning, match=r"lam_max\(\) is now"):
        assert cs.lam_max() == cs.penalty_max()
    assert len(res.path) == 3 and "penalty" in res.path
