"""Disagreement-guided token intervention: a reasoning model takes over single tokens of a base
model's decoding where their next-token distributions disagree (Shen et al. 2026)."""

from __future__ import annotations

import inspect
import math
import numbers
import sys
import time

import torch
from torch.nn import functional as F

from mlcore._checks import check_tensor, check_token_ids
from mlcore._device import as_numpy, torch_generator
from mlcore.decoding.results import InterventionResult
from statcore.validation import check_option, check_positive_int, check_scalar, describe

#: Measures between the two distributions (:func:`token_disagreement`); ``"entropy"`` reads the
#: base's alone.
PAIR_MEASURES = ("kl", "js", "top1")
MEASURES = (*PAIR_MEASURES, "entropy")
#: Defaults of ``threshold`` per measure. KL: a base that puts about 0.4 where the reasoner is
#: sure (log 1/0.4 = 0.92 nats) is over it; JS is bounded by log 2 = 0.69; top-1 is 0 or 1.
DEFAULT_THRESHOLDS = {"kl": 0.5, "js": 0.1, "top1": 0.5, "entropy": 0.5}


def token_disagreement(base_logits, reasoner_logits, measure: str = "kl") -> torch.Tensor:
    """The disagreement between two next-token distributions, one value per row.

    Parameters
    ----------
    base_logits, reasoner_logits : Tensor, shape (..., vocab)
        Unnormalised next-token scores of the base and the reasoning model.
    measure : {"kl", "js", "top1"}
        ``"kl"``: KL(p_R ‖ p_B), what the base loses in nats where the reasoner is confident;
        ``"js"``: the Jensen–Shannon divergence (symmetric, at most log 2); ``"top1"``: 1 where
        the two most likely tokens differ, else 0.

    Returns
    -------
    Tensor, shape (...)
        float32 (float64 for float64 logits).

    References
    ----------
    Shen et al. (2026), the disagreement trigger of :func:`intervene_generate` (full reference
    there).

    Examples
    --------
    >>> p = torch.tensor([[0.0, 0.0]]); q = torch.tensor([[0.0, math.log(3.0)]])
    >>> round(float(token_disagreement(p, q, "kl")[0]), 4)  # KL([.25, .75] || [.5, .5])
    0.1308
    """
    measure = check_option(measure, name="measure", options=PAIR_MEASURES)
    for name, logits in (("base_logits", base_logits), ("reasoner_logits", reasoner_logits)):
        _check_logits(logits, name=name)
    if base_logits.shape != reasoner_logits.shape:
        raise ValueError(
            f"`base_logits` and `reasoner_logits` must have the same shape; got "
            f"{tuple(base_logits.shape)} and {tuple(reasoner_logits.shape)}"
        )
    dtype = torch.float64 if base_logits.dtype == torch.float64 else torch.float32
    log_b = F.log_softmax(base_logits.to(dtype), dim=-1)
    log_r = F.log_softmax(reasoner_logits.to(dtype), dim=-1)
    if measure == "top1":
        return (log_b.argmax(-1) != log_r.argmax(-1)).to(dtype)
    if measure == "kl":
        return _kl(log_r, log_b)
    log_m = torch.logsumexp(torch.stack([log_b, log_r]), dim=0) - math.log(2.0)
    return 0.5 * (_kl(log_b, log_m) + _kl(log_r, log_m))


def _kl(log_p: torch.Tensor, log_q: torch.Tensor) -> torch.Tensor:
    """KL(p ‖ q) over the last axis with ``0 log 0 = 0``: a token of probability 0 under ``p``
    (a ``-inf`` logit) adds nothing, where torch's ``kl_div`` gives ``0 * (-inf) = NaN``; one
    of probability 0 under ``q`` only gives ``inf``, the true divergence."""
    p = log_p.exp()
    terms = torch.where(p > 0, p * (log_p - log_q), torch.zeros_like(p))
    return terms.sum(-1)


