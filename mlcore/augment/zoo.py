"""The K-fold model zoo of ReAugment and its disagreement score: which windows overfit.

Yuan, Wang, Chen, Wang & Yang, "ReAugment: Model Zoo-Guided RL for Few-Shot Time Series
Augmentation and Forecasting", arXiv 2409.06282 (ICML 2026). Fidelity: reconstruction from the
abstract and summaries: the K-fold zoo and the variance of its errors are as summarised; random
(not contiguous) folds and ``ddof=1`` are this library's choices.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from mlcore._device import as_numpy
from mlcore.augment.forecasters import check_windows, new_model, train_forecaster
from statcore.base import Estimator
from statcore.compat import renamed_attribute
from statcore.progress import progress as progress_bar
from statcore.results import Results
from statcore.validation import check_positive_int, check_random_state, check_scalar, describe

__all__ = ["ZooDisagreement", "ZooDisagreementResult", "top_fraction"]


def top_fraction(scores: np.ndarray, fraction: float) -> np.ndarray:
    """Sorted indices of the ``fraction`` highest ``scores`` (at least one; ties by position)."""
    count = max(1, math.ceil(fraction * scores.size))
    return np.sort(np.argsort(-scores, kind="stable")[:count])


@torch.no_grad()
def _errors(models, X, Y) -> torch.Tensor:
    return torch.stack([(m(X) - Y).pow(2).mean(dim=(1, 2)) for m in models], dim=1)


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class ZooDisagreementResult(Results):
    """A trained K-fold zoo and the disagreement score of each training window.

    Parameters
    ----------
    models : list of nn.Module
        Zoo member ``k``, trained on every fold but ``k`` (frozen, eval mode).
    folds : ndarray (n,)
        Fold of each training window.
    scores : ndarray (n,)
        Variance over the zoo of each training window's squared error.
    """

    models: list = field(repr=False)
    folds: np.ndarray = field(repr=False)
    scores: np.ndarray = field(repr=False)

    models_ = renamed_attribute("models_", "models")
    folds_ = renamed_attribute("folds_", "folds")
    scores_ = renamed_attribute("scores_", "scores")

    def errors(self, X, Y) -> torch.Tensor:
        """Squared error of every zoo member on every window, shape (n, k_folds)."""
        return _errors(self.models, X, Y)

    def score(self, X, Y) -> torch.Tensor:
        """Variance over the zoo of each window's squared error, shape (n,)."""
        return self.errors(X, Y).var(dim=1)

    def anchors(self, fraction: float = 0.5) -> np.ndarray:
        """Indices of the ``fraction`` of training windows with the highest scores."""
        fraction = check_scalar(fraction, name="fraction", low=0, high=1, low_inclusive=False)
        return top_fraction(self.scores, fraction)

    def tidy(self) -> pd.DataFrame:
        """One row per training window: ``window, fold, score``."""
        return pd.DataFrame(
            {"window": np.arange(self.scores.size), "fold": self.folds, "score": self.scores}
        )

    def glance(self) -> pd.DataFrame:
        """``method, nobs, k_folds, mean_score, max_score``."""
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "nobs": self.nobs,
                    "k_folds": len(self.models),
                    "mean_score": float(self.scores.mean()),
                    "max_score": float(self.scores.max()),
                }
            ]
        )


