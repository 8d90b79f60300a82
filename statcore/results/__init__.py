"""The shared results and inference object model of statcore and mlcore.

Vocabulary (one spelling each; a new name gets a line here, and a new area reads this first):

=====================  ===========================================================================
``params``             estimates by term (Series; DataFrame with a column per level)
``vcov``               covariance of the estimates (DataFrame)
``bse``                standard errors; ``tvalues`` statistics; ``pvalues`` p-values
``conf_int``           ``conf_int(alpha=0.05)`` -> DataFrame[lower, upper], rows = terms
``alpha``              significance level of every interval and summary
``alternative``        ``"two-sided"``, ``"less"``, ``"greater"``
``llf``                maximised log-likelihood; ``aic``, ``bic``
``nobs``               number of observations; ``df_model``, ``df_resid``
``converged``          whether an iterative fit met its tolerance; ``n_iter`` iterations (both
                       read from ``iterations`` when the result carries one)
``iterations``         the :class:`IterationRecord` (``status``, ``maxiter``, ``tol``,
                       ``criterion``, ``last_value``, ``history``), made by
                       :meth:`IterationRecord.from_run` only
``fit_options``        the keyword options ``fit()`` was called with, defaults filled in
``statistic``          a test's statistic; ``pvalue`` its p-value (singular: scalars)
``null_distribution``  draws of the statistic under the null
``replicates``         resampled estimates; ``n_resamples`` their number
``wall_time_s``        seconds a fit or run took (not ``fit_seconds``)
tidy columns           ``term, [level,] estimate, std_error, statistic, p_value, conf_low,
                       conf_high``
glance columns         ``method, nobs, df_model, df_resid, loglik, aic, bic, converged, n_iter``
augment columns        the data + ``.fitted, .resid, .std_resid``
=====================  ===========================================================================

Arguments (constructors and ``fit()`` options) use the same words everywhere:

=====================  ===========================================================================
``random_state``       None, int, SeedSequence or Generator (torch: or a torch.Generator); not
                       ``rng``, ``seed`` or ``generator``
``cov_type``           how standard errors are computed; not ``se``
``maxiter``, ``tol``   iteration limit and tolerance of every iterative procedure
``n_resamples``        bootstrap / permutation draws
``weights``            observation weights only; an aggregation rule is a ``scheme``
``penalty``            a regularisation strength (or a path of them); not ``lam``
``progress``           show a tqdm bar (``statcore.progress.progress``); a schedule mode is a
                       ``schedule``
``backend``            where parallel work runs (``statcore.distributed.borrowed_backend``)
``level``              a quantile (or other fitted) level of a multi-level fit; a diffusion noise
                       level is a ``noise_level``
``rearrange``          sort a multi-level curve (or band) over the levels so that it is monotone;
                       not ``rearrange_band``
=====================  ===========================================================================

Names and prose spell "centre" (``barycentre``, ``k_centre``, ``centred``); other libraries' API
names keep theirs (``str.center``, formulaic's ``center()``, POT's
``bures_wasserstein_barycenter``).

Old spellings are kept for one release by ``statcore.compat.renamed_keywords`` /
``renamed_method`` / ``renamed_attribute`` / ``renamed_names`` and warn ``FutureWarning``.

This package imports only numpy, scipy and pandas (matplotlib when a plot is drawn; the
formula module when a Wald test parses a constraint string)."""

from statcore.results._format import format_number
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
    "format_number",
]
