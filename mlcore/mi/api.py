"""One door to every MI estimator: ``mutual_information`` and ``independence_test``."""

from __future__ import annotations

import numpy as np
import torch

from mlcore._device import torch_generator
from mlcore.mi._data import as_pair
from mlcore.mi.critics import critic_independence_test, critic_mutual_information
from mlcore.mi.infoatlas import InfoAtlas
from statcore.geometry.mutual_information import (
    ksg_independence_test,
    ksg_mutual_information,
    permutation_independence_result,
)
from statcore.results import TestResult
from statcore.validation import check_option, check_positive_int

METHODS = ("infoatlas", "ksg", "mine", "infonce", "smile")


def _to_numpy(a):
    return a.detach().cpu().double().numpy() if isinstance(a, torch.Tensor) else a


def mutual_information(
    x, y, *, method: str = "infoatlas", model: InfoAtlas | None = None, **options
):
    """Estimate I(X; Y) in nats, with an interval.

    Parameters
    ----------
    x : array_like or Tensor of shape (n,) or (n, d_x)
    y : array_like or Tensor of shape (n,) or (n, d_y)
        Paired samples. Nothing is modified.
    method : {"infoatlas", "ksg", "mine", "infonce", "smile"}
        ``"infoatlas"``: the amortised network's cross-fitted passes (:meth:`InfoAtlas.estimate`;
        Hu et al. 2026); ``"ksg"``: Kraskov-Stoegbauer-Grassberger kNN estimator
        (:func:`~statcore.geometry.ksg_mutual_information`); ``"mine"``,
        ``"infonce"``, ``"smile"``: a critic trained on these data
        (:func:`~mlcore.mi.critic_mutual_information`).
    model : InfoAtlas, optional
        The InfoAtlas network (default: :meth:`InfoAtlas.pretrained`).
    **options
        Passed to the method's estimator (``n_resamples``, ``k``, ``maxiter``, ``random_state``,
        ...).

    Returns
    -------
    MutualInformationResult

    References
    ----------
    Hu, Chen, ..., Yang (2026), arXiv:2606.00241; Kraskov, Stoegbauer and Grassberger (2004),
    Phys. Rev. E 69, 066138; Belghazi et al. (2018), ICML; van den Oord, Li and Vinyals (2018),
    arXiv:1807.03748; Song and Ermon (2020), ICLR.
    """
    method = check_option(method, name="method", options=METHODS)
    if method == "infoatlas":
        return (model or InfoAtlas.pretrained()).estimate(x, y, **options)
    if method == "ksg":
        as_pair(x, y)  # the same input errors for every method
        return ksg_mutual_information(_to_numpy(x), _to_numpy(y), **options)
    return critic_mutual_information(x, y, method=method, **options)


def independence_test(
    x,
    y,
    *,
    method: str = "infoatlas",
    n_resamples: int = 199,
    model: InfoAtlas | None = None,
    random_state=None,
    **options,
) -> TestResult:
    """Permutation test of X independent of Y with an MI estimate as statistic.

    Parameters
    ----------
    x, y, method, model
        As in :func:`mutual_information`.
    n_resamples : int
        Permutations of ``y``.
    random_state : None, int or Generator
    **options
        Passed to the estimator (``k`` for KSG; ``maxiter``, ``hidden``, ... for the critics;
        ``n_permutations`` for InfoAtlas).

    Returns
    -------
    TestResult
        One-sided (large MI rejects); ``null_distribution`` holds the permuted statistics.

    Notes
    -----
    InfoAtlas and KSG recompute the estimate on each permutation (the network's passes or one kNN
    search each). The trained critics would need retraining per permutation; they are trained
    once on a split and the permutations act on the held-out part
    (:func:`~mlcore.mi.critic_independence_test`), which keeps the test exact.
    """
    method = check_option(method, name="method", options=METHODS)
    n_resamples = check_positive_int(n_resamples, name="n_resamples")
    if method == "ksg":
        as_pair(x, y)
        return ksg_independence_test(
            _to_numpy(x), _to_numpy(y), n_resamples=n_resamples, random_state=random_state,
            **options,
        )  # fmt: skip
    if method != "infoatlas":
        return critic_independence_test(
            x, y, method=method, n_resamples=n_resamples, random_state=random_state, **options
        )
    model = model or InfoAtlas.pretrained()
    xt, yt = as_pair(x, y, device=next(model.net.parameters()).device)
    g = torch_generator(random_state, "cpu")

    def stat(yy):
        return model.estimate(xt, yy, n_resamples=0, random_state=g, **options).estimate

    statistic = stat(yt)
    n = len(xt)
    null = np.array(
        [stat(yt[torch.randperm(n, generator=g).to(yt.device)]) for _ in range(n_resamples)]
    )
    return permutation_independence_result(
        "InfoAtlas permutation test of independence", n, statistic, null
    )
