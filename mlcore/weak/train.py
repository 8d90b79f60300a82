"""A small partial-label training loop (CLAPOR and its baselines) and a multi-seed study."""

from __future__ import annotations

import dataclasses
import time
import warnings
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
import torch
from torch import nn

from mlcore._checks import check_tensor
from mlcore._device import seeded_torch, torch_generator
from mlcore._iterations import budget_result
from mlcore._studies import t_interval_row
from mlcore.encoders._inputs import check_class_indices
from mlcore.encoders.metrics import per_class_accuracy
from mlcore.results import TrainingResult
from mlcore.results import _plot_curves as _plot_training_curves
from mlcore.weak.clapor import (
    CandidateTargets,
    CLAPORLoss,
    DirichletPriorPerturbation,
    LogitAdjustedLoss,
    PriorEstimator,
    _check_candidates,
    sinkhorn_targets,
)
from mlcore.weak.data import partial_label_candidates
from statcore.exceptions import ConvergenceWarning
from statcore.results import Results, Summary
from statcore.results.plotting import get_ax, label_axes
from statcore.validation import (
    as_class_labels,
    as_float_array,
    check_alpha,
    check_option,
    check_positive,
    check_positive_int,
    check_random_state,
)

METHODS = ("clapor", "logit_adjustment", "solar", "proden")
PRIOR_INITS = ("candidates", "uniform")
DISAMBIGUATIONS = ("adjusted", "balanced")
_METHOD_NAMES = {
    "clapor": "CLAPOR",
    "logit_adjustment": "fixed-prior logit adjustment",
    "solar": "SoLar-style Sinkhorn targets",
    "proden": "PRODEN (no balancing)",
}


def _plot_priors(results, ax=None, **kwargs):
    """The prior estimate of each class over the epochs (log scale)."""
    ax = get_ax(ax)
    for column in results.priors.columns:
        ax.plot(results.priors.index, results.priors[column], label=str(column), **kwargs)
    ax.set_yscale("log")
    return label_axes(
        ax, xlabel="epoch", ylabel="estimated class prior", title=results.method, legend="beside"
    )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class PartialLabelTrainingResult(TrainingResult):
    """A partial-label training run: the :class:`~mlcore.results.TrainingResult` history (one row
    per epoch: ``loss`` and, with evaluation data, ``accuracy`` and ``balanced_accuracy``) plus
    the class-prior estimate after each epoch.

    Parameters
    ----------
    priors : DataFrame
        Index ``epoch`` (0 is the starting estimate), one column per class.
    class_recall : Series, optional
        Per-class recall on the evaluation data after the last epoch.
    """

    priors: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    class_recall: pd.Series | None = field(default=None, repr=False)

    _plots: ClassVar[dict] = {"curves": _plot_training_curves, "priors": _plot_priors}

    @property
    def prior(self) -> pd.Series:
        """The final prior estimate."""
        return self.priors.iloc[-1]

    def summary(self, alpha: float = 0.05) -> Summary:
        """The training summary, plus the final prior (and recall) by class."""
        base = super().summary(alpha)
        table = pd.DataFrame({"initial prior": self.priors.iloc[0], "final prior": self.prior})
        if self.class_recall is not None:
            table["recall"] = self.class_recall
        # the Summary drops a plain integer index; class labels as strings stay visible
        table.index = pd.Index([str(c) for c in table.index], name="class")
        return dataclasses.replace(base, tables={**base.tables, "classes": table})


def _as_tensor(x, *, name: str, device=None) -> torch.Tensor:
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "biuf":
            raise TypeError(f"`{name}` must hold real numbers; got dtype {x.dtype}")
        x = torch.from_numpy(np.ascontiguousarray(x))
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"`{name}` must be a torch.Tensor or numpy array; got {type(x).__name__}")
    return x if device is None else x.to(device)


