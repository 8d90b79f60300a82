"""A CPU-sized merging study: tiny MLP experts on scikit-learn's bundled digits."""

from __future__ import annotations

import numbers
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
import torch

from mlcore._device import seeded_torch, torch_generator
from mlcore.merging.difficulty import DifficultyResult, ExampleDifficultyTracker
from statcore.validation import check_random_state, check_scalar

#: Disjoint class splits, one per expert.
CLASS_SPLITS = ((0, 1, 2, 3, 4), (5, 6, 7, 8, 9))


@dataclass(frozen=True, eq=False)
class DigitsToy:
    """Everything :func:`digits_merging_toy` trained.

    Attributes
    ----------
    model : torch.nn.Module
        The architecture, holding the base weights (a template for loading checkpoints).
    base : OrderedDict
        The "pre-trained" state dict.
    checkpoints : list of list of OrderedDict
        ``checkpoints[k][t]``: expert ``k`` after epoch ``t + 1``.
    tasks : tuple of tuple of int
        The classes of each expert's task.
    train_accuracy : ndarray (K, T)
        Each expert's accuracy on its own (noisy-label) training set after each epoch.
    difficulty : list of DifficultyResult
        Per expert, the tracker's statistics over its training set (ids are positions in it).
    flipped : list of ndarray
        Per expert, the ids of the training examples whose label was flipped on purpose.
    """

    model: torch.nn.Module
    base: OrderedDict
    checkpoints: list
    tasks: tuple
    train_accuracy: np.ndarray
    difficulty: list
    flipped: list
    _data: dict = field(repr=False)

    def training_set(self, task: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Expert ``task``'s training inputs and (partly flipped) labels; ids are row numbers."""
        return self._data["train"][task]

    def evaluate(self, model: torch.nn.Module, task: int, split: str = "test") -> float:
        """Accuracy of ``model`` on task ``task``'s held-out examples, the prediction being
        the arg-max over that task's classes only (a task-specific head, as for CLIP experts)."""
        x, y = self._data[split][task]
        classes = torch.tensor(self.tasks[task])
        with torch.no_grad():
            logits = model(x)[:, classes]
        return float((classes[logits.argmax(dim=1)] == y).float().mean())


def _mlp(hidden: int, generator: torch.Generator) -> torch.nn.Module:
    with seeded_torch(generator):
        return torch.nn.Sequential(
            torch.nn.Linear(64, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 10)
        )


def _train(model, x, y, *, epochs, lr, batch_size, generator, tracker=None, on_epoch=None):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    n = x.shape[0]
    for epoch in range(epochs):
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            loss = torch.nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        if tracker is not None:
            with torch.no_grad():
                tracker.update(torch.arange(n), model(x), y, epoch=epoch + 1)
        if on_epoch is not None:
            on_epoch(model)


def digits_merging_toy(
    random_state=0,
    *,
    n_epochs: int = 30,
    label_noise: float = 0.1,
    hidden: int = 32,
    pretrain_epochs: int = 3,
    lr: float = 0.1,
) -> DigitsToy:
    """Train a base MLP and one expert per class split of the digits, keeping every epoch.

    The base is trained briefly on a pre-training third of the data (all classes); expert
    ``k`` is fine-tuned from it on the classes of ``CLASS_SPLITS[k]`` in another third, where a
    ``label_noise`` fraction of labels is flipped to another class of the same task (the hard,
    memorised-late examples of the paper); the last third is held out for evaluation.

    Parameters
    ----------
    random_state : None, int or numpy Generator
        Data split, label flips, initialisation and batch order.
    n_epochs : int
        Expert fine-tuning epochs (one checkpoint each).
    label_noise : float in [0, 0.5]
        Fraction of each expert's training labels flipped.
    hidden : int
        Hidden width of the MLP 64 -> hidden -> 10.
    pretrain_epochs : int
        Epochs of base training.
    lr : float
        SGD learning rate (momentum 0.9, batches of 32).

    Returns
    -------
    DigitsToy

    Notes
    -----
    A stand-in for the paper's CLIP/LLM experts (Horoi et al. 2025, arXiv:2506.14126), which
    cannot be downloaded here; it is a reconstruction of the setting, not of its numbers.
    """
    from sklearn.datasets import load_digits

    rng = check_random_state(random_state)
    n_epochs = check_scalar(n_epochs, name="n_epochs", kind=numbers.Integral, low=1)
    label_noise = check_scalar(label_noise, name="label_noise", low=0.0, high=0.5)
    hidden = check_scalar(hidden, name="hidden", kind=numbers.Integral, low=1)
    pretrain_epochs = check_scalar(
        pretrain_epochs, name="pretrain_epochs", kind=numbers.Integral, low=0
    )
    lr = check_scalar(lr, name="lr", low=0.0, low_inclusive=False)
    # a 31-bit seed, the stream on which the documented study numbers were measured
    generator = torch_generator(int(rng.integers(2**31 - 1)))

    digits = load_digits()
    x_all = torch.tensor(digits.data / 16.0, dtype=torch.float32)
    y_all = torch.tensor(digits.target, dtype=torch.int64)
    part = rng.permutation(len(y_all)) % 3  # 0: pre-training, 1: fine-tuning, 2: evaluation
    model = _mlp(hidden, generator)
    pre = torch.as_tensor(part == 0)
    _train(
        model,
        x_all[pre],
        y_all[pre],
        epochs=pretrain_epochs,
        lr=lr,
        batch_size=32,
        generator=generator,
    )
    base = OrderedDict((k, v.detach().clone()) for k, v in model.state_dict().items())

    checkpoints, train_acc, difficulty, flipped, test, train = [], [], [], [], [], []
    for classes in CLASS_SPLITS:
        in_task = np.isin(digits.target, classes)
        tr = torch.as_tensor((part == 1) & in_task)
        te = torch.as_tensor((part == 2) & in_task)
        x, y = x_all[tr], y_all[tr].clone()
        n_flip = int(round(label_noise * len(y)))
        ids = np.sort(rng.choice(len(y), size=n_flip, replace=False))
        for i in ids:
            others = [c for c in classes if c != int(y[i])]
            y[i] = int(rng.choice(others))
        expert = _mlp(hidden, generator)
        expert.load_state_dict(base)
        tracker = ExampleDifficultyTracker(len(y))
        saved = []

        def keep(m, saved=saved):
            saved.append(OrderedDict((k, v.detach().clone()) for k, v in m.state_dict().items()))

        _train(
            expert,
            x,
            y,
            epochs=n_epochs,
            lr=lr,
            batch_size=32,
            generator=generator,
            tracker=tracker,
            on_epoch=keep,
        )
        result: DifficultyResult = tracker.result(el2n_epochs=min(5, n_epochs))
        checkpoints.append(saved)
        train_acc.append(result.accuracy())
        difficulty.append(result)
        flipped.append(ids)
        test.append((x_all[te], y_all[te]))
        train.append((x, y))
    model.load_state_dict(base)
    return DigitsToy(
        model=model,
        base=base,
        checkpoints=checkpoints,
        tasks=CLASS_SPLITS,
        train_accuracy=np.array(train_acc),
        difficulty=difficulty,
        flipped=flipped,
        _data={"test": test, "train": train},
    )
