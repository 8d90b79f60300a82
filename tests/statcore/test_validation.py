"""Every shared check's message names the argument, what was expected and what came."""

import numpy as np
import pandas as pd
import pytest

from statcore import validation as v


def test_as_float_array_returns_float_copy():
    src = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = v.as_float_array(src, name="x", ndim=2)
    assert out.dtype == np.float64 and out.flags.c_contiguous
    out[0, 0] = 99
    assert src[0, 0] == 0
    fortran = np.asfortranarray(np.ones((3, 2)))
    assert v.as_float_array(fortran, name="x").flags.c_contiguous


@pytest.mark.parametrize(
    "value,kwargs,error,message",
    [
        (
            np.array([1.0, np.nan]),
            {},
            ValueError,
            r"`x` must not contain NaN; found 1 \(first at index \(1,\)\)",
        ),
        (
            np.array([np.inf, 1.0]),
            {},
            ValueError,
            r"`x` must be finite; found 1 infinite value\(s\) \(first at index \(0,\)\)",
        ),
        (
            np.zeros((2, 2)),
            {"ndim": 1},
            ValueError,
            r"`x` must be 1-D; got a 2-D array of shape \(2, 2\)",
        ),
        (np.zeros(3), {"ndim": (2, 3)}, ValueError, r"`x` must be 2-D or 3-D; got a 1-D array"),
        (np.zeros(1), {"min_rows": 2}, ValueError, r"`x` needs at least 2 rows; got one row"),
        (None, {}, TypeError, r"`x` must be numeric array-like; got None"),
        (["a", "b"], {}, TypeError, r"`x` must be numeric array-like; got \['a', 'b'\]"),
    ],
)
def test_as_float_array_errors(value, kwargs, error, message):
    with pytest.raises(error, match=message):
        v.as_float_array(value, name="x", **kwargs)


def test_nan_allowed_on_request():
    out = v.as_float_array([1.0, np.nan], name="x", allow_nan=True)
    assert np.isnan(out[1])


def test_same_length():
    assert v.check_same_length(a=np.zeros(3), b=pd.Series([1, 2, 3])) == 3
    with pytest.raises(ValueError, match="`a` has 3, `b` has 2"):
        v.check_same_length(a=np.zeros(3), b=np.zeros(2))


