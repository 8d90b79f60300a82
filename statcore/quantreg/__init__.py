"""Quantile regression: exact fits (Frisch-Newton, HiGHS), conquer smoothing, and the one-shot
weighted-ensemble federated estimator.

References
----------
Koenker, R. and Bassett, G. (1978). Regression quantiles. *Econometrica* 46, 33-50.
One-shot weighted ensemble estimation for federated quantile regression: optimal statistical
guarantees under heterogeneous structured data (ICML 2026).
"""

from statcore.quantreg import simulate
from statcore.quantreg._anova import anova
from statcore.quantreg.federated import FederatedQuantReg
from statcore.quantreg.model import QuantReg
from statcore.quantreg.results import FederatedQuantRegResults, QuantRegResults

__all__ = [
    "FederatedQuantReg",
    "FederatedQuantRegResults",
    "QuantReg",
    "QuantRegResults",
    "anova",
    "simulate",
]
