"""FedSPA's baselines on the same clients: zero-shot, local-only Tip-Adapter(-F), PromptFL."""

from __future__ import annotations

import numpy as np
import torch

from mlcore._checks import check_tensor
from mlcore.federated.fedspa import FLOAT_BYTES, client_update, tip_logits
from mlcore.federated.partition import FederatedData, _check_data
from statcore.distributed import borrowed_backend
from statcore.validation import check_positive, check_positive_int, check_random_state


def _check_text(data: FederatedData, text_features) -> None:
    check_tensor(
        text_features, name="text_features", dims=("classes", "dim"),
        sizes={"classes": data.n_classes, "dim": data.dim}, kind="floating", finite=True,
        nonempty=True,
    )  # fmt: skip


def _accuracy(logits: torch.Tensor, labels: torch.Tensor) -> float:
    return float((logits.argmax(1) == labels).float().mean())


def _client_mean(values) -> float:
    values = [v for v in values if not np.isnan(v)]
    return float(np.mean(values)) if values else float("nan")


def _test_accuracies(data: FederatedData, logits_fn) -> dict:
    """``global`` (pooled), ``personal`` (mean over clients with test data) and ``clients``
    (NaN without test data) test accuracies of ``logits_fn(features)``."""
    accs, correct, total = [], 0, 0
    with torch.no_grad():
        for c in data.clients:
            n = c.test_labels.numel()
            if not n:
                accs.append(np.nan)
                continue
            hits = int((logits_fn(c.test_features).argmax(1) == c.test_labels).sum())
            accs.append(hits / n)
            correct, total = correct + hits, total + n
    return {
        "global": correct / total if total else float("nan"),
        "personal": _client_mean(accs),
        "clients": np.array(accs),
    }


def zero_shot_accuracy(data: FederatedData, text_features, *, logit_scale: float = 100.0) -> dict:
    """Zero-shot ``s f Tᵀ`` on every client's test set.

    Parameters
    ----------
    data : FederatedData
    text_features : Tensor (C, d)
    logit_scale : float

    Returns
    -------
    dict
        ``global`` (pooled test accuracy), ``personal`` (mean over clients with test data)
        and ``clients`` (per-client accuracies, NaN without test data).
    """
    data = _check_data(data)
    _check_text(data, text_features)
    logit_scale = check_positive(logit_scale, name="logit_scale")
    return _test_accuracies(data, lambda f: logit_scale * f @ text_features.T)


def _local_task(task: dict) -> tuple[float, float]:
    c, opt = task["client"], task["options"]
    if not c.test_labels.numel():
        return np.nan, np.nan
    args = {k: opt[k] for k in ("alpha", "beta", "logit_scale")}
    keys = c.train_features
    with torch.no_grad():
        free = tip_logits(c.test_features, keys, task["text"], key_labels=c.train_labels, **args)
    tuned = client_update(
        c.train_features,
        c.train_labels,
        keys,
        task["text"],
        key_labels=c.train_labels,
        random_state=task["seed"],
        **opt,
    )
    with torch.no_grad():
        tuned_logits = tip_logits(
            c.test_features, tuned, task["text"], key_labels=c.train_labels, **args
        )
    return _accuracy(free, c.test_labels), _accuracy(tuned_logits, c.test_labels)


def local_tip_adapter(
    data: FederatedData,
    text_features,
    *,
    alpha: float = 1.0,
    beta: float = 2.0,
    logit_scale: float = 100.0,
    epochs: int = 20,
    lr: float = 2e-4,
    batch_size: int = 8,
    backend=None,
    random_state=None,
) -> dict:
    """Local-only Tip-Adapter and Tip-Adapter-F: each client caches its own shots, no federation.

    Tip-Adapter's cache holds the client's own few-shot features as keys (one per shot, values
    their one-hot labels) over the zero-shot ``T``; Tip-Adapter-F fine-tunes those keys with the
    optimiser of :func:`client_update`. Classes a client has no shot of fall back to zero-shot.

    Parameters
    ----------
    data : FederatedData
    text_features : Tensor (C, d)
    alpha, beta, logit_scale, epochs, lr, batch_size
        As in :meth:`FedSPA.fit` (give ``epochs`` the federation's total local epochs for a
        like-for-like budget).
    backend : None, str, Backend or dask Client
    random_state : None, int or numpy Generator

    Returns
    -------
    dict
        ``tip`` and ``tip_f``: mean personalised accuracy over clients with test data;
        ``tip_clients``, ``tip_f_clients``: per client.

    Notes
    -----
    Fidelity: paper (Tip-Adapter's logits and trainable keys, as the FedSPA code trains them);
    the local-only setting is the baseline FedSPA reports.
    """
    data = _check_data(data)
    _check_text(data, text_features)
    rng = check_random_state(random_state)
    options = {
        "alpha": check_positive(alpha, name="alpha", strict=False),
        "beta": check_positive(beta, name="beta", strict=False),
        "logit_scale": check_positive(logit_scale, name="logit_scale"),
        "epochs": check_positive_int(epochs, name="epochs"),
        "lr": check_positive(lr, name="lr"),
        "batch_size": check_positive_int(batch_size, name="batch_size"),
    }
    seeds = rng.integers(0, 2**31 - 1, size=data.n_clients)
    tasks = [
        {"client": c, "text": text_features, "options": options, "seed": int(s)}
        for c, s in zip(data.clients, seeds, strict=True)
    ]
    with borrowed_backend(backend) as pool:
        out = np.array(pool.map(_local_task, tasks), dtype=float)
    return {
        "tip": _client_mean(out[:, 0]),
        "tip_f": _client_mean(out[:, 1]),
        "tip_clients": out[:, 0],
        "tip_f_clients": out[:, 1],
    }


