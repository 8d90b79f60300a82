"""Training a forecaster on original plus augmented windows, and comparing augmenters over seeds."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
import torch

from mlcore.augment.baselines import Augmenter
from mlcore.augment.forecasters import check_windows, forecast_mse, new_model, train_forecaster
from statcore.progress import progress as progress_bar
from statcore.results import Results, Summary
from statcore.results.intervals import mean_t_interval
from statcore.results.plotting import get_ax, label_axes
from statcore.validation import check_positive_int, check_random_state, describe

__all__ = ["AugmentationComparison", "compare_augmenters", "train_with_augmentation"]


def train_with_augmentation(
    make_model,
    X,
    Y,
    augmenter: Augmenter | None = None,
    *,
    n_copies: int = 1,
    train_options: dict | None = None,
    random_state=None,
    progress: bool = False,
):
    """Fit ``augmenter`` to the windows, then train a fresh forecaster on the original plus the
    augmented windows.

    Parameters
    ----------
    make_model : callable
        ``make_model()`` returns a fresh forecaster.
    X, Y : Tensor (n, lookback, C), (n, horizon, C)
    augmenter : Augmenter, optional
        :class:`~mlcore.augment.ReAugment`, :class:`~mlcore.augment.Jitter`, ... (fitted here);
        None trains on the original windows only.
    n_copies : int
        Augmented copies per (selected) window.
    train_options : dict, optional
        Options of :func:`~mlcore.augment.train_forecaster`.
    random_state : None, int or numpy Generator
    progress : bool

    Returns
    -------
    model : nn.Module
        The trained forecaster (eval mode).
    record : TrainingResult
        Its training record.

    References
    ----------
    Yuan et al., arXiv 2409.06282 (ReAugment's final stage).
    """
    check_windows(X, Y)
    if augmenter is not None and not isinstance(augmenter, Augmenter):
        raise TypeError(f"`augmenter` must be None or an Augmenter; got {describe(augmenter)}")
    rng = check_random_state(random_state)
    model = new_model(make_model, rng).to(X.device)
    if augmenter is not None:
        fitted = augmenter.fit(X, Y, random_state=rng, progress=progress)
        Xa, Ya = fitted.generate(X, Y, n_copies=n_copies, random_state=rng)
        X, Y = torch.cat([X, Xa]), torch.cat([Y, Ya])
    record = train_forecaster(
        model, X, Y, random_state=rng, progress=progress, **dict(train_options or {})
    )
    return model, record


def _plot_mse(results, ax=None, **kwargs):
    """Mean test MSE per augmenter with its t-interval over seeds."""
    ax = get_ax(ax)
    t = results.tidy()
    ax.errorbar(
        t["method"],
        t["mse"],
        yerr=[t["mse"] - t["conf_low"], t["conf_high"] - t["mse"]],
        fmt="o",
        capsize=4,
        **kwargs,
    )
    return label_axes(ax, ylabel="test MSE", title=results.method)


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class AugmentationComparison(Results):
    """Test MSE of forecasters trained with each augmenter, paired by seed.

    Parameters
    ----------
    mse : DataFrame
        Rows = seeds, columns = augmenters (``"none"``: no augmentation).
    reference : str
        The augmenter the paired differences are taken against.
    wall_time_s : float, optional
        Seconds the comparison took.
    fits : dict of str to AugmenterResult
        Each augmenter's fit on the last seed.
    """

    mse: pd.DataFrame = field(repr=False)
    reference: str = "ReAugment"
    wall_time_s: float | None = None
    fits: dict = field(default_factory=dict, repr=False)

    _plots: ClassVar[dict] = {"mse": _plot_mse}

    def tidy(self, alpha: float = 0.05) -> pd.DataFrame:
        """One row per augmenter: ``method, mse, std_error, conf_low, conf_high`` (t-interval
        over seeds) and the paired difference ``diff = mse(reference) − mse(method)`` with its
        t-interval (negative: the reference is better)."""
        rows = []
        ref = self.mse[self.reference].to_numpy()
        for name in self.mse.columns:
            values = self.mse[name].to_numpy()
            m, se, lo, hi = mean_t_interval(values, alpha)
            d, dse, dlo, dhi = mean_t_interval(ref - values, alpha)
            rows.append(
                {
                    "method": name,
                    "mse": m,
                    "std_error": se,
                    "conf_low": lo,
                    "conf_high": hi,
                    "diff": d,
                    "diff_std_error": dse,
                    "diff_low": dlo,
                    "diff_high": dhi,
                }
            )
        return pd.DataFrame(rows)

    def glance(self) -> pd.DataFrame:
        means = self.mse.mean()
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "nobs": self.nobs,
                    "n_seeds": len(self.mse),
                    "reference": self.reference,
                    "best": str(means.idxmin()),
                    "reference_mse": means[self.reference],
                }
            ]
        )

    def summary(self, alpha: float = 0.05):
        """Per-augmenter MSE and paired differences against ``reference`` with t-intervals."""
        return Summary(
            title=self._title(),
            info=self._info(),
            tables={"test MSE": self.tidy(alpha).set_index("method")},
            notes=self.notes,
        )


def compare_augmenters(
    make_model,
    X,
    Y,
    X_test,
    Y_test,
    augmenters: dict,
    *,
    seeds: int = 5,
    reference: str | None = None,
    n_copies: int = 1,
    train_options: dict | None = None,
    random_state=None,
    progress: bool = False,
) -> AugmentationComparison:
    """Train one forecaster per augmenter and seed; report test MSE paired by seed.

    Within a seed every augmenter starts from the same forecaster initialisation and the same
    training order, so the differences measure the augmentation.

    Parameters
    ----------
    make_model : callable
    X, Y : Tensor
        Training windows.
    X_test, Y_test : Tensor
        Test windows.
    augmenters : dict of str to Augmenter or None
        Named augmenters; None means no augmentation. Each is refitted per seed.
    seeds : int
    reference : str, optional
        Augmenter the paired differences are taken against (default: the first name).
    n_copies : int
    train_options : dict, optional
    random_state : None, int or numpy Generator
    progress : bool

    Returns
    -------
    AugmentationComparison
    """
    check_windows(X, Y)
    check_windows(X_test, Y_test, name_x="X_test", name_y="Y_test")
    if X_test.shape[1:] != X.shape[1:] or Y_test.shape[1:] != Y.shape[1:]:
        raise ValueError(
            "`X_test`, `Y_test` must have the lookback, horizon and channels of `X`, `Y`; got "
            f"{tuple(X_test.shape)}, {tuple(Y_test.shape)} against "
            f"{tuple(X.shape)}, {tuple(Y.shape)}"
        )
    if not isinstance(augmenters, dict) or not augmenters:
        raise TypeError(f"`augmenters` must be a non-empty dict; got {describe(augmenters)}")
    for name, aug in augmenters.items():
        if aug is not None and not isinstance(aug, Augmenter):
            raise TypeError(
                f"`augmenters[{name!r}]` must be None or an Augmenter; got {describe(aug)}"
            )
    reference = next(iter(augmenters)) if reference is None else reference
    if reference not in augmenters:
        raise ValueError(f"`reference` must be one of {list(augmenters)}; got {reference!r}")
    seeds = check_positive_int(seeds, name="seeds")
    rng = check_random_state(random_state)
    seed_values = rng.integers(2**31, size=seeds)
    rows, fits = [], {}
    start = time.perf_counter()
    for s in progress_bar(list(seed_values), enabled=progress, desc="compare_augmenters"):
        row = {}
        for name, aug in augmenters.items():
            # one stream per seed, restarted for each augmenter: same init and batch order
            stream = np.random.default_rng(int(s))
            model = new_model(make_model, stream).to(X.device)
            Xt, Yt = X, Y
            if aug is not None:
                fits[name] = aug.fit(X, Y, random_state=stream)
                Xa, Ya = fits[name].generate(X, Y, n_copies=n_copies, random_state=stream)
                Xt, Yt = torch.cat([X, Xa]), torch.cat([Y, Ya])
            train_forecaster(model, Xt, Yt, random_state=int(s), **dict(train_options or {}))
            row[name] = forecast_mse(model, X_test, Y_test)
        rows.append(row)
    mse = pd.DataFrame(rows, index=pd.Index(seed_values, name="seed"))
    return AugmentationComparison(
        method="augmentation comparison",
        nobs=int(X.shape[0]),
        mse=mse,
        reference=reference,
        fits=fits,
        fit_options={
            "seeds": seeds,
            "n_copies": n_copies,
            "train_options": dict(train_options or {}),
        },
        wall_time_s=time.perf_counter() - start,
    )
