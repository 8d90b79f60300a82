"""Held-out evaluation of pose policies for a frozen perception module, with seed intervals."""

from __future__ import annotations

import numbers
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
from torch import nn

from mlcore._studies import t_interval_row
from mlcore.active.grpo import rollout
from statcore.results import Results, Summary
from statcore.results.plotting import get_ax, label_axes
from statcore.validation import (
    check_alpha,
    check_bool,
    check_option,
    check_random_state,
    check_scalar,
    describe,
)

METRICS = ("accuracy", "final_confidence")


def _plot_accuracy(results, ax=None, metric: str = "accuracy", **kwargs):
    """Mean detection accuracy (or final confidence) per policy, with t-intervals."""
    ax = get_ax(ax)
    t = results.tidy()
    t = t[t["metric"] == metric]
    err = np.vstack([t["estimate"] - t["conf_low"], t["conf_high"] - t["estimate"]])
    ax.bar(t["policy"], t["estimate"], yerr=np.nan_to_num(err), capsize=4, **kwargs)
    return label_axes(ax, ylabel=metric.replace("_", " "), title=results.method)


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class ActivePerceptionResult(Results):
    """Episodes of several pose policies on the same held-out starts, by seed.

    Parameters
    ----------
    episodes : DataFrame
        One row per episode: ``seed, policy, room, start, query, final_prediction,
        final_confidence, correct, n_steps, collisions, in_nuisance``. ``correct``: the
        perception module's final prediction is the query, and the query object is truly in
        the centre of the final view (ground truth, used for evaluation only).
    alpha : float
        ``1 - alpha`` t-intervals: over seeds when there are several, over episodes otherwise.
    wall_time_s : float
    """

    episodes: pd.DataFrame = field(repr=False)
    alpha: float = 0.05
    wall_time_s: float = float("nan")

    _plots: ClassVar[dict] = {"accuracy": _plot_accuracy}

    def __post_init__(self):
        super().__post_init__()
        check_alpha(self.alpha)
        missing = {"seed", "policy", "final_confidence", "correct"} - set(self.episodes.columns)
        if missing:
            raise ValueError(f"`episodes` lacks the columns {sorted(missing)}")

    @classmethod
    def concat(cls, results, **fields) -> ActivePerceptionResult:
        """One result from several (e.g. one per training seed), episodes stacked."""
        results = list(results)
        if not results or not all(isinstance(r, cls) for r in results):
            raise TypeError(f"`results` must be a non-empty sequence of {cls.__name__}")
        episodes = pd.concat([r.episodes for r in results], ignore_index=True)
        fields.setdefault("method", results[0].method)
        fields.setdefault("alpha", results[0].alpha)
        wall = sum(r.wall_time_s for r in results)
        return cls(episodes=episodes, nobs=len(episodes), wall_time_s=wall, **fields)

    @property
    def policies(self) -> list[str]:
        return list(dict.fromkeys(self.episodes["policy"]))

    def _units(self, metric: str) -> pd.DataFrame:
        """Per policy, the values intervals are over: seed means, or episodes with one seed."""
        values = self.episodes.assign(accuracy=self.episodes["correct"].astype(float))
        if self.episodes["seed"].nunique() > 1:
            return values.groupby(["policy", "seed"], sort=False)[metric].mean().unstack("policy")
        return values.pivot_table(
            index=["room", "start"], columns="policy", values=metric, sort=False
        )

    def tidy(self, alpha: float | None = None) -> pd.DataFrame:
        """``policy, metric, estimate, std_error, conf_low, conf_high, n_units``, with
        ``1 - alpha`` t-intervals (default: the result's ``alpha``)."""
        alpha = self.alpha if alpha is None else check_alpha(alpha)
        rows = []
        for metric in METRICS:
            units = self._units(metric)
            for policy in self.policies:
                rows.append(
                    {
                        "policy": policy,
                        "metric": metric,
                        **t_interval_row(units[policy].dropna(), alpha),
                        "n_units": int(units[policy].notna().sum()),
                    }
                )
        return pd.DataFrame(rows)

    def margins(self, policy: str, metric: str = "accuracy") -> pd.DataFrame:
        """``policy`` minus every other policy, paired by seed (or by episode start with one
        seed): ``baseline, estimate, std_error, conf_low, conf_high``."""
        check_option(policy, name="policy", options=self.policies)
        check_option(metric, name="metric", options=METRICS)
        units = self._units(metric)
        rows = []
        for other in self.policies:
            if other == policy:
                continue
            diff = (units[policy] - units[other]).dropna()
            rows.append({"baseline": other, **t_interval_row(diff, self.alpha)})
        return pd.DataFrame(rows)

    def glance(self) -> pd.DataFrame:
        acc = self.tidy().query("metric == 'accuracy'").set_index("policy")["estimate"]
        row = {"method": self.method, "nobs": self.nobs, "n_seeds": self.episodes["seed"].nunique()}
        row.update({f"accuracy[{p}]": float(v) for p, v in acc.items()})
        return pd.DataFrame([row])

    def summary(self, alpha: float | None = None) -> Summary:
        """Per-policy accuracy and final confidence with ``1 - alpha`` intervals (default: the
        result's ``alpha``)."""
        table = self.tidy(alpha).set_index(["policy", "metric"])
        return Summary(
            title=self._title(),
            info=self._info(),
            tables={"policies": table},
            notes=self.notes + self._convergence_notes(),
        )


