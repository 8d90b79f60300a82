"""The shared results and inference object model of statcore and mlcore.

Vocabulary (one spelling each; a new name gets a line here):

=================  ===============================================================
``params``         estimates by term (Series; DataFrame with a column per level)
``vcov``           covariance of the estimates (DataFrame)
``bse``            standard errors; ``tvalues`` statistics; ``pvalues`` p-values
``conf_int``       ``conf_int(alpha=0.05)`` -> DataFrame[lower, upper], rows = terms
``alpha``          significance level of every interval and summary
``alternative``    ``"two-sided"``, ``"less"``, ``"greater"``
``llf``            maximised log-likelihood; ``aic``, ``bic``
``nobs``           number of observations; ``df_model``, ``df_resid``
``converged``      whether an iterative fit met its tolerance; ``n_iter`` iterations
``statistic``      a test's statistic; ``pvalue`` its p-value (singular: scalars)
``null_distribution``  draws of the statistic under the null
``replicates``     resampled estimates; ``n_resamples`` their number
tidy columns       ``term, [level,] estimate, std_error, statistic, p_value, conf_low, conf_high``
glance columns     ``method, nobs, df_model, df_resid, loglik, aic, bic, converged, n_iter``
augment columns    the data + ``.fitted, .resid, .std_resid``
=================  ===============================================================

This package imports only numpy, scipy and pandas (matplotlib when a plot is drawn; the
formula module when a Wald test parses a constraint string).
"""

from statcore.results.base import Results
from statcore.results.compare import compare
from statcore.results.estimation import EstimationResults, LikelihoodResults
from statcore.results.iteration import IterationRecord
from statcore.results.resampling import ResamplingResult
from statcore.results.summary import Summary
from statcore.results.testing import TestResult

__all__ = [
    "EstimationResults",
    "IterationRecord",
    "LikelihoodResults",
    "ResamplingResult",
    "Results",
    "Summary",
    "TestResult",
    "compare",
]
