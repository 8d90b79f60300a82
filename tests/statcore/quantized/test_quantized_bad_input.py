"""Bad input to the quantized entries gives an error naming the argument (issue 18)."""

import re

import numpy as np
import pandas as pd
import pytest

from statcore.quantized import (
    QuantizedCovariance,
    QuantizedNVMM,
    QuantizedRegression,
    Quantizer,
    midpoint_impute,
)
from statcore.quantized.simulate import rmvt, rnvmm

rng = np.random.default_rng(0)
X = rng.standard_normal((60, 2))
Z = X @ [1.0, -1.0] + rng.standard_normal(60)
Q = Quantizer.uniform(0.5, n_bits=3)
CODES = Q.quantize(Z)
LO, HI = Q.cells(CODES)
Q2 = Quantizer.uniform(0.5, n_bits=2, n_dims=2)
CODES2 = Q2.quantize(rng.standard_normal((60, 2)))
WITH_FRACTION = pd.DataFrame({"c": np.r_[2.6, CODES[1:]], "a": X[:, 0]})

CASES = {
    "one observation": (
        lambda: QuantizedNVMM(LO[:1], HI[:1]),
        "`lower` needs at least 2 rows; got one row",
    ),
    "complex cells": (lambda: QuantizedNVMM(LO + 0j, HI), "`lower` must be real"),
    "fix sigma < 0": (
        lambda: QuantizedNVMM(LO, HI).fit(fix={"sigma": -1}),
        "`fix['sigma']` must lie in (0, inf]",
    ),
    "fix text": (
        lambda: QuantizedNVMM(LO, HI).fit(fix={"sigma": "1"}),
        "`fix['sigma']` must be a real number",
    ),
    "fix nu": (
        lambda: QuantizedNVMM(LO, HI, family="t").fit(fix={"nu": -1}),
        "`fix['nu']` must lie in [0.05, 1000]",
    ),
    "start not a dict": (
        lambda: QuantizedNVMM(LO, HI).fit(start=[1, 2]),
        "`start` must be a dict of parameter values by name",
    ),
    "start Sigma": (
        lambda: QuantizedNVMM.from_codes(CODES2, Q2).fit(start={"Sigma": -np.eye(2)}),
        "`start['Sigma']` must be symmetric positive definite",
    ),
    "unused random_state": (
        lambda: QuantizedNVMM(LO, HI).fit(random_state="x"),
        "`random_state` must be None",
    ),
    "quantizer text": (
        lambda: QuantizedNVMM.from_codes(CODES, "q"),
        "`quantizer` must be a statcore.quantized.Quantizer",
    ),
    "covariance quantizer": (
        lambda: QuantizedCovariance(CODES2, "q"),
        "`quantizer` must be a statcore.quantized.Quantizer",
    ),
    "regression quantizer": (
        lambda: QuantizedRegression(CODES, X, quantizer="q"),
        "`quantizer` must be a statcore.quantized.Quantizer",
    ),
    "regression formula code 2.6": (
        lambda: QuantizedRegression.from_formula("c ~ a", WITH_FRACTION, quantizer=Q),
        "`codes` must be whole numbers",
    ),
    "regression array code 2.6": (
        lambda: QuantizedRegression(WITH_FRACTION["c"], X, quantizer=Q),
        "`codes` must be whole numbers",
    ),
    "regression no response": (
        lambda: QuantizedRegression.from_formula("~ a", WITH_FRACTION, quantizer=Q),
        "has no response",
    ),
    "regression too few rows": (
        lambda: QuantizedRegression(CODES[:2], X[:2], quantizer=Q),
        "the design needs more rows than columns",
    ),
    "regression start beta": (
        lambda: QuantizedRegression(CODES, X, quantizer=Q).fit(start={"beta": [1.0]}),
        "`start['beta']` must have shape (3,)",
    ),
    "uniform offset text": (lambda: Quantizer.uniform(1, offset="1"), "`offset` must be a real"),
    "uniform n_bits": (lambda: Quantizer.uniform(1, n_bits=40), "`n_bits` must lie in [1, 24]"),
    "midpoints shapes": (
        lambda: midpoint_impute([0.0, 1.0], [1.0]),
        "`lower` and `upper` must have the same shape",
    ),
    "loglike sigma": (
        lambda: QuantizedNVMM(LO, HI).loglike([0.0, -1.0]),
        "`params['sigma']` must lie in (0, inf]; got -1.0",
    ),
    "rnvmm sigma": (lambda: rnvmm(5, sigma=-1), "`sigma` must lie in (0, inf]"),
    "rmvt Sigma": (lambda: rmvt(5, -np.eye(2)), "`Sigma` must be positive definite"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_refused_by_name(case):
    call, fragment = CASES[case]
    with pytest.raises((TypeError, ValueError), match=re.escape(fragment)):
        call()


def test_labels_are_aligned_or_refused():
    codes = pd.Series(CODES, index=np.arange(60)[::-1], name="c")
    frame = pd.DataFrame(X, columns=["a", "b"])
    aligned = QuantizedRegression(codes, frame, quantizer=Q).fit(cov_type=None).params
    by_position = (
        QuantizedRegression(codes.to_numpy(), frame.loc[codes.index], quantizer=Q)
        .fit(cov_type=None)
        .params
    )
    np.testing.assert_allclose(aligned.to_numpy(), by_position.to_numpy())
    with pytest.raises(ValueError, match="must carry the same index labels"):
        QuantizedRegression(codes, frame.set_axis(np.arange(1, 61)), quantizer=Q)


def test_dropped_rows_drop_their_cells():
    holed = X.copy()
    holed[3, 0] = np.nan
    model = QuantizedRegression(CODES, holed, quantizer=Q, missing="drop")
    assert model.nobs == len(model.lower) == 59
    np.testing.assert_array_equal(model.lower, np.delete(LO, 3))