def evaluate_policies(
    policies: Mapping[str, nn.Module],
    env,
    perception,
    rooms,
    *,
    episodes_per_room: int = 1,
    greedy: bool = True,
    seed: int = 0,
    random_state=0,
    alpha: float = 0.05,
) -> ActivePerceptionResult:
    """Run every policy from the same starts in ``rooms`` and record what the frozen perception
    module finally sees.

    Parameters
    ----------
    policies : mapping of str to nn.Module
        Name to policy (trained agents' ``policy``, :class:`RandomPolicy`,
        :class:`ForwardPolicy`, :class:`RuleExplorer`, ...).
    env : gymnasium.Env
        Checked by :func:`~mlcore.active.check_pose_env`; its ``info`` must give
        ``centre_class`` (the ground truth of the final view).
    perception : FrozenPerception
    rooms : sequence of int
        Held-out room seeds.
    episodes_per_room : int
        Starts (pose and query) per room, drawn from ``random_state``.
    greedy : bool
        Argmax actions (a :class:`RandomPolicy` stays random: its logits are random).
    seed : int
        Label of the training seed, for :meth:`ActivePerceptionResult.concat`.
    random_state : int or Generator
    alpha : float

    Returns
    -------
    ActivePerceptionResult
    """
    if not isinstance(policies, Mapping) or not policies:
        raise TypeError(
            f"`policies` must be a non-empty mapping of names to policies; got {describe(policies)}"
        )
    rng = check_random_state(random_state)
    episodes_per_room = check_scalar(
        episodes_per_room, name="episodes_per_room", kind=numbers.Integral, low=1
    )
    greedy = check_bool(greedy, name="greedy")
    seed = check_scalar(seed, name="seed", kind=numbers.Integral, low=0)
    alpha = check_alpha(alpha)
    rooms = [int(r) for r in rooms]
    starts = [(r, int(rng.integers(2**31))) for r in rooms for _ in range(episodes_per_room)]
    rollout_seed = int(rng.integers(2**31))
    frames, begin = [], time.perf_counter()
    for name, policy in policies.items():
        data = rollout(policy, env, perception, starts, greedy=greedy, random_state=rollout_seed)
        pred = data.final_prediction.cpu().numpy()
        query = data.queries.cpu().numpy()
        truth = np.array([info["centre_class"] for info in data.final_info])
        frames.append(
            pd.DataFrame(
                {
                    "seed": seed,
                    "policy": name,
                    "room": [s[0] for s in starts],
                    "start": [s[1] for s in starts],
                    "query": query,
                    "final_prediction": pred,
                    "final_confidence": data.final_confidence.cpu().numpy(),
                    "correct": (pred == query) & (truth == query),
                    "n_steps": data.n_steps.cpu().numpy(),
                    "collisions": data.collisions.sum(1).cpu().numpy(),
                    "in_nuisance": [
                        bool(info.get("in_nuisance", False)) for info in data.final_info
                    ],
                }
            )
        )
    episodes = pd.concat(frames, ignore_index=True)
    return ActivePerceptionResult(
        method="Sea² active perception: held-out rooms",
        episodes=episodes,
        nobs=len(episodes),
        alpha=alpha,
        wall_time_s=time.perf_counter() - begin,
    )
