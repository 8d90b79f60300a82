"""SLOT-Align: one-shot federated feature alignment through Bures-Wasserstein barycentres.

Each client summarises its frozen-encoder features by their mean and Ledoit-Wolf covariance
(and its sample count); the server forms the Bures-Wasserstein barycentre of these Gaussians
and returns to each client the optimal affine map from its Gaussian to the barycentre. A client
moves its features a fraction ``tau`` of the way along the W2 geodesic (McCann interpolation),
``x -> (1 - tau) x + tau T_k(x)``, before training its part of a one-shot federated model.
Optionally all clients first share a common PCA basis assembled from sufficient statistics
(within- plus between-client scatter), which equals PCA of the pooled samples.

References
----------
SLOT-Align, authors' code ``daniebera/SLOT-Align`` (``slotalign/statistics.py``,
``slotalign/alignment.py``, ``slotalign/schedules.py``, ``slotalign/federated.py``,
``compute_alignment.py``, ``run_ofedavg.py``); the paper text was not read (see each
"Fidelity" section).
Ledoit, O. and Wolf, M. (2004). A well-conditioned estimator for large-dimensional covariance
matrices. J. Multivariate Anal. 88(2), 365-411.
McCann, R. J. (1997). A convexity principle for interacting gases. Adv. Math. 128, 153-179.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from statcore.base import Estimator
from statcore.compat import renamed_attribute
from statcore.distributed import (
    as_dask_array,
    borrowed_backend,
    compute_delayed,
    is_dask_backend,
)
from statcore.ot.bures import (
    BuresBarycentreResult,
    GaussianMap,
    _check_covariances,
    _map_from_roots,
    bures_wasserstein_barycentre,
    gaussian_w2,
)
from statcore.results import Results
from statcore.results.plotting import get_ax, label_axes
from statcore.validation import (
    as_float_array,
    check_positive,
    check_positive_int,
    check_random_state,
    check_scalar,
    describe,
)


@dataclass(frozen=True, eq=False)
class ClientStatistics:
    """What one client sends: its sample count, mean and Ledoit-Wolf covariance.

    Parameters
    ----------
    n : int
        Number of samples.
    mean : ndarray of shape (d,)
    covariance : ndarray of shape (d, d)
        The Ledoit-Wolf shrinkage covariance (normalised by ``n``), eigenvalue-floored.
    shrinkage : float
        The Ledoit-Wolf shrinkage intensity in [0, 1] (NaN when supplied by the user).
    """

    n: int
    mean: np.ndarray
    covariance: np.ndarray
    shrinkage: float = math.nan


@dataclass(frozen=True, eq=False)
class CommonPCA:
    """A PCA basis shared by all clients: ``x -> (x - mean) @ components``.

    Parameters
    ----------
    mean : ndarray of shape (d,)
        The pooled mean.
    components : ndarray of shape (d, r)
        Orthonormal columns, leading eigenvectors of the pooled covariance.
    eigenvalues : ndarray of shape (r,)
        Their variances (pooled covariance normalised by ``n - 1``).
    explained_variance : float
        The share of variance the basis was asked to keep.
    """

    mean: np.ndarray
    components: np.ndarray
    eigenvalues: np.ndarray
    explained_variance: float

    def transform(self, X) -> np.ndarray:
        """Coordinates of the rows of ``X`` in the common basis."""
        x = as_float_array(X, name="features", ndim=2)
        if x.shape[1] != len(self.mean):
            raise ValueError(
                f"`features` must have {len(self.mean)} columns (the encoder dimension); "
                f"got {x.shape[1]}"
            )
        return (x - self.mean) @ self.components


def ledoit_wolf(X, *, eigen_floor: float = 1e-8) -> ClientStatistics:
    """A client's mean and Ledoit-Wolf covariance (the statistics SLOT-Align sends).

    The shrinkage target is ``mu I`` with ``mu = tr(S) / d`` and ``S`` the covariance
    normalised by ``n``; the intensity is Ledoit and Wolf's (2004) estimate (the formula of
    scikit-learn's ``LedoitWolf(assume_centered=False)``). The result is positive definite
    whenever the features are not all constant, also with fewer samples than dimensions
    (``n < d``), where the sample covariance is singular: the shrinkage then grows towards 1.
    Eigenvalues below ``eigen_floor * max(1, tr / d)`` are lifted to it, as in the authors'
    code.

    Parameters
    ----------
    X : array_like of shape (n, d)
        The client's features, ``n >= 2``.
    eigen_floor : float
        Relative floor of the eigenvalues.

    Returns
    -------
    ClientStatistics

    References
    ----------
    Ledoit, O. and Wolf, M. (2004). A well-conditioned estimator for large-dimensional
    covariance matrices. J. Multivariate Anal. 88(2), 365-411.
    """
    x = as_float_array(X, name="X", ndim=2, min_rows=2)
    eigen_floor = check_positive(eigen_floor, name="eigen_floor")
    n, d = x.shape
    mean = x.mean(axis=0)
    xc = x - mean
    emp = xc.T @ xc / n
    mu = np.trace(emp) / d
    if mu <= 0:
        raise ValueError("`X` is constant: its covariance is zero, not estimable")
    fourth = np.sum(np.einsum("ij,ij->i", xc, xc) ** 2) / n
    frob = np.sum(emp**2)
    beta = min((fourth - frob) / (d * n), (frob - mu**2 * d) / d)
    delta = (frob - mu**2 * d) / d
    shrinkage = 0.0 if delta <= 0 else max(beta, 0.0) / delta
    cov = (1.0 - shrinkage) * emp
    cov[np.diag_indices(d)] += shrinkage * mu
    cov = 0.5 * (cov + cov.T)
    smallest = np.linalg.eigvalsh(cov)[0]
    floor = eigen_floor * max(1.0, mu)
    if smallest < floor:
        cov[np.diag_indices(d)] += floor - smallest
    return ClientStatistics(n=n, mean=mean, covariance=cov, shrinkage=float(shrinkage))


@dataclass(frozen=True, eq=False)
class _Scatter:
    """A client's PCA statistics: count, mean and scatter ``sum (x - m)(x - m)^T``."""

    n: int
    mean: np.ndarray
    scatter: np.ndarray


