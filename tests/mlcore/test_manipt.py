"""ManiPT, CoOp and KgCoOp (mlcore.prompt): the spec's acceptance checks on a small promptable
stand-in encoder, plus input errors and devices. End to end on the tiny CLIP: test_manipt_e2e.py.
"""

import hashlib
import math
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from mlcore.prompt import (
    IncrementalFusion,
    ManifoldConsistencyLoss,
    ManiPT,
    PromptLearner,
    PromptTuningResult,
    manifold_drift,
)

WORDS = "a photo of the circle square triangle cross red green blue yellow small large x".split()
PAD, SOT, EOT, UNK = 0, 1, 2, 3


class StandIn(nn.Module):
    """A frozen promptable dual encoder: word embeddings, a causal GRU read at the end-of-text
    token, and a linear image tower; random weights (the checks here do not need pretraining)."""

    def __init__(self, width=16, embed_dim=12, in_dim=20, length=12, seed=0, device="cpu"):
        super().__init__()
        torch.manual_seed(seed)
        self.index = {w: i + 4 for i, w in enumerate(WORDS)}
        self.length = length
        self.token_embedding = nn.Embedding(len(WORDS) + 4, width)
        self.positional = nn.Parameter(0.1 * torch.randn(length, width))
        self.rnn = nn.GRU(width, width, batch_first=True)
        self.text_projection = nn.Linear(width, embed_dim, bias=False)
        self.visual = nn.Linear(in_dim, embed_dim)
        self.embed_dim = embed_dim
        self.logit_scale = 20.0
        self.requires_grad_(False)
        self.to(device).eval()

    @property
    def device(self):
        return self.positional.device

    def tokenize(self, texts):
        ids = torch.full((len(texts), self.length), PAD, dtype=torch.long)
        for i, text in enumerate(texts):
            row = [SOT, *(self.index.get(w, UNK) for w in re.findall(r"[a-z]+", text.lower())), EOT]
            ids[i, : len(row)] = torch.tensor(row)
        return ids.to(self.device)

    def encode_text_embeddings(self, embeds, ids):
        hidden, _ = self.rnn(embeds + self.positional[: ids.shape[1]])
        eot = (ids == EOT).int().argmax(dim=1)
        return F.normalize(self.text_projection(hidden[torch.arange(len(ids)), eot]), dim=-1)

    def encode_text(self, texts):
        ids = self.tokenize(texts)
        return self.encode_text_embeddings(self.token_embedding(ids), ids)

    def encode_image(self, images):
        return F.normalize(self.visual(images.flatten(1).to(self.device)), dim=-1)


CLASSES = ["red circle", "green square", "blue triangle", "yellow cross"]


def _data(encoder, n_per_class=8, seed=0):
    """Images whose frozen features lean toward their class's hand-crafted text feature, so the
    zero-shot classifier is right on part of them and training has something to learn."""
    g = torch.Generator().manual_seed(seed)
    labels = torch.arange(len(CLASSES)).repeat_interleave(n_per_class)
    text = encoder.encode_text([f"a photo of a {c}." for c in CLASSES])
    # images = pseudo-inverse of the image tower applied to a noisy class direction
    w, b = encoder.visual.weight, encoder.visual.bias
    target = text[labels] + 0.8 * torch.randn(len(labels), encoder.embed_dim, generator=g)
    images = torch.linalg.lstsq(w, (target - b).T).solution.T
    return images, labels.numpy()


