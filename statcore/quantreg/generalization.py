"""The ensemble at one agent's population: its quantile process, bands, and generalisation.

The ensemble estimates the global slopes only; an agent's conditional quantiles
``Q_q(y | x_S) = a_k(q) + x_S' beta_S(q)`` also need its own intercept. The ensemble's version
recentres the agent's local intercept at its feature means ``m_k``::

    a~_k(q) = a^_k(q) + m_k' (b^_k(q) - b^_S(q)),

so that the ensemble's curve passes through the local fit at ``m_k``, where the local fit is
most precise, and takes the ensemble's slopes elsewhere. With ``e`` the local error
``theta^_k - theta_k`` and ``d`` the ensemble's slope error on ``S``, ``theta~_k - theta_k =
M e + N d`` for fixed matrices ``M``, ``N`` of ``m_k``; its covariance across levels follows
from the local covariance, the ensemble's covariance and their cross-covariance
``Cov(e, d) = Cov(theta^_k, b^_k) W_k'`` (agents are independent, so only agent k's term of the
ensemble is correlated with ``e``).

Generalisation (reconstruction). The paper's abstract claims that, under stability conditions
on the agents' perturbations, the ensemble "enjoys strong out-of-sample generalization"; its
definition was not available. Implemented here is the quantity such a claim is about: the
expected check loss of a fitted quantile function on a new draw from agent k's population,
``R_k(theta) = E rho_q(y - z' theta)``. By the quadratic expansion of the check loss
(Knight's identity), for an estimate with covariance ``V``, ``E R_k(theta^) - R_k(theta_k) =
tr(H_k V) / 2 + o(1/n)`` (the *excess* check loss), and the in-sample loss of the local fit is
optimistic by the same amount, ``E R^_k(theta^_k) = R_k(theta_k) - tr(H_k V_k) / 2``.

References
----------
One-shot weighted ensemble estimation for federated quantile regression: optimal statistical
guarantees under heterogeneous structured data (ICML 2026; ICLR 2026 submission 14410,
https://openreview.net/forum?id=8dWiSr6G4q).
Knight, K. (1998). Limiting distributions for L1 regression estimators under general
conditions. *Annals of Statistics* 26, 755-770.
Bousquet, O. and Elisseeff, A. (2002). Stability and generalization. *Journal of Machine
Learning Research* 2, 499-526.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.linalg import block_diag

from statcore.quantreg.bands import (
    DEFAULT_DRAWS,
    QuantileProcessMixin,
    flat_positions,
    prediction_band_options,
    process_band,
)
from statcore.quantreg.bands import rearrange as _monotone
from statcore.validation import as_float_array, check_option

INTERCEPT = "Intercept"


def _message(results, agent):
    for m in results._messages:
        if m.name == agent:
            if m.means is None or m.hessian is None:
                raise ValueError(
                    f"agent {agent!r} sent no feature means or Hessians (a message built by "
                    "hand): its quantile process cannot be formed"
                )
            return m
    raise ValueError(f"`agent` must be one of {[m.name for m in results._messages]}; got {agent!r}")


def agent_process(results, agent):
    """The ensemble's and the local fit's coefficient curves at agent ``agent``'s population.

    Returns
    -------
    dict
        ``names`` (``Intercept`` and the agent's features), ``ensemble`` and ``local`` (each
        (L, p_k + 1), level-major like ``results.q``), ``cov_ensemble`` and ``cov_local`` (the
        joint covariances across levels of the stacked coefficients), and ``message``.
    """
    m = _message(results, agent)
    levels = list(results.q)
    features = list(m.features)
    names = [INTERCEPT, *features]
    L, pk, q = len(levels), len(features), len(features) + 1
    local = results.local[agent]
    pos = flat_positions(local, levels, names)
    V_e = local.vcov.to_numpy()[np.ix_(pos, pos)]
    theta_local = local._flat.to_numpy()[pos].reshape(L, q)
    pos = flat_positions(results, levels, features)
    V_d = results.vcov.to_numpy()[np.ix_(pos, pos)]
    slopes = results._flat.to_numpy()[pos].reshape(L, pk)

    position = [list(results.params.index).index(f) for f in features]
    W = block_diag(*[results.weight_matrices[lv][agent][position, :].T for lv in levels])
    slope_cols = [a * q + 1 + j for a in range(L) for j in range(pk)]
    cross = V_e[:, slope_cols] @ W  # Cov(e, d)

    xbar = m.means
    M = np.zeros((q, q))
    M[0, 0], M[0, 1:] = 1.0, xbar
    N = np.vstack([-xbar[None, :], np.eye(pk)])
    A, B = np.kron(np.eye(L), M), np.kron(np.eye(L), N)
    mixed = A @ cross @ B.T
    cov = A @ V_e @ A.T + B @ V_d @ B.T + mixed + mixed.T

    intercept = theta_local[:, 0] + (theta_local[:, 1:] - slopes) @ xbar
    ensemble = np.column_stack([intercept, slopes])
    return {
        "names": names,
        "ensemble": ensemble,
        "local": theta_local,
        "cov_ensemble": (cov + cov.T) / 2,
        "cov_local": (V_e + V_e.T) / 2,
        "message": m,
    }


def generalization(results) -> pd.DataFrame:
    """Expected out-of-sample check loss at each agent's population, ensemble against local.

    For agent k at level q, with ``H_k`` its density-weighted Gram (sent with its message),
    ``V`` the covariance of a fitted ``theta = (intercept, slopes)`` and ``R^_k`` the local
    fit's in-sample mean check loss:

    * ``excess_local = tr(H_k V_local) / 2`` and ``excess_ensemble = tr(H_k V_ensemble) / 2``:
      the expected excess check loss ``E R_k(theta^) - R_k(theta_k)`` on a new draw;
    * ``risk_local = R^_k + tr(H_k V_local)`` and ``risk_ensemble = R^_k + excess_local +
      excess_ensemble``: the expected out-of-sample check loss itself (``R^_k + excess_local``
      estimates the population-optimal ``R_k(theta_k)``);
    * ``ratio = excess_ensemble / excess_local`` (below 1: the ensemble generalises better).

    Returns
    -------
    DataFrame
        One row per (agent, level): ``agent, level, n, insample_loss, excess_local,
        excess_ensemble, ratio, risk_local, risk_ensemble``.

    Notes
    -----
    Fidelity: reconstruction. The paper's generalisation result was not read (only its
    abstract); this is the asymptotic expected check loss by the quadratic expansion, valid
    under the ensemble's identification assumption (each agent's sub-model has the global
    slopes), to ``o(1/n_k)``.
    """
    rows = []
    levels = list(results.q)
    for agent in results.local:
        proc = agent_process(results, agent)
        m = proc["message"]
        q = len(proc["names"])
        local = results.local[agent]
        objective = np.atleast_1d(np.asarray(local.objective, dtype=float))
        for a, level in enumerate(levels):
            H = m.hessian[a]
            block = slice(a * q, (a + 1) * q)
            ex_local = 0.5 * float(np.trace(H @ proc["cov_local"][block, block]))
            ex_ens = 0.5 * float(np.trace(H @ proc["cov_ensemble"][block, block]))
            insample = objective[a] / m.n
            rows.append(
                {
                    "agent": agent,
                    "level": level,
                    "n": m.n,
                    "insample_loss": insample,
                    "excess_local": ex_local,
                    "excess_ensemble": ex_ens,
                    "ratio": ex_ens / ex_local,
                    "risk_local": insample + 2 * ex_local,
                    "risk_ensemble": insample + ex_local + ex_ens,
                }
            )
    return pd.DataFrame(rows)


def _agent_rows(newdata, features, agent):
    if isinstance(newdata, pd.DataFrame):
        absent = [f for f in features if f not in newdata.columns]
        if absent:
            raise ValueError(f"`newdata` lacks agent {agent!r}'s feature(s) {absent}")
        X = as_float_array(newdata[features], name="newdata", ndim=2)
        return X, newdata.index
    X = as_float_array(newdata, name="newdata", ndim=2)
    if X.shape[1] != len(features):
        raise ValueError(
            f"`newdata` must have agent {agent!r}'s {len(features)} features {features} as "
            f"columns; got {X.shape[1]}"
        )
    return X, pd.RangeIndex(len(X))


class FederatedProcessMixin(QuantileProcessMixin):
    """Agent-level quantile curves, their bands and the generalisation check of the ensemble."""

    def predict(self, newdata, *, agent: str, source: str = "ensemble", rearrange: bool = False):
        """Conditional quantiles at agent ``agent``'s population for the rows of ``newdata``.

        Parameters
        ----------
        newdata : DataFrame or array_like
            Rows holding the agent's features (a DataFrame by name; an array in the agent's
            feature order).
        agent : str
            Whose population: its intercept (recentred at its feature means for the ensemble)
            and its features.
        source : {"ensemble", "local"}
            The ensemble's slopes or the agent's own local fit.
        rearrange : bool
            Sort each row over the levels so that the quantile curves do not cross
            (Chernozhukov, Fernandez-Val and Galichon 2010).

        Returns
        -------
        DataFrame (rows x levels) or Series (one level)
        """
        check_option(source, name="source", options=("ensemble", "local"))
        proc = agent_process(self, agent)
        X, index = _agent_rows(newdata, list(proc["message"].features), agent)
        coef = proc[source]
        fitted = coef[:, 0][None, :] + X @ coef[:, 1:].T
        if not self.is_multilevel:
            return pd.Series(fitted[:, 0], index=index, name="fitted")
        frame = pd.DataFrame(fitted, index=index, columns=list(self.q))
        return _monotone(frame) if rearrange else frame

    def predict_band(
        self,
        newdata,
        alpha: float = 0.05,
        *,
        agent: str,
        source: str = "ensemble",
        kind: str = "uniform",
        rearrange: bool = False,
        n_draws: int = DEFAULT_DRAWS,
        random_state=0,
    ) -> pd.DataFrame:
        """Pointwise or uniform-in-level bands for agent ``agent``'s conditional quantile curves
        at the rows of ``newdata`` (columns ``row, level, estimate, std_error, conf_low,
        conf_high, critical_value``), from the joint covariance across levels of the
        ensemble's (or the local fit's) coefficients there; see :meth:`predict`."""
        band = prediction_band_options(alpha, kind, rearrange, n_draws, random_state)
        check_option(source, name="source", options=("ensemble", "local"))
        if not self.is_multilevel:
            raise ValueError("`predict_band` needs a fit at several quantile levels")
        proc = agent_process(self, agent)
        X, index = _agent_rows(newdata, list(proc["message"].features), agent)
        exog = np.column_stack([np.ones(len(X)), X])
        coef, cov = proc[source], proc[f"cov_{source}"]
        return process_band(coef, cov, exog, list(self.q), index=index, **band)

    def generalization(self) -> pd.DataFrame:
        """Expected out-of-sample check loss of the ensemble and of each local fit at each
        agent's population; see :func:`statcore.quantreg.generalization.generalization`
        (a reconstruction: the paper's definition was not available)."""
        return generalization(self)

    def out_of_sample_loss(self, data, *, agent: str, response: str = "y") -> pd.DataFrame:
        """Mean check loss on new rows ``data`` from agent ``agent``'s population (held out,
        or a new agent with the same features): rows the levels, columns ``ensemble`` and
        ``local``. The empirical counterpart of :meth:`generalization`'s risks."""
        if not isinstance(data, pd.DataFrame) or response not in data.columns:
            raise ValueError(f"`data` must be a DataFrame holding the response {response!r}")
        y = as_float_array(data[response], name="data[response]", ndim=1)
        out = {}
        for source in ("ensemble", "local"):
            fitted = self.predict(data, agent=agent, source=source)
            u = y[:, None] - np.asarray(fitted, dtype=float).reshape(len(y), -1)
            tau = np.asarray(self.q, dtype=float)[None, :]
            out[source] = np.mean(u * (tau - (u < 0)), axis=0)
        return pd.DataFrame(out, index=pd.Index(list(self.q), name="level"))