def _scatter(X) -> _Scatter:
    x = as_float_array(X, name="features", ndim=2, min_rows=2)
    mean = x.mean(axis=0)
    xc = x - mean
    return _Scatter(len(x), mean, xc.T @ xc)


def _pca_from_scatters(parts: Sequence[_Scatter], explained_variance: float) -> CommonPCA:
    """Pooled PCA from per-client counts, means and scatters (no sample leaves a client)."""
    n = np.array([p.n for p in parts], dtype=float)
    means = np.stack([p.mean for p in parts])
    grand = n @ means / n.sum()
    offsets = means - grand
    total = sum(p.scatter for p in parts) + (offsets.T * n) @ offsets
    cov = 0.5 * (total + total.T) / (n.sum() - 1)
    vals, vecs = np.linalg.eigh(cov)
    vals, vecs = np.clip(vals[::-1], 0.0, None), vecs[:, ::-1]
    if vals.sum() <= 0:
        raise ValueError("`clients` features are constant: the common PCA is undefined")
    share = np.cumsum(vals) / vals.sum()
    rank = min(int(np.searchsorted(share, explained_variance - 1e-12) + 1), len(vals))
    rank = min(rank, int(n.sum()) - 1)
    return CommonPCA(grand, vecs[:, :rank].copy(), vals[:rank].copy(), explained_variance)


@dataclass(frozen=True)
class _ClientTask:
    """One client's local work (picklable, for process and dask workers)."""

    kind: str
    eigen_floor: float = 1e-8
    pca: CommonPCA | None = None

    def __call__(self, X):
        x = np.asarray(X, dtype=np.float64)
        if self.kind == "scatter":
            return _scatter(x)
        if self.pca is not None:
            x = self.pca.transform(x)
        return ledoit_wolf(x, eigen_floor=self.eigen_floor)


def _run_clients(data, task: _ClientTask, backend) -> list:
    """``task`` on every client's features, on the backend; a dask array's row chunks are the
    clients and are reduced where they live."""
    if isinstance(data, list):
        if backend is None:
            return [task(x) for x in data]
        with borrowed_backend(backend) as pool:
            return pool.map(task, data)
    blocks = list(data.rechunk({1: -1}).to_delayed().ravel())
    if backend is None:
        return [task(block.compute()) for block in blocks]
    if not is_dask_backend(backend):
        with borrowed_backend(backend) as pool:
            return pool.map(task, [block.compute() for block in blocks])
    return compute_delayed(task, blocks, backend)