def _check_logits(logits, *, name: str) -> None:
    """Real logits (..., vocab): ``-inf`` is a token of probability 0 and is allowed; NaN, ``+inf``
    and rows with no finite entry (no distribution at all) are refused."""
    check_tensor(logits, name=name, kind="real", nonempty=True)
    if logits.ndim == 0:
        raise ValueError(f"`{name}` must have a vocabulary axis (..., vocab); got a 0-D tensor")
    if logits.is_floating_point():
        n_nan = int(torch.isnan(logits).sum())
        n_pos = int(torch.isposinf(logits).sum())
        if n_nan or n_pos:
            raise ValueError(
                f"`{name}` must hold finite logits or -inf (a token of probability 0); found "
                f"{n_nan} NaN and {n_pos} +inf entries among {logits.numel()}"
            )
        empty = ~torch.isfinite(logits).any(-1)
        if bool(empty.any()):
            raise ValueError(
                f"`{name}` must give every row at least one finite logit; {int(empty.sum())} "
                "rows are all -inf"
            )


def _is_hf(model) -> bool:
    """A Hugging Face ``transformers`` model (checked without importing transformers)."""
    transformers = sys.modules.get("transformers")
    return transformers is not None and isinstance(model, transformers.PreTrainedModel)


def _model_device(model, fallback: torch.device) -> torch.device:
    for tensor in (*model.parameters(), *model.buffers()):
        return tensor.device
    return fallback


def _vocab_size(model) -> int | None:
    """The vocabulary size a model declares (HF config, ``vocab`` attribute), if any."""
    config = getattr(model, "config", None)
    size = getattr(config, "vocab_size", None) if config is not None else None
    if size is None:
        size = getattr(model, "vocab", None)
    return int(size) if isinstance(size, numbers.Integral) else None


class _Stepper:
    """Next-token logits of one model along a growing sequence, with or without a KV cache."""

    def __init__(self, model, name: str, hf: bool, use_cache: bool):
        self.model, self.name, self.hf, self.use_cache = model, name, hf, use_cache
        self.cache = None
        self.seen = 0  # tokens already in the cache
        self.calls = 0
        # transformers 5 renamed `past_key_values` to `cache` (argument and output field)
        params = inspect.signature(model.forward).parameters if hf else {}
        self.cache_name = "cache" if "cache" in params else "past_key_values"

    def _logits(self, out, length: int) -> torch.Tensor:
        logits = out.logits if hasattr(out, "logits") else out
        if isinstance(logits, tuple | list):
            logits = logits[0]
        if not isinstance(logits, torch.Tensor) or logits.ndim != 3 or logits.shape[1] != length:
            shape = tuple(logits.shape) if isinstance(logits, torch.Tensor) else describe(logits)
            raise ValueError(
                f"`{self.name}` must map ids (batch, time) to logits (batch, time, vocab); its "
                f"output for {length} time steps was {shape}"
            )
        return logits[:, -1]

    def __call__(self, ids: torch.Tensor) -> torch.Tensor:
        """Next-token logits after ``ids``; a cached model reads only the tokens it has not seen
        (one per step, or several when it was skipped, as under the entropy trigger)."""
        self.calls += 1
        if not self.hf:
            return self._logits(self.model(ids), ids.shape[1])
        if not self.use_cache:
            return self._logits(self.model(input_ids=ids, use_cache=False), ids.shape[1])
        step = ids[:, self.seen :]
        self.seen = ids.shape[1]
        out = self.model(input_ids=step, use_cache=True, **{self.cache_name: self.cache})
        self.cache = getattr(out, self.cache_name)
        return self._logits(out, step.shape[1])


def _check_budget(budget, max_new_tokens: int) -> int | None:
    if budget is None:
        return None
    if isinstance(budget, numbers.Integral) and not isinstance(budget, bool):
        return check_scalar(budget, name="budget", kind=numbers.Integral, low=0)
    if isinstance(budget, numbers.Real) and not isinstance(budget, bool):
        fraction = check_scalar(budget, name="budget", low=0.0, high=1.0)
        return int(math.floor(fraction * max_new_tokens))
    raise TypeError(
        "`budget` must be None, a non-negative int (tokens per sequence) or a float in [0, 1] "
        f"(a fraction of max_new_tokens); got {describe(budget)}"
    )


