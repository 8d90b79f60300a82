"""Choosing the latent dimension of a latent space model by AIC or BIC."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass

import pandas as pd

from statcore.validation import check_option


@dataclass(frozen=True, repr=False)
class DimensionSelection:
    """The outcome of :meth:`LatentSpaceModel.select_dim`.

    Attributes
    ----------
    dim : int
        The chosen latent dimension.
    criterion : str
        ``"bic"`` or ``"aic"``.
    table : DataFrame
        One row per candidate: ``dim, loglik, df, aic, bic, converged, n_iter, selected``.
    fits : dict
        The :class:`LatentSpaceResults` by dimension.
    """

    dim: int
    criterion: str
    table: pd.DataFrame
    fits: dict

    def tidy(self) -> pd.DataFrame:
        return self.table.copy()

    def __repr__(self) -> str:
        return (
            f"DimensionSelection(dim={self.dim}, criterion={self.criterion!r}, "
            f"candidates={list(self.table['dim'])})"
        )


def select_dim(model, dims, criterion: str, fit_options: dict) -> DimensionSelection:
    """Fit ``model`` at each dimension in ``dims``; see :meth:`LatentSpaceModel.select_dim`."""
    check_option(criterion, name="criterion", options=("bic", "aic"))
    try:
        candidates = sorted({int(d) for d in dims})
    except (TypeError, ValueError):
        raise TypeError(f"`dims` must be an iterable of ints; got {dims!r}") from None
    candidates = [d for d in candidates if d < model.n_nodes - 1]
    if not candidates or candidates[0] < 1:
        raise ValueError(
            f"`dims` must hold positive ints below the number of nodes - 1 "
            f"({model.n_nodes - 1}); got {list(dims)!r}"
        )
    fits, rows = {}, []
    for d in candidates:
        # a shallow copy shares the graph; only the dimension differs
        candidate = copy.copy(model)
        candidate.dim = d
        res = candidate.fit(**fit_options)
        fits[d] = res
        rows.append(
            {
                "dim": d,
                "loglik": res.llf,
                "df": res.df_model,
                "aic": res.aic,
                "bic": res.bic,
                "converged": res.converged,
                "n_iter": res.n_iter,
            }
        )
    table = pd.DataFrame(rows)
    best = int(table.loc[table[criterion].idxmin(), "dim"])
    table["selected"] = table["dim"] == best
    return DimensionSelection(dim=best, criterion=criterion, table=table, fits=fits)


def fit_auto(model, fit_options: dict):
    """The fit at the dimension chosen by ``model.auto_criterion`` among ``model.auto_dims``."""
    selection = select_dim(model, model.auto_dims, model.auto_criterion, fit_options)
    res = selection.fits[selection.dim]
    note = (
        f"Latent dimension {selection.dim} chosen by {selection.criterion.upper()} among "
        f"{list(selection.table['dim'])}."
    )
    return dataclasses.replace(res, notes=res.notes + (note,), dim_selection=selection.table)
