"""The cost providers and plan reductions that other areas build on (``statcore.shift``).

A provider answers the two soft-min reductions of a Sinkhorn sweep and dense row blocks of the
cost; :func:`point_cost` picks one for two point clouds, :class:`KernelCost` stores a cost
matrix with its rescaled Gibbs kernel. :func:`plan_gradient_directions` reduces a plan's
pairs along their transport directions without storing the plan.
"""

from __future__ import annotations

import numpy as np

from statcore.ot import _kernels
from statcore.ot._costs import KernelCost, PointCost, as_points, point_cost

__all__ = ["KernelCost", "PointCost", "as_points", "plan_gradient_directions", "point_cost"]


def plan_gradient_directions(x, y, gx, gy, fa, gb, epsilon, *, metric="euclidean") -> np.ndarray:
    """Per-row reductions of the loss gradients along the plan's transport directions.

    With ``u_ij = (x_i - y_j) / |x_i - y_j|``, ``dir_ij = max(|gx_i . u_ij|, |gy_j . u_ij|)``
    and the plan ``P_ij = exp((fa_i + gb_j - C_ij) / epsilon)`` (``fa``, ``gb``: potentials plus
    ``epsilon`` times the log weights), returns the ``(n, 3)`` array of ``max_j dir_ij``,
    ``sum_j P_ij dir_ij^2`` and ``sum_j P_ij``, in O(n + m) memory. Coincident points have no
    direction and are skipped.

    Parameters
    ----------
    x, y : ndarray, shape (n, d) and (m, d)
        The points (float64).
    gx, gy : ndarray, shape (n, d) and (m, d)
        Gradients at the points (zeros for a side without gradients).
    fa, gb : ndarray, shape (n,) and (m,)
        Potentials plus ``epsilon`` times the log weights.
    epsilon : float
        The entropic regularisation of the plan.
    metric : {"euclidean", "sqeuclidean"}
        The cost of the plan.

    References
    ----------
    Chen, H. and Xia, L. C. (2025). General and estimable learning bound unifying covariate and
    concept shifts. arXiv:2506.12829 (the Lipschitz constant from per-sample gradients).
    """
    if metric not in ("euclidean", "sqeuclidean"):
        raise ValueError(
            f"`metric` must be 'euclidean' or 'sqeuclidean' (Euclidean directions); got {metric!r}"
        )
    out = np.empty((len(fa), 3))
    code = 0 if metric == "euclidean" else 1
    arrays = [np.ascontiguousarray(v, dtype=np.float64) for v in (x, y, gx, gy, fa, gb)]
    _kernels.gradient_factor(*arrays, float(epsilon), code, out)
    return out
