import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(20261202)


@pytest.fixture
def regression_frame():
    """A small regression data set with a numeric and a three-level categorical regressor."""
    gen = np.random.default_rng(7)
    n = 60
    x = gen.normal(size=n)
    g = np.array(["a", "b", "c"])[gen.integers(0, 3, size=n)]
    effect = pd.Series({"a": 0.0, "b": 1.0, "c": -0.5})[g].to_numpy()
    y = 1.0 + 2.0 * x + effect + gen.normal(scale=0.7, size=n)
    return pd.DataFrame({"y": y, "x": x, "g": g})
