"""What a latent space fit returns: node parameters, fitted probabilities, tables and a plot."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy.special import expit

from statcore.network import _kernels
from statcore.results import Results, Summary
from statcore.results.plotting import get_ax, label_axes

# above this many nodes a dense n x n probability matrix is refused (800 MB at n = 10,000)
DENSE_LIMIT = 10_000


def _plot_positions(results, ax=None, dims=(0, 1), **kwargs):
    """The latent positions of two dimensions (``dims``), coloured by the degree parameters."""
    ax = get_ax(ax)
    Z = results.embeddings.to_numpy()
    x = Z[:, dims[0]]
    y = Z[:, dims[1]] if Z.shape[1] > 1 else np.zeros(len(Z))
    kwargs.setdefault("s", 12)
    points = ax.scatter(x, y, c=results.alpha.to_numpy(), cmap="viridis", **kwargs)
    ax.figure.colorbar(points, ax=ax, label="alpha (degree heterogeneity)")
    return label_axes(
        ax,
        f"z{dims[0] + 1}",
        f"z{dims[1] + 1}" if Z.shape[1] > 1 else "",
        f"{results.method}: latent positions",
    )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class LatentSpaceResults(Results):
    """A fitted latent space model.

    Attributes
    ----------
    embeddings : DataFrame
        Latent positions, one row per node (by label), columns ``z1..zr``; centred, rotated to
        principal axes (``Z'Z`` diagonal) with the sign fixed so that the first node's
        coordinates are positive.
    alpha : Series
        Node intercepts (degree heterogeneity), summing to zero.
    rho : float
        Global sparsity intercept, calibrated so that the expected edge count equals the
        observed one.
    llf : float
        Bernoulli log-likelihood over the node pairs at the fit.
    dim_selection : DataFrame or None
        With ``dim="auto"``: the table of :meth:`LatentSpaceModel.select_dim`.
    iterations : IterationRecord
        How the ascent stopped (``converged``, ``status``, ``n_iter``, the relative objective
        increase it compared with ``tol``).
    history : DataFrame
        ``iteration, loglik, objective, step`` per accepted iteration (objective = penalised
        log-likelihood): the history of ``iterations``.
    """

    embeddings: pd.DataFrame
    alpha: pd.Series
    rho: float
    llf: float
    n_edges: int
    degrees: np.ndarray = field(repr=False)
    degree_heterogeneity: bool = True
    dim_selection: pd.DataFrame | None = field(default=None, repr=False)

    _plots: ClassVar[dict] = {"positions": _plot_positions}

    @property
    def history(self) -> pd.DataFrame:
        """``iteration, loglik, objective, step`` per accepted iteration."""
        return self.iterations.history

    @property
    def dim(self) -> int:
        return self.embeddings.shape[1]

    @property
    def n_pairs(self) -> int:
        return self.nobs * (self.nobs - 1) // 2

    @property
    def df_model(self) -> int:
        """Free parameters: alpha (sum zero), Z (centred, up to rotation), rho."""
        n, r = self.nobs, self.dim
        alphas = n - 1 if self.degree_heterogeneity else 0
        return alphas + n * r - r - r * (r - 1) // 2 + 1

    @property
    def aic(self) -> float:
        return -2.0 * self.llf + 2.0 * self.df_model

    @property
    def bic(self) -> float:
        """With the number of nodes as the sample size.

        Each node's parameters are estimated from its own n - 1 pairs, so ``log(n)`` is the
        per-parameter sample size; ``log(n(n-1)/2)`` would double the penalty and, measured on
        simulated graphs, choose too few latent dimensions (see
        :meth:`LatentSpaceModel.select_dim`).
        """
        return -2.0 * self.llf + self.df_model * np.log(self.nobs)

    def _arrays(self):
        Z = np.ascontiguousarray(self.embeddings.to_numpy(dtype=float))
        return Z, np.ascontiguousarray(self.alpha.to_numpy(dtype=float)), float(self.rho)

    def edge_probabilities(self, i=None, j=None):
        """Fitted edge probabilities.

        Parameters
        ----------
        i, j : node label or sequence of labels, optional
            Both None: the full n x n matrix as a DataFrame (zero diagonal; refused above
            10,000 nodes). ``i`` only: the rows of those nodes. Both: the probabilities of the
            pairs ``(i[k], j[k])`` as an array.
        """
        Z, alpha, rho = self._arrays()
        position = {label: k for k, label in enumerate(self.embeddings.index)}

        def locate(labels, name):
            labels = [labels] if np.isscalar(labels) else list(labels)
            missing = [lab for lab in labels if lab not in position]
            if missing:
                raise ValueError(f"`{name}` holds labels that are not nodes: {missing[:5]}")
            return np.array([position[lab] for lab in labels], dtype=np.int64)

        labels = self.embeddings.index
        if i is None and j is None:
            if self.nobs > DENSE_LIMIT:
                raise ValueError(
                    f"the full matrix of {self.nobs} nodes is too large; ask for rows `i` or "
                    "pairs `i`, `j`"
                )
            rows = np.arange(self.nobs)
        elif j is None:
            rows = locate(i, "i")
        else:
            rows, cols = locate(i, "i"), locate(j, "j")
            if len(rows) != len(cols):
                raise ValueError(
                    f"`i` and `j` must have the same length; got {len(rows)}, {len(cols)}"
                )
            return _kernels.probabilities_of_pairs(Z, alpha, rho, rows, cols)
        theta = alpha[rows, None] + alpha[None, :] + Z[rows] @ Z.T + rho
        probs = expit(theta)
        probs[np.arange(len(rows)), rows] = 0.0
        return pd.DataFrame(probs, index=labels[rows], columns=labels)

    def tidy(self) -> pd.DataFrame:
        """One row per node: ``node, degree, alpha, z1..zr``."""
        frame = self.embeddings.copy()
        frame.insert(0, "alpha", self.alpha.to_numpy())
        frame.insert(0, "degree", self.degrees)
        frame.index.name = "node"
        return frame.reset_index()

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row.insert(2, "edges", self.n_edges)
        row.insert(3, "dim", self.dim)
        row.insert(4, "rho", self.rho)
        row.insert(5, "loglik", self.llf)
        row.insert(6, "aic", self.aic)
        row.insert(7, "bic", self.bic)
        return row

    def summary(self, alpha: float = 0.05) -> Summary:
        parts = pd.concat([self.alpha.rename("alpha"), self.embeddings], axis=1)
        table = pd.DataFrame(
            {
                "mean": parts.mean(),
                "std": parts.std(ddof=1),
                "min": parts.min(),
                "max": parts.max(),
            }
        )
        table.index.name = "parameter"
        return Summary(
            title=self.method,
            info=self._info(),
            tables={"node parameters": table},
            notes=self.notes + self._convergence_notes(),
        )

    def _repr_lines(self) -> list[str]:
        return [f"nodes={self.nobs}, edges={self.n_edges}, dim={self.dim}, rho={self.rho:.4g}"]