def _hash(module):
    h = hashlib.sha256()
    for name, tensor in sorted(module.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().cpu().numpy().tobytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def encoder():
    return StandIn()


@pytest.fixture(scope="module")
def data(encoder):
    return _data(encoder)


def test_context_starts_at_the_hand_crafted_prompt(encoder):
    learner = PromptLearner(encoder, CLASSES, method="coop", random_state=0)
    assert learner.n_ctx == 4  # "a photo of a"
    prompted, frozen = learner.text_features()
    # the same embeddings through the same encoder: equal up to float32 rounding
    torch.testing.assert_close(prompted, frozen, rtol=0, atol=1e-6)


def test_beta_zero_gives_the_zero_shot_predictions_whatever_the_training(encoder, data):
    images, labels = data
    model = ManiPT(
        encoder, CLASSES, n_ctx=4, method="manipt", beta=0.0, penalty_text=1e6,
        penalty_image=1e6,
    )  # fmt: skip
    learner = model.fit(images, labels, maxiter=20, lr=0.05, random_state=0).learner
    with torch.no_grad():
        logits = learner(images)
        zero_shot = (
            encoder.logit_scale
            * encoder.encode_image(images)
            @ encoder.encode_text([f"a photo of a {c}." for c in CLASSES]).T
        )
    assert torch.equal(logits.argmax(1), zero_shot.argmax(1))
    # the fused features are normalize(frozen): one renormalisation, float32 rounding only
    torch.testing.assert_close(logits, zero_shot, rtol=0, atol=1e-4)


def test_huge_penalty_keeps_the_prompted_features_at_the_frozen_ones(encoder, data):
    images, labels = data
    model = ManiPT(encoder, CLASSES, method="manipt", beta=1.0, penalty_text=1e4,
                   penalty_image=1e4)  # fmt: skip
    learner = model.fit(images, labels, maxiter=30, lr=0.01, random_state=0).learner
    drift = learner.drift(learner.encode_images(images))
    coop = ManiPT(encoder, CLASSES, method="coop")
    before = coop.fit(images, labels, maxiter=30, lr=0.01, random_state=0).learner
    # the penalised learner moves far less than unpenalised CoOp from the same start
    prompted, frozen = learner.text_features()
    coop_prompted, _ = before.text_features()
    gap = (1 - F.cosine_similarity(prompted, frozen)).mean().item()
    coop_gap = (1 - F.cosine_similarity(coop_prompted, frozen)).mean().item()
    # a 1e4 penalty should hold the gap at least an order of magnitude below CoOp's
    assert gap < 0.1 * coop_gap
    assert drift["text"] <= drift["text_frozen"] + 1e-3


def test_no_constraint_and_beta_one_is_coop_to_1e6(encoder, data):
    images, labels = data
    features = PromptLearner(encoder, CLASSES, method="coop").encode_images(images)
    runs = {}
    for name, kwargs in {
        "coop": {"method": "coop"},
        "manipt": {
            "method": "manipt", "beta": 1.0, "penalty_text": 0.0, "penalty_image": 0.0,
            "image_adapter": False,
        },
    }.items():  # fmt: skip
        runs[name] = ManiPT(encoder, CLASSES, n_ctx=4, **kwargs).fit(
            features, labels, encoded=True, maxiter=25, log_every=1, random_state=1
        )
    # the same loss and the same Adam steps through two code paths: float32 rounding only
    for column in ("loss", "cross_entropy"):
        np.testing.assert_allclose(
            runs["manipt"].history[column], runs["coop"].history[column], rtol=0, atol=1e-6
        )
    assert runs["manipt"].history["loss"].iloc[-1] < runs["manipt"].history["loss"].iloc[0]


def test_with_its_adapter_manipt_starts_at_coops_loss(encoder, data):
    """The image adapter starts as the identity, so the first loss matches CoOp's too."""
    images, labels = data
    common = {"n_ctx": 4, "random_state": 3}
    coop = PromptLearner(encoder, CLASSES, method="coop", **common)
    manipt = PromptLearner(encoder, CLASSES, method="manipt", beta=1.0, penalty_text=0.0,
                           penalty_image=0.0, **common)  # fmt: skip
    features = coop.encode_images(images)
    a = coop.loss_from_features(features, labels).total.item()
    b = manipt.loss_from_features(features, labels).total.item()
    assert abs(a - b) < 1e-6


def test_only_prompt_parameters_change_and_get_gradients(encoder, data):
    images, labels = data
    before = _hash(encoder)
    learner = PromptLearner(encoder, CLASSES, method="manipt", learnable_beta=True, random_state=0)
    names = {name for name, p in learner.named_parameters() if p.requires_grad}
    assert names == {"ctx", "fusion.theta", "adapter.down.weight", "adapter.up.weight"}
    start = {n: p.detach().clone() for n, p in learner.named_parameters()}
    trained = ManiPT.from_learner(learner).fit(images, labels, maxiter=10, random_state=0).learner
    assert _hash(encoder) == before
    assert all(p.grad is None for p in encoder.parameters())
    assert not any(p.requires_grad for p in encoder.parameters())
    for n, p in trained.named_parameters():
        assert not torch.equal(p, start[n]), n
        assert torch.equal(dict(learner.named_parameters())[n], start[n]), n  # passed in: kept
    # the learner's state is the prompt alone: the encoder is held, not registered, and shared
    assert set(trained.state_dict()) == names
    assert trained.encoder is encoder


def test_manipt_drifts_less_than_coop(encoder, data):
    images, labels = data
    drifts = {}
    for method in ("coop", "manipt"):
        fit = ManiPT(encoder, CLASSES, method=method).fit(
            images, labels, maxiter=60, lr=0.02, random_state=0
        )
        learner = fit.learner
        drifts[method] = learner.drift(learner.encode_images(images), k=2)["text"]
    assert drifts["manipt"] < drifts["coop"]


def test_kgcoop_term_is_its_codes_weighted_cosine_gap(encoder, data):
    images, labels = data
    learner = PromptLearner(encoder, CLASSES, n_ctx=4, method="kgcoop", random_state=0)
    features = learner.encode_images(images)
    terms = learner.loss_from_features(features, labels)
    prompted, frozen = learner.text_features()
    expected = 8.0 * (1.0 - F.cosine_similarity(prompted, frozen, dim=1).mean())
    torch.testing.assert_close(terms.consistency, expected)
    # with unit vectors the paper's ||t~ - t||^2 is twice the cosine gap
    half_sq = 0.5 * ((prompted - frozen) ** 2).sum(1).mean()
    torch.testing.assert_close(half_sq, 1.0 - F.cosine_similarity(prompted, frozen).mean())


def test_fusion_and_consistency_values():
    g = torch.Generator().manual_seed(0)
    a = F.normalize(torch.randn(5, 3, generator=g), dim=-1)
    b = F.normalize(torch.randn(5, 3, generator=g), dim=-1)
    fused = IncrementalFusion(0.25)(a, b)
    torch.testing.assert_close(fused, F.normalize(0.75 * a + 0.25 * b, dim=-1))
    learnable = IncrementalFusion(0.25, learnable=True)
    assert math.isclose(float(learnable.beta.detach()), 0.25, rel_tol=1e-6)
    loss = ManifoldConsistencyLoss(2.0, 3.0)(a, b, b, a)
    gap = (1 - (a * b).sum(1)).mean()
    torch.testing.assert_close(loss, 5.0 * gap)
    torch.testing.assert_close(ManifoldConsistencyLoss(2.0, 3.0)(a, b), 2.0 * gap)


def test_manifold_drift_is_zero_inside_and_one_orthogonal():
    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    frozen = rng.standard_normal((50, 2)) @ basis[:2]
    inside = rng.standard_normal((20, 2)) @ basis[:2] + frozen.mean(0)
    outside = rng.standard_normal((20, 4)) @ basis[2:] + frozen.mean(0)
    assert manifold_drift(frozen, inside, 2) < 1e-12
    assert abs(manifold_drift(frozen, outside, 2) - 1.0) < 1e-12
    # a share of variance picks the number of components: 2 explain all of it
    assert manifold_drift(frozen, inside, 0.99) < 1e-12
    # a 50/50 mix of inside and orthogonal energy (independent draws): about one half
    mixed = np.concatenate([inside, outside])
    assert 0.2 < manifold_drift(frozen, mixed, 2) < 0.8


def test_novel_classes_are_prompted_with_the_learnt_context(encoder, data):
    images, labels = data
    model = ManiPT(encoder, CLASSES[:2], method="manipt")
    keep = labels < 2
    learner = model.fit(images[keep], labels[keep], maxiter=5, random_state=0).learner
    logits = learner(images, classnames=CLASSES[2:])
    assert logits.shape == (len(images), 2)
    assert torch.isfinite(logits).all()


def test_bad_inputs_name_the_argument(encoder, data):
    images, labels = data
    with pytest.raises(TypeError, match="promptable dual encoder.*lacks"):
        PromptLearner(object(), CLASSES)
    with pytest.raises(ValueError, match="`method`"):
        PromptLearner(encoder, CLASSES, method="maple")
    with pytest.raises(ValueError, match="`classnames` must not repeat"):
        PromptLearner(encoder, ["red circle", "red circle"])
    with pytest.raises(ValueError, match="`classnames` must name at least one"):
        PromptLearner(encoder, [])
    with pytest.raises(ValueError, match="`template`"):
        PromptLearner(encoder, CLASSES, template="a photo")
    with pytest.raises(ValueError, match="`beta` must lie in"):
        PromptLearner(encoder, CLASSES, beta=1.5)
    with pytest.raises(ValueError, match="`penalty_text`"):
        PromptLearner(encoder, CLASSES, penalty_text=-1.0)
    with pytest.raises(ValueError, match="`method`"):
        ManiPT(encoder, CLASSES, method="maple")
    with pytest.raises(TypeError, match="`learner` must be a PromptLearner"):
        ManiPT.from_learner(encoder)
    model = ManiPT(encoder, CLASSES)
    with pytest.raises(ValueError, match="`labels` must index the 4 classnames"):
        model.fit(images, labels + 1, maxiter=1)
    with pytest.raises(ValueError, match="`labels` must have"):
        model.fit(images, labels[:-1], maxiter=1)
    features = PromptLearner(encoder, CLASSES).encode_images(images)
    with pytest.raises(ValueError, match="`features` must be a 2-D"):
        model.fit(features[:, :5], labels, encoded=True, maxiter=1)
    bad = features.clone()
    bad[0, 0] = float("nan")
    with pytest.raises(ValueError, match="`inputs` must be finite"):
        model.fit(bad, labels, encoded=True, maxiter=1)
    with pytest.raises(TypeError, match="`encoded` must be a bool"):
        model.fit(features, labels, encoded="yes", maxiter=1)
    with pytest.raises(TypeError, match="`random_state` must be"):
        model.fit(features, labels, encoded=True, maxiter=1, random_state=1.5)
    with pytest.raises(ValueError, match="`frozen` and `tuned` must have the same"):
        manifold_drift(np.ones((3, 2)), np.ones((3, 4)), 1)
    with pytest.raises(ValueError, match="`k` must lie in"):
        manifold_drift(np.random.default_rng(0).standard_normal((5, 3)), np.ones((2, 3)), 9)


def test_inputs_are_not_modified(encoder, data):
    images, labels = data
    images_copy, labels_copy, names = images.clone(), labels.copy(), list(CLASSES)
    ManiPT(encoder, names).fit(images, labels, maxiter=3, random_state=0)
    assert torch.equal(images, images_copy)
    assert np.array_equal(labels, labels_copy)
    assert names == CLASSES


def test_same_seed_same_run(encoder, data):
    images, labels = data
    runs = [
        ManiPT(encoder, CLASSES, n_ctx=3).fit(images, labels, maxiter=8, random_state=2)
        for _ in range(2)
    ]
    np.testing.assert_array_equal(runs[0].history["loss"], runs[1].history["loss"])
    assert torch.equal(runs[0].learner.ctx, runs[1].learner.ctx)


def test_result_reports_history_and_options(encoder, data):
    images, labels = data
    model = ManiPT(encoder, CLASSES)
    result = model.fit(images, labels, maxiter=20, log_every=5, random_state=0)
    assert isinstance(result, PromptTuningResult) and result.model is model
    assert list(result.history["step"]) == [5, 10, 15, 20]
    assert {"loss", "cross_entropy", "consistency", "accuracy"} <= set(result.metrics)
    assert result.converged and result.n_iter == 20
    # the options are recorded by the estimator base; the specification stays on the model
    assert result.fit_options["maxiter"] == 20 and result.fit_options["log_every"] == 5
    assert result.fit_options["lr"] == 5e-3 and result.fit_options["random_state"] == 0
    assert model.settings["beta"] == 0.5 and model.settings["image_adapter"] is True
    assert model.settings["n_ctx"] == 4 and "ManiPT(method='manipt'" in repr(model)
    assert "ManiPT" in result.summary().as_text()


def test_devices(device, data):
    encoder = StandIn(device=device)
    images, labels = _data(encoder)
    result = ManiPT(encoder, CLASSES, learnable_beta=True).fit(
        images, labels, maxiter=5, random_state=0
    )
    learner = result.learner
    assert {p.device.type for p in learner.parameters()} == {device}
    assert learner(images).device.type == device
    assert result.device.startswith(device)


def test_base_to_novel_study_reports_and_plots(encoder):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mlcore.prompt import base_to_novel

    images, labels = _data(encoder, n_per_class=6)
    study = base_to_novel(
        encoder, images, labels, CLASSES, shots=2, n_seeds=2, maxiter=4, drift_k=2,
        random_state=0,
    )  # fmt: skip
    assert len(study.scores) == 2 * 4
    assert study.base_classes == tuple(CLASSES[:2]) and study.novel_classes == tuple(CLASSES[2:])
    # zero-shot is training-free: the same scores on every seed's (fixed) novel set
    zero = study.scores.query("method == 'zero_shot'")
    assert zero["novel"].nunique() == 1
    tidy = study.tidy()
    assert len(tidy) == 4 * 5 and (tidy["n_seeds"] == 2).all()
    diff = study.contrast("manipt", "coop", "base")
    wide = study.scores.pivot(index="seed", columns="method", values="base")
    assert diff["estimate"] == pytest.approx((wide["manipt"] - wide["coop"]).mean())
    for kind in ("scores", "drift", "history"):
        study.plot(kind)
    plt.close("all")
    with pytest.raises(ValueError, match="`methods`"):
        base_to_novel(encoder, images, labels, CLASSES, methods=["maple"])
    with pytest.raises(ValueError, match="`labels` must index the 4 classnames"):
        base_to_novel(encoder, images, labels + 1, CLASSES)
    with pytest.raises(ValueError, match="no image of a novel class"):
        keep = labels < 2
        base_to_novel(encoder, images[keep], labels[keep], CLASSES)
    with pytest.raises(ValueError, match="`k` = 9 shots is more than class 0 has"):
        base_to_novel(encoder, images, labels, CLASSES, shots=9)
    with pytest.raises(ValueError, match="`options`"):
        base_to_novel(encoder, images, labels, CLASSES, options={"tipadapter": {}})


def test_a_transformers_clip_through_its_adapter_is_prompt_tuned_and_left_untouched():
    transformers = pytest.importorskip("transformers")
    from mlcore.encoders import HFCLIPEncoder

    vocab = ["a", "photo", "of", "red", "circle", "green", "square", "x"]

    def tokenize(texts):  # bos=1, words from 4, eos=3, pad=0, length 12
        rows = []
        for text in texts:
            row = [1, *(4 + vocab.index(w) for w in re.findall(r"[a-z]+", text.lower())), 3]
            rows.append(row + [0] * (12 - len(row)))
        return torch.tensor(rows)

    torch.manual_seed(0)
    config = transformers.CLIPConfig(
        text_config={
            "vocab_size": 16, "hidden_size": 16, "intermediate_size": 32,
            "num_hidden_layers": 1, "num_attention_heads": 2, "max_position_embeddings": 12,
            "eos_token_id": 3, "bos_token_id": 1, "pad_token_id": 0,
        },
        vision_config={
            "hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1,
            "num_attention_heads": 2, "image_size": 8, "patch_size": 4, "num_channels": 3,
        },
        projection_dim=8,
    )  # fmt: skip
    model = transformers.CLIPModel(config).eval()  # weights still require grad
    encoder = HFCLIPEncoder(model, tokenize)
    before = _hash(model)
    images = torch.randn(8, 3, 8, 8, generator=torch.Generator().manual_seed(0))
    labels = np.array([0, 1] * 4)
    learner = PromptLearner(encoder, ["red circle", "green square"], random_state=0)
    prompted, frozen = learner.text_features()
    # trimmed padding, causal text tower: the start equals the hand-crafted features
    torch.testing.assert_close(prompted, frozen, rtol=0, atol=1e-5)
    result = ManiPT.from_learner(learner).fit(images, labels, maxiter=5, random_state=0)
    assert np.isfinite(result.history["loss"]).all()
    assert _hash(model) == before
    assert all(p.grad is None for p in model.parameters())


def test_fit_returns_a_new_result_and_changes_neither_estimator_nor_learner(encoder, data):
    images, labels = data
    learner = PromptLearner(encoder, CLASSES, n_ctx=3, random_state=0)
    learner_hash = _hash(learner)
    for model in (ManiPT(encoder, CLASSES, n_ctx=3), ManiPT.from_learner(learner)):
        spec = _hash(model._learner)
        first = model.fit(images, labels, maxiter=4, random_state=1)
        second = model.fit(images, labels, maxiter=4, random_state=1)
        assert first is not second and first.learner is not second.learner
        assert first.model is model and _hash(first.learner) == _hash(second.learner)
        assert _hash(first.learner) != spec  # trained
        assert _hash(model._learner) == spec  # the estimator is unchanged
    assert _hash(learner) == learner_hash  # the learner passed in too


@pytest.mark.parametrize("kind", ["none", "int", "generator"])
def test_random_state_none_int_or_generator(encoder, data, kind):
    images, labels = data
    model = ManiPT(encoder, CLASSES, n_ctx=3)
    make = {"none": lambda: None, "int": lambda: 4, "generator": lambda: np.random.default_rng(4)}
    before = torch.random.get_rng_state()
    run = model.fit(images, labels, maxiter=6, random_state=make[kind]())
    # every draw comes from the fit's own torch stream, never torch's global generator
    assert torch.equal(torch.random.get_rng_state(), before)
    assert np.isfinite(run.history["loss"]).all()
    again = model.fit(images, labels, maxiter=6, random_state=make[kind]())
    if kind == "none":  # fresh entropy: another random context
        assert not torch.equal(again.learner.ctx, run.learner.ctx)
    else:  # an int, or a new Generator seeded alike, reproduces the run
        assert torch.equal(again.learner.ctx, run.learner.ctx)
        np.testing.assert_array_equal(again.history["loss"], run.history["loss"])


def test_deprecated_learner_fit_warns_and_trains_the_learner_in_place(encoder, data):
    images, labels = data
    learner = PromptLearner(encoder, CLASSES, n_ctx=3, random_state=5)
    want = ManiPT.from_learner(learner).fit(images, labels, maxiter=6, random_state=2)
    with pytest.warns(FutureWarning, match="ManiPT"):
        old = learner.fit(images, labels, maxiter=6, random_state=2)
    np.testing.assert_array_equal(old.history["loss"], want.history["loss"])
    assert _hash(learner) == _hash(want.learner) and not learner.training
    features = learner.encode_images(images)
    other = PromptLearner(encoder, CLASSES, n_ctx=3, random_state=5)
    with pytest.warns(FutureWarning, match="encoded=True"):
        old = other.fit_features(features, labels, maxiter=6, random_state=2)
    np.testing.assert_array_equal(old.history["loss"], want.history["loss"])
    assert _hash(other) == _hash(want.learner)
