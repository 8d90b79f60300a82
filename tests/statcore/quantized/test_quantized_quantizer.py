import numpy as np
import pytest

from statcore.quantized import Quantizer, midpoint_impute


def test_uniform_mid_rise_thresholds_and_saturation():
    q = Quantizer.uniform(0.5, n_bits=3)
    assert q.n_levels == [8]
    np.testing.assert_allclose(q.thresholds[0], (np.arange(1, 8) - 4) * 0.5)
    codes = q.quantize([-10.0, -1.4, 0.0, 0.24, 0.5, 10.0])
    np.testing.assert_array_equal(codes, [0, 1, 4, 4, 5, 7])
    lower, upper = q.cells(codes)
    assert lower[0] == -np.inf and upper[-1] == np.inf
    np.testing.assert_allclose(lower[1:5], [-1.5, 0.0, 0.0, 0.5])
    np.testing.assert_allclose(upper[1:5], [-1.0, 0.5, 0.5, 1.0])


def test_cells_contain_the_values_and_dither_shifts_them(rng):
    q = Quantizer.uniform(0.3, n_bits=4, offset=0.1)
    x = rng.normal(size=500)
    u = rng.uniform(-0.15, 0.15, size=500)
    lower, upper = q.cells(q.quantize(x, dither=u), dither=u)
    assert np.all((lower <= x) & (x < upper))


def test_multivariate_codes_are_boxes(rng):
    q = Quantizer([np.array([0.0]), np.array([-1.0, 1.0])])
    x = rng.normal(size=(50, 2))
    codes = q.quantize(x)
    assert codes.shape == (50, 2) and codes[:, 0].max() <= 1 and codes[:, 1].max() <= 2
    lower, upper = q.cells(codes)
    assert np.all((lower <= x) & (x < upper))


@pytest.mark.parametrize(
    ("codes", "match"),
    [
        ([0, np.nan], "NaN"),
        ([0, 9], "must lie in 0..7"),
        ([-1, 2], "must lie in 0..7"),
        ([0.5], "whole numbers"),
        ([], "empty"),
    ],
)
def test_bad_codes_are_refused(codes, match):
    with pytest.raises(ValueError, match=match):
        Quantizer.uniform(1.0, n_bits=3).cells(np.array(codes))


def test_thresholds_must_increase():
    with pytest.raises(ValueError, match="strictly increasing"):
        Quantizer([0.0, 0.0, 1.0])


def test_midpoint_imputation_puts_saturated_cells_half_a_step_out():
    mids = midpoint_impute([-np.inf, 0.0, 1.0], [0.0, 1.0, np.inf])
    np.testing.assert_allclose(mids, [-0.5, 0.5, 1.5])
