"""The formula door: names, intercept, missing values, copies, new-data specification."""

import numpy as np
import pandas as pd
import pytest
from _models import OLSFixture

from statcore.formula import design_from_arrays, design_from_formula


def test_array_names_and_intercept():
    X = np.arange(12.0).reshape(6, 2) ** 1.5
    d = design_from_arrays(np.arange(6.0), X)
    assert d.x_names == ("Intercept", "x0", "x1") and d.y_name == "y"
    np.testing.assert_array_equal(d.X[:, 0], 1.0)
    assert d.X.dtype == np.float64 and d.X.flags.c_contiguous
    d0 = design_from_arrays(np.arange(6.0), X, intercept=False)
    assert d0.x_names == ("x0", "x1")


def test_pandas_names_flow_to_params(regression_frame):
    y = regression_frame["y"]
    X = regression_frame[["x"]].assign(x2=regression_frame["x"] ** 2)
    res = OLSFixture(y, X).fit()
    assert list(res.params.index) == ["Intercept", "x", "x2"]
    assert res.model.endog_name == "y"
    assert list(res.predict(X.iloc[:3]).index) == list(X.index[:3])


def test_a_constant_column_serves_as_the_intercept_as_statsmodels_hasconst():
    X = pd.DataFrame({"const": np.ones(5), "x": np.arange(5.0)})
    design = design_from_arrays(np.arange(5.0), X)
    # no second constant is added (that would make X singular); the user's column is kept
    assert design.x_names == ("const", "x")
    assert design.spec.constant == "const" and design.spec.intercept_term == "const"
    np.testing.assert_array_equal(design.X, X.to_numpy())
    # new data carries the constant as the fitting data did
    np.testing.assert_array_equal(design.spec.exog(X.iloc[:2])[0], X.to_numpy()[:2])
    plain = design_from_arrays(np.arange(5.0), X[["x"]])
    assert plain.x_names == ("Intercept", "x") and plain.spec.intercept_term == "Intercept"
    assert design_from_arrays(np.arange(5.0), X, intercept=False).spec.constant is None


def test_several_constant_columns_are_refused_and_a_zero_column_is_no_constant():
    X = np.column_stack([np.ones(5), np.full(5, 2.0), np.arange(5.0)])
    with pytest.raises(ValueError, match=r"`exog` columns \['x0', 'x1'\] are all constant"):
        design_from_arrays(np.arange(5.0), X)
    zero = np.column_stack([np.zeros(5), np.arange(5.0)])
    assert design_from_arrays(np.arange(5.0), zero).x_names == ("Intercept", "x0", "x1")


def test_missing_raise_and_drop():
    y = np.array([1.0, 2.0, np.nan, 4.0, 5.0])
    X = np.array([0.5, np.nan, 1.0, 2.0, 3.5])
    with pytest.raises(
        ValueError, match=r"`endog` has missing values in 2 row\(s\); pass missing='drop'"
    ):
        design_from_arrays(y, X)
    d = design_from_arrays(y, X, missing="drop")
    assert d.nobs == 3 and d.n_dropped == 2 and list(d.row_labels) == [0, 3, 4]
    res = OLSFixture(y, X, missing="drop").fit()
    assert "2 row(s) with missing values were dropped." in res.summary().notes
    with pytest.raises(ValueError, match="`missing` must be one of 'raise', 'drop'"):
        design_from_arrays(y, X, missing="ignore")


def test_formula_missing(regression_frame):
    frame = regression_frame.copy()
    frame.loc[[3, 8], "x"] = np.nan
    with pytest.raises(ValueError, match=r"missing values in 2 row\(s\) \(variables \['x'\]\)"):
        design_from_formula("y ~ x + C(g)", frame)
    d = design_from_formula("y ~ x + C(g)", frame, missing="drop")
    assert d.n_dropped == 2 and 3 not in d.row_labels and d.nobs == 58


def test_inputs_are_not_modified(regression_frame):
    frame = regression_frame.copy()
    X = frame[["x"]].to_numpy().copy()
    y = frame["y"].to_numpy().copy()
    d = design_from_arrays(y, X)
    d.X[0, 1] = 1e6
    assert X[0, 0] != 1e6
    design_from_formula("y ~ x + C(g)", frame)
    pd.testing.assert_frame_equal(frame, regression_frame)


