"""mlcore.interp: hooks, function vectors and their decomposition, on a tiny transformer
trained here on toy in-context tasks."""

import numpy as np
import pytest
import torch
from _icl_toy import N_TASKS, VOCAB, corrupt, make_prompts, spans_of, train_toy

from mlcore.interp import (
    AdditivityResult,
    FunctionVectorResult,
    HeadHooks,
    HybridPatchResult,
    ReweightingResult,
    contextual_reweighting,
    extract_function_vector,
    fit_additivity,
    function_vector,
    indirect_effects,
    isolated_sub_vectors,
    mean_head_activations,
    qk_v_hybrid_patch,
    span_decomposition,
    steered_accuracy,
)
from mlcore.nn import TinyTransformer


@pytest.fixture(scope="module")
def toy():
    """The trained toy model (300 AdamW steps: 10-shot accuracy 1.0 with seed 0) and the top
    heads of a function vector over prompts of all three tasks."""
    # module-scoped fixtures are set up before the per-test one-thread fixture of conftest
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = train_toy()
    finally:
        torch.set_num_threads(threads)
    hooks = HeadHooks(model)
    rng = np.random.default_rng(7)
    prompts, answers, _, _ = make_prompts(96, 10, rng, informative_query=True)
    fv = extract_function_vector(hooks, prompts, corrupt(prompts, rng), answers, n_top_heads=3)
    return hooks, fv.heads


def small_ids(vocab, n=4, t=9, seed=0):
    return torch.randint(0, vocab, (n, t), generator=torch.Generator().manual_seed(seed))


def no_hooks_left(model):
    return all(not (m._forward_hooks or m._forward_pre_hooks) for m in model.modules())


def test_hooks_are_neutral_bitwise(device):
    torch.manual_seed(0)
    model = TinyTransformer(VOCAB, 32, 2, 4).to(device).eval()
    ids = small_ids(VOCAB).to(device)
    hooks = HeadHooks(model)
    with torch.no_grad():
        bare = model(ids)
    hooked, store = hooks.run(ids, capture_z=True, capture_attention=True)
    assert torch.equal(bare, hooked)
    assert len(store["z"]) == 2 and store["z"][0].shape == (4, 9, 4, 8)
    assert no_hooks_left(model)
    # patching each prompt's own clean activations into itself changes nothing: effect 0
    answers = torch.zeros(4, dtype=torch.long)
    effects = indirect_effects(hooks, ids, answers, hooks.head_activations(ids))
    assert torch.equal(effects, torch.zeros(2, 4))


def test_heads_sum_to_the_attention_output_and_spans_to_the_heads(device):
    torch.manual_seed(1)
    model = TinyTransformer(VOCAB, 32, 2, 4).to(device).eval()
    hooks = HeadHooks(model)
    ids = small_ids(VOCAB, t=11).to(device)
    _, store = hooks.run(ids, capture_z=True)
    for layer in range(2):
        z = store["z"][layer]
        heads = sum(hooks.head_to_residual(layer, h, z[:, :, h]) for h in range(4))
        with torch.no_grad():
            block = model.blocks[layer].proj(z.flatten(-2))  # no bias in TinyTransformer
        # float32 sums of 4 products of size-8 dots: agreement to rounding
        assert torch.allclose(heads, block, atol=1e-5, rtol=0)
    decomp = span_decomposition(hooks, ids, spans_of(5), [(0, 1), (1, 2), (1, 3)])
    assert decomp.max_error <= 1e-5
    assert decomp.sub_vectors.shape == (4, 5, 32)
    recombined = decomp.sub_vectors.sum(1) + decomp.rest
    assert torch.allclose(recombined, decomp.total, atol=1e-5, rtol=0)
    # span masses are attention weights: non-negative, at most 1 in total per head
    assert (decomp.mass >= 0).all() and (decomp.mass.sum(-1) <= 1 + 1e-6).all()


def test_span_decomposition_is_exact_on_the_trained_model(toy):
    hooks, heads = toy
    prompts, _, _, _ = make_prompts(32, 10, np.random.default_rng(3))
    decomp = span_decomposition(hooks, prompts, spans_of(10), heads)
    # the acceptance bound of the method notes; measured about 1e-6 (float32)
    assert decomp.max_error <= 1e-5


