"""Input checks of :class:`statcore.cluster.FairRangeKClustering` (capacities, groups,
ranges, labels and tree node ids), kept apart so that the model's module stays short."""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from statcore.validation import as_float_array, describe


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.setflags(write=False)
    return view


def _labels(data, n) -> np.ndarray:
    if isinstance(data, pd.DataFrame | pd.Series):
        return np.asarray(data.index)
    return np.arange(n)


def _node_ids(nodes, n_nodes, name) -> np.ndarray:
    arr = np.asarray(nodes)
    if arr.ndim != 1 or not len(arr) or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(
            f"`{name}` must be a non-empty 1-D array of node ids; got {describe(nodes)}"
        )
    if arr.min() < 0 or arr.max() >= n_nodes:
        raise ValueError(f"`{name}` must name nodes 0..{n_nodes - 1}; got {describe(nodes)}")
    return arr.astype(np.int64)


def _check_capacities(capacities, m, n) -> np.ndarray:
    if capacities is None:
        return np.full(m, n, dtype=np.int64)
    if isinstance(capacities, numbers.Number):
        capacities = np.full(m, capacities)
    U = as_float_array(capacities, name="capacities", ndim=1, allow_inf=True)
    if len(U) != m:
        raise ValueError(f"`capacities` must hold one value per facility ({m}); got {len(U)}")
    finite = np.isfinite(U)
    if (U < 0).any() or (U[finite] != np.round(U[finite])).any():
        raise ValueError(
            f"`capacities` must be non-negative integers (or inf); got {describe(capacities)}"
        )
    # more than n never binds, and integers keep the DP's flows integral
    return np.minimum(np.where(finite, U, n), n).astype(np.int64)


def _check_groups(groups, m) -> tuple[np.ndarray, tuple]:
    if groups is None:
        return np.zeros((m, 0), dtype=bool), ()
    if isinstance(groups, pd.DataFrame):
        M = groups.to_numpy()
        if M.shape[0] != m or M.dtype != bool:
            raise ValueError(
                f"`groups` as a DataFrame must be a boolean ({m}, t) membership table; "
                f"got {describe(groups)}"
            )
        return M.copy(), tuple(str(c) for c in groups.columns)
    if isinstance(groups, dict):
        names, members = tuple(str(g) for g in groups), list(groups.values())
    else:
        arr = np.asarray(groups, dtype=object) if not isinstance(groups, np.ndarray) else groups
        if arr.ndim == 2 and arr.shape[0] == m and arr.dtype == bool:
            return arr.copy(), tuple(f"group{g}" for g in range(arr.shape[1]))
        flat = arr.ndim == 1 and len(arr) == m and all(np.ndim(v) == 0 for v in arr)
        if flat:  # one label per facility: disjoint groups
            labels = pd.Series(np.asarray(groups))
            names = tuple(str(v) for v in pd.unique(labels))
            M = np.stack([(labels.astype(str) == name).to_numpy() for name in names], axis=1)
            return M, names
        names, members = tuple(f"group{g}" for g in range(len(groups))), list(groups)
    M = np.zeros((m, len(members)), dtype=bool)
    for g, idx in enumerate(members):
        idx = np.asarray(idx)
        if idx.ndim != 1 or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
            raise ValueError(
                f"`groups`: group {names[g]!r} must be a list of facility indices; "
                f"got {describe(idx)}"
            )
        if idx.size and (idx.min() < 0 or idx.max() >= m):
            raise ValueError(f"`groups`: group {names[g]!r} names facilities outside 0..{m - 1}")
        M[idx, g] = True
    return M, names


def _check_ranges(ranges, names, k) -> np.ndarray:
    t = len(names)
    out = np.tile(np.array([0, k], dtype=np.int64), (t, 1))
    if ranges is None:
        return out
    if isinstance(ranges, dict):
        unknown = set(map(str, ranges)) - set(names)
        if unknown:
            raise ValueError(f"`ranges` names groups that `groups` lacks: {sorted(unknown)}")
        items = [(names.index(str(g)), r) for g, r in ranges.items()]
    else:
        ranges = list(ranges)
        if len(ranges) != t:
            raise ValueError(
                f"`ranges` must hold one (lower, upper) pair per group ({t}); got {len(ranges)}"
            )
        items = list(enumerate(ranges))
    for g, pair in items:
        pair = np.asarray(pair)
        if pair.shape != (2,) or not all(float(v) == int(v) for v in pair):
            raise ValueError(
                f"`ranges`: group {names[g]!r} needs an integer (lower, upper) pair; "
                f"got {describe(pair)}"
            )
        lo, hi = int(pair[0]), int(pair[1])
        if not 0 <= lo <= hi <= k:
            raise ValueError(
                f"`ranges`: group {names[g]!r} has range [{lo}, {hi}], which must satisfy "
                f"0 <= lower <= upper <= k = {k}"
            )
        out[g] = lo, hi
    return out
