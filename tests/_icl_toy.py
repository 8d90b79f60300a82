"""The toy in-context-learning tasks of the function-vector tests, shared by their modules."""

import numpy as np
import torch

from mlcore.nn import TinyTransformer

# Toy ICL: inputs x in [0, 16) are tokens 0..15, outputs are tokens 16..47, a prompt is
# "x1 y1 x2 y2 ... xq" and the answer is yq. Task t maps x to output x + 8 t, except that every
# task maps x < 4 to output x (demonstrations that fit all three tasks) and tasks 0 and 1 agree
# on 4 <= x < 8 (demonstrations that fit two): ambiguity = number of tasks a pair fits.
NX, N_TASKS = 16, 3
VOCAB = NX + 32


def task_output(task, x):
    out = x + 8 * task
    out = np.where(x < 4, x, out)
    out = np.where((x >= 4) & (x < 8) & (task == 1), x, out)
    return NX + out


def ambiguity(x, y):
    return sum((task_output(t, x) == y).astype(int) for t in range(N_TASKS))


def make_prompts(n_prompts, n_shots, rng, *, task=None, informative_query=False):
    """Prompts (n_prompts, 2 n_shots + 1), answers, tasks, the demonstrations' ambiguity."""
    tasks = rng.integers(0, N_TASKS, n_prompts) if task is None else np.full(n_prompts, task)
    xs = rng.integers(0, NX, (n_prompts, n_shots + 1))
    if informative_query:
        # queries that the tasks answer differently, so that chance is 1/3 without a task
        xs[:, -1] = rng.integers(8, NX, n_prompts)
    ys = task_output(tasks[:, None], xs)
    demo_y = ys[:, :n_shots]
    ids = np.empty((n_prompts, 2 * n_shots + 1), dtype=np.int64)
    ids[:, 0 : 2 * n_shots : 2] = xs[:, :n_shots]
    ids[:, 1 : 2 * n_shots : 2] = demo_y
    ids[:, -1] = xs[:, -1]
    amb = ambiguity(xs[:, :n_shots], ys[:, :n_shots])
    return torch.from_numpy(ids), torch.from_numpy(ys[:, -1]), tasks, amb


def corrupt(prompts, rng):
    """The same prompts with every demonstration output drawn at random: no task is shown.

    (Shuffling the labels within a prompt, as Todd et al. do, would keep this toy's task
    visible: each task has its own output range.)"""
    out = prompts.clone()
    out[:, 1:-1:2] = torch.from_numpy(rng.integers(NX, VOCAB, out[:, 1:-1:2].shape))
    return out


def spans_of(n_shots):
    return [(2 * i, 2 * i + 2) for i in range(n_shots)]


def noisy(ids, rng, share):
    """The prompts with each demonstration output replaced by a random token with probability
    ``share`` (the query and, in a training sequence, the answer are left alone)."""
    out = ids.clone()
    outputs = out[:, 1:-1:2]
    swap = torch.from_numpy(rng.random(outputs.shape) < share)
    out[:, 1:-1:2] = torch.where(
        swap, torch.from_numpy(rng.integers(NX, VOCAB, outputs.shape)), outputs
    )
    return out


def train_toy(*, n_layers=2, noise=0.0, steps=300, seed=0):
    """A TinyTransformer (width 32, 4 heads, RoPE) trained with AdamW to answer every query;
    with ``noise``, from demonstrations of which that share show a random output."""
    torch.manual_seed(seed)
    model = TinyTransformer(VOCAB, 32, n_layers, 4, pos="rope")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        ids, answers, _, _ = make_prompts(32, 10, rng)
        full = torch.cat([ids, answers[:, None]], 1)
        seen = noisy(full, rng, noise) if noise else full
        # every input position predicts its (true) output: 11 prompts of 0..10 shots each
        logits = model(seen[:, :-1])[:, 0::2]
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, VOCAB), full[:, 1::2].reshape(-1)
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()