def cosine_tau_schedule(n_steps: int, tau_max: float, tau_min: float = 0.0) -> np.ndarray:
    """The authors' cosine schedule of ``tau`` over local epochs, ending at ``tau_max``.

    ``tau_min + (tau_max - tau_min) (1 + cos(pi s / n)) / 2`` for ``s = 0, ..., n - 1``,
    reversed: it starts near ``tau_min`` and rises to exactly ``tau_max`` at the last step.

    Parameters
    ----------
    n_steps : int
        Local epochs (or rounds).
    tau_max, tau_min : float in [0, 1]

    Returns
    -------
    ndarray of shape (n_steps,)

    Notes
    -----
    Fidelity: ``compute_tau_schedule("cosine_anneal", ...)`` of the authors' code
    (``slotalign/schedules.py``); the warm-restart variant is not provided.
    """
    n_steps = check_positive_int(n_steps, name="n_steps")
    tau_max = check_scalar(tau_max, name="tau_max", low=0.0, high=1.0)
    tau_min = check_scalar(tau_min, name="tau_min", low=0.0, high=1.0)
    s = np.arange(n_steps)
    values = tau_min + 0.5 * (tau_max - tau_min) * (1.0 + np.cos(np.pi * s / n_steps))
    return values[::-1].copy()


def _plot_distances(results, ax=None, **kwargs):
    """W2 distance of each client's Gaussian to the barycentre (before alignment)."""
    ax = get_ax(ax)
    table = results.tidy()
    ax.bar(table["client"].astype(str), table["w2_to_barycentre"], **kwargs)
    return label_axes(
        ax,
        "client",
        "W2 to barycentre",
        "SLOT-Align: distance to the barycentre (tau moves a share tau of it)",
    )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class SLOTAlignResult(Results):
    """Per-client affine maps to the Bures-Wasserstein barycentre of the clients' Gaussians.

    Parameters
    ----------
    clients : tuple
        Client names, in order.
    statistics : tuple of ClientStatistics
        What each client sent (in the PCA basis when one was used).
    barycentre : BuresBarycentreResult
        The barycentre and its convergence record (also this result's ``iterations``).
    maps : dict
        Client name -> :class:`~statcore.ot.bures.GaussianMap` to the barycentre.
    pca : CommonPCA or None
        The common basis, when ``fit(pca=...)`` asked for one.
    """

    clients: tuple
    statistics: tuple
    barycentre: BuresBarycentreResult
    maps: dict
    pca: CommonPCA | None = None

    _plots: ClassVar[dict] = {"distances": _plot_distances}
    barycenter = renamed_attribute("barycenter", "barycentre")

    def map(self, client) -> GaussianMap:
        """The full map of ``client`` (in the PCA basis when one was used)."""
        if client not in self.maps:
            raise KeyError(f"`client` must be one of {list(self.maps)}; got {describe(client)}")
        return self.maps[client]

    def transform(self, features, client, tau: float = 0.4) -> np.ndarray:
        """Move ``client``'s features a share ``tau`` of the way to the barycentre.

        Parameters
        ----------
        features : array_like of shape (n, d)
            Features in the encoder space (projected onto the common PCA basis first when
            the fit used one).
        client
            The client's name (its index for clients given as a sequence or a dask array).
        tau : float in [0, 1]
            ``0`` leaves the features unchanged (PCA-projected, if any), ``1`` applies the full
            map. The authors' default is 0.4; a schedule over epochs comes from
            :func:`cosine_tau_schedule`.

        Returns
        -------
        ndarray of shape (n, d) (or (n, r) with a PCA basis)
        """
        T = self.map(client)
        x = as_float_array(features, name="features", ndim=2)
        if self.pca is not None:
            x = self.pca.transform(x)
        elif x.shape[1] != T.dim:
            raise ValueError(f"`features` must have {T.dim} columns; got {x.shape[1]}")
        return T(x, tau=tau)

    def tidy(self) -> pd.DataFrame:
        """One row per client: ``client, n, weight, shrinkage, w2_to_barycentre, map_shift``
        (``map_shift``: ``|A - I|_F``, how far the linear part is from the identity)."""
        bar = self.barycentre
        rows = []
        for name, stat, weight in zip(self.clients, self.statistics, bar.weights, strict=True):
            A = self.maps[name].matrix
            rows.append(
                {
                    "client": name,
                    "n": stat.n,
                    "weight": weight,
                    "shrinkage": stat.shrinkage,
                    "w2_to_barycentre": gaussian_w2(
                        stat.mean, stat.covariance, bar.mean, bar.covariance
                    ),
                    "map_shift": float(np.linalg.norm(A - np.eye(len(A)))),
                }
            )
        return pd.DataFrame(rows)

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row["n_clients"] = len(self.clients)
        row["dim"] = len(self.barycentre.mean)
        row["pca_rank"] = None if self.pca is None else self.pca.components.shape[1]
        row["residual"] = self.barycentre.residual
        return row

    def _repr_lines(self) -> list[str]:
        pca = "" if self.pca is None else f", PCA rank {self.pca.components.shape[1]}"
        return [f"{len(self.clients)} clients, d={len(self.barycentre.mean)}{pca}"]