def test_formula_without_intercept_and_errors(regression_frame):
    d = design_from_formula("y ~ x - 1", regression_frame)
    assert d.x_names == ("x",)
    with pytest.raises(ValueError, match="`formula` must be a string 'response ~ terms'"):
        design_from_formula("x + g", regression_frame)
    with pytest.raises(ValueError, match="could not be evaluated on `data`"):
        design_from_formula("y ~ nothere", regression_frame)
    with pytest.raises(TypeError, match="`data` must be a pandas DataFrame"):
        design_from_formula("y ~ x", [1, 2, 3])


def test_formula_uses_callers_namespace(regression_frame):
    shift = 3.0  # noqa: F841 - read by the formula through the captured context
    res = OLSFixture.from_formula("y ~ I(x + shift)", regression_frame).fit()
    assert "I(x + shift)" in res.params.index


def test_array_input_errors():
    with pytest.raises(ValueError, match="same number of rows; `endog` has 4, `exog` has 3"):
        design_from_arrays(np.zeros(4), np.zeros((3, 1)))
    with pytest.raises(ValueError, match="`exog` must be finite"):
        design_from_arrays(np.zeros(3), np.array([1.0, np.inf, 2.0]))
    with pytest.raises(TypeError, match=r"non-numeric columns \['g'\]; use `from_formula` with C"):
        design_from_arrays(np.zeros(2), pd.DataFrame({"g": ["a", "b"]}))
    with pytest.raises(ValueError, match="no regressors"):
        design_from_arrays(np.zeros(3), None, intercept=False)


def test_array_spec_predicts_new_arrays_and_frames(regression_frame):
    y = regression_frame["y"]
    X = regression_frame[["x"]]
    res = OLSFixture(y, X).fit()
    manual = res.params["Intercept"] + res.params["x"] * np.array([0.0, 1.0])
    np.testing.assert_allclose(res.predict(np.array([0.0, 1.0])), manual)
    np.testing.assert_allclose(res.predict(pd.DataFrame({"x": [0.0, 1.0], "junk": [5, 6]})), manual)
    with pytest.raises(ValueError, match=r"lacks the columns \['x'\]"):
        res.predict(pd.DataFrame({"z": [1.0]}))
    plain = OLSFixture(y.to_numpy(), X.to_numpy()).fit()
    with pytest.raises(ValueError, match="`newdata` must have 1 columns; got 2"):
        plain.predict(np.zeros((3, 2)))


def test_pandas_rows_are_paired_by_label():
    y = pd.Series([1.0, 2.0, 3.0, 5.0], index=[3, 1, 2, 0], name="y")
    X = pd.DataFrame({"a": [10.0, 20.0, 30.0, 40.0]}, index=[0, 1, 2, 3])
    design = design_from_arrays(y, X)
    np.testing.assert_array_equal(design.X[:, 1], [40.0, 20.0, 30.0, 10.0])
    assert list(design.row_labels) == [3, 1, 2, 0]
    np.testing.assert_array_equal(design_from_arrays(y, X["a"]).X[:, 1], design.X[:, 1])
    with pytest.raises(
        ValueError, match=r"must carry the same index labels; they differ \(\[3, 9\]"
    ):
        design_from_arrays(y, X.set_axis([0, 1, 2, 9]))
    with pytest.raises(ValueError, match="must carry the same index labels"):
        design_from_arrays(y, X.set_axis([0, 1, 1, 3]))
    by_position = design_from_arrays(y, X.to_numpy())
    np.testing.assert_array_equal(by_position.X[:, 1], X["a"].to_numpy())


def test_too_few_rows_and_a_missing_response_are_named():
    with pytest.raises(ValueError, match="`endog` needs at least 2 rows; got one row"):
        design_from_arrays([1.0], [[2.0, 3.0]])
    with pytest.raises(ValueError, match="got no rows"):
        design_from_arrays(np.empty(0), np.empty((0, 2)))
    with pytest.raises(
        ValueError, match=r"`endog \(after dropping missing rows\)` needs at least 2"
    ):
        design_from_arrays([1.0, np.nan], [2.0, 3.0], missing="drop")
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [1.0, np.nan, np.nan]})
    with pytest.raises(ValueError, match=r"`data \(after dropping missing rows\)` needs at least"):
        design_from_formula("y ~ x", frame, missing="drop")
    with pytest.raises(ValueError, match=r"`formula` '~ x' has no response"):
        design_from_formula("~ x", frame)
