"""The logistic latent space model with degree heterogeneity, fitted by projected gradient ascent.

P_ij = sigmoid(alpha_i + alpha_j + z_i'z_j + rho) for i < j, edges independent given the latents.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import optimize
from scipy.sparse import linalg as sparse_linalg
from scipy.special import expit, logit
from tqdm import tqdm

from statcore._validation import (
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
)
from statcore.exceptions import ConvergenceWarning
from statcore.network import _kernels
from statcore.network.graph import as_adjacency
from statcore.results import Results, Summary
from statcore.results._plotting import get_ax

# a node parameter beyond this size (logits of order -50 or 2500) marks a likelihood that has
# no finite maximum
DIVERGENCE = 50.0
# above this many nodes a dense n x n probability matrix is refused (800 MB at n = 10,000)
DENSE_LIMIT = 10_000
# up to this many nodes the exact log-likelihood is still evaluated once after a sampled fit
EXACT_LIMIT = 20_000


def _plot_positions(results, ax=None, dims=(0, 1), **kwargs):
    ax = get_ax(ax)
    Z = results.embeddings.to_numpy()
    x = Z[:, dims[0]]
    y = Z[:, dims[1]] if Z.shape[1] > 1 else np.zeros(len(Z))
    kwargs.setdefault("s", 12)
    points = ax.scatter(x, y, c=results.alpha.to_numpy(), cmap="viridis", **kwargs)
    ax.figure.colorbar(points, ax=ax, label="alpha (degree heterogeneity)")
    ax.set_xlabel(f"z{dims[0] + 1}")
    ax.set_ylabel(f"z{dims[1] + 1}" if Z.shape[1] > 1 else "")
    ax.set_title(f"{results.method}: latent positions")
    return ax


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
    history : DataFrame
        ``iteration, loglik, objective, step`` per accepted iteration (objective = penalised
        log-likelihood).
    """

    embeddings: pd.DataFrame
    alpha: pd.Series
    rho: float
    llf: float
    n_edges: int
    degrees: np.ndarray = field(repr=False)
    history: pd.DataFrame = field(repr=False)
    degree_heterogeneity: bool = True

    _plots: ClassVar[dict] = {"positions": _plot_positions}

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
        """With the number of node pairs as the sample size."""
        return -2.0 * self.llf + self.df_model * np.log(self.n_pairs)

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


def _centre_and_rotate(Z, alpha, rho, degree_heterogeneity):
    """Impose the identifiability constraints without changing any logit Theta_ij.

    Centring Z by c adds c'z_i to alpha_i and |c|^2 to rho; centring alpha moves twice its mean
    into rho; a rotation to principal axes leaves Z Z' unchanged. Without node intercepts a
    translation of Z cannot be absorbed, so Z is only rotated then.
    """
    if degree_heterogeneity:
        c = Z.mean(axis=0)
        Z = Z - c
        alpha = alpha + Z @ c
        shift = alpha.mean()
        alpha = alpha - shift
        rho = rho + c @ c + 2.0 * shift
    _, _, vt = np.linalg.svd(Z, full_matrices=False)
    Z = Z @ vt.T
    signs = np.where(Z[0] < 0, -1.0, 1.0)
    return np.ascontiguousarray(Z * signs), np.ascontiguousarray(alpha), float(rho)


@dataclass(frozen=True)
class _State:
    """Parameters and the pair sums at them."""

    Z: np.ndarray
    alpha: np.ndarray
    rho: float
    llf: float
    objective: float
    grad_z: np.ndarray
    grad_alpha: np.ndarray
    info: float
    hess: np.ndarray