def train_partial_label_classifier(
    features,
    candidates,
    *,
    method: str = "clapor",
    model: nn.Module | None = None,
    epochs: int = 30,
    batch_size: int = 128,
    lr: float = 1e-2,
    weight_decay: float = 0.0,
    tau: float = 1.0,
    penalty: float = 1.0,
    mode: str = "expected",
    kappa: float = 20.0,
    gamma: float | None = None,
    omega: float | None = None,
    n_samples: int = 4,
    eps_out: float = 0.0,
    target_momentum: float = 0.0,
    prior_momentum: float = 0.9,
    prior_init: str = "candidates",
    exponent: float = 3.0,
    disambiguation: str = "adjusted",
    eval_features=None,
    eval_labels=None,
    random_state=None,
) -> PartialLabelTrainingResult:
    """Train a classifier (by default a linear head on fixed features) from partial labels.

    Each batch: logits, the method's loss against the current soft targets, an Adam step,
    then the PRODEN target update (:class:`CandidateTargets`) and the prior EMA
    (:class:`PriorEstimator`) from the updated targets. The methods differ only in the loss:

    - ``"clapor"``: :class:`CLAPORLoss` (``tau``, ``penalty``, ``mode``; priors from
      :class:`DirichletPriorPerturbation` with ``kappa``, ``gamma`` / ``omega``,
      ``n_samples``);
    - ``"logit_adjustment"``: :class:`LogitAdjustedLoss` at the running estimate;
    - ``"solar"``: cross-entropy on :func:`sinkhorn_targets` (the batch's candidate-restricted
      posteriors transported onto the running estimate, ``exponent``);
    - ``"proden"``: plain cross-entropy on the targets (no balancing).

    Parameters
    ----------
    features : Tensor or ndarray (n, d)
        Inputs of ``model`` (encoder features for the default linear head).
    candidates : Tensor or ndarray (n, C)
        Boolean candidate sets.
    method : {"clapor", "logit_adjustment", "solar", "proden"}
    model : nn.Module, optional
        Maps a batch of ``features`` to (batch, C) logits; trained in place. Default: a new
        ``nn.Linear(d, C)`` (initialised from ``random_state``).
    epochs, batch_size, lr, weight_decay
        The optimisation budget (Adam).
    tau, penalty, mode, kappa, gamma, omega, n_samples
        CLAPOR's options (``tau`` also sets the baseline's adjustment).
    eps_out, target_momentum
        :class:`CandidateTargets` options.
    prior_momentum : float
        :class:`PriorEstimator` momentum, per batch.
    prior_init : {"candidates", "uniform"}
        The starting estimate: raw candidate frequencies (poor, head-heavy after flipping) or
        uniform.
    exponent : float
        The Sinkhorn exponent of ``"solar"``.
    disambiguation : {"adjusted", "balanced"}
        Which posterior the target and prior updates of ``"clapor"`` and
        ``"logit_adjustment"`` read: ``"adjusted"`` (``logits + tau log prior_hat``, the
        training-distribution posterior, so that the updates form an EM step for the prior)
        or ``"balanced"`` (the raw, balanced logits, which favour tail labels in
        disambiguation as RECORDS does, but flatten the prior estimate).
    eval_features, eval_labels : optional
        Held-out data, evaluated after every epoch (``accuracy``, ``balanced_accuracy``).
    random_state : None, int or torch.Generator
        Seeds the default head's initialisation, the batch order and the prior draws.

    Returns
    -------
    PartialLabelTrainingResult
        ``model`` holds the trained classifier (predict with its unadjusted logits).

    Notes
    -----
    Fidelity: reconstruction (see :class:`CLAPORLoss`); the loop (Adam, per-batch target and
    prior updates) is this package's, not the paper's training recipe.

    References
    ----------
    CLAPOR, *ICML 2026* (icml.cc/virtual/2026/poster/65914); Lv et al. (2020), PRODEN;
    Menon et al. (2021), logit adjustment; Wang et al. (2022), SoLar.
    """
    method = check_option(method, name="method", options=METHODS)
    prior_init = check_option(prior_init, name="prior_init", options=PRIOR_INITS)
    disambiguation = check_option(disambiguation, name="disambiguation", options=DISAMBIGUATIONS)
    epochs = check_positive_int(epochs, name="epochs")
    batch_size = check_positive_int(batch_size, name="batch_size")
    lr = check_positive(lr, name="lr")
    weight_decay = check_positive(weight_decay, name="weight_decay", strict=False)
    x = _as_tensor(features, name="features")
    check_tensor(x, name="features", ndim=2, kind="floating", nonempty=True, finite=True)
    s = _check_candidates(_as_tensor(candidates, name="candidates", device=x.device))
    if s.shape[0] != x.shape[0]:
        raise ValueError(
            f"`candidates` must have one row per example of `features` ({x.shape[0]}); got "
            f"{s.shape[0]}"
        )
    n, n_classes = s.shape
    evaluate = eval_features is not None
    if evaluate != (eval_labels is not None):
        raise ValueError("pass both `eval_features` and `eval_labels`, or neither")
    if evaluate:
        x_eval = _as_tensor(eval_features, name="eval_features", device=x.device).to(x.dtype)
        check_tensor(x_eval, name="eval_features", dims=("n", "d"), sizes={"d": x.shape[1]})
        y_eval = check_class_indices(
            eval_labels, name="eval_labels", n=x_eval.shape[0], n_classes=n_classes
        )
    # one CPU stream for the initialisation, the batch order and the prior draws' seed
    generator = torch_generator(random_state, "cpu")
    if model is None:
        with seeded_torch(generator):
            model = nn.Linear(x.shape[1], n_classes)
        model = model.to(device=x.device, dtype=x.dtype)
    elif not isinstance(model, nn.Module):
        raise TypeError(f"`model` must be a torch.nn.Module; got {type(model).__name__}")

    targets = CandidateTargets(s, eps_out=eps_out, momentum=target_momentum)
    if prior_init == "candidates":
        prior = PriorEstimator.from_candidates(s, momentum=prior_momentum)
    else:
        prior = PriorEstimator(n_classes, momentum=prior_momentum)
    if method == "clapor":
        perturbation = DirichletPriorPerturbation(
            kappa,
            gamma=gamma,
            omega=omega,
            n_samples=n_samples,
            random_state=int(torch.randint(0, 2**62, (), generator=generator)),
        )
        loss_fn = CLAPORLoss(tau, penalty, mode=mode, perturbation=perturbation)
    elif method == "logit_adjustment":
        loss_fn = LogitAdjustedLoss(tau)
    else:
        exponent = check_positive(exponent, name="exponent")
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)

    records, priors, recall, unbalanced, n_batches = [], [prior.prior.cpu().numpy()], None, 0, 0
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        model.train()
        order = torch.randperm(n, generator=generator).to(x.device)
        total = 0.0
        for batch in order.split(batch_size):
            n_batches += 1
            logits = model(x[batch])
            q = targets[batch].to(logits.dtype)
            prior_hat = prior.prior.to(device=logits.device, dtype=logits.dtype)
            if method in ("clapor", "logit_adjustment"):
                loss = loss_fn(logits, q, prior_hat)
            elif method == "solar":
                # a batch whose candidate sets cannot carry the prior's class totals (no tail
                # candidate in it) has no exact plan: count those batches instead of warning
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", ConvergenceWarning)
                    refined = sinkhorn_targets(
                        logits, s[batch], prior_hat, exponent=exponent, eps_out=eps_out
                    )
                unbalanced += any(issubclass(w.category, ConvergenceWarning) for w in caught)
                loss = -(refined * torch.log_softmax(logits, 1)).sum(1).mean()
            else:
                loss = -(q * torch.log_softmax(logits, 1)).sum(1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if method in ("clapor", "logit_adjustment") and disambiguation == "adjusted":
                # the adjusted logits estimate the training posterior, the E-step's weights
                logits = logits + tau * torch.log(prior_hat)
            prior.update(targets.update(batch, logits.detach()))
            total += float(loss.detach()) * len(batch)
        record = {"step": epoch, "epoch": epoch, "loss": total / n}
        if evaluate:
            model.eval()
            with torch.no_grad():
                pred = model(x_eval).argmax(1).cpu().numpy()
            # per-class recall, NaN for a class absent from the evaluation labels
            recall = per_class_accuracy(y_eval, pred, np.arange(n_classes)).to_numpy()
            record["accuracy"] = float((pred == y_eval).mean())
            record["balanced_accuracy"] = float(np.nanmean(recall))
        records.append(record)
        priors.append(prior.prior.cpu().numpy())
    model.eval()
    base = budget_result(
        records,
        method=_METHOD_NAMES[method],
        nobs=n,
        wall_time_s=time.perf_counter() - start,
        device=x.device,
        function="train_partial_label_classifier",
        n_iter=epochs,
        maxiter=epochs,
        criterion=f"training loss after a fixed budget of {epochs} epochs",
        remedy="lower `lr`",
        model=model,
        notes=(
            (
                f"sinkhorn_targets missed its tolerance in {unbalanced} of {n_batches} "
                "batches (class totals out of reach of the batch's candidate sets).",
            )
            if unbalanced
            else ()
        ),
        fit_options={
            "method": method,
            "epochs": epochs,
            "tau": tau,
            "penalty": penalty,
            "kappa": kappa,
            "prior_init": prior_init,
        },
    )
    fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(base) if f.init}
    return PartialLabelTrainingResult(
        **fields,
        priors=pd.DataFrame(np.array(priors), index=pd.RangeIndex(epochs + 1, name="epoch")),
        class_recall=None if recall is None else pd.Series(recall, name="recall"),
    )


