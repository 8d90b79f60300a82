"""The regime map of gradient flow on CP tensor models: where a scaling of the sizes places the
flow (free evolution, NTK, or one of the mean-field regimes of Yarotsky, Golikov and Gusev 2026).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import pandas as pd

from statcore.validation import check_scalar, describe

REGIMES = (
    "free evolution",
    "NTK",
    "over-parameterised mean field",
    "under-parameterised mean field",
    "proportional mean field",
)


def regime_map(scaling: Mapping, *, order: int, symmetric: bool, target_name: str) -> pd.Series:
    """Place a scaling of the sizes on the regime map.

    Parameters
    ----------
    scaling : mapping
        Exponents of a large parameter ``N``: ``{"dim": a_p, "rank": a_H, "init": a_sigma,
        "output": a_alpha}`` for ``p ~ N^a_p``, ``H ~ N^a_H``, ``sigma ~ N^a_sigma``,
        ``alpha ~ N^a_alpha`` (missing keys are 0).
    order, symmetric, target_name
        The model's order ``nu``, whether it is symmetric and its target (``"identity"``,
        ``"modular"`` or ``"custom"``).

    Returns
    -------
    Series
        ``regime`` (one of ``REGIMES``) and the exponents it is read from:
        ``output`` of ``||W(0)||``, ``target`` of ``||T||``, ``kernel`` of the tangent
        kernel rate ``kappa``, ``movement`` of the relative parameter movement
        ``||Delta u|| / ||u(0)||`` a linearised fit needs, and ``kernel_fluctuation``
        (``(nu - 1) a_p - a_H``; negative when the random tangent kernel concentrates).

    Notes
    -----
    Fidelity: reconstruction (ours; the paper's regime polygon was not available). With
    ``R_0`` the initial residual, a linearised flow must move the parameters by about
    ``||R_0|| / sqrt(kappa)``, against their size ``sigma sqrt(nu H p)``:

    - ``movement < 0`` (lazy): ``"NTK"`` when the target is at least as large as the
      initial output, ``"free evolution"`` when the initial output dominates (the flow
      only relaxes ``W(0)``; the target is invisible at leading order);
    - ``movement >= 0`` (rich, mean field): over-parameterised when ``a_H > a_p`` (more
      terms than the rank ``p`` of the identity), under-parameterised when ``a_H < a_p``,
      proportional when equal.

    ``||W(0)||`` is ``alpha sqrt(H) sigma^nu p^(nu/2)`` for the centred terms; a symmetric
    model of even order adds its mean ``alpha H sigma^nu p^(nu/4)`` (the pairings of
    ``E u^(x)nu``), one place where symmetry changes the map. ``||T||`` is ``p^(1/2)``
    for the identity, ``p^((nu-1)/2)`` for the modular tensor and is read from two sizes
    for a custom target (``p`` fixed: exponent 0).
    """
    if not isinstance(scaling, Mapping):
        raise TypeError(f"`scaling` must be a mapping of exponents; got {describe(scaling)}")
    known = ("dim", "rank", "init", "output")
    unknown = sorted(set(scaling) - set(known))
    if unknown:
        raise ValueError(f"`scaling` has unknown keys {unknown}; use {list(known)}")
    e = {}
    for key in known:
        value = scaling.get(key, 0.0)
        e[key] = check_scalar(value, name=f"scaling[{key!r}]", kind=numbers.Real)
    nu = order
    a_p, a_H, a_s, a_a = e["dim"], e["rank"], e["init"], e["output"]
    output = a_a + a_H / 2 + nu * a_s + nu * a_p / 2
    if symmetric and nu % 2 == 0:
        output = max(output, a_a + a_H + nu * a_s + nu * a_p / 4)
    if target_name == "identity":
        target = a_p / 2
    elif target_name == "modular":
        target = (nu - 1) * a_p / 2
    else:
        target = 0.0
    kernel = 2 * a_a + a_H + 2 * (nu - 1) * a_s
    residual = max(output, target)
    movement = residual - (a_a + a_H + nu * a_s + a_p / 2)
    fluct = (nu - 1) * a_p - a_H
    tiny = 1e-12  # exponents are exact rationals in practice; ties are ties
    if movement < -tiny:
        label = "free evolution" if output > target + tiny else "NTK"
    elif a_H > a_p + tiny:
        label = "over-parameterised mean field"
    elif a_H < a_p - tiny:
        label = "under-parameterised mean field"
    else:
        label = "proportional mean field"
    return pd.Series(
        {
            "regime": label,
            "output": output,
            "target": target,
            "kernel": kernel,
            "movement": movement,
            "kernel_fluctuation": fluct,
        },
        name="regime",
    )


__all__ = ["REGIMES", "regime_map"]