def test_function_vector_lifts_zero_shot_and_random_heads_do_not(toy):
    hooks, _ = toy
    rng = np.random.default_rng(11)
    accuracy = []
    for task in range(N_TASKS):
        prompts, answers, _, _ = make_prompts(64, 10, rng, task=task, informative_query=True)
        zero, zero_answers, _, _ = make_prompts(256, 0, rng, task=task, informative_query=True)
        res = extract_function_vector(
            hooks,
            prompts,
            corrupt(prompts, rng),
            answers,
            n_top_heads=3,
            zero_shot=zero,
            zero_shot_answers=zero_answers,
            random_state=0,
        )
        assert isinstance(res, FunctionVectorResult) and len(res.heads) == 3
        accuracy.append(res.accuracy.set_index("condition")["accuracy"])
    mean = sum(accuracy) / N_TASKS
    # Measured with these seeds (CPU): zero-shot 0.335 (the queries' answers differ between
    # tasks, so chance is 1/3), 10-shot 1.0, FV 0.90, random heads 0.485. The literal acceptance
    # check (random heads below half the 10-shot accuracy) holds with a small margin only, so
    # the lift over zero-shot is checked as well: random heads give less than half the FV's.
    assert mean["few_shot"] >= 0.95
    assert mean["zero_shot"] < 0.5 * mean["few_shot"]
    assert mean["fv"] >= 0.5 * mean["few_shot"]
    assert mean["random_heads_fv"] < 0.5 * mean["few_shot"]
    assert mean["random_heads_fv"] - mean["zero_shot"] < 0.5 * (mean["fv"] - mean["zero_shot"])


@pytest.mark.parametrize("n_shots", [2, 4, 8])
def test_n_shot_fv_is_additive_in_isolated_sub_fvs(toy, n_shots):
    hooks, heads = toy
    rng = np.random.default_rng(20 + n_shots)
    prompts, _, _, _ = make_prompts(48, n_shots, rng, informative_query=True)
    decomp = span_decomposition(hooks, prompts, spans_of(n_shots), heads)
    subs = isolated_sub_vectors(hooks, prompts, spans_of(n_shots), heads)
    res = fit_additivity(decomp.total, subs)
    assert isinstance(res, AdditivityResult) and res.betas.shape == (48, n_shots)
    row = res.glance().iloc[0]
    # acceptance thresholds of the method notes; measured R2 0.95-0.98, cos 0.97-0.99
    # (the 1/n baseline without fitted weights: R2 0.70-0.81, cos 0.92-0.94)
    assert row["cos"] >= 0.9 and row["r2"] >= 0.8
    # span-attributed sub-FVs with beta = 1 leave out only the query tokens' term
    span = fit_additivity(decomp.total, decomp.sub_vectors, baseline_beta=1.0)
    assert span.glance().iloc[0]["baseline_cos"] >= 0.9


def test_fit_additivity_recovers_known_weights():
    rng = np.random.default_rng(0)
    subs = rng.normal(size=(5, 3, 40))
    beta = np.array([0.5, 0.2, 0.3])
    total = np.einsum("pnd,n->pd", subs, beta) + 0.7
    res = fit_additivity(total, subs)
    # noise-free data: exact up to least-squares rounding
    np.testing.assert_allclose(res.betas, np.tile(beta, (5, 1)), atol=1e-10)
    np.testing.assert_allclose(res.table["r2"].iloc[:5], 1.0, atol=1e-12)
    assert res.baseline_beta == pytest.approx(1 / 3)


def test_attention_moves_to_unambiguous_demonstrations(toy):
    hooks, heads = toy
    prompts, _, _, amb = make_prompts(64, 8, np.random.default_rng(5), informative_query=True)
    decomp = span_decomposition(hooks, prompts, spans_of(8), heads)
    res = contextual_reweighting(decomp, amb)
    assert isinstance(res, ReweightingResult)
    # measured slope -0.097 mass per extra task fitted, Spearman -0.77
    assert res.slope < 0 and res.correlation < -0.3
    means = res.tidy().set_index("ambiguity")["mean_mass"]
    assert means.loc[1.0] > means.loc[3.0]


def test_hybrid_patching_contextual_corner_is_the_plain_fv(toy):
    hooks, heads = toy
    rng = np.random.default_rng(9)
    prompts, _, _, _ = make_prompts(32, 6, rng, task=2, informative_query=True)
    zero, zero_answers, _, _ = make_prompts(128, 0, rng, task=2, informative_query=True)
    res = qk_v_hybrid_patch(hooks, prompts, spans_of(6), heads, zero, zero_answers)
    assert isinstance(res, HybridPatchResult) and len(res.table) == 4
    # (context, context) rebuilds each prompt's head output from its own pattern and values:
    # the FV of the per-prompt activations, so its accuracy is that FV's accuracy
    plain = function_vector(hooks, hooks.head_activations(prompts).mean(0), heads)
    corner = res.table.query("qk == 'context' and v == 'context'").iloc[0]
    assert corner["accuracy"] == steered_accuracy(hooks, zero, zero_answers, plain)
    assert res.zero_shot_accuracy == steered_accuracy(hooks, zero, zero_answers)