def _plot_study(results, ax=None, **kwargs):
    """Mean tail recall against mean head accuracy per method, with t-intervals."""
    ax = get_ax(ax)
    t = results.tidy().set_index(["method", "metric"])
    for name in results.per_seed["method"].unique():
        head, tail = t.loc[(name, "head_accuracy")], t.loc[(name, "tail_recall")]
        ax.errorbar(
            head["estimate"],
            tail["estimate"],
            xerr=[[head["estimate"] - head["conf_low"]], [head["conf_high"] - head["estimate"]]],
            yerr=[[tail["estimate"] - tail["conf_low"]], [tail["conf_high"] - tail["estimate"]]],
            fmt="o",
            capsize=3,
            label=name,
            **kwargs,
        )
    return label_axes(
        ax,
        xlabel="head-class accuracy",
        ylabel="tail-class recall",
        title=results.method,
        legend="beside",
    )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class PartialLabelStudyResult(Results):
    """Head accuracy, tail recall and balanced accuracy of several methods over seeds.

    Parameters
    ----------
    per_seed : DataFrame
        ``seed, method, head_accuracy, tail_recall, balanced_accuracy, accuracy``.
    reference : str
        The method the paired differences are taken against.
    head, tail : tuple of int
        The classes counted as head and tail.
    """

    per_seed: pd.DataFrame = field(repr=False)
    reference: str = "logit_adjustment"
    head: tuple = ()
    tail: tuple = ()

    _plots: ClassVar[dict] = {"tradeoff": _plot_study}
    METRICS: ClassVar[tuple] = ("head_accuracy", "tail_recall", "balanced_accuracy", "accuracy")

    def tidy(self, alpha: float = 0.05) -> pd.DataFrame:
        """``method, metric, estimate, std_error, conf_low, conf_high``: seed means with
        Student-t intervals; rows ``<method> - <reference>`` hold the paired differences."""
        alpha = check_alpha(alpha)
        wide = self.per_seed.pivot(index="seed", columns="method", values=list(self.METRICS))
        rows = []
        methods = list(dict.fromkeys(self.per_seed["method"]))
        for name in methods:
            for label, values in self._series(wide, name):
                rows.append(
                    {
                        "method": label[0],
                        "metric": label[1],
                        **t_interval_row(values.to_numpy(float), alpha),
                    }
                )
        return pd.DataFrame(rows)

    def _series(self, wide, name):
        for metric in self.METRICS:
            yield (name, metric), wide[(metric, name)]
        if name != self.reference and self.reference in set(self.per_seed["method"]):
            for metric in self.METRICS:
                diff = wide[(metric, name)] - wide[(metric, self.reference)]
                yield (f"{name} - {self.reference}", metric), diff

    def glance(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "n_seeds": self.per_seed["seed"].nunique(),
                    "methods": ", ".join(dict.fromkeys(self.per_seed["method"])),
                    "head": str(list(self.head)),
                    "tail": str(list(self.tail)),
                }
            ]
        )

    def summary(self, alpha: float = 0.05) -> Summary:
        table = self.tidy(alpha).pivot(index="method", columns="metric", values="estimate")
        return Summary(
            title=self._title(),
            info=tuple((k, str(v)) for k, v in self.glance().iloc[0].items()),
            tables={"means": table, "intervals": self.tidy(alpha)},
            notes=(
                f"{100 * (1 - alpha):g}% Student-t intervals over seeds; differences are "
                "paired by seed.",
            )
            + self.notes,
        )


