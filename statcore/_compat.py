"""Imports of optional dependencies, with the one place their compatibility shims live."""

from __future__ import annotations

import importlib

import numpy as np


def import_optional(module: str, extra: str):
    """Import ``module`` or raise an ImportError naming the statcore extra that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"this feature needs `{module}`: install it with `pip install statcore[{extra}]`"
        ) from exc


def import_geomstats():
    """Import geomstats (the ``manifold`` extra).

    geomstats 2.8 calls ``numpy.trapz``, which numpy 2.4 removed; it is the same function as
    ``numpy.trapezoid``, so the alias is restored before the import.
    """
    if not hasattr(np, "trapz"):
        setattr(np, "trapz", np.trapezoid)  # noqa: B010 - the alias geomstats 2.8 looks up
    return import_optional("geomstats", "manifold")