@pytest.mark.parametrize(
    "call,error,message",
    [
        (
            lambda: v.check_positive(0.0, name="tol"),
            ValueError,
            r"`tol` must lie in \(0, inf\]; got 0.0",
        ),
        (
            lambda: v.check_positive(-1, name="tol", strict=False),
            ValueError,
            r"`tol` must lie in \[0, inf\]; got -1",
        ),
        (
            lambda: v.check_positive("1", name="tol"),
            TypeError,
            r"`tol` must be a real number; got '1'",
        ),
        (
            lambda: v.check_positive(np.nan, name="tol"),
            ValueError,
            r"`tol` must be finite; got nan",
        ),
        (
            lambda: v.check_positive_int(0, name="maxiter"),
            ValueError,
            r"`maxiter` must lie in \[1, inf\]; got 0",
        ),
        (
            lambda: v.check_positive_int(2.5, name="maxiter"),
            TypeError,
            r"`maxiter` must be an integer; got 2.5",
        ),
        (
            lambda: v.check_positive_int(True, name="maxiter"),
            TypeError,
            r"`maxiter` must be an integer; got True",
        ),
        (
            lambda: v.check_probability(1.0, name="q"),
            ValueError,
            r"`q` must lie in \(0, 1\); got 1.0",
        ),
        (lambda: v.check_alpha(0), ValueError, r"`alpha` must lie in \(0, 1\); got 0"),
        (
            lambda: v.check_option("x", name="method", options=("fn", "highs")),
            ValueError,
            r"`method` must be one of 'fn', 'highs'; got 'x'",
        ),
        (
            lambda: v.check_alternative("larger"),
            ValueError,
            r"`alternative` must be one of 'two-sided', 'less', 'greater'; got 'larger'",
        ),
        (
            lambda: v.check_random_state(-3),
            ValueError,
            r"`random_state` must be a non-negative integer; got -3",
        ),
        (
            lambda: v.check_random_state("seed"),
            TypeError,
            r"`random_state` must be None, a non-negative int, a numpy SeedSequence or a numpy Generator; got 'seed'",
        ),
    ],
)
def test_scalar_check_messages(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_valid_scalars_pass_through():
    assert v.check_probability(0.25, name="q") == 0.25
    assert v.check_positive_int(np.int64(5), name="n") == 5
    assert v.check_scalar(3, name="k", low=0, high=3) == 3


def test_random_state_normalisation():
    gen = np.random.default_rng(1)
    assert v.check_random_state(gen) is gen
    a = v.check_random_state(42).normal(size=3)
    b = v.check_random_state(np.random.SeedSequence(42)).normal(size=3)
    np.testing.assert_array_equal(a, b)
    assert isinstance(v.check_random_state(None), np.random.Generator)


@pytest.mark.parametrize(
    "value,message",
    [
        ([1.0, 2 + 1j], r"`x` must be real; got complex values"),
        ("1", r"`x` must be numeric array-like; got '1' \(dtype <U1\)"),
        (np.array(["1.5", "2"]), r"`x` must be numeric array-like; got ndarray"),
        (np.array([1.0, "a"], dtype=object), r"real entries; got the entry 'a' \(str\)"),
        (np.array([1.0, 1j], dtype=object), r"real entries; got the entry 1j \(complex\)"),
    ],
)
def test_as_float_array_refuses_complex_and_text(value, message):
    with pytest.raises(TypeError, match=message):
        v.as_float_array(value, name="x")


def test_numbers_in_object_arrays_still_convert():
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": [True, False]})
    np.testing.assert_array_equal(v.as_float_array(frame, name="x"), [[1.0, 1.0], [2.0, 0.0]])


def test_numeric_strings_are_not_numbers():
    with pytest.raises(TypeError, match="`penalty` must be numeric array-like; got '1'"):
        v.check_penalty("1")
    with pytest.raises(TypeError, match="`tol` must be a real number; got '1'"):
        v.check_positive("1", name="tol")
    with pytest.raises(TypeError, match=r"`q\[0\]` must be a real number; got '0.5'"):
        v.check_levels(["0.5"])
    with pytest.raises(ValueError, match=r"`tol` must lie in \(0, inf\]; got -2.0"):
        v.check_positive(np.float64(-2.0), name="tol")


def test_rows_and_design_checks():
    assert v.check_n_rows(2, name="y") == 2
    with pytest.raises(ValueError, match="`y` needs at least 2 rows; got one row"):
        v.check_n_rows(1, name="y")
    with pytest.raises(ValueError, match="more rows than columns; got 2 rows, 2 columns"):
        v.check_design(np.eye(2), ["a", "b"])
    with pytest.raises(ValueError, match=r"singular \(rank 1 < 2 columns \['a', 'b'\]\)"):
        v.check_design(np.ones((3, 2)), ["a", "b"])


def test_check_bool_takes_python_and_numpy_bools_only():
    assert v.check_bool(np.True_, name="flag") is True
    assert v.check_bool(False, name="flag") is False
    for bad in (1, 0.0, "yes", None):
        with pytest.raises(TypeError, match="`flag` must be True or False"):
            v.check_bool(bad, name="flag")


def test_align_rows_reorders_pandas_inputs_to_the_first_and_refuses_other_labels():
    a = pd.Series([1.0, 2.0, 3.0], index=["x", "y", "z"])
    b = pd.DataFrame({"v": [30.0, 10.0, 20.0]}, index=["z", "x", "y"])
    plain = np.array([7.0, 8.0, 9.0])
    first, second, third = v.align_rows(a=a, b=b, c=plain)
    assert list(second.index) == ["x", "y", "z"] and list(second["v"]) == [10.0, 20.0, 30.0]
    assert third is plain and first is a  # arrays by position; the first frame as it is
    assert list(b.index) == ["z", "x", "y"]  # the caller's frame is not reordered
    with pytest.raises(ValueError, match="`a` and `b` must index the same rows"):
        v.align_rows(a=a, b=b.rename(index={"z": "w"}))
    with pytest.raises(ValueError, match="`b` has a repeated index label"):
        v.align_rows(a=a, b=b.rename(index={"z": "x"}))
