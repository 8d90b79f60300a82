"""Training a causal LM on random windows of a token corpus (AdamW, next-token loss)."""

from __future__ import annotations

import time

import torch
from torch import nn

from mlcore._iterations import budget_result
from mlcore.quant.corpus import batches
from mlcore.quant.tp_model import causal_lm_loss
from mlcore.results import TrainingResult
from statcore.progress import progress as progress_bar
from statcore.validation import check_positive, check_positive_int

__all__ = ["train_causal_lm"]


def train_causal_lm(
    model: nn.Module,
    corpus: torch.Tensor,
    *,
    steps: int = 300,
    batch_size: int = 32,
    seq_len: int = 32,
    lr: float = 3e-3,
    random_state=0,
    progress: bool = False,
) -> TrainingResult:
    """Train ``model`` (any causal LM) in place with AdamW on random windows of ``corpus``."""
    steps = check_positive_int(steps, name="steps")
    lr = check_positive(lr, name="lr")
    device = next(model.parameters()).device
    data = batches(
        corpus, seq_len=seq_len, batch_size=batch_size, n_batches=steps, random_state=random_state
    )
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    history = []
    start = time.perf_counter()
    model.train()
    for step in progress_bar(range(steps), enabled=progress, desc="train_causal_lm"):
        loss = causal_lm_loss(model, data[step].to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append({"step": step, "loss": float(loss.detach())})
    model.eval()
    return budget_result(
        history,
        method="causal LM (AdamW)",
        function="train_causal_lm",
        n_iter=steps,
        maxiter=steps,
        criterion="steps",
        remedy="lower `lr`",
        wall_time_s=time.perf_counter() - start,
        device=str(device),
    )