def test_first_layer_values_carry_no_context_and_positions_default_to_arange(toy):
    hooks, _ = toy
    rng = np.random.default_rng(4)
    prompts, _, _, _ = make_prompts(16, 4, rng, task=1, informative_query=True)
    zero, zero_answers, _, _ = make_prompts(32, 0, rng, task=1, informative_query=True)
    first = [(0, 0), (0, 1)]
    res = qk_v_hybrid_patch(hooks, prompts, spans_of(4), first, zero, zero_answers)
    # layer-0 values are projections of the token embeddings (rotary turns queries and keys
    # only): the V swap is vacuous there, which the result reports as a change of 0
    assert res.value_change < 1e-6
    table = res.table.set_index(["qk", "v"])["probability"]
    assert table[("context", "isolated")] == pytest.approx(table[("context", "context")], abs=1e-6)
    # explicit positions 0..t-1 are what the model uses by default
    t = prompts.shape[1]
    assert torch.equal(hooks.logits(prompts), hooks.logits(prompts, positions=torch.arange(t)))
    shifted = hooks.logits(prompts, positions=torch.arange(t) + 3)
    assert not torch.equal(hooks.logits(prompts), shifted)


def test_held_out_additivity_recovers_shared_weights_and_rejects_mismatched_parts():
    rng = np.random.default_rng(1)
    subs = rng.normal(size=(12, 3, 40))
    beta = np.array([0.5, 0.2, 0.3])
    total = np.einsum("pnd,n->pd", subs, beta) + 0.7
    other = rng.normal(size=subs.shape)
    res = fit_additivity(total, subs, held_out=0.5, mismatched=other, random_state=0)
    by_fit = res.table.set_index("fit")
    # shared noise-free weights: the held-out fit is exact up to rounding
    assert by_fit.loc["held_out", "r2"] == pytest.approx(1.0, abs=1e-10)
    assert by_fit.loc["held_out", "intercept"] == pytest.approx(0.7, abs=1e-10)
    # unrelated parts explain nothing out of sample; per prompt, 4 free parameters over 40
    # coordinates still fit about 4/40 of the variance
    assert by_fit.loc["held_out_mismatched", "r2"] < 0.05
    assert 0.0 < by_fit.loc["mismatched", "r2"] < 0.3
    glance = res.glance().iloc[0]
    assert glance["held_out_cos"] == pytest.approx(1.0, abs=1e-10)
    assert len(res.tidy()) == 12 + 4  # the prompts, the mean, and three extra fits


def test_results_report_and_plot(toy):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hooks, heads = toy
    rng = np.random.default_rng(2)
    prompts, answers, _, amb = make_prompts(16, 4, rng, task=0, informative_query=True)
    zero, zero_answers, _, _ = make_prompts(16, 0, rng, task=0, informative_query=True)
    fv = extract_function_vector(
        hooks,
        prompts,
        corrupt(prompts, rng),
        answers,
        n_top_heads=2,
        zero_shot=zero,
        zero_shot_answers=zero_answers,
        n_random=2,
        random_state=0,
    )
    decomp = span_decomposition(hooks, prompts, spans_of(4), heads)
    results = [
        fv,
        fit_additivity(decomp.total, isolated_sub_vectors(hooks, prompts, spans_of(4), heads)),
        contextual_reweighting(decomp, amb),
        qk_v_hybrid_patch(hooks, prompts, spans_of(4), heads, zero, zero_answers),
    ]
    for res in results:
        assert "Wang" in res.method or "Todd" in res.method
        assert len(res.tidy()) > 0 and len(res.glance()) == 1
        assert res.method in str(res.summary())
        res.plot()
        plt.close("all")
    assert fv.tidy()["top"].sum() == 2 and fv.vector.shape == (32,)


