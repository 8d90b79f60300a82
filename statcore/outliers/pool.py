"""The detector pool of MetaEns: PyOD detectors of 8 families with varied hyper-parameters.

References
----------
Phan, P., Vu, ., Kieu, T., Ha Xuan, T., Yang, B. and Jensen, C. S. MetaEns: meta-learned
ensemble selection for unsupervised outlier detection. ICML 2026 (arXiv:2605.16567).
Zhao, Y., Nasrullah, Z. and Li, Z. PyOD: a Python toolbox for scalable outlier detection.
JMLR 20(96), 2019.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from statcore.compat import import_optional
from statcore.validation import as_float_array, check_bool, check_random_state, describe

__all__ = ["DetectorPool", "detector_family", "score_pool"]

#: family -> (PyOD module, class, [(name suffix, keyword arguments), ...]); five settings each.
_SETTINGS = {
    "ABOD": ("abod", "ABOD", [(f"k{k}", {"n_neighbors": k}) for k in (5, 10, 15, 20, 30)]),
    "COF": ("cof", "COF", [(f"k{k}", {"n_neighbors": k}) for k in (5, 10, 15, 20, 30)]),
    "HBOS": ("hbos", "HBOS", [(f"b{b}", {"n_bins": b}) for b in (5, 10, 20, 30, 50)]),
    "IForest": (
        "iforest",
        "IForest",
        [
            (f"n{n}_f{f:g}", {"n_estimators": n, "max_features": f})
            for n, f in ((50, 1.0), (100, 1.0), (200, 1.0), (100, 0.5), (200, 0.5))
        ],
    ),
    "KNN": (
        "knn",
        "KNN",
        [
            (f"k{k}_{m}", {"n_neighbors": k, "method": m})
            for k, m in (
                (5, "largest"),
                (10, "largest"),
                (20, "largest"),
                (40, "largest"),
                (10, "mean"),
            )
        ],
    ),
    "LODA": (
        "loda",
        "LODA",
        [
            (f"b{b}_c{c}", {"n_bins": b, "n_random_cuts": c})
            for b, c in ((5, 50), (10, 50), (10, 100), (20, 100), (30, 200))
        ],
    ),
    "LOF": ("lof", "LOF", [(f"k{k}", {"n_neighbors": k}) for k in (5, 10, 20, 30, 50)]),
    "OCSVM": ("ocsvm", "OCSVM", [(f"nu{nu:g}", {"nu": nu}) for nu in (0.1, 0.3, 0.5, 0.7, 0.9)]),
}
_SEEDED = {"IForest", "LODA"}
#: families whose PyOD detector needs more rows than neighbours (LOF clips its neighbours)
_NEEDS_NEIGHBOURS = {"ABOD", "COF", "KNN"}


def detector_family(name: str) -> str:
    """The family of a detector name: the prefix before the first ``_`` (the whole name
    when there is none), as in the MetaEns authors' naming (``"LOF_k20"`` -> ``"LOF"``).

    Raises
    ------
    TypeError
        When ``name`` is not a string.
    ValueError
        When it is empty or starts with ``_`` (no family prefix).
    """
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a detector name (a string); got {describe(name)}")
    family = name.split("_", 1)[0]
    if not family:
        raise ValueError(
            f"`name` must start with a family prefix (``<Family>_<setting>``); got {name!r}"
        )
    return family


@dataclass(frozen=True)
class DetectorPool:
    """A named list of PyOD detector settings: ABOD, COF, HBOS, IForest, kNN, LODA, LOF and
    OCSVM (the 8 families of the MetaEns paper), five hyper-parameter settings each.

    Parameters
    ----------
    families : sequence of str, optional
        Families to keep (all 8 by default), each at most once.

    Raises
    ------
    TypeError
        When ``families`` is a string or not a sequence.
    ValueError
        For an unknown family (the known ones are listed), none, or a repeated one.

    Notes
    -----
    The paper's pool has 297 detectors; this one keeps its 8 families with 5 settings each
    (40), a pool small enough to score on a CPU. Names are ``<Family>_<setting>``, so
    :func:`detector_family` recovers the family. PyOD (the ``outliers`` extra) is needed only
    to *score* data (:func:`score_pool`); MetaEns itself works on any score matrix with such
    names.
    """

    families: tuple[str, ...] = tuple(_SETTINGS)
    names: tuple[str, ...] = field(init=False)

    def __post_init__(self):
        families = self.families
        if isinstance(families, str) or not isinstance(families, Sequence | np.ndarray):
            raise TypeError(
                f"`families` must be a sequence of family names among {sorted(_SETTINGS)}; got "
                f"{describe(families)}"
                + (f" (pass ({families!r},) for one family)" if isinstance(families, str) else "")
            )
        families = tuple(families)
        unknown = [f for f in families if not isinstance(f, str) or f not in _SETTINGS]
        if unknown:
            raise ValueError(f"`families` must be among {sorted(_SETTINGS)}; got unknown {unknown}")
        if not families:
            raise ValueError(f"`families` must name at least one of {sorted(_SETTINGS)}; got none")
        if len(set(families)) != len(families):
            raise ValueError(f"`families` must not repeat a family; got {list(families)}")
        object.__setattr__(self, "families", families)
        names = tuple(
            f"{family}_{suffix}" for family in self.families for suffix, _ in _SETTINGS[family][2]
        )
        object.__setattr__(self, "names", names)

    def __len__(self) -> int:
        return len(self.names)

    def detectors(self, random_state=None) -> list:
        """Unfitted PyOD detectors in the order of ``names`` (seeded where random)."""
        import_optional("pyod", "outliers")
        import importlib

        rng = check_random_state(random_state)
        out = []
        for family in self.families:
            module, cls_name, settings = _SETTINGS[family]
            cls = getattr(importlib.import_module(f"pyod.models.{module}"), cls_name)
            for _, kwargs in settings:
                extra = {"random_state": int(rng.integers(2**31 - 1))} if family in _SEEDED else {}
                out.append(cls(**kwargs, **extra))
        return out


def score_pool(
    X, pool: DetectorPool | None = None, *, standardize: bool = True, random_state=None
) -> np.ndarray:
    """Outlier scores of every detector of ``pool`` on ``X`` (higher = more outlying).

    Parameters
    ----------
    X : array_like of shape (n, d)
        The data (no labels: the detectors are unsupervised).
    pool : DetectorPool, optional
        The detectors (all 40 by default).
    standardize : bool
        Centre and scale each column first (constant columns are dropped), as distance-based
        detectors need comparable units.
    random_state : None, int or Generator
        Seeds of the randomised detectors (IForest, LODA).

    Returns
    -------
    ndarray of shape (n, len(pool))
        Column ``j`` holds the training scores (``decision_scores_``) of ``pool.names[j]``.

    Raises
    ------
    TypeError, ValueError
        Naming the argument: ``X`` not a finite 2-D array with more rows than the pool's
        largest neighbourhood (ABOD, COF, KNN), ``pool`` not a DetectorPool, ``standardize``
        not a bool, or a bad ``random_state``.
    """
    X = as_float_array(X, name="X", ndim=2, min_rows=2)
    pool = DetectorPool() if pool is None else pool
    if not isinstance(pool, DetectorPool):
        raise TypeError(f"`pool` must be a DetectorPool or None; got {describe(pool)}")
    neighbours = [
        kwargs["n_neighbors"]
        for family in pool.families
        if family in _NEEDS_NEIGHBOURS
        for _, kwargs in _SETTINGS[family][2]
    ]
    if neighbours and X.shape[0] <= max(neighbours):
        raise ValueError(
            f"`X` needs more rows than the pool's largest neighbourhood ({max(neighbours)} "
            f"neighbours); got {X.shape[0]} rows (drop the ABOD, COF and KNN families for "
            "smaller data)"
        )
    standardize = check_bool(standardize, name="standardize")
    check_random_state(random_state)  # refused before any detector runs
    if standardize:
        scale = X.std(axis=0)
        keep = scale > 0
        X = (X[:, keep] - X[:, keep].mean(axis=0)) / scale[keep]
    scores = np.empty((X.shape[0], len(pool)))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        # COF and ABOD divide by zero on duplicated rows; the scores are repaired below
        warnings.simplefilter("ignore", RuntimeWarning)
        for j, detector in enumerate(pool.detectors(random_state)):
            detector.fit(X)
            scores[:, j] = _finite(np.asarray(detector.decision_scores_, dtype=float))
    return scores


def _finite(column: np.ndarray) -> np.ndarray:
    """Non-finite scores made finite without changing the order of the finite ones: +inf
    ranks above every finite score, -inf and NaN (no verdict) below; values stay within
    float32 range so that score matrices can be stored compactly."""
    finite = np.isfinite(column)
    if finite.all():
        return np.clip(column, -1e30, 1e30)
    if not finite.any():
        return np.zeros_like(column)
    lo, hi = column[finite].min(), column[finite].max()
    step = max(hi - lo, 1.0)
    out = np.where(np.isposinf(column), hi + step, column)
    out = np.where(np.isneginf(column) | np.isnan(column), lo - step, out)
    return np.clip(out, -1e30, 1e30)