class SLOTAlign(Estimator):
    """SLOT-Align: align clients' frozen features to the Bures-Wasserstein barycentre.

    Each client contributes only sufficient statistics: its sample count, mean and
    Ledoit-Wolf covariance (and, for the optional common PCA, its mean and scatter). The
    server computes the weighted barycentre (weights proportional to the sample counts) and
    the optimal affine map ``T_k(x) = A_k x + b_k`` from each client's Gaussian to it;
    ``result.transform(X, client, tau)`` applies ``(1 - tau) x + tau T_k(x)``.

    Parameters
    ----------
    clients : sequence or mapping of array_like, or a dask array
        Each client's features (n_k, d): a list (clients named 0, 1, ...), a mapping
        name -> features, or a 2-D dask array whose row chunks are the clients. A sequence of
        :class:`ClientStatistics` is accepted too (statistics computed on the clients'
        side; no common PCA then). A client may have fewer samples than dimensions: the
        Ledoit-Wolf covariance is still positive definite (it shrinks towards a multiple of
        the identity), but it needs at least 2 samples.

    Notes
    -----
    Fidelity: paper, checked against the authors' code ``daniebera/SLOT-Align``
    (``slotalign/statistics.py``: Ledoit-Wolf statistics with the eigenvalue floor
    ``1e-8 * max(1, tr / d)``, common PCA from within- plus between-client scatter at 99 %
    variance; ``slotalign/alignment.py``: barycentre with sample-count weights and
    Bures-Wasserstein maps; ``slotalign/alignment.apply_partial_transport``: the partial map).
    The authors call POT's barycentre fixed point; here the faster fixed point of
    Alvarez-Esteban et al. (2016), which has the same solution, is used. The paper text
    itself was not read.

    References
    ----------
    SLOT-Align authors' code, github.com/daniebera/SLOT-Align.
    Agueh, M. and Carlier, G. (2011). Barycenters in the Wasserstein space. SIAM J. Math.
    Anal. 43(2), 904-924.
    """

    method_name = "SLOT-Align (Bures-Wasserstein barycentre alignment)"

    def __init__(self, clients):
        self._stats = None
        dask_array = as_dask_array(clients)
        if dask_array is not None:
            if dask_array.ndim != 2:
                raise ValueError(f"`clients` must be a 2-D dask array; got {dask_array.ndim}-D")
            self._data = dask_array
            self.names = tuple(range(len(dask_array.chunks[0])))
            self._n = tuple(int(c) for c in dask_array.chunks[0])
            self._dim = int(dask_array.shape[1])
            return
        if isinstance(clients, Mapping):
            names, values = tuple(clients.keys()), list(clients.values())
        elif isinstance(clients, Sequence | np.ndarray) and not isinstance(clients, str):
            values = list(clients)
            names = tuple(range(len(values)))
        else:
            raise TypeError(
                "`clients` must be a sequence or mapping of feature arrays (or of "
                f"ClientStatistics), or a 2-D dask array; got {describe(clients)}"
            )
        if len(values) == 0:
            raise ValueError("`clients` must hold at least one client; got none")
        self.names = names
        if all(isinstance(v, ClientStatistics) for v in values):
            self._stats = self._check_statistics(values)
            self._data = None
            self._n = tuple(s.n for s in self._stats)
            self._dim = len(self._stats[0].mean)
            return
        arrays = []
        for name, value in zip(names, values, strict=True):
            label = f"clients[{name!r}]"
            x = as_float_array(value, name=label, ndim=2, min_rows=2)
            if arrays and x.shape[1] != arrays[0].shape[1]:
                raise ValueError(
                    f"`{label}` has {x.shape[1]} features but `clients[{names[0]!r}]` has "
                    f"{arrays[0].shape[1]}: all clients must share the encoder dimension"
                )
            x.setflags(write=False)
            arrays.append(x)
        self._data = arrays
        self._n = tuple(len(x) for x in arrays)
        self._dim = arrays[0].shape[1]

    def _check_statistics(self, stats) -> tuple:
        d = len(np.asarray(stats[0].mean))
        out = []
        for name, s in zip(self.names, stats, strict=True):
            label = f"clients[{name!r}]"
            n = check_positive_int(s.n, name=f"{label}.n")
            mean = as_float_array(s.mean, name=f"{label}.mean", ndim=1)
            if len(mean) != d:
                raise ValueError(f"`{label}.mean` must have length {d}; got {len(mean)}")
            cov = _check_covariances(s.covariance, name=f"{label}.covariance", dim=d, stack=False)
            out.append(ClientStatistics(n, mean, cov[0], s.shrinkage))
        return tuple(out)

    @property
    def nobs(self) -> int:
        return int(sum(self._n))

    def _repr_spec(self) -> str:
        return f"n_clients={len(self.names)}, dim={self._dim}"

    def fit(
        self,
        *,
        pca: float | None = None,
        eigen_floor: float = 1e-8,
        maxiter: int = 200,
        tol: float = 1e-10,
        backend=None,
    ) -> SLOTAlignResult:
        """Collect the clients' statistics, form the barycentre and the per-client maps.

        Parameters
        ----------
        pca : float in (0, 1], optional
            Keep this share of variance in a common PCA basis assembled from the clients'
            means and scatters before the Ledoit-Wolf statistics are taken (the authors'
            optional ``pca_lw`` mode, 0.99 there); default: none (their default).
        eigen_floor : float
            Relative eigenvalue floor of the Ledoit-Wolf covariances.
        maxiter, tol
            Of the barycentre's fixed point (see
            :func:`~statcore.ot.bures_wasserstein_barycentre`).
        backend : None, str, Backend or dask Client
            Where the clients' local statistics are computed
            (:func:`statcore.distributed.borrowed_backend`). With ``"dask"`` (or a Client)
            and clients given as a dask array, each row chunk is reduced on the worker that
            holds it and only its statistics travel.

        Returns
        -------
        SLOTAlignResult
        """
        if pca is not None:
            pca = check_scalar(pca, name="pca", low=0.0, high=1.0, low_inclusive=False)
        eigen_floor = check_positive(eigen_floor, name="eigen_floor")
        basis = None
        if self._stats is not None:
            if pca is not None:
                raise ValueError(
                    "`pca` needs the clients' features (their scatters); these clients sent "
                    "only their Gaussian statistics"
                )
            stats = self._stats
        else:
            if pca is not None:
                scatters = _run_clients(self._data, _ClientTask("scatter"), backend)
                basis = _pca_from_scatters(scatters, pca)
            task = _ClientTask("gaussian", eigen_floor=eigen_floor, pca=basis)
            stats = tuple(_run_clients(self._data, task, backend))
        bar = bures_wasserstein_barycentre(
            np.stack([s.mean for s in stats]),
            np.stack([s.covariance for s in stats]),
            np.array([s.n for s in stats], dtype=float),
            maxiter=maxiter,
            tol=tol,
        )
        maps = {}
        for name, s in zip(self.names, stats, strict=True):
            vals, vecs = np.linalg.eigh(s.covariance)
            root = np.sqrt(vals)
            A = _map_from_roots((vecs * root) @ vecs.T, (vecs / root) @ vecs.T, bar.covariance)
            maps[name] = GaussianMap(A, bar.mean - A @ s.mean)
        return SLOTAlignResult(
            method=self.method_name,
            **self._result_fields(),
            clients=self.names,
            statistics=tuple(stats),
            barycentre=bar,
            maps=maps,
            pca=basis,
            iterations=bar.iterations,
        )