def intervene_generate(
    base,
    reasoner,
    prompt_ids,
    *,
    budget=None,
    disagreement: str = "kl",
    threshold: float | None = None,
    max_new_tokens: int = 32,
    do_sample: bool = False,
    temperature: float = 1.0,
    eos_token_id: int | None = None,
    use_cache: bool | None = None,
    random_state=None,
) -> InterventionResult:
    """Decode with ``base``; hand single tokens to ``reasoner`` where the two disagree.

    At every step both models read the shared prefix. When their disagreement exceeds
    ``threshold`` and the sequence has budget left, the next token is the reasoner's choice;
    otherwise it is the base's. Either way it is appended to both models' context and the base
    resumes: each takeover is exactly one token.

    Parameters
    ----------
    base, reasoner : torch.nn.Module
        Two causal language models over the same vocabulary: Hugging Face ``transformers``
        models (``PreTrainedModel``; their KV caches are kept between steps), or any module
        mapping ids (batch, time) to logits (batch, time, vocab), a tuple whose first item is
        them, or an output with ``.logits`` (the whole prefix is re-read each step). Both run in
        ``eval()`` mode under ``torch.no_grad()``; their training flags are restored afterwards.
    prompt_ids : Tensor of int, shape (time,) or (batch, time)
        Prompt ids on the models' device; rows of a batch share one length (no padding).
    budget : None, int or float
        Most reasoner tokens per sequence: an int counts tokens, a float in [0, 1] is a fraction
        of ``max_new_tokens`` (rounded down); None sets no limit. 0 gives the base's own
        decoding.
    disagreement : {"kl", "js", "top1", "entropy"}
        The trigger, on the models' untempered distributions: a measure between the two (see
        :func:`token_disagreement`), or ``"entropy"``, the base's own entropy in nats, the
        cheap trigger the paper's finding suggests (high disagreement coincides with high base
        uncertainty): the reasoner then runs only at steps where it fires, its KV cache
        catching up on the tokens it skipped.
    threshold : float, optional
        A step is handed over when its disagreement is above it; default 0.5 (kl), 0.1 (js),
        0.5 (top1), 0.5 (entropy). ``-inf`` hands over every step while budget lasts, ``inf`` none.
    max_new_tokens : int
        Steps to decode.
    do_sample : bool
        Sample from the chosen model's distribution at ``temperature``; otherwise take its most
        likely token (greedy).
    temperature : float
        Sampling temperature (> 0); used only when ``do_sample``.
    eos_token_id : int, optional
        A sequence that emits it stops (its later tokens are ``-1`` in the result).
    use_cache : bool, optional
        Keep KV caches (Hugging Face models only; default: for them). False re-reads the whole
        prefix every step.
    random_state : None, int, numpy Generator or torch.Generator
        Seeds the sampling (None: fresh entropy); torch's global RNG is not touched.

    Returns
    -------
    InterventionResult
        Tokens, where the reasoner took over, the disagreement and base-entropy traces.

    Raises
    ------
    ValueError
        For vocabularies of different sizes, a prompt on another device than the models, a
        negative budget, ids outside the vocabulary.

    Notes
    -----
    Fidelity: reconstruction. The paper's loop (one-token takeover at high-disagreement
    positions, then back to the base, under an intervention budget) is from its abstract; the
    method section and the authors' code (AlphaLab-USTC/RRTokenIntervention) were not read. So
    these choices are ours: the direction KL(p_R ‖ p_B) of the default measure; the
    alternatives JS, top-1 mismatch and base entropy; measuring on untempered distributions;
    the default thresholds; a budget counted per sequence and spent first come, first served
    (the paper may rank positions instead); and counting a takeover whose token equals the
    base's choice as spent. Both models run a forward pass at every step, as a disagreement
    trigger needs (the reasoner only where it fires under ``"entropy"``).

    References
    ----------
    Shen, Sheng, Chen, Zhang and Wang (2026). Reasoning can be restored by correcting a few
    decision tokens. *ICML 2026*, arXiv:2605.16874.

    Examples
    --------
    >>> from mlcore.nn import TinyTransformer
    >>> _ = torch.manual_seed(0)
    >>> base, reasoner = TinyTransformer(12, 16, 1, 2), TinyTransformer(12, 16, 1, 2)
    >>> res = intervene_generate(base, reasoner, torch.tensor([1, 2, 3]), budget=2,
    ...                          max_new_tokens=8, threshold=0.0)
    >>> res.tokens.shape, int(res.n_interventions[0])
    ((1, 8), 2)
    """
    for name, model in (("base", base), ("reasoner", reasoner)):
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"`{name}` must be a torch.nn.Module; got {describe(model)}")
    measure = check_option(disagreement, name="disagreement", options=MEASURES)
    max_new_tokens = check_positive_int(max_new_tokens, name="max_new_tokens")
    budget = _check_budget(budget, max_new_tokens)
    if threshold is None:
        threshold = DEFAULT_THRESHOLDS[measure]
    elif not (isinstance(threshold, numbers.Real) and math.isinf(threshold)):
        threshold = check_scalar(threshold, name="threshold")
    threshold = float(threshold)
    temperature = check_scalar(temperature, name="temperature", low=0.0, low_inclusive=False)
    if not isinstance(do_sample, bool):
        raise TypeError(f"`do_sample` must be a bool; got {describe(do_sample)}")

    check_tensor(prompt_ids, name="prompt_ids", ndim=(1, 2), kind="integer")
    ids = prompt_ids[None] if prompt_ids.ndim == 1 else prompt_ids
    if ids.shape[0] == 0 or ids.shape[1] == 0:
        raise ValueError(
            f"`prompt_ids` must hold at least one sequence of at least one token; got shape "
            f"{tuple(prompt_ids.shape)}"
        )
    device = _model_device(base, ids.device)
    for name, model in (("base", base), ("reasoner", reasoner)):
        where = _model_device(model, ids.device)
        if where != ids.device:
            raise ValueError(
                f"`prompt_ids` is on {ids.device} but `{name}` is on {where}; move them to one "
                f"device (prompt_ids.to({str(where)!r}))"
            )
    vocab_b, vocab_r = _vocab_size(base), _vocab_size(reasoner)
    if vocab_b is not None and vocab_r is not None and vocab_b != vocab_r:
        raise ValueError(
            f"`base` and `reasoner` must share a vocabulary; got vocab sizes {vocab_b} and "
            f"{vocab_r}"
        )
    if vocab_b is not None or vocab_r is not None:
        check_token_ids(ids, name="prompt_ids", vocab=vocab_b or vocab_r)
    if eos_token_id is not None:
        eos_token_id = check_scalar(eos_token_id, name="eos_token_id", kind=numbers.Integral, low=0)

    hf = {"base": _is_hf(base), "reasoner": _is_hf(reasoner)}
    if use_cache is None:
        cached = hf
    elif not isinstance(use_cache, bool):
        raise TypeError(f"`use_cache` must be None or a bool; got {describe(use_cache)}")
    elif use_cache and not all(hf.values()):
        plain = [name for name, is_hf in hf.items() if not is_hf]
        raise ValueError(
            f"use_cache=True needs Hugging Face models; {plain} map ids to logits without a "
            "cache (use use_cache=None or False)"
        )
    else:
        cached = dict.fromkeys(hf, use_cache)
    steppers = {
        "base": _Stepper(base, "base", hf["base"], cached["base"]),
        "reasoner": _Stepper(reasoner, "reasoner", hf["reasoner"], cached["reasoner"]),
    }
    generator = torch_generator(random_state, device) if do_sample else None

    n_rows = ids.shape[0]
    tokens = torch.full((n_rows, max_new_tokens), -1, dtype=torch.long, device=device)
    intervened = torch.zeros((n_rows, max_new_tokens), dtype=torch.bool, device=device)
    trace = torch.full((n_rows, max_new_tokens), float("nan"), device=device)
    entropy = torch.full((n_rows, max_new_tokens), float("nan"), device=device)
    top1 = torch.full((n_rows, max_new_tokens), -1, dtype=torch.long, device=device)
    spent = torch.zeros(n_rows, dtype=torch.long, device=device)
    alive = torch.ones(n_rows, dtype=torch.bool, device=device)
    limit = math.inf if budget is None else budget

    models = {"base": base, "reasoner": reasoner}
    was_training = {name: model.training for name, model in models.items()}
    seq = ids
    started = time.perf_counter()
    try:
        for model in models.values():
            model.eval()
        with torch.no_grad():
            for t in range(max_new_tokens):
                logits_b = steppers["base"](seq)
                log_b = F.log_softmax(logits_b.float(), dim=-1)
                base_entropy = -(log_b.exp() * log_b).sum(-1)
                if measure == "entropy":
                    score = base_entropy
                    take = alive & (score > threshold) & (spent < limit)
                    logits_r = steppers["reasoner"](seq) if bool(take.any()) else None
                else:
                    logits_r = steppers["reasoner"](seq)
                if logits_r is not None and logits_b.shape[-1] != logits_r.shape[-1]:
                    raise ValueError(
                        "`base` and `reasoner` must share a vocabulary; their logits have "
                        f"{logits_b.shape[-1]} and {logits_r.shape[-1]} entries"
                    )
                if measure != "entropy":
                    score = token_disagreement(logits_b, logits_r, measure)
                    take = alive & (score > threshold) & (spent < limit)
                chosen = logits_b
                if logits_r is not None:
                    chosen = torch.where(take[:, None], logits_r, logits_b)
                if do_sample:
                    probs = torch.softmax(chosen.float() / temperature, dim=-1)
                    nxt = torch.multinomial(probs, 1, generator=generator)[:, 0]
                else:
                    nxt = chosen.argmax(-1)
                tokens[:, t] = torch.where(alive, nxt, -1)
                intervened[:, t] = take
                trace[:, t] = torch.where(alive, score.float(), float("nan"))
                entropy[:, t] = torch.where(alive, base_entropy, float("nan"))
                top1[:, t] = torch.where(alive, logits_b.argmax(-1), -1)
                spent += take.long()
                if eos_token_id is not None:
                    alive = alive & (nxt != eos_token_id)
                    if not bool(alive.any()):
                        break
                # finished rows keep being fed a token (their own) so the batch stays rectangular
                seq = torch.cat([seq, nxt[:, None]], dim=1)
    finally:
        for name, model in models.items():
            model.train(was_training[name])
        for stepper in steppers.values():
            stepper.cache = None
    wall = time.perf_counter() - started
    used = t + 1
    return InterventionResult(
        method="Disagreement-guided token intervention",
        nobs=n_rows,
        prompt=as_numpy(ids, name="prompt_ids"),
        tokens=as_numpy(tokens[:, :used], name="tokens"),
        intervened=as_numpy(intervened[:, :used], name="intervened"),
        disagreement=as_numpy(trace[:, :used], name="disagreement"),
        base_entropy=as_numpy(entropy[:, :used], name="base_entropy"),
        base_top1=as_numpy(top1[:, :used], name="base_top1"),
        measure=measure,
        threshold=threshold,
        budget=budget,
        do_sample=do_sample,
        temperature=temperature,
        wall_time_s=wall,
        n_forward=steppers["base"].calls,
        n_reasoner_calls=steppers["reasoner"].calls,
        fit_options={
            "budget": budget,
            "disagreement": measure,
            "threshold": threshold,
            "max_new_tokens": max_new_tokens,
            "do_sample": do_sample,
            "temperature": temperature,
            "eos_token_id": eos_token_id,
            "use_cache": use_cache,
        },
        notes=(
            (
                f"The reasoner ran at {steppers['reasoner'].calls} of {used} steps"
                if measure == "entropy"
                else "Both models ran at every step"
            )
            + "; the budget is counted per sequence.",
        ),
    )
