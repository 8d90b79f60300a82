"""A "plan, then execute" task and two tiny language models that disagree on one token.

No language model weights can be downloaded here, so the studies of token intervention (tests
and vignette) train two :class:`~mlcore.nn.TinyTransformer` models on a task whose answer hinges
on one early decision. The prompt ``[BOS, a, b, SEP]`` (digits a, b) asks for a plan token P_p
with p = (a + b) mod 3, then the progression x_k = (a + k (p + 1)) mod 10 for k = 1..8, then
EOS: ten new tokens. A model trained with the shortcut plan p = a mod 3 in part of its examples
(executed consistently) executes well and decides badly.
"""

from __future__ import annotations

import numbers

import torch

from mlcore._device import torch_generator, torch_global_seed
from statcore.validation import check_positive_int, check_scalar

#: Steps of the progression, and the special tokens (digits are 0..9, plans 10..12).
N_STEPS, BOS, SEP, EOS, VOCAB = 8, 13, 14, 15, 16
#: Tokens a model generates after the prompt: the plan, the progression and EOS.
N_NEW = N_STEPS + 2
#: Every prompt's digits, (a, b) over 0..9 x 0..9.
_A, _B = torch.arange(100) // 10, torch.arange(100) % 10


def plan_execute_sequences(a: torch.Tensor, b: torch.Tensor, plan: torch.Tensor) -> torch.Tensor:
    """Whole sequences ``[BOS, a, b, SEP, P_plan, x_1..x_8, EOS]`` (int64, shape (n, 14))."""
    steps = torch.arange(1, N_STEPS + 1)
    execution = (a[:, None] + steps * (plan[:, None] + 1)) % 10
    head = torch.stack([torch.full_like(a, BOS), a, b, torch.full_like(a, SEP), 10 + plan], 1)
    return torch.cat([head, execution, torch.full_like(a, EOS)[:, None]], 1)


def plan_execute_task() -> tuple[torch.Tensor, torch.Tensor]:
    """The 100 prompts (every pair of digits) and their correct ten-token answers."""
    correct = plan_execute_sequences(_A, _B, (_A + _B) % 3)
    return correct[:, :4], correct[:, 4:]


def train_plan_execute_model(shortcut: float, *, steps: int = 250, random_state: int = 0):
    """A two-layer, two-head, width-32 TinyTransformer trained on the task.

    AdamW (lr 3e-3), batches of 64 prompts drawn with replacement, cross-entropy on the ten
    answer tokens. In a fraction ``shortcut`` of the examples the plan is the shortcut a mod 3,
    executed consistently.

    Parameters
    ----------
    shortcut : float in [0, 1]
        0 trains the reasoner; 0.6 the base of the studies.
    steps : int
    random_state : int
        Seeds the initial weights (torch, as it is) and the batches; torch's global RNG is left
        as it was.

    Returns
    -------
    mlcore.nn.TinyTransformer
        In eval mode.
    """
    from torch.nn import functional as F

    from mlcore.nn.transformer import TinyTransformer

    shortcut = check_scalar(shortcut, name="shortcut", low=0.0, high=1.0)
    steps = check_positive_int(steps, name="steps")
    seed = check_scalar(random_state, name="random_state", kind=numbers.Integral, low=0)
    gen = torch_generator(seed)
    with torch_global_seed(seed):  # nn.Module initialisers draw from the global RNG only
        lm = TinyTransformer(VOCAB, 32, 2, 2)
    opt = torch.optim.AdamW(lm.parameters(), lr=3e-3)
    for _ in range(steps):
        i = torch.randint(0, 100, (64,), generator=gen)
        plan = (_A[i] + _B[i]) % 3
        if shortcut:
            plan = torch.where(torch.rand(64, generator=gen) < shortcut, _A[i] % 3, plan)
        seq = plan_execute_sequences(_A[i], _B[i], plan)
        logits = lm(seq[:, :-1])[:, 3:]
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), seq[:, 4:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return lm.eval()


__all__ = [
    "BOS",
    "EOS",
    "N_NEW",
    "N_STEPS",
    "SEP",
    "VOCAB",
    "plan_execute_sequences",
    "plan_execute_task",
    "train_plan_execute_model",
]