class LatentSpaceModel:
    """Logistic latent space model with degree heterogeneity and a sparsity offset.

    ``P_ij = sigmoid(alpha_i + alpha_j + z_i'z_j + rho)``, edges independent given the latent
    positions ``z_i`` (dimension ``dim``) and node intercepts ``alpha_i``.

    Parameters
    ----------
    graph : networkx.Graph, scipy.sparse matrix or square array
        A simple undirected graph (directed or weighted input is converted with a warning).
    dim : int
        Latent dimension r.
    degree_heterogeneity : bool
        Fit node intercepts ``alpha`` (False fixes them at 0).

    References
    ----------
    Jiang, F. et al. (2026). SyNGLER: Synthetic network generation via latent embedding
    reconstruction. ICML 2026.
    Li, Xu and Zhu (2023). Statistical inference on latent space models. arXiv:2312.06605.
    Ma, Ma and Yuan (2020). Universal latent space model fitting for large networks with edge
    covariates. JMLR 21.
    """

    def __init__(self, graph, dim: int = 2, degree_heterogeneity: bool = True):
        self.adjacency, self.nodes = as_adjacency(graph)
        n = self.adjacency.shape[0]
        self.dim = check_positive_int(dim, name="dim")
        if n < 3:
            raise ValueError(f"`graph` needs at least 3 nodes; got {n}")
        if self.dim >= n - 1:
            raise ValueError(
                f"`dim` must be smaller than the number of nodes - 1 ({n - 1}); got {dim}"
            )
        if self.adjacency.nnz == 0:
            raise ValueError("`graph` has no edges: the model has no maximum-likelihood fit")
        self.degree_heterogeneity = bool(degree_heterogeneity)
        self.degrees = np.asarray(self.adjacency.sum(axis=1)).ravel().astype(np.int64)
        isolated = int((self.degrees == 0).sum())
        if isolated and self.degree_heterogeneity:
            warnings.warn(
                f"`graph` has {isolated} isolated node(s): their alpha has no finite MLE and is "
                "driven down until the iteration stops",
                stacklevel=2,
            )

    @property
    def n_nodes(self) -> int:
        return self.adjacency.shape[0]

    @property
    def n_edges(self) -> int:
        return self.adjacency.nnz // 2

    def _start(self):
        """Spectral start: top-r eigenpairs of A - mean(A), log-degree intercepts, logit density."""
        n, r = self.n_nodes, self.dim
        density = self.n_edges / (n * (n - 1) / 2)
        A = self.adjacency
        ones = np.ones(n)
        centred = sparse_linalg.LinearOperator(
            (n, n), matvec=lambda v: A @ v - density * ones * v.sum(), dtype=float
        )
        values, vectors = sparse_linalg.eigsh(centred, k=r, which="LA", v0=ones / np.sqrt(n))
        Z = vectors * np.sqrt(np.clip(values, 0.0, None))
        if self.degree_heterogeneity:
            alpha = np.log(self.degrees + 1.0)
            alpha -= alpha.mean()
        else:
            alpha = np.zeros(n)
        rho = float(logit(density)) - (2.0 * alpha.mean())
        return _centre_and_rotate(np.ascontiguousarray(Z), alpha, rho, self.degree_heterogeneity)

    def fit(
        self,
        *,
        method: str = "newton",
        maxiter: int = 1000,
        tol: float = 1e-10,
        step: float | None = None,
        penalty: float = 1e-3,
        nonedges="auto",
        random_state=None,
        progress: bool = False,
    ) -> LatentSpaceResults:
        """Maximise the Bernoulli log-likelihood by projected ascent from a spectral start.

        ``method="pgd"`` is the authors' projected gradient ascent: ``Z += 2 eta_Z R Z`` and
        ``alpha += 2 eta_alpha R 1`` with ``eta_alpha = step / (2n)`` and
        ``eta_Z = step / (2 |Z|_F^2 / r)`` (``step`` = 0.5). ``method="newton"`` (default)
        preconditions the same ascent direction by each node's exact diagonal Hessian block in
        ``(alpha_i, z_i)``, a simultaneous (Jacobi) Newton step damped by ``step`` (start 0.5,
        grown after successes), which reaches the same maximum in far fewer iterations. Both
        take a Newton step for ``rho``, re-impose the constraints (sum alpha = 0, centred and
        rotated Z) without changing the logits, and halve a step that would lower the
        likelihood. At the end ``rho`` is calibrated by root finding so that the expected edge
        count equals the observed one (the ``rho`` score equation, met at the MLE).

        The ascent is on the log-likelihood minus ``penalty / 2 (|Z|_F^2 + |alpha|^2)``: the
        authors' phase-1 ridge (1e-3), which gives every graph a finite maximum. Without it
        (``penalty=0``) sparse graphs whose latent positions can separate the edges have no
        MLE; the fit then stops when a node parameter passes 50 in size and warns.

        Parameters
        ----------
        method : {"newton", "pgd"}
        maxiter : int
            Iteration limit; reaching it warns with ``ConvergenceWarning``.
        tol : float
            Stop when the relative increase of the log-likelihood falls below it.
        step : float, optional
            Initial damping (Newton) or base step eta_0 (PGD); 0.5 by default.
        penalty : float
            Ridge weight on the node parameters (0: plain maximum likelihood).
        nonedges : "all", "auto" or int
            ``"all"``: the exact likelihood over all n(n-1)/2 pairs (O(n^2 r) work per
            iteration, O(n r) memory). An int k: a case-control likelihood in which each node
            keeps all its edges and k non-neighbours drawn uniformly with replacement, weighted
            by (non-neighbours) / k, an unbiased estimate of each row of the likelihood at
            O((edges + n k) r) work; the final rho calibration and reported log-likelihood are
            still exact while n <= 20,000. ``"auto"`` (default): all pairs up to 3,000 nodes,
            else k = 20 x (mean degree + 1).
        random_state : None, int or Generator
            Draws the case-control non-edges; the exact fit is deterministic.
        progress : bool
            Show a tqdm bar over iterations.
        """
        check_option(method, name="method", options=("newton", "pgd"))
        maxiter = check_positive_int(maxiter, name="maxiter")
        tol = check_positive(tol, name="tol")
        step = 0.5 if step is None else check_positive(step, name="step")
        penalty = check_positive(penalty, name="penalty", strict=False)
        n, r = self.n_nodes, self.dim
        A = self.adjacency
        indptr = A.indptr.astype(np.int64)
        indices = A.indices.astype(np.int64)
        buffers = (
            np.empty((n, r)),
            np.empty(n),
            np.empty(n),
            np.empty(n),
            np.empty((n, r + 1, r + 1)),
        )

        lam = penalty
        ridge_alpha = lam if self.degree_heterogeneity else 0.0

        sample = self._nonedge_sample(nonedges, random_state)

        def evaluate(Z, alpha, rho, exact=sample is None):
            grad_z, grad_alpha, row_llf, row_info, hess = buffers
            if exact:
                _kernels.pair_sums(
                    Z, alpha, rho, indptr, indices, grad_z, grad_alpha, row_llf, row_info, hess
                )
            else:
                _kernels.sampled_pair_sums(
                    Z,
                    alpha,
                    rho,
                    indptr,
                    indices,
                    *sample,
                    grad_z,
                    grad_alpha,
                    row_llf,
                    row_info,
                    hess,
                )
            # ordered pairs count every unordered pair twice
            llf = 0.5 * row_llf.sum()
            hess = hess.copy()
            hess[:, 0, 0] += ridge_alpha
            hess[:, 1:, 1:] += lam * np.eye(r)
            return _State(
                Z,
                alpha,
                rho,
                llf,
                llf - 0.5 * lam * ((Z * Z).sum() + (alpha * alpha).sum()),
                grad_z - lam * Z,
                grad_alpha - ridge_alpha * alpha,
                0.5 * row_info.sum(),
                hess,
            )

        state = evaluate(*self._start())
        history = [(0, state.llf, state.objective, step)]
        converged = diverged = False
        eta = step
        bar = tqdm(total=maxiter, disable=not progress, desc="latent space fit")
        iteration = 0
        while iteration < maxiter:
            iteration += 1
            bar.update(1)
            d_alpha, d_z = self._direction(state, method, eta)
            proposal = _centre_and_rotate(
                state.Z + d_z,
                state.alpha + d_alpha,
                state.rho + 0.5 * state.grad_alpha.sum() / max(state.info, 1e-12),
                self.degree_heterogeneity,
            )
            new = evaluate(*proposal)
            if not new.objective >= state.objective:
                eta /= 2.0
                if eta < 1e-10:
                    converged = True  # no ascent left at machine precision
                    break
                continue
            change = (new.objective - state.objective) / (abs(state.objective) + 1.0)
            state = new
            history.append((iteration, state.llf, state.objective, eta))
            if method == "newton":
                eta = min(1.0, 1.5 * eta)
            if change < tol:
                converged = True
                break
            if np.abs(state.alpha).max() > DIVERGENCE or np.abs(state.Z).max() > DIVERGENCE:
                diverged = True
                break
        bar.close()
        rho = self._calibrate_rho(state.Z, state.alpha, state.rho)
        final = evaluate(state.Z, state.alpha, rho, exact=sample is None or n <= EXACT_LIMIT)
        notes = ()
        if sample is not None:
            notes = (
                f"Case-control likelihood: all edges and {len(sample[1]) // n} sampled "
                "non-edges per node"
                + ("." if n <= EXACT_LIMIT else "; the log-likelihood shown is that estimate."),
            )
        if diverged:
            warnings.warn(
                f"LatentSpaceModel: node parameters diverge (beyond {DIVERGENCE:g} in size) after "
                f"{iteration} iterations: the likelihood of this graph has no finite maximum "
                "(latent positions separate its edges); the results record converged=False",
                ConvergenceWarning,
                stacklevel=2,
            )
        elif not converged:
            warnings.warn(
                f"LatentSpaceModel: stopped after {iteration} iterations without meeting "
                f"tol={tol:g}; the results record converged=False",
                ConvergenceWarning,
                stacklevel=2,
            )
        labels = pd.Index(self.nodes, name="node")
        return LatentSpaceResults(
            method=f"Latent space model (dim={r}, {method})",
            nobs=n,
            model=self,
            converged=converged,
            n_iter=iteration,
            notes=notes,
            embeddings=pd.DataFrame(final.Z, index=labels, columns=[f"z{k + 1}" for k in range(r)]),
            alpha=pd.Series(final.alpha, index=labels, name="alpha"),
            rho=rho,
            llf=float(final.llf),
            n_edges=self.n_edges,
            degrees=self.degrees,
            history=pd.DataFrame(history, columns=["iteration", "loglik", "objective", "step"]),
            degree_heterogeneity=self.degree_heterogeneity,
        )

    def _nonedge_sample(self, nonedges, random_state):
        """CSR-like arrays of sampled non-neighbours per node and their weights, or None."""
        n = self.n_nodes
        if nonedges == "auto":
            nonedges = "all" if n <= 3000 else int(20 * (self.degrees.mean() + 1))
        if isinstance(nonedges, str):
            check_option(nonedges, name="nonedges", options=("all", "auto"))
            return None
        k = check_positive_int(nonedges, name="nonedges")
        if k >= n - 1:
            return None
        rng = check_random_state(random_state)
        A = self.adjacency
        draws = np.empty(n * k, dtype=np.int64)
        for i in range(n):
            neighbours = A.indices[A.indptr[i] : A.indptr[i + 1]]
            chosen = np.empty(0, dtype=np.int64)
            while len(chosen) < k:
                cand = rng.integers(0, n, size=2 * k)
                keep = (cand != i) & ~np.isin(cand, neighbours, assume_unique=False)
                chosen = np.concatenate([chosen, cand[keep]])
            draws[i * k : (i + 1) * k] = chosen[:k]
        ptr = np.arange(0, n * k + 1, k, dtype=np.int64)
        weights = (n - 1 - self.degrees) / k
        return ptr, draws, weights.astype(np.float64)

    def _direction(self, state, method, eta):
        """Ascent step (d_alpha, d_z) for every node."""
        n, r = self.n_nodes, self.dim
        if method == "pgd":
            d_alpha = 2.0 * eta / (2.0 * n) * state.grad_alpha
            d_z = 2.0 * eta / (2.0 * (state.Z * state.Z).sum() / r) * state.grad_z
        else:
            grad = np.column_stack([state.grad_alpha, state.grad_z])
            hess = state.hess
            if not self.degree_heterogeneity:
                grad, hess = grad[:, 1:], hess[:, 1:, 1:]
            # a ridge of 1e-8 of the block's scale keeps nearly flat blocks solvable
            ridge = 1e-8 * np.einsum("ijj->i", hess)[:, None, None] * np.eye(hess.shape[1])
            delta = (
                eta
                * np.linalg.solve(hess + ridge + 1e-12 * np.eye(hess.shape[1]), grad[..., None])[
                    ..., 0
                ]
            )
            if not self.degree_heterogeneity:
                delta = np.column_stack([np.zeros(n), delta])
            d_alpha, d_z = delta[:, 0], delta[:, 1:]
        if not self.degree_heterogeneity:
            d_alpha = np.zeros(n)
        return d_alpha, d_z

    def _calibrate_rho(self, Z, alpha, rho) -> float:
        n = self.n_nodes
        density = self.n_edges / (n * (n - 1) / 2)

        def gap(value):
            return _kernels.mean_probability(Z, alpha, value) - density

        low, high = rho - 5.0, rho + 5.0
        while gap(low) > 0:
            low -= 5.0
        while gap(high) < 0:
            high += 5.0
        return float(optimize.brentq(gap, low, high, xtol=1e-12))