class ZooDisagreement(Estimator):
    """A K-fold model zoo and its disagreement score: which windows are prone to overfitting.

    The training windows are split into ``k_folds`` folds at random; forecaster ``k`` is trained
    on all folds but ``k``. The score of a window ``(x, y)`` is the variance over the zoo of the
    squared errors ``e_k = mean‖f_k(x) − y‖²``.

    Parameters
    ----------
    make_model : callable
        ``make_model()`` returns a fresh forecaster (any nn.Module from (n, L, C) to (n, H, C)).
    k_folds : int
        Zoo size (at least 2).
    train_options : dict, optional
        Keyword options of :func:`~mlcore.augment.train_forecaster`.

    References
    ----------
    Yuan et al., arXiv 2409.06282 (ICML 2026). Fidelity: reconstruction (see the module
    docstring).
    """

    method_name = "K-fold zoo disagreement"

    def __init__(self, make_model, *, k_folds: int = 5, train_options: dict | None = None):
        if not callable(make_model):
            raise TypeError(f"`make_model` must be callable; got {describe(make_model)}")
        self.make_model = make_model
        self.k_folds = check_positive_int(k_folds, name="k_folds", minimum=2)
        self.train_options = dict(train_options or {})

    @property
    def nobs(self) -> None:
        """None: the zoo holds settings only; the windows come to :meth:`fit`."""
        return None

    def _repr_spec(self) -> str:
        return f"k_folds={self.k_folds}"

    def fit(self, X, Y, *, random_state=None, progress: bool = False) -> ZooDisagreementResult:
        """Train the zoo on the windows and score them; returns a new
        :class:`ZooDisagreementResult`.

        Parameters
        ----------
        X, Y : Tensor (n, lookback, C), (n, horizon, C)
        random_state : None, int or numpy Generator
            Folds, initialisations and training orders.
        progress : bool
            Show a progress bar over the zoo members.
        """
        check_windows(X, Y)
        n = X.shape[0]
        if n < self.k_folds:
            raise ValueError(f"`X` must have at least k_folds = {self.k_folds} windows; got {n}")
        rng = check_random_state(random_state)
        folds = rng.permutation(np.arange(n) % self.k_folds)
        models = []
        for k in progress_bar(range(self.k_folds), enabled=progress, desc="ZooDisagreement"):
            keep = torch.as_tensor(np.flatnonzero(folds != k), device=X.device)
            model = new_model(self.make_model, rng).to(X.device)
            train_forecaster(model, X[keep], Y[keep], random_state=rng, **self.train_options)
            model.requires_grad_(False)
            models.append(model)
        result = ZooDisagreementResult(
            method=self.method_name,
            nobs=int(n),
            model=self,
            models=models,
            folds=folds,
            scores=as_numpy(_errors(models, X, Y).var(dim=1), name="scores"),
        )
        # only for the deprecated model-level attributes and methods, removed with them
        self._last_fit = result
        return result

    def _fitted(self, name: str) -> ZooDisagreementResult:
        warnings.warn(
            f"ZooDisagreement.{name} on the zoo is deprecated: `fit` now returns a results "
            f"object; use `res = zoo.fit(X, Y)` and `res.{name.rstrip('_')}`. The old form will "
            "be removed in the next release",
            FutureWarning,
            stacklevel=3,
        )
        fitted = getattr(self, "_last_fit", None)
        if fitted is None:
            raise RuntimeError("ZooDisagreement is not fitted; call `fit(X, Y)` first")
        return fitted

    @property
    def models_(self) -> list:
        """Deprecated (``FutureWarning``): the fit's ``models``."""
        return self._fitted("models_").models

    @property
    def folds_(self) -> np.ndarray:
        """Deprecated (``FutureWarning``): the fit's ``folds``."""
        return self._fitted("folds_").folds

    @property
    def scores_(self) -> np.ndarray:
        """Deprecated (``FutureWarning``): the fit's ``scores``."""
        return self._fitted("scores_").scores

    def errors(self, X, Y) -> torch.Tensor:
        """Deprecated (``FutureWarning``): ``zoo.fit(X, Y).errors(...)``."""
        return self._fitted("errors").errors(X, Y)

    def score(self, X, Y) -> torch.Tensor:
        """Deprecated (``FutureWarning``): ``zoo.fit(X, Y).score(...)``."""
        return self._fitted("score").score(X, Y)

    def anchors(self, fraction: float = 0.5) -> np.ndarray:
        """Deprecated (``FutureWarning``): ``zoo.fit(X, Y).anchors(...)``."""
        return self._fitted("anchors").anchors(fraction)
