"""Argument checks of MetaEns and its partner search: each error names the argument."""

from __future__ import annotations

import numbers

import numpy as np

from statcore.validation import (
    as_float_array,
    check_callable,
    check_positive,
    check_positive_int,
    check_scalar,
    describe,
)


def _check_greedy(
    predict,
    jaccard,
    primary,
    order,
    penalties,
    discount_strength,
    first_discount_strength,
    min_gain,
    min_gain_extra,
    max_size,
    stages,
):
    """The arguments of :func:`~statcore.outliers.discounted_greedy`, checked and normalised
    (``order`` without the primary, ``penalties`` one per detector, ``stages`` a tuple)."""
    check_callable(predict, name="predict")
    jaccard = as_float_array(jaccard, name="jaccard", ndim=2, min_rows=1)
    M = jaccard.shape[0]
    if jaccard.shape != (M, M) or (jaccard < 0).any() or (jaccard > 1).any():
        raise ValueError(
            f"`jaccard` must be a square matrix of values in [0, 1]; got shape {jaccard.shape}"
        )
    primary = check_scalar(primary, name="primary", kind=numbers.Integral, low=0, high=M - 1)
    if isinstance(order, str) or np.ndim(order) != 1:
        raise TypeError(
            f"`order` must be a 1-D sequence of detector indices; got {describe(order)}"
        )
    order = [
        check_scalar(q, name=f"order[{i}]", kind=numbers.Integral, low=0, high=M - 1)
        for i, q in enumerate(order)
    ]
    order = [q for q in order if q != primary]
    if penalties is None:
        penalties = np.zeros(M)
    else:
        penalties = as_float_array(penalties, name="penalties", ndim=1)
        if len(penalties) != M:
            raise ValueError(
                f"`penalties` must hold one value per detector ({M}); got {len(penalties)}"
            )
    discount_strength = check_positive(discount_strength, name="discount_strength", strict=False)
    first_discount_strength = check_positive(
        first_discount_strength, name="first_discount_strength", strict=False
    )
    min_gain = check_scalar(min_gain, name="min_gain")
    min_gain_extra = check_scalar(min_gain_extra, name="min_gain_extra")
    if max_size is not None:
        max_size = check_positive_int(max_size, name="max_size")
    stages = _check_stages(stages)
    return (
        jaccard,
        primary,
        order,
        penalties,
        discount_strength,
        first_discount_strength,
        min_gain,
        min_gain_extra,
        max_size,
        stages,
    )


def _check_stages(stages) -> tuple:
    """Candidate stage sizes: positive integers, None (all candidates) allowed last only."""
    if isinstance(stages, str) or np.ndim(stages) != 1 or not len(stages):
        raise TypeError(
            f"`stages` must be a non-empty sequence of stage sizes (None, last, for all); got "
            f"{describe(stages)}"
        )
    out = []
    for i, s in enumerate(stages):
        if s is None and i == len(stages) - 1:
            out.append(None)
        else:
            out.append(check_positive_int(s, name=f"stages[{i}]"))
    return tuple(out)


def _trees(n_estimators) -> tuple[int, int]:
    if np.ndim(n_estimators) == 0:
        n_estimators = (n_estimators, n_estimators)
    if isinstance(n_estimators, str) or np.ndim(n_estimators) != 1 or len(n_estimators) != 2:
        raise TypeError(
            f"`n_estimators` must be an int or a pair (classifier, regressor) of ints; got "
            f"{describe(n_estimators)}"
        )
    a, b = n_estimators
    return (check_positive_int(a, name="n_estimators"), check_positive_int(b, name="n_estimators"))
