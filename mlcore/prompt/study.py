"""CoOp's base-to-novel protocol over seeds: zero-shot, CoOp, KgCoOp and ManiPT side by side."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
import torch

from mlcore._studies import SeedStudy, t_interval_row
from mlcore.encoders._inputs import check_class_indices
from mlcore.encoders.metrics import base_novel_scores, per_class_accuracy
from mlcore.encoders.splits import base_novel_split, kshot_split
from mlcore.prompt.manipt import (
    _NAMES,
    _REFERENCES,
    METHODS,
    ManiPT,
    PromptLearner,
    _check_classnames,
    _check_image_batch,
    manifold_drift,
)
from statcore.results import Results, Summary
from statcore.results.plotting import get_ax, label_axes
from statcore.validation import (
    check_alpha,
    check_option,
    check_positive_int,
    check_random_state,
    describe,
)

STUDY_METHODS = ("zero_shot", "coop", "kgcoop", "manipt")
METRICS = ("base", "novel", "harmonic", "drift_text", "drift_image")
_LABELS = {"zero_shot": "zero-shot", **_NAMES}


def _plot_scores(results, ax=None, alpha: float = 0.05, **kwargs):
    """Base, novel and harmonic-mean accuracy by method: means over seeds, t-interval bars."""
    ax = get_ax(ax)
    t = results.tidy(alpha=alpha).set_index(["method", "metric"])
    methods = list(dict.fromkeys(results.scores["method"]))
    width = 0.8 / 3
    for j, metric in enumerate(("base", "novel", "harmonic")):
        rows = t.loc[[(m, metric) for m in methods]]
        x = np.arange(len(methods)) + (j - 1) * width
        err = np.vstack([rows["estimate"] - rows["conf_low"], rows["conf_high"] - rows["estimate"]])
        ax.bar(x, rows["estimate"], width, yerr=err, capsize=3, label=metric, **kwargs)
    ax.set_xticks(np.arange(len(methods)), [_LABELS[m] for m in methods])
    return label_axes(
        ax,
        ylabel=f"accuracy (mean of {results.n_seeds} seeds, {100 * (1 - alpha):.0f}% t-CI)",
        title=f"base-to-novel, {results.shots}-shot",
        legend="beside",
    )


def _plot_drift(results, ax=None, **kwargs):
    """Text-feature drift off the pretrained PCA subspace, each seed a point, means as bars."""
    ax = get_ax(ax)
    methods = list(dict.fromkeys(results.scores["method"]))
    for i, m in enumerate(methods):
        values = results.scores.loc[results.scores["method"] == m, "drift_text"]
        ax.bar(i, values.mean(), 0.6, alpha=0.5, **kwargs)
        ax.scatter(np.full(len(values), i), values, color="black", s=12, zorder=3)
    ax.set_xticks(np.arange(len(methods)), [_LABELS[m] for m in methods])
    return label_axes(
        ax,
        ylabel="text drift (share of energy off the frozen PCA subspace)",
        title="manifold drift",
    )


def _plot_history(results, ax=None, metric: str = "loss", **kwargs):
    """A training-history metric against the step, averaged over seeds, one line per method."""
    ax = get_ax(ax)
    for method in dict.fromkeys(m for m, _ in results.histories):
        frames = [
            h.history[["step", metric]] for (m, _), h in results.histories.items() if m == method
        ]
        mean = pd.concat(frames).groupby("step")[metric].mean()
        ax.plot(mean.index, mean.to_numpy(), label=_LABELS[method], **kwargs)
    return label_axes(
        ax,
        xlabel="step",
        ylabel=metric,
        title="training history (mean over seeds)",
        legend="beside",
    )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class BaseToNovelResult(SeedStudy, Results):
    """Base, novel and harmonic-mean accuracy and feature drift of prompt-tuning methods.

    Parameters
    ----------
    scores : DataFrame
        One row per method and seed: ``method, seed, base, novel, harmonic, drift_text,
        drift_image`` (accuracies are per-class means; drift from :func:`manifold_drift`).
    histories : mapping
        ``(method, seed) -> TrainingResult`` of every trained run.
    shots : int
        Training examples per base class.
    base_classes, novel_classes : tuple of str
    wall_time_s : float
    """

    scores: pd.DataFrame = field(repr=False)
    histories: Mapping = field(default_factory=dict, repr=False)
    shots: int = 0
    base_classes: tuple = ()
    novel_classes: tuple = ()
    wall_time_s: float = float("nan")

    _plots: ClassVar[dict] = {
        "scores": _plot_scores,
        "drift": _plot_drift,
        "history": _plot_history,
    }

    def tidy(self, alpha: float = 0.05) -> pd.DataFrame:
        """One row per method and metric: ``method, metric, estimate, std_error, conf_low,
        conf_high, n_seeds`` (mean over seeds with a t-interval)."""
        alpha = check_alpha(alpha)
        rows = []
        for method, group in self.scores.groupby("method", sort=False):
            for metric in METRICS:
                rows.append(
                    {
                        "method": method,
                        "metric": metric,
                        **t_interval_row(group[metric].to_numpy(float), alpha),
                        "n_seeds": len(group),
                    }
                )
        return pd.DataFrame(rows)

    def contrast(self, method: str, baseline: str = "coop", metric: str = "harmonic",
                 alpha: float = 0.05) -> pd.Series:  # fmt: skip
        """Paired difference ``method - baseline`` of ``metric`` over seeds (same splits): mean,
        standard error, t-interval, and the number of seeds on which ``method`` is ahead."""
        methods = list(dict.fromkeys(self.scores["method"]))
        check_option(method, name="method", options=methods)
        check_option(baseline, name="baseline", options=methods)
        check_option(metric, name="metric", options=METRICS)
        wide = self.scores.pivot(index="seed", columns="method", values=metric)
        diff = (wide[method] - wide[baseline]).to_numpy(float)
        return pd.Series(
            {**t_interval_row(diff, check_alpha(alpha)), "wins": int((diff > 0).sum()),
             "n_seeds": diff.size},
            name=f"{method} - {baseline}: {metric}",
        )  # fmt: skip

    def glance(self) -> pd.DataFrame:
        """One row: the design (seeds, shots, class counts) and each method's mean harmonic
        accuracy."""
        means = self.scores.groupby("method", sort=False)["harmonic"].mean()
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "nobs": self.nobs,
                    "n_seeds": self.n_seeds,
                    "shots": self.shots,
                    "n_base": len(self.base_classes),
                    "n_novel": len(self.novel_classes),
                    **{f"harmonic_{m}": float(v) for m, v in means.items()},
                    "wall_time_s": self.wall_time_s,
                }
            ]
        )

    def summary(self, alpha: float = 0.05) -> Summary:
        """Means over seeds, their t-intervals, and the paired differences to CoOp."""
        t = self.tidy(alpha)
        table = t.pivot(index="method", columns="metric", values="estimate")
        table = table.loc[list(dict.fromkeys(self.scores["method"])), list(METRICS)]
        intervals = t.set_index(["method", "metric"])[["conf_low", "conf_high"]]
        methods = list(dict.fromkeys(self.scores["method"]))
        contrasts = {}
        if "coop" in methods:
            for m in methods:
                if m != "coop":
                    for metric in ("base", "novel", "harmonic"):
                        contrasts[(m, metric)] = self.contrast(m, "coop", metric, alpha)
        tables = {"means over seeds": table, "t-intervals": intervals}
        if contrasts:
            frame = pd.DataFrame(contrasts).T
            frame.index = pd.MultiIndex.from_tuples(frame.index, names=["method", "metric"])
            tables["paired difference to CoOp"] = frame
        notes = (
            f"{self.n_seeds} seeds, {self.shots}-shot training on {len(self.base_classes)} base "
            f"classes; {100 * (1 - alpha):.0f}% t-intervals over seeds.",
            *self.notes,
        )
        return Summary(title=self._title(), info=self._info(), tables=tables, notes=notes)

    def _repr_lines(self) -> list[str]:
        means = self.scores.groupby("method", sort=False)[["base", "novel", "harmonic"]].mean()
        return ["", means.to_string(float_format=lambda v: f"{v:.3f}")]


def _encode(encoder, images, batch_size: int) -> torch.Tensor:
    # not zeroshot.encode_images: the study needs only encode_image / encode_text / device
    with torch.no_grad():
        return torch.cat(
            [
                encoder.encode_image(images[i : i + batch_size].to(encoder.device))
                for i in range(0, images.shape[0], batch_size)
            ]
        )


def _mean_class_accuracy(y_true, y_pred) -> float:
    return float(per_class_accuracy(y_true, y_pred).mean())


def base_to_novel(
    encoder,
    images,
    labels,
    classnames,
    *,
    methods: Sequence[str] = STUDY_METHODS,
    shots: int = 4,
    n_seeds: int = 5,
    n_base: int | None = None,
    maxiter: int = 200,
    lr: float = 5e-3,
    batch_size: int = 32,
    options: Mapping | None = None,
    drift_k=0.9,
    template: str = "a photo of a {}.",
    random_state=0,
    progress: bool = False,
) -> BaseToNovelResult:
    """Few-shot prompt tuning on the base classes, evaluated on base and novel classes.

    CoOp's protocol (Zhou et al. 2022, CoCoOp's base-to-novel split): the first half of the
    classes are base, the rest novel; each seed draws a ``shots``-per-class training set from
    the base classes; base accuracy is measured on the other base images among the base classes,
    novel accuracy on every novel image among the novel classes (prompted with the learnt
    context), and their harmonic mean summarises both. Every method sees the same splits, so
    differences are paired by seed.

    Parameters
    ----------
    encoder : promptable dual encoder
        See :class:`PromptLearner`. Image features are computed once (the image encoder is
        frozen).
    images : Tensor (n, ...)
        Images the encoder takes.
    labels : array_like of int (n,)
        Indices into ``classnames``.
    classnames : sequence of str
    methods : sequence of {"zero_shot", "coop", "kgcoop", "manipt"}
    shots : int
        Training images per base class.
    n_seeds : int
        Repetitions with fresh training sets, context initialisations and batches.
    n_base : int, optional
        Number of base classes (default: the first half, rounded up).
    maxiter, lr, batch_size
        Passed to :meth:`ManiPT.fit`.
    options : mapping, optional
        ``method -> dict`` of further :class:`PromptLearner` options (``beta``, ``n_ctx``, ...).
    drift_k : int or float
        Components of the frozen PCA basis in :func:`manifold_drift`, fitted on the frozen
        text features of all classes and on the frozen features of the test images.
    template : str
        The hand-crafted prompt (zero-shot classifier, context initialisation, KgCoOp's and
        ManiPT's anchor).
    random_state : None, int or numpy Generator
        Draws the seeds of the repetitions.
    progress : bool
        Show a progress bar per training run.

    Returns
    -------
    BaseToNovelResult

    References
    ----------
    Zhou, Yang, Loy and Liu (2022). Conditional prompt learning for vision-language models
    (CoCoOp). CVPR. Yang et al. (2026), arXiv:2602.19198.
    """
    start = time.perf_counter()
    _check_image_batch(images, name="images")
    names = _check_classnames(classnames)
    if isinstance(methods, str) or not isinstance(methods, Sequence) or not methods:
        raise TypeError(f"`methods` must be a non-empty sequence of names; got {describe(methods)}")
    methods = [check_option(m, name="methods", options=STUDY_METHODS) for m in methods]
    shots = check_positive_int(shots, name="shots")
    n_seeds = check_positive_int(n_seeds, name="n_seeds")
    options = dict(options or {})
    for key in options:
        check_option(key, name="options", options=METHODS)
    if not isinstance(images, torch.Tensor):
        raise TypeError(f"`images` must be a torch.Tensor; got {describe(images)}")
    labels = check_class_indices(
        labels, name="labels", n=images.shape[0], n_classes=len(names), of="classnames"
    )
    base, novel = base_novel_split(list(names), n_base=n_base)
    nb = len(base)
    base_ids = np.arange(nb)
    novel_test = np.flatnonzero(labels >= nb)
    if novel_test.size == 0:
        raise ValueError("`labels` has no image of a novel class to evaluate on")
    features = _encode(encoder, images, 256)
    with torch.no_grad():
        frozen_text = encoder.encode_text([template.format(c) for c in names])
    seeds = check_random_state(random_state).integers(0, 2**31 - 1, size=n_seeds)
    rows, histories = [], {}
    for seed in seeds.tolist():
        support, base_test = kshot_split(labels, shots, classes=base_ids, random_state=seed)
        test = np.concatenate([base_test, novel_test])
        for method in methods:
            if method == "zero_shot":
                base_logits = features[base_test] @ frozen_text[:nb].T
                novel_logits = features[novel_test] @ frozen_text[nb:].T
                drift = {
                    "text": manifold_drift(frozen_text, frozen_text, drift_k),
                    "image": manifold_drift(features[test], features[test], drift_k),
                }
            else:
                learner = PromptLearner(
                    encoder, base, method=method, template=template, random_state=seed,
                    **options.get(method, {}),
                )  # fmt: skip
                run = ManiPT.from_learner(learner).fit(
                    features[support], labels[support], encoded=True, maxiter=maxiter, lr=lr,
                    batch_size=batch_size, random_state=seed, progress=progress,
                )  # fmt: skip
                histories[(method, seed)] = run
                learner = run.learner
                with torch.no_grad():
                    base_logits = learner.logits_from_features(features[base_test])
                    novel_logits = learner.logits_from_features(features[novel_test], novel)
                    drift = learner.drift(features[test], names, k=drift_k)
            base_pred = base_logits.argmax(1).cpu().numpy()
            novel_pred = novel_logits.argmax(1).cpu().numpy() + nb
            score = base_novel_scores(
                _mean_class_accuracy(labels[base_test], base_pred),
                _mean_class_accuracy(labels[novel_test], novel_pred),
            )
            rows.append(
                {
                    "method": method,
                    "seed": seed,
                    **score.to_dict(),
                    "drift_text": float(drift["text"]),
                    "drift_image": float(drift["image"]),
                }
            )
    return BaseToNovelResult(
        method="Base-to-novel prompt tuning",
        nobs=int(images.shape[0]),
        scores=pd.DataFrame(rows),
        histories=histories,
        shots=shots,
        base_classes=tuple(base),
        novel_classes=tuple(novel),
        wall_time_s=time.perf_counter() - start,
        notes=(_REFERENCES,),
        fit_options={
            "methods": tuple(methods),
            "shots": shots,
            "n_seeds": n_seeds,
            "maxiter": maxiter,
            "lr": lr,
            "batch_size": batch_size,
            "drift_k": drift_k,
            "template": template,
            "options": options,
        },  # fmt: skip
    )
