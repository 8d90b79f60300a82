"""Disagreement-guided token intervention (mlcore.decoding) on two tiny models trained here.

The task is "plan, then execute": the prompt ``[BOS, a, b, SEP]`` (digits a, b) asks for a plan
token P_p with p = (a + b) mod 3, then the arithmetic progression x_k = (a + k (p + 1)) mod 10 for
k = 1..8, then EOS (10 new tokens). The reasoner is trained on clean data. The base sees the
shortcut plan p = a mod 3 in 60 % of its examples (executed consistently), so it learns the
execution perfectly and the decision token wrongly: greedily it picks the shortcut, which is
right only when b mod 3 = 0. The gap between the two models therefore sits on one early
decision token out of ten, the situation the paper describes.
"""

import math

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from mlcore.decoding import InterventionResult, intervene_generate, token_disagreement
from mlcore.decoding.simulate import (
    BOS,
    EOS,
    N_NEW,
    VOCAB,
    plan_execute_task,
    train_plan_execute_model,
)
from mlcore.nn import TinyTransformer

NEW = N_NEW
PROMPTS, ANSWERS = plan_execute_task()


@pytest.fixture(scope="module")
def pair():
    """(base, reasoner), trained once per module (about 10 s of CPU on one thread)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return (
            train_plan_execute_model(0.6, random_state=0),
            train_plan_execute_model(0.0, random_state=1),
        )
    finally:
        torch.set_num_threads(threads)


def _accuracy(tokens) -> float:
    return float((torch.as_tensor(tokens) == ANSWERS).all(1).float().mean())


def _greedy(model, prompts, n):
    """Plain greedy decoding, re-reading the whole prefix each step."""
    seq = prompts
    with torch.no_grad():
        for _ in range(n):
            seq = torch.cat([seq, model(seq)[:, -1].argmax(-1, keepdim=True)], 1)
    return seq[:, prompts.shape[1] :]


def _random_position_control(base, reasoner, prompts, seed):
    """Greedy base decoding with one reasoner token at a uniformly random position per row."""
    where = torch.randint(0, NEW, (len(prompts),), generator=torch.Generator().manual_seed(seed))
    seq = prompts
    with torch.no_grad():
        for t in range(NEW):
            pick = torch.where(
                (where == t)[:, None], reasoner(seq)[:, -1], base(seq)[:, -1]
            ).argmax(-1)
            seq = torch.cat([seq, pick[:, None]], 1)
    return seq[:, prompts.shape[1] :]


def test_small_budget_recovers_the_reasoner(pair):
    base, reasoner = pair
    base_acc = _accuracy(_greedy(base, PROMPTS, NEW))
    reasoner_acc = _accuracy(_greedy(reasoner, PROMPTS, NEW))
    res = intervene_generate(base, reasoner, PROMPTS, budget=1, max_new_tokens=NEW)
    mixed_acc = _accuracy(res.tokens)
    control_acc = _accuracy(_random_position_control(base, reasoner, PROMPTS, seed=0))
    # Measured here: base 0.46, reasoner 1.00, intervened 1.00 at a 5.8 % intervention rate
    # (JS 1.00 at 6.6 %, top-1 1.00 at 5.4 %), one reasoner token at a random position 0.49. The base is wrong exactly when its shortcut plan differs from
    # the right one (60 of 100 prompts, minus those where the 0.4 weight of the right plan
    # wins), so <= 0.7 leaves slack for training noise; the spec's acceptance bar is recovery
    # to >= 0.9 x the reasoner with <= 10 % of tokens and the random control >= 20 points lower.
    assert base_acc <= 0.7
    assert reasoner_acc >= 0.95
    assert mixed_acc >= 0.9 * reasoner_acc
    assert res.intervention_rate <= 0.10
    assert control_acc <= mixed_acc - 0.20
    # the takeovers sit on the decision token, the first of ten
    positions = np.concatenate(res.positions)
    assert np.median(positions) <= 0.25 * NEW
    assert (positions == 0).mean() >= 0.9


def test_budget_zero_is_the_base_bitwise(pair):
    base, reasoner = pair
    res = intervene_generate(base, reasoner, PROMPTS, budget=0, max_new_tokens=NEW)
    assert np.array_equal(res.tokens, _greedy(base, PROMPTS, NEW).numpy())
    assert not res.intervened.any()
    # sampled: one multinomial draw per step from the base, the same stream as a plain loop
    sampled = intervene_generate(
        base,
        reasoner,
        PROMPTS,
        budget=0,
        max_new_tokens=NEW,
        do_sample=True,
        temperature=1.5,
        random_state=3,
    )
    gen, seq = torch.Generator().manual_seed(3), PROMPTS
    with torch.no_grad():
        for _ in range(NEW):
            probs = torch.softmax(base(seq)[:, -1] / 1.5, -1)
            seq = torch.cat([seq, torch.multinomial(probs, 1, generator=gen)], 1)
    assert np.array_equal(sampled.tokens, seq[:, 4:].numpy())


def test_positions_are_where_disagreement_exceeds_the_threshold(pair):
    base, reasoner = pair
    for measure, threshold in (("kl", 0.5), ("js", 0.05), ("top1", 0.5)):
        res = intervene_generate(
            base, reasoner, PROMPTS, disagreement=measure, threshold=threshold, max_new_tokens=NEW
        )
        full = torch.as_tensor(np.concatenate([res.prompt, res.tokens], 1))
        with torch.no_grad():
            # logits at position j predict token j + 1: the ten steps read positions 3..12
            lb, lr = base(full)[:, 3:-1], reasoner(full)[:, 3:-1]
        lpb, lpr = F.log_softmax(lb.double(), -1), F.log_softmax(lr.double(), -1)
        if measure == "kl":
            recomputed = (lpr.exp() * (lpr - lpb)).sum(-1)
        elif measure == "js":
            m = 0.5 * (lpb.exp() + lpr.exp())
            recomputed = 0.5 * (
                (lpb.exp() * (lpb - m.log())).sum(-1) + (lpr.exp() * (lpr - m.log())).sum(-1)
            )
        else:
            recomputed = (lb.argmax(-1) != lr.argmax(-1)).double()
        recomputed = recomputed.numpy()
        # One full forward versus incremental prefixes: float32 rounding differs by ~1e-6, so
        # positions within 1e-4 of the threshold may legitimately go either way.
        clear = np.abs(recomputed - threshold) > 1e-4
        assert clear.mean() > 0.95
        assert np.array_equal(res.intervened[clear], (recomputed > threshold)[clear])
        np.testing.assert_allclose(res.disagreement, recomputed, atol=1e-4)
        assert res.intervened.any()


def test_budget_caps_single_token_takeovers(pair):
    base, reasoner = pair
    res = intervene_generate(
        base, reasoner, PROMPTS[:10], budget=2, threshold=-math.inf, max_new_tokens=NEW
    )
    # everything is over -inf, so the first two steps go to the reasoner and no more
    assert res.intervened[:, :2].all() and not res.intervened[:, 2:].any()
    for row in range(10):
        prefix = torch.as_tensor(res.sequences[row][None, :6])
        with torch.no_grad():
            base_next = int(base(prefix)[0, -1].argmax())
        # after the second takeover control is back with the base
        assert res.tokens[row, 2] == base_next
    unlimited = intervene_generate(base, reasoner, PROMPTS, threshold=-math.inf, max_new_tokens=NEW)
    assert np.array_equal(unlimited.tokens, _greedy(reasoner, PROMPTS, NEW).numpy())
    fraction = intervene_generate(base, reasoner, PROMPTS[:3], budget=0.25, threshold=-math.inf)
    assert fraction.budget == 8 and (fraction.n_interventions == 8).all()
    never = intervene_generate(base, reasoner, PROMPTS[:3], threshold=math.inf, max_new_tokens=4)
    assert not never.intervened.any()


def test_entropy_trigger_calls_the_reasoner_only_where_it_fires(pair):
    base, reasoner = pair
    res = intervene_generate(
        base, reasoner, PROMPTS, disagreement="entropy", threshold=0.5, max_new_tokens=NEW
    )
    # the trace is the base's entropy, and the takeovers are where it exceeds the threshold
    np.testing.assert_array_equal(res.disagreement, res.base_entropy)
    assert np.array_equal(res.intervened, res.base_entropy > 0.5)
    assert res.n_reasoner_calls == res.intervened.any(axis=0).sum() < NEW
    # the base hesitates (about 0.6 / 0.4) exactly on the plans its shortcut gets wrong
    assert _accuracy(res.tokens) >= 0.9 and res.intervention_rate <= 0.10


def test_batch_rows_equal_single_runs(pair):
    base, reasoner = pair
    batch = intervene_generate(base, reasoner, PROMPTS[40:46], budget=1, max_new_tokens=NEW)
    for i, prompt in enumerate(PROMPTS[40:46]):
        one = intervene_generate(base, reasoner, prompt, budget=1, max_new_tokens=NEW)
        assert np.array_equal(one.tokens[0], batch.tokens[i])
        assert np.array_equal(one.intervened[0], batch.intervened[i])


def test_eos_ends_rows_and_results_report(pair):
    base, reasoner = pair
    res = intervene_generate(
        base, reasoner, PROMPTS[:20], budget=1, max_new_tokens=NEW + 5, eos_token_id=EOS
    )
    assert isinstance(res, InterventionResult)
    assert res.tokens.shape == (20, NEW)  # stops once every row emitted EOS
    assert (res.lengths == NEW).all() and (res.tokens[:, -1] == EOS).all()
    tidy = res.tidy()
    assert len(tidy) == res.lengths.sum()
    assert tidy["intervened"].sum() == res.n_interventions.sum()
    glance = res.glance().iloc[0]
    assert glance["n_interventions"] == res.n_interventions.sum() and glance["budget"] == 1
    assert len(res.summary().tables["sequences"]) == 20
    assert res.n_forward == NEW and res.n_changed.sum() <= res.n_interventions.sum()
    assert "reasoner tokens" in repr(res)
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res.plot()
    res.plot("positions")
    plt.close("all")


def test_disagreement_closed_forms():
    gen = torch.Generator().manual_seed(0)
    lb, lr = torch.randn(5, 7, generator=gen), torch.randn(5, 7, generator=gen)
    pb, pr = torch.softmax(lb.double(), -1).numpy(), torch.softmax(lr.double(), -1).numpy()
    kl = (pr * np.log(pr / pb)).sum(-1)
    m = (pb + pr) / 2
    js = 0.5 * (pb * np.log(pb / m)).sum(-1) + 0.5 * (pr * np.log(pr / m)).sum(-1)
    # float32 log-softmax of O(1) logits: ~1e-7 relative error per entry
    np.testing.assert_allclose(token_disagreement(lb, lr, "kl").numpy(), kl, atol=1e-6)
    np.testing.assert_allclose(token_disagreement(lb, lr, "js").numpy(), js, atol=1e-6)
    top1 = (pb.argmax(-1) != pr.argmax(-1)).astype(float)
    assert np.array_equal(token_disagreement(lb, lr, "top1").numpy(), top1)
    assert float(token_disagreement(lb, lb, "kl").abs().max()) < 1e-6
    assert float(token_disagreement(lb, -10 * lb, "js").max()) <= math.log(2)


def test_inputs_and_models_are_left_as_they_were(pair):
    base, reasoner = pair
    base.train()
    prompts = PROMPTS[:4].clone()
    before = {k: v.clone() for k, v in base.state_dict().items()}
    intervene_generate(base, reasoner, prompts, budget=1, max_new_tokens=3)
    assert base.training and not reasoner.training
    base.eval()
    assert torch.equal(prompts, PROMPTS[:4])
    assert all(torch.equal(v, base.state_dict()[k]) for k, v in before.items())


class _Logits(torch.nn.Module):
    """A module returning fixed-vocabulary logits of a given rank (for the error checks)."""

    def __init__(self, vocab, ndim=3):
        super().__init__()
        # stored as `size`, not `vocab`: these modules declare no vocabulary
        self.size, self.ndim = vocab, ndim
        self.w = torch.nn.Parameter(torch.zeros(1))

    def forward(self, ids):
        out = torch.zeros(*ids.shape, self.size) + self.w
        return out if self.ndim == 3 else out[:, -1]


def test_bad_input_errors():
    a, b = TinyTransformer(16, 16, 1, 2), TinyTransformer(17, 16, 1, 2)
    prompt = torch.tensor([[1, 2, 3]])
    with pytest.raises(ValueError, match="share a vocabulary; got vocab sizes 16 and 17"):
        intervene_generate(a, b, prompt)
    with pytest.raises(ValueError, match="logits have 16 and 17 entries"):
        intervene_generate(_Logits(16), _Logits(17), prompt)
    with pytest.raises(ValueError, match="`budget` must lie in"):
        intervene_generate(a, a, prompt, budget=-1)
    with pytest.raises(ValueError, match="`budget` must lie in"):
        intervene_generate(a, a, prompt, budget=1.5)
    meta = torch.zeros(1, 3, dtype=torch.long, device="meta")
    with pytest.raises(ValueError, match="`prompt_ids` is on meta but `base` is on cpu"):
        intervene_generate(a, a, meta)
    with pytest.raises(ValueError, match="`disagreement` must be one of"):
        intervene_generate(a, a, prompt, disagreement="cosine")
    with pytest.raises(TypeError, match="`prompt_ids` must be an integer tensor"):
        intervene_generate(a, a, prompt.float())
    with pytest.raises(ValueError, match=r"`prompt_ids` must hold token ids in \[0, 15\]"):
        intervene_generate(a, a, torch.tensor([[1, 16]]))
    with pytest.raises(ValueError, match="use_cache=True needs Hugging Face models"):
        intervene_generate(a, a, prompt, use_cache=True)
    with pytest.raises(ValueError, match=r"must map ids \(batch, time\) to logits"):
        intervene_generate(_Logits(16, ndim=2), a, prompt)
    with pytest.raises(TypeError, match="`reasoner` must be a torch.nn.Module"):
        intervene_generate(a, "gpt2", prompt)
    with pytest.raises(ValueError, match="`temperature` must lie in"):
        intervene_generate(a, a, prompt, do_sample=True, temperature=0.0)


def test_follows_the_device(device):
    torch.manual_seed(0)
    base, reasoner = TinyTransformer(16, 16, 1, 2), TinyTransformer(16, 16, 1, 2)
    on_cpu = intervene_generate(base, reasoner, PROMPTS[:8], budget=2, threshold=0.0)
    res = intervene_generate(
        base.to(device), reasoner.to(device), PROMPTS[:8].to(device), budget=2, threshold=0.0
    )
    assert res.intervened.sum() == 16
    # CPU and CUDA kernels round differently; random-init logits have no near-ties at 1e-4
    np.testing.assert_allclose(res.disagreement, on_cpu.disagreement, atol=1e-4)
    assert np.array_equal(res.tokens, on_cpu.tokens)


def _gpt2(seed, vocab=VOCAB):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(seed)
    config = transformers.GPT2Config(
        vocab_size=vocab,
        n_positions=64,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=BOS,
        eos_token_id=EOS,
        pad_token_id=EOS,
    )
    return transformers.GPT2LMHeadModel(config).eval()


def test_hf_kv_cache_matches_recomputation():
    base, reasoner = _gpt2(0), _gpt2(1)
    prompts = PROMPTS[::10]
    probe = intervene_generate(base, reasoner, prompts, budget=0, max_new_tokens=24)
    threshold = float(np.quantile(probe.disagreement, 0.8))
    kwargs = {"budget": 4, "threshold": threshold, "max_new_tokens": 24}
    cached = intervene_generate(base, reasoner, prompts, **kwargs)
    fresh = intervene_generate(base, reasoner, prompts, use_cache=False, **kwargs)
    assert cached.intervened.any()
    assert np.array_equal(cached.tokens, fresh.tokens)
    assert np.array_equal(cached.intervened, fresh.intervened)
    # the same logits through two attention paths: float32 rounding only
    np.testing.assert_allclose(cached.disagreement, fresh.disagreement, atol=1e-5)
    # budget 0 is the base's own `generate`
    own = base.generate(
        prompts,
        attention_mask=torch.ones_like(prompts),
        max_new_tokens=24,
        do_sample=False,
        eos_token_id=None,
        min_new_tokens=24,
    )
    assert np.array_equal(probe.tokens, own[:, prompts.shape[1] :].numpy())
    # the entropy trigger skips the reasoner; its cache then catches up on several tokens
    kwargs = {"disagreement": "entropy", "max_new_tokens": 24}
    kwargs["threshold"] = float(np.quantile(probe.base_entropy, 0.9))
    cached = intervene_generate(base, reasoner, prompts, **kwargs)
    fresh = intervene_generate(base, reasoner, prompts, use_cache=False, **kwargs)
    assert 0 < cached.n_reasoner_calls < 24
    assert np.array_equal(cached.tokens, fresh.tokens)
    assert np.array_equal(cached.intervened, fresh.intervened)


def test_hf_vocab_mismatch_is_refused():
    with pytest.raises(ValueError, match="vocab sizes 16 and 20"):
        intervene_generate(_gpt2(0), _gpt2(1, vocab=20), PROMPTS[:1])


def test_plan_execute_task_and_trainer_inputs():
    prompts, answers = plan_execute_task()
    assert prompts.shape == (100, 4) and answers.shape == (100, NEW)
    # answer 37 = [BOS, 3, 7, SEP] -> plan (3 + 7) mod 3 = 1, steps of 2 from 3, then EOS
    assert answers[37].tolist() == [11, 5, 7, 9, 1, 3, 5, 7, 9, EOS]
    with pytest.raises(ValueError, match="shortcut"):
        train_plan_execute_model(1.5)
    with pytest.raises(ValueError, match="random_state"):
        train_plan_execute_model(0.0, random_state=-1)
