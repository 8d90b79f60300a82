"""Data-generating designs of the DataShifts experiments: Gaussian covariates with a mean shift,
linear labels with a coefficient (concept) change, and a classification label flip.

Each function returns a dict with ``x_source, y_source, x_target, y_target`` and the truth.
"""

from __future__ import annotations

import numpy as np

from statcore.validation import (
    check_positive,
    check_positive_int,
    check_random_state,
    check_scalar,
)


def _unit(rng, dim):
    v = rng.normal(size=dim)
    return v / np.linalg.norm(v)


def linear_shift(
    n_source: int,
    n_target: int | None = None,
    *,
    dim: int = 5,
    mean_shift: float = 0.0,
    concept_shift: float = 0.0,
    noise: float = 0.5,
    random_state=None,
) -> dict:
    """``x ~ N(0, I)`` in the source and ``N(mean_shift u, I)`` in the target;
    ``y = w'x + noise e`` with ``w`` changed by ``concept_shift v`` in the target.

    ``u`` and ``v`` are random unit directions and ``w`` a random unit coefficient vector. The
    W1 distance between the covariate laws is exactly ``mean_shift``.

    Returns
    -------
    dict
        ``x_source, y_source, x_target, y_target, coef_source, coef_target, direction``.

    References
    ----------
    Chen, H. and Xia, L. C. (2025). General and estimable learning bound unifying covariate and
    concept shifts. arXiv:2506.12829 (the linear-Gaussian shift simulation).
    """
    n_source = check_positive_int(n_source, name="n_source")
    n_target = n_source if n_target is None else check_positive_int(n_target, name="n_target")
    dim = check_positive_int(dim, name="dim")
    mean_shift = check_positive(mean_shift, name="mean_shift", strict=False)
    concept_shift = check_positive(concept_shift, name="concept_shift", strict=False)
    noise = check_positive(noise, name="noise", strict=False)
    rng = check_random_state(random_state)
    coef = _unit(rng, dim)
    direction = _unit(rng, dim)
    coef_target = coef + concept_shift * _unit(rng, dim)
    x_source = rng.normal(size=(n_source, dim))
    x_target = rng.normal(size=(n_target, dim)) + mean_shift * direction
    return {
        "x_source": x_source,
        "y_source": x_source @ coef + noise * rng.normal(size=n_source),
        "x_target": x_target,
        "y_target": x_target @ coef_target + noise * rng.normal(size=n_target),
        "coef_source": coef,
        "coef_target": coef_target,
        "direction": direction,
    }


def label_flip(
    n_source: int,
    n_target: int | None = None,
    *,
    dim: int = 2,
    threshold: float = 0.5,
    random_state=None,
) -> dict:
    """Two-class labels ``1[x_1 > 0]`` on ``x ~ N(0, I)`` in both domains, with the target's
    labels flipped where ``x_2 > threshold``: a pure concept shift.

    Returns
    -------
    dict
        ``x_source, y_source, x_target, y_target, flip_share`` (the target share flipped in
        law, ``P(x_2 > threshold)``).

    References
    ----------
    Chen, H. and Xia, L. C. (2025). General and estimable learning bound unifying covariate and
    concept shifts. arXiv:2506.12829.
    """
    from scipy.special import ndtr

    n_source = check_positive_int(n_source, name="n_source")
    n_target = n_source if n_target is None else check_positive_int(n_target, name="n_target")
    dim = check_positive_int(dim, name="dim", minimum=2)
    threshold = check_scalar(threshold, name="threshold")
    rng = check_random_state(random_state)
    x_source = rng.normal(size=(n_source, dim))
    x_target = rng.normal(size=(n_target, dim))
    y_target = (x_target[:, 0] > 0).astype(float)
    flip = x_target[:, 1] > threshold
    y_target[flip] = 1.0 - y_target[flip]
    return {
        "x_source": x_source,
        "y_source": (x_source[:, 0] > 0).astype(float),
        "x_target": x_target,
        "y_target": y_target,
        "flip_share": float(ndtr(-threshold)),
    }