def _plot_accuracy(results, ax=None, **kwargs):
    """Test accuracy per client, with the macro average."""
    ax = get_ax(ax)
    acc = results.accuracy
    ax.bar([str(c) for c in acc.index], acc.to_numpy(), **kwargs)
    ax.axhline(results.macro_accuracy, color="black", linestyle="--", label="macro accuracy")
    ax.set_ylim(0, 1)
    ax.set_xlabel("client")
    ax.set_ylabel("test accuracy")
    ax.set_title(f"one-shot FedAvg linear probe (tau = {results.tau:g})")
    ax.legend()
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class LinearProbeResult(Results):
    """Accuracy of a one-shot FedAvg linear classifier on each client's test features.

    Parameters
    ----------
    accuracy : Series
        Test accuracy by client.
    macro_accuracy : float
        Their mean (the authors' headline metric).
    domain_std : float
        Their standard deviation across clients.
    tau : float
        The evaluation ``tau`` (the last of a schedule).
    coef, intercept : ndarray
        The averaged classifier (classes x features, classes).
    classes : ndarray
        The class labels, in the order of ``coef``'s rows.
    """

    accuracy: pd.Series
    macro_accuracy: float
    domain_std: float
    tau: float
    coef: np.ndarray
    intercept: np.ndarray
    classes: np.ndarray

    _plots: ClassVar[dict] = {"accuracy": _plot_accuracy}

    def tidy(self) -> pd.DataFrame:
        """``term, estimate``: test accuracy per client."""
        return pd.DataFrame(
            {"term": list(self.accuracy.index), "estimate": self.accuracy.to_numpy()}
        )

    def glance(self) -> pd.DataFrame:
        row = super().glance()
        row["macro_accuracy"] = self.macro_accuracy
        row["domain_std"] = self.domain_std
        row["tau"] = self.tau
        return row

    def _repr_lines(self) -> list[str]:
        return [
            f"macro accuracy {self.macro_accuracy:.4f} (std across clients {self.domain_std:.4f})"
        ]