def test_bad_inputs_are_named():
    torch.manual_seed(0)
    model = TinyTransformer(VOCAB, 32, 2, 4).eval()
    hooks = HeadHooks(model)
    ids = small_ids(VOCAB)
    with pytest.raises(ValueError, match="out-projection"):
        HeadHooks(torch.nn.Linear(3, 3))
    with pytest.raises(TypeError, match="`model`"):
        HeadHooks("gpt2")
    with pytest.raises(ValueError, match="`patch`"):
        hooks.run(ids, patch={(2, 0): torch.zeros(8)})
    with pytest.raises(ValueError, match="`spans`"):
        span_decomposition(hooks, ids, [(0, 4), (3, 6)], [(0, 0)])
    with pytest.raises(ValueError, match="`answers`"):
        indirect_effects(
            hooks, ids, torch.zeros(3, dtype=torch.long), mean_head_activations(hooks, ids)
        )
    with pytest.raises(ValueError, match="`source`"):
        indirect_effects(hooks, ids, torch.zeros(4, dtype=torch.long), torch.zeros(2, 4, 3))
    with pytest.raises(ValueError, match="`ids`"):
        hooks.run(torch.randn(2, 3))
    with pytest.raises(ValueError, match="`total` must not contain NaN"):
        fit_additivity(np.full((2, 4), np.nan), np.zeros((2, 1, 4)))
    decomp = span_decomposition(hooks, ids, spans_of(3), [(0, 0)])
    with pytest.raises(ValueError, match="`ambiguity`"):
        contextual_reweighting(decomp, np.zeros((4, 2)))
    with pytest.raises(ValueError, match="`corrupted`"):
        extract_function_vector(
            hooks, ids, ids[:2], torch.zeros(4, dtype=torch.long), n_top_heads=2
        )
    with pytest.raises(ValueError, match="`layers` must name layers in \\[0, 1\\]"):
        extract_function_vector(hooks, ids, ids, torch.zeros(4, dtype=torch.long), layers=[2])
    with pytest.raises(ValueError, match="`n_top_heads` must be at most 4"):
        extract_function_vector(
            hooks, ids, ids, torch.zeros(4, dtype=torch.long), n_top_heads=5, layers=[1]
        )
    with pytest.raises(ValueError, match="`positions` must be an integer tensor"):
        hooks.run(ids, positions=torch.arange(3))
    with pytest.raises(ValueError, match="`positions`"):
        isolated_sub_vectors(hooks, ids, spans_of(3), [(0, 0)], positions="shifted")
    zero = torch.zeros((4, 1), dtype=torch.long)
    with pytest.raises(ValueError, match="`donor` must have the shape"):
        qk_v_hybrid_patch(hooks, ids, spans_of(3), [(0, 0)], zero, zero[:, 0], donor=ids[:2])
    with pytest.raises(ValueError, match="`held_out`"):
        fit_additivity(np.ones((2, 4)), np.ones((2, 1, 4)), held_out=0.2)
    with pytest.raises(ValueError, match="`mismatched` must have the shape"):
        fit_additivity(np.ones((2, 4)), np.ones((2, 1, 4)), mismatched=np.ones((2, 2, 4)))


def test_gpt2_heads_are_found_and_hooks_are_neutral():
    transformers = pytest.importorskip("transformers")
    config = transformers.GPT2Config(
        vocab_size=50,
        n_positions=32,
        n_embd=32,
        n_layer=2,
        n_head=4,
        bos_token_id=0,
        eos_token_id=0,
    )
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(config).eval()
    hooks = HeadHooks(model)
    assert (hooks.n_layers, hooks.n_heads, hooks.head_dim, hooks.d_model) == (2, 4, 8, 32)
    ids = small_ids(50, t=11)
    with torch.no_grad():
        bare = model(ids).logits
    assert torch.equal(bare, hooks.logits(ids))
    assert no_hooks_left(model)
    effects = indirect_effects(
        hooks, ids, torch.zeros(4, dtype=torch.long), hooks.head_activations(ids)
    )
    assert torch.equal(effects, torch.zeros(2, 4))
    # heads plus the out-projection bias make the attention block's output
    _, store = hooks.run(ids, capture_z=True)
    z = store["z"][1]
    heads = sum(hooks.head_to_residual(1, h, z[:, :, h]) for h in range(4))
    proj = model.transformer.h[1].attn.c_proj
    with torch.no_grad():
        # float32 sums of four size-8 dot products: agreement to rounding
        assert torch.allclose(heads + proj.bias, proj(z.flatten(-2)), atol=1e-5, rtol=0)
    # the attention recomputed from c_attn reproduces the heads' outputs of the default (sdpa)
    # attention; measured 7e-9
    decomp = span_decomposition(hooks, ids, spans_of(5), [(0, 0), (1, 3)])
    assert decomp.max_error <= 1e-5


def test_llama_naming_reads_heads_but_refuses_the_pattern():
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(
        vocab_size=50,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=32,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).eval()
    hooks = HeadHooks(model)
    assert (hooks.n_layers, hooks.n_heads, hooks.head_dim) == (2, 4, 8)
    ids = small_ids(50)
    with torch.no_grad():
        bare = model(ids).logits
    assert torch.equal(bare, hooks.logits(ids))
    # an FV added after layer 0 changes the last position only
    steered = hooks.logits(ids, add=(0, torch.ones(32)))
    assert torch.equal(steered[:, :-1], bare[:, :-1]) and not torch.equal(steered, bare)
    with pytest.raises(ValueError, match="attention pattern"):
        span_decomposition(hooks, ids, spans_of(3), [(0, 0)])