def partial_label_study(
    X_train,
    y_train,
    X_test,
    y_test,
    *,
    methods=("clapor", "logit_adjustment"),
    seeds=(0, 1, 2, 3, 4),
    q: float = 0.3,
    eta: float = 0.2,
    n_head: int = 3,
    n_tail: int = 3,
    reference: str = "logit_adjustment",
    **train_options,
) -> PartialLabelStudyResult:
    """Compare partial-label methods over seeds: fresh candidate sets per seed, then each
    method trained by :func:`train_partial_label_classifier` from the same seed.

    Parameters
    ----------
    X_train, y_train : arrays
        Features and true labels of the (long-tailed) training set; the true labels make the
        candidate sets (:func:`~mlcore.weak.partial_label_candidates`, ``q``, ``eta``) and
        name the head (``n_head`` largest) and tail (``n_tail`` smallest) classes.
    X_test, y_test : arrays
        The (balanced) evaluation set.
    methods : sequence of str
    seeds : sequence of int
    reference : str
        The method the paired differences are taken against.
    **train_options
        Passed to :func:`train_partial_label_classifier`.

    Returns
    -------
    PartialLabelStudyResult

    Notes
    -----
    Head accuracy and tail recall are the mean recall over the head and tail classes, as in
    SoLar's many-/few-shot accuracies; intervals are Student-t over seeds.

    References
    ----------
    Wang, H. et al. (2022). SoLar. *NeurIPS 2022* (the evaluation by class groups).
    CLAPOR, *ICML 2026* (icml.cc/virtual/2026/poster/65914).
    """
    # checked copies for the shapes; the study trains on the caller's arrays and dtype
    train_shape = as_float_array(X_train, name="X_train", ndim=2, min_rows=2).shape
    test_shape = as_float_array(X_test, name="X_test", ndim=2, min_rows=1).shape
    y_train = as_class_labels(y_train, name="y_train", n=train_shape[0])
    y_test = as_class_labels(y_test, name="y_test", n=test_shape[0])
    if test_shape[1] != train_shape[1]:
        raise ValueError(
            f"`X_test` must have the {train_shape[1]} columns of `X_train`; got {test_shape[1]}"
        )
    if min(y_train.min(), y_test.min()) < 0:
        raise ValueError("`y_train` and `y_test` must hold class indices >= 0")
    n_classes = int(max(y_train.max(), y_test.max())) + 1
    n_head = check_positive_int(n_head, name="n_head")
    n_tail = check_positive_int(n_tail, name="n_tail")
    if n_head > n_classes or n_tail > n_classes:
        raise ValueError(
            f"`n_head` and `n_tail` must be at most the {n_classes} classes; got {n_head} and "
            f"{n_tail}"
        )
    sizes = np.bincount(y_train, minlength=n_classes)
    ranked = np.argsort(-sizes, kind="stable")
    head, tail = ranked[:n_head], ranked[-n_tail:]
    rows = []
    for seed in seeds:
        s = partial_label_candidates(
            y_train, n_classes, q=q, eta=eta, random_state=check_random_state(seed)
        )
        for name in methods:
            res = train_partial_label_classifier(
                X_train,
                s,
                method=name,
                eval_features=X_test,
                eval_labels=y_test,
                random_state=seed,
                **train_options,
            )
            recall = res.class_recall.to_numpy()
            last = res.history.iloc[-1]
            rows.append(
                {
                    "seed": seed,
                    "method": name,
                    "head_accuracy": float(np.mean(recall[head])),
                    "tail_recall": float(np.mean(recall[tail])),
                    "balanced_accuracy": float(last["balanced_accuracy"]),
                    "accuracy": float(last["accuracy"]),
                }
            )
    return PartialLabelStudyResult(
        method=f"partial-label study (q={q}, eta={eta})",
        nobs=len(y_train),
        per_seed=pd.DataFrame(rows),
        reference=reference,
        head=tuple(int(c) for c in head),
        tail=tuple(int(c) for c in tail),
    )