def _xy(pair, *, name: str):
    if not isinstance(pair, tuple | list) or len(pair) != 2:
        raise TypeError(f"`{name}` must be a (features, labels) pair; got {describe(pair)}")
    x = as_float_array(pair[0], name=f"{name} features", ndim=2, min_rows=1)
    y = np.asarray(pair[1])
    if y.ndim != 1 or len(y) != len(x):
        raise ValueError(
            f"`{name}` labels must be 1-D with one label per row of its features ({len(x)}); "
            f"got shape {y.shape}"
        )
    return x, y


def _softmax_grad(W, b, x, y_idx):
    logits = x @ W.T + b
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(x)), y_idx] -= 1.0
    p /= len(x)
    return p.T @ x, p.sum(axis=0)


def federated_linear_probe(
    train,
    test,
    *,
    alignment: SLOTAlignResult | None = None,
    tau=0.0,
    local_epochs: int = 10,
    learning_rate: float = 1e-3,
    batch_size: int = 64,
    momentum: float = 0.9,
    weight_decay: float = 1e-5,
    random_state=None,
) -> LinearProbeResult:
    """One-shot FedAvg of a linear softmax classifier, with optional SLOT-Align transport.

    Every client starts from one shared random initialisation, trains locally for
    ``local_epochs`` epochs of minibatch SGD (momentum, weight decay) on its features moved by
    ``alignment.transform(X, client, tau)``, and the server averages the clients' weights with
    equal client weights, once. Each client's test features are moved by its own map at the
    evaluation ``tau`` and scored by the averaged classifier.

    Parameters
    ----------
    train, test : mapping of client -> (features, labels)
        Clients' training and test data; the names must be those of ``alignment``.
    alignment : SLOTAlignResult, optional
        The fitted maps; without it features are used as given (``tau`` must then be 0).
    tau : float in [0, 1] or sequence of them
        A fixed share, or one value per local epoch (e.g. :func:`cosine_tau_schedule`), in
        which case test features use the last value (the schedule's ``tau_max``).
    local_epochs, learning_rate, batch_size, momentum, weight_decay
        Local SGD settings (the authors' defaults: 10, 1e-3, 64, 0.9, 1e-5).
    random_state : None, int, SeedSequence or Generator
        Initialisation and minibatch order.

    Returns
    -------
    LinearProbeResult

    Notes
    -----
    Fidelity: the protocol of the authors' ``run_ofedavg.py`` and ``slotalign/federated.py``
    (one round, equal-weight averaging, SGD with momentum 0.9 and weight decay 1e-5, the
    PyTorch ``nn.Linear`` initialisation ``U(-1/sqrt(d), 1/sqrt(d))``). Deviation: their
    classifier applies a softmax before ``CrossEntropyLoss`` (a double softmax); here the loss
    is the ordinary softmax cross-entropy of the logits.
    """
    if not isinstance(train, Mapping) or not isinstance(test, Mapping):
        raise TypeError(
            "`train` and `test` must be mappings of client -> (features, labels); got "
            f"{describe(train)} and {describe(test)}"
        )
    if set(train) != set(test):
        raise ValueError(
            f"`train` and `test` must name the same clients; got {sorted(map(str, train))} and "
            f"{sorted(map(str, test))}"
        )
    if not train:
        raise ValueError("`train` must hold at least one client; got none")
    local_epochs = check_positive_int(local_epochs, name="local_epochs")
    learning_rate = check_positive(learning_rate, name="learning_rate")
    batch_size = check_positive_int(batch_size, name="batch_size")
    momentum = check_scalar(momentum, name="momentum", low=0.0, high=1.0, high_inclusive=False)
    weight_decay = check_positive(weight_decay, name="weight_decay", strict=False)
    if isinstance(tau, numbers.Real):
        taus = np.full(local_epochs, check_scalar(tau, name="tau", low=0.0, high=1.0))
    else:
        taus = as_float_array(tau, name="tau", ndim=1)
        if len(taus) != local_epochs or np.any((taus < 0) | (taus > 1)):
            raise ValueError(
                f"`tau` must be one value in [0, 1] or {local_epochs} of them (one per local "
                f"epoch); got {describe(tau)}"
            )
    if alignment is None and np.any(taus != 0):
        raise ValueError("`tau` must be 0 without an `alignment` (no maps to move features)")
    if alignment is not None:
        missing = [c for c in train if c not in alignment.maps]
        if missing:
            raise ValueError(
                f"`train` names clients the alignment does not know: {missing}; it has "
                f"{list(alignment.maps)}"
            )
    rng = check_random_state(random_state)

    def moved(x, client, t):
        return x if alignment is None else alignment.transform(x, client, tau=float(t))

    data = {c: _xy(train[c], name=f"train[{c!r}]") for c in train}
    tests = {c: _xy(test[c], name=f"test[{c!r}]") for c in train}
    classes = np.unique(np.concatenate([y for _, y in [*data.values(), *tests.values()]]))
    first = next(iter(data))
    dim = moved(data[first][0][:1], first, taus[0]).shape[1]
    bound = 1.0 / math.sqrt(dim)
    W0 = rng.uniform(-bound, bound, size=(len(classes), dim))
    b0 = rng.uniform(-bound, bound, size=len(classes))
    weights, biases = [], []
    for client, (x, y) in data.items():
        y_idx = np.searchsorted(classes, y)
        cache = {}
        W, b = W0.copy(), b0.copy()
        vW, vb = np.zeros_like(W), np.zeros_like(b)
        for t in taus:
            if t not in cache:
                cache[t] = moved(x, client, t)
            xt = cache[t]
            order = rng.permutation(len(xt))
            for start in range(0, len(xt), batch_size):
                batch = order[start : start + batch_size]
                gW, gb = _softmax_grad(W, b, xt[batch], y_idx[batch])
                # torch.optim.SGD semantics: decay added to the gradient, then momentum
                vW = momentum * vW + gW + weight_decay * W
                vb = momentum * vb + gb + weight_decay * b
                W -= learning_rate * vW
                b -= learning_rate * vb
        weights.append(W)
        biases.append(b)
    W, b = np.mean(weights, axis=0), np.mean(biases, axis=0)
    acc = {}
    for client, (x, y) in tests.items():
        pred = classes[np.argmax(moved(x, client, taus[-1]) @ W.T + b, axis=1)]
        acc[client] = float(np.mean(pred == y))
    accuracy = pd.Series(acc, name="accuracy")
    return LinearProbeResult(
        method="One-shot FedAvg linear probe",
        nobs=int(sum(len(x) for x, _ in data.values())),
        accuracy=accuracy,
        macro_accuracy=float(accuracy.mean()),
        domain_std=float(accuracy.std(ddof=0)),
        tau=float(taus[-1]),
        coef=W,
        intercept=b,
        classes=classes,
    )
