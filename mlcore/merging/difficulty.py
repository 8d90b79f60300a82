"""Per-example difficulty along training: learned epoch, forgetting events, EL2N; and the share
of the gradient that the hardest examples carry."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
import torch

from mlcore._checks import check_finite_parameters, check_tensor
from mlcore._device import as_numpy
from statcore.results import Results
from statcore.results.plotting import get_ax, label_axes
from statcore.validation import (
    as_float_array,
    check_callable,
    check_option,
    check_scalar,
    describe,
)

RANKINGS = ("el2n", "learned_epoch", "forgetting_events", "loss")


def _plot_learned(results, ax=None, **kwargs):
    """Histogram of the epoch each example was learned at (never-learned examples last)."""
    ax = get_ax(ax)
    learned = results.table["learned_epoch"].to_numpy(dtype=float)
    never = results.epochs[-1] + 1
    values = np.where(np.isnan(learned), never, learned)
    bins = np.arange(results.epochs[0], never + 2) - 0.5
    ax.hist(values, bins=bins, **kwargs)
    return label_axes(
        ax, xlabel=f"learned epoch ({never} = never)", ylabel="examples", title=results.method
    )


def _plot_unlearned(results, ax=None, **kwargs):
    """Fraction of examples not yet learned, by epoch."""
    ax = get_ax(ax)
    ax.plot(results.epochs, results.unlearned_fraction(), marker="o", **kwargs)
    return label_axes(ax, xlabel="epoch", ylabel="unlearned fraction", title=results.method)


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class DifficultyResult(Results):
    """Per-example difficulty statistics from an :class:`ExampleDifficultyTracker`.

    Parameters
    ----------
    table : DataFrame
        One row per example (index ``id``): ``learned_epoch`` (the first recorded epoch from
        which the example stays correctly classified; NaN if it never does),
        ``first_correct_epoch``, ``forgetting_events`` (correct -> incorrect transitions
        between consecutive recorded epochs), ``el2n`` (mean of ``||softmax - onehot||_2``
        over the first ``el2n_epochs`` recorded epochs), ``final_loss`` and ``final_correct``.
    epochs : ndarray
        The recorded epochs, ascending.
    correct : ndarray
        ``(n_epochs, n_examples)`` correctness (NaN where an example was not seen).
    el2n_epochs : int
        Epochs EL2N was averaged over.
    """

    table: pd.DataFrame = field(repr=False)
    epochs: np.ndarray = field(repr=False)
    correct: np.ndarray = field(repr=False)
    el2n_epochs: int = 1

    _plots: ClassVar[dict] = {"learned": _plot_learned, "unlearned": _plot_unlearned}

    def unlearned_fraction(self) -> np.ndarray:
        """Per recorded epoch, the fraction of examples not yet learned (``learned_epoch``
        later than that epoch, or never)."""
        learned = self.table["learned_epoch"].to_numpy(dtype=float)
        learned = np.where(np.isnan(learned), np.inf, learned)
        return np.array([(learned > e).mean() for e in self.epochs])

    def accuracy(self) -> np.ndarray:
        """Per recorded epoch, the fraction of seen examples classified correctly."""
        return np.nanmean(self.correct, axis=1)

    def hardest(self, q: float = 0.05, *, by: str = "el2n") -> np.ndarray:
        """Ids of the hardest ``q`` fraction of examples.

        Parameters
        ----------
        q : float in (0, 1]
        by : {"el2n", "learned_epoch", "forgetting_events", "loss"}
            The ranking; never-learned examples count as learned after the last epoch, and
            ``learned_epoch`` ties are broken by EL2N.

        Returns
        -------
        ndarray of int
            ``ceil(q * n)`` ids, hardest first.
        """
        q = check_scalar(q, name="q", low=0.0, high=1.0, low_inclusive=False)
        by = check_option(by, name="by", options=RANKINGS)
        t = self.table
        column = "final_loss" if by == "loss" else by
        score = t[column].to_numpy(dtype=float)
        if by == "learned_epoch":
            score = np.where(np.isnan(score), np.inf, score)
        order = np.lexsort((-t["el2n"].to_numpy(dtype=float), -score))
        k = int(np.ceil(q * len(t)))
        return t.index.to_numpy()[order[:k]]

    def glance(self) -> pd.DataFrame:
        learned = self.table["learned_epoch"]
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "nobs": self.nobs,
                    "n_epochs": len(self.epochs),
                    "never_learned": int(learned.isna().sum()),
                    "mean_learned_epoch": float(learned.mean()),
                    "forgotten_at_least_once": int((self.table["forgetting_events"] > 0).sum()),
                    "mean_el2n": float(self.table["el2n"].mean()),
                }
            ]
        )

    def tidy(self) -> pd.DataFrame:
        """One row per recorded epoch: accuracy and unlearned fraction."""
        return pd.DataFrame(
            {
                "epoch": self.epochs,
                "accuracy": self.accuracy(),
                "unlearned_fraction": self.unlearned_fraction(),
            }
        )


class ExampleDifficultyTracker:
    """Record per-example outcomes each epoch; report learned epoch, forgetting and EL2N.

    Parameters
    ----------
    n_examples : int
        Examples are identified by integer ids in ``[0, n_examples)`` (their index in the
        training set); pass them with every batch so that shuffling does not matter.

    Notes
    -----
    Forgetting events follow Toneva et al. (2019): a transition from correct to incorrect
    between consecutive recorded epochs (here per epoch rather than per presentation).
    EL2N follows Paul et al. (2021): ``||softmax(f(x)) - onehot(y)||_2``, averaged over the
    first recorded epochs (they average over early training and several seeds). The
    "learned epoch" is the first epoch after which an example stays correct (Toneva et al.'s
    "learned" without later forgetting). Fidelity: reconstruction of the merging paper's
    difficulty measures (the paper's definitions were not read).

    References
    ----------
    Toneva, Sordoni, Combes, Trischler, Bengio and Gordon (2019). An empirical study of
    example forgetting during deep neural network learning. ICLR.
    Paul, Ganguli and Dziugaite (2021). Deep learning on a data diet: finding important
    examples early in training. NeurIPS.
    Horoi, Wolf, Belilovsky and Dziugaite (2025). From memorization to parameter interference:
    how overtraining experts harms model merging. arXiv:2506.14126.

    Examples
    --------
    >>> tracker = ExampleDifficultyTracker(3)
    >>> logits = torch.tensor([[2.0, 0.0], [0.0, 2.0], [2.0, 0.0]])
    >>> tracker.update(torch.arange(3), logits, torch.tensor([0, 1, 1]), epoch=0)
    >>> tracker.result().table["final_correct"].tolist()
    [True, True, False]
    """

    def __init__(self, n_examples: int):
        self.n_examples = check_scalar(n_examples, name="n_examples", kind=numbers.Integral, low=1)
        self._epochs: dict[int, dict[str, np.ndarray]] = {}

    def update(self, ids, logits, targets, *, epoch: int) -> None:
        """Record one batch of epoch ``epoch``.

        Parameters
        ----------
        ids : integer tensor (batch,)
            The examples' ids.
        logits : tensor (batch, classes)
            The model's outputs on them (detached here; any device).
        targets : integer tensor (batch,)
            Their labels.
        epoch : int
            Which epoch the batch belongs to; later batches of the same example in the same
            epoch overwrite earlier ones.
        """
        epoch = check_scalar(epoch, name="epoch", kind=numbers.Integral, low=0)
        check_tensor(logits, name="logits", dims=("batch", "classes"), kind="floating")
        n = logits.shape[0]
        check_tensor(ids, name="ids", dims=("batch",), sizes={"batch": n}, kind="integer")
        check_tensor(targets, name="targets", dims=("batch",), sizes={"batch": n}, kind="integer")
        ids_np = as_numpy(ids, name="ids").astype(np.int64)
        if ids_np.size and (ids_np.min() < 0 or ids_np.max() >= self.n_examples):
            raise ValueError(
                f"`ids` must lie in [0, {self.n_examples - 1}]; got {ids_np.min()} to "
                f"{ids_np.max()}"
            )
        with torch.no_grad():
            logits = logits.detach().float()
            targets = targets.to(logits.device)
            if targets.numel() and (
                int(targets.min()) < 0 or int(targets.max()) >= logits.shape[1]
            ):
                raise ValueError(f"`targets` must lie in [0, {logits.shape[1] - 1}]")
            probs = torch.softmax(logits, dim=1)
            onehot = torch.nn.functional.one_hot(targets, logits.shape[1]).float()
            el2n = (probs - onehot).norm(dim=1)
            loss = torch.nn.functional.cross_entropy(logits, targets, reduction="none")
            correct = logits.argmax(dim=1) == targets
        record = self._epochs.get(epoch)
        if record is None:
            record = {k: np.full(self.n_examples, np.nan) for k in ("correct", "el2n", "loss")}
            self._epochs[epoch] = record
        record["correct"][ids_np] = as_numpy(correct, name="correct")
        record["el2n"][ids_np] = as_numpy(el2n, name="el2n")
        record["loss"][ids_np] = as_numpy(loss, name="loss")

    def result(self, *, el2n_epochs: int | None = None) -> DifficultyResult:
        """The statistics over the epochs recorded so far.

        Parameters
        ----------
        el2n_epochs : int, optional
            EL2N is averaged over the first ``el2n_epochs`` recorded epochs (default: all).
        """
        if not self._epochs:
            raise ValueError("the tracker has recorded no epoch yet; call `update` first")
        epochs = np.array(sorted(self._epochs))
        if el2n_epochs is None:
            el2n_epochs = len(epochs)
        el2n_epochs = check_scalar(
            el2n_epochs, name="el2n_epochs", kind=numbers.Integral, low=1, high=len(epochs)
        )
        correct = np.stack([self._epochs[e]["correct"] for e in epochs])
        el2n = np.nanmean(np.stack([self._epochs[e]["el2n"] for e in epochs[:el2n_epochs]]), 0)
        loss = np.stack([self._epochs[e]["loss"] for e in epochs])
        seen = ~np.isnan(correct)
        ok = np.where(seen, correct, 0.0) > 0.5
        # An example is learned from epoch t on when it is correct at t and at every later
        # epoch it was seen: scan from the end.
        stays = np.ones(self.n_examples, dtype=bool)
        learned = np.full(self.n_examples, np.nan)
        for i in range(len(epochs) - 1, -1, -1):
            stays &= ok[i] | ~seen[i]
            learned = np.where(stays & ok[i], epochs[i], learned)
        first = np.where(ok.any(0), epochs[np.argmax(ok, axis=0)], np.nan)
        # Forgetting: correct at one seen epoch, wrong at the next seen epoch.
        forgetting = np.zeros(self.n_examples, dtype=int)
        last = np.full(self.n_examples, np.nan)
        for i in range(len(epochs)):
            now = np.where(seen[i], ok[i].astype(float), np.nan)
            forgetting += (last == 1.0) & (now == 0.0)
            last = np.where(seen[i], now, last)
        final_idx = np.where(seen.any(0), len(epochs) - 1 - np.argmax(seen[::-1], axis=0), 0)
        cols = np.arange(self.n_examples)
        table = pd.DataFrame(
            {
                "learned_epoch": learned,
                "first_correct_epoch": first,
                "forgetting_events": forgetting,
                "el2n": el2n,
                "final_loss": loss[final_idx, cols],
                "final_correct": ok[final_idx, cols],
            },
            index=pd.Index(cols, name="id"),
        )
        return DifficultyResult(
            method="Example difficulty",
            nobs=int(seen.any(0).sum()),
            table=table,
            epochs=epochs,
            correct=correct,
            el2n_epochs=el2n_epochs,
        )


def late_gradient_share(
    model: torch.nn.Module, loss_fn, inputs, targets, *, top_q: float = 0.05, scores=None
) -> float:
    """Share of the per-example gradient norm carried by the hardest ``top_q`` of examples.

    ``sum_{i in H} ||g_i|| / sum_i ||g_i||``, where ``g_i`` is the gradient of example ``i``'s
    loss with respect to all trainable parameters and ``H`` the ``ceil(top_q * n)`` examples
    with the largest ``scores`` (default: their current loss). Late in fine-tuning the paper
    finds that a few hard examples dominate the updates; a share far above ``top_q`` says so.

    Parameters
    ----------
    model : torch.nn.Module
        Evaluated as it is (its train/eval mode is left alone; use ``model.eval()`` first
        for deterministic layers). Its parameters are not changed.
    loss_fn : callable
        ``loss_fn(outputs, targets)`` returning one loss per example (``reduction="none"``).
    inputs, targets : tensors
        One batch, first axis the examples; moved to the model's device.
    top_q : float in (0, 1]
    scores : array-like (n,), optional
        Hardness of each example (larger = harder), e.g. EL2N or the learned epoch from
        :class:`ExampleDifficultyTracker`.

    Returns
    -------
    float

    Notes
    -----
    Fidelity: reconstruction; the paper's measure of how much hard examples dominate late
    steps was not read. Per-example gradients come from ``torch.func`` (``vmap`` of ``grad``).

    References
    ----------
    Horoi, Wolf, Belilovsky and Dziugaite (2025). arXiv:2506.14126.
    """
    from torch.func import functional_call, grad, vmap

    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"`model` must be a torch.nn.Module; got {describe(model)}")
    check_callable(loss_fn, name="loss_fn")
    check_finite_parameters(model, name="model")
    check_tensor(inputs, name="inputs", ndim=range(1, 9), nonempty=True, finite=True)
    n = inputs.shape[0]
    check_tensor(targets, name="targets", ndim=range(1, 9), finite=True)
    if targets.shape[0] != n:
        raise ValueError(f"`targets` must have {n} rows like `inputs`; got {targets.shape[0]}")
    top_q = check_scalar(top_q, name="top_q", low=0.0, high=1.0, low_inclusive=False)
    params = {k: p.detach() for k, p in model.named_parameters() if p.requires_grad}
    if not params:
        raise ValueError("`model` has no trainable parameters")
    buffers = dict(model.named_buffers())
    device = next(iter(params.values())).device
    inputs, targets = inputs.to(device), targets.to(device)

    def example_loss(p, x, y):
        out = functional_call(model, (p, buffers), (x.unsqueeze(0),))
        return loss_fn(out, y.unsqueeze(0)).sum()

    grads = vmap(grad(example_loss), in_dims=(None, 0, 0))(params, inputs, targets)
    sq = sum(g.reshape(n, -1).pow(2).sum(dim=1) for g in grads.values())
    norms = as_numpy(sq.sqrt(), name="gradient norms")
    if scores is None:
        with torch.no_grad():
            scores = as_numpy(loss_fn(model(inputs), targets), name="loss").reshape(-1)
    else:
        scores = as_float_array(scores, name="scores", ndim=1)
    if scores.shape[0] != n:
        raise ValueError(f"`scores` must have {n} entries like `inputs`; got {scores.shape[0]}")
    k = int(np.ceil(top_q * n))
    hard = np.argsort(-scores, kind="stable")[:k]
    total = norms.sum()
    return float(norms[hard].sum() / total) if total > 0 else 0.0