def _prompt_task(task: dict) -> torch.Tensor:
    from mlcore.prompt import ManiPT, PromptLearner

    learner = PromptLearner(
        task["encoder"], task["classnames"], method="coop", template=task["template"]
    )
    with torch.no_grad():
        learner.ctx.copy_(task["ctx"])
    c = task["client"]
    result = ManiPT.from_learner(learner).fit(
        c.train_features,
        c.train_labels,
        encoded=True,
        maxiter=task["steps"],
        lr=task["lr"],
        batch_size=task["batch_size"],
        log_every=task["steps"],
        random_state=task["seed"],
    )
    return result.learner.ctx.detach().clone()


def fedavg_prompts(
    data: FederatedData,
    encoder,
    classnames,
    *,
    rounds: int = 5,
    local_steps: int = 10,
    lr: float = 5e-3,
    batch_size: int = 8,
    template: str = "a photo of a {}.",
    backend=None,
    random_state=None,
) -> dict:
    """PromptFL: clients train CoOp context vectors locally, the server averages them (FedAvg).

    Each round every client starts from the global context, runs ``local_steps`` of
    :class:`mlcore.prompt.ManiPT` (``method="coop"``, ``encoded=True``) on its few-shot
    features, and uploads its context; the server averages them weighted by the clients'
    training-set sizes.

    Parameters
    ----------
    data : FederatedData
        Its features must be ``encoder``'s image features (a domain shift applied by
        :func:`federated_partition` is what the clients see).
    encoder : promptable dual encoder
        :class:`mlcore.encoders.PromptableTextEncoder` (e.g. ``tiny_clip()``); sent to every
        client task.
    classnames : sequence of str
    rounds, local_steps, lr, batch_size, template
    backend : None, str, Backend or dask Client
    random_state : None, int or numpy Generator

    Returns
    -------
    dict
        ``global`` (pooled test accuracy of the averaged prompt), ``personal`` (its mean
        accuracy over clients), ``bytes_per_round`` (context up and down, float32),
        ``ctx`` (the final context).

    Notes
    -----
    Fidelity: reconstruction of PromptFL (Guo et al. 2023, IEEE TMC; paper not read here):
    FedAvg of CoOp's shallow context, Adam as in :class:`mlcore.prompt.PromptLearner`.
    """
    from mlcore.prompt import PromptLearner

    data = _check_data(data)
    rounds = check_positive_int(rounds, name="rounds")
    local_steps = check_positive_int(local_steps, name="local_steps")
    rng = check_random_state(random_state)
    learner = PromptLearner(encoder, classnames, method="coop", template=template)
    ctx = learner.ctx.detach().clone()
    sizes = torch.tensor([c.train_labels.numel() for c in data.clients], dtype=ctx.dtype)
    weights = (sizes / sizes.sum()).to(ctx.device)
    with borrowed_backend(backend) as pool:
        for _ in range(rounds):
            seeds = rng.integers(0, 2**31 - 1, size=data.n_clients)
            tasks = [
                {
                    "encoder": encoder,
                    "classnames": list(classnames),
                    "template": template,
                    "ctx": ctx,
                    "client": c,
                    "steps": local_steps,
                    "lr": lr,
                    "batch_size": batch_size,
                    "seed": int(s),
                }
                for c, s in zip(data.clients, seeds, strict=True)
            ]
            ctxs = torch.stack([x.to(ctx.device) for x in pool.map(_prompt_task, tasks)])
            ctx = torch.einsum("k,k...->...", weights, ctxs)
    with torch.no_grad():
        learner.ctx.copy_(ctx)
    acc = _test_accuracies(data, learner.logits_from_features)
    return {
        "global": acc["global"],
        "personal": acc["personal"],
        "bytes_per_round": 2 * data.n_clients * ctx.numel() * FLOAT_BYTES,
        "ctx": ctx,
    }
