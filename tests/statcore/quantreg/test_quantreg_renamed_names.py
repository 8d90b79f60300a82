"""``rearrange_band=`` of the band functions is now ``rearrange=``, as on the results' methods."""

import pandas as pd
import pytest

from statcore.quantreg import QuantReg
from statcore.quantreg.bands import conf_band, predict_band


@pytest.fixture(scope="module")
def fit():
    import statcore as sc

    df = sc.datasets.load("engel")
    return QuantReg.from_formula("foodexp ~ income", df, q=[0.25, 0.5, 0.75]).fit(cov_type="kernel")


def test_conf_band_old_keyword_warns_and_matches(fit):
    new = conf_band(fit, rearrange=True, n_draws=500)
    with pytest.warns(FutureWarning, match="rearrange_band"):
        old = conf_band(fit, rearrange_band=True, n_draws=500)
    pd.testing.assert_frame_equal(old, new)
    pd.testing.assert_frame_equal(fit.conf_band(rearrange=True, n_draws=500), new)


def test_predict_band_old_keyword_warns_and_matches(fit):
    rows = pd.DataFrame({"income": [500.0, 1500.0]})
    new = predict_band(fit, rows, rearrange=True, n_draws=500)
    with pytest.warns(FutureWarning, match="rearrange_band"):
        old = predict_band(fit, rows, rearrange_band=True, n_draws=500)
    pd.testing.assert_frame_equal(old, new)
    pd.testing.assert_frame_equal(fit.predict_band(rows, rearrange=True, n_draws=500), new)
