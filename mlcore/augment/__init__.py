"""Time-series augmentation for few-shot forecasting: ReAugment and the tsaug-style baselines.

ReAugment (Yuan et al., arXiv 2409.06282, ICML 2026) finds overfit-prone training windows with
a K-fold model zoo, and augments them with a variational masked autoencoder trained by
REINFORCE on a zoo-guided reward. Any forecaster (an nn.Module from (n, lookback, C) to
(n, horizon, C), made by a factory) plugs in.
"""

from mlcore.augment.baselines import Augmenter, AugmenterResult, Jitter, Scaling, TimeWarp
from mlcore.augment.forecasters import (
    DLinear,
    GRUForecaster,
    LinearForecaster,
    MLPForecaster,
    make_windows,
    regime_windows,
    train_forecaster,
)
from mlcore.augment.policy import ReinforceTrainer, VMAEAugmenter, reinforce_loss
from mlcore.augment.reaugment import ReAugment, ReAugmentResult
from mlcore.augment.study import AugmentationComparison, compare_augmenters, train_with_augmentation
from mlcore.augment.zoo import ZooDisagreement, ZooDisagreementResult

__all__ = [
    "AugmentationComparison",
    "Augmenter",
    "AugmenterResult",
    "DLinear",
    "GRUForecaster",
    "Jitter",
    "LinearForecaster",
    "MLPForecaster",
    "ReAugment",
    "ReAugmentResult",
    "ReinforceTrainer",
    "Scaling",
    "TimeWarp",
    "VMAEAugmenter",
    "ZooDisagreement",
    "ZooDisagreementResult",
    "compare_augmenters",
    "make_windows",
    "regime_windows",
    "reinforce_loss",
    "train_forecaster",
    "train_with_augmentation",
]
