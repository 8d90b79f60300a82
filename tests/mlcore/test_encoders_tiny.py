"""mlcore.encoders: the shipped tiny CLIP, its zero-shot accuracy, retraining and bad input."""

from importlib import resources

import numpy as np
import pytest
import torch

from mlcore.encoders import (
    SHAPES_CLASSES,
    SHAPES_HELD_OUT,
    DualEncoder,
    PromptableTextEncoder,
    digits_domain,
    encode_images,
    shapes_dataset,
    tiny_clip,
    zero_shot_evaluate,
    zero_shot_weights,
)
from mlcore.encoders.train_tiny_clip import SETTINGS, contrastive_loss, train_tiny_clip


@pytest.fixture(scope="module")
def enc():
    return tiny_clip("cpu")


@pytest.fixture(scope="module")
def digits():
    return digits_domain("downstream", random_state=0)


def test_checkpoint_is_small_and_records_its_training():
    ref = resources.files("mlcore.encoders").joinpath("tiny_clip.pt")
    with resources.as_file(ref) as path:
        assert path.stat().st_size < 3 * 2**20  # the issue: "a few MB at most"; it is ~0.7 MB
        blob = torch.load(path, weights_only=True)
    assert blob["settings"] == SETTINGS
    assert blob["threads"] == 1


def test_tiny_clip_is_frozen_eval_and_meets_both_protocols(enc):
    assert isinstance(enc, DualEncoder) and isinstance(enc, PromptableTextEncoder)
    assert not enc.training
    assert not any(p.requires_grad for p in enc.parameters())
    assert isinstance(enc.logit_scale, float) and 10 < enc.logit_scale < 100
    assert enc.embed_dim == 64 and enc.device == torch.device("cpu")


def test_features_are_normalised_and_deterministic(enc, digits):
    img = enc.encode_image(digits.images[:20])
    txt = enc.encode_text(["a photo of the digit seven.", "a small red circle."])
    assert img.shape == (20, 64) and txt.shape == (2, 64)
    torch.testing.assert_close(img.norm(dim=1), torch.ones(20))
    torch.testing.assert_close(txt.norm(dim=1), torch.ones(2))
    assert torch.equal(img, enc.encode_image(digits.images[:20]))
    assert torch.equal(encode_images(enc, digits.images[:20], batch_size=7), img)


def test_gradients_reach_images_and_prompt_embeddings(enc, digits):
    images = digits.images[:4].clone().requires_grad_(True)
    enc.encode_image(images).sum().backward()
    assert images.grad.abs().sum() > 0
    ids = enc.tokenize(["x x x x seven."])
    embeds = enc.token_embedding(ids).clone().requires_grad_(True)
    enc.encode_text_embeddings(embeds, ids)[0, 0].backward()
    eot = int((ids[0] == 2).nonzero()[0])
    per_position = embeds.grad[0].abs().sum(dim=1)
    # causal text tower: positions up to <eot> matter, the padding after it cannot
    assert (per_position[: eot + 1] > 0).all() and (per_position[eot + 1 :] == 0).all()


def test_encode_text_embeddings_of_the_word_embeddings_is_encode_text(enc):
    texts = ["a photo of the digit seven.", "a large blue square."]
    ids = enc.tokenize(texts)
    torch.testing.assert_close(
        enc.encode_text_embeddings(enc.token_embedding(ids), ids), enc.encode_text(texts)
    )


def test_zero_shot_on_downstream_digits_is_far_above_chance_but_imperfect(enc, digits):
    res = zero_shot_evaluate(enc, digits, n_resamples=200)
    acc = float(res.params["accuracy"])
    # The checkpoint is designed for 45-85% on the shifted digits (measured 0.59 at this seed):
    # room for few-shot / prompt / GZSL methods to improve, yet 5x chance (0.1). A retrained
    # checkpoint outside the band would break the premise of the adaptation tests.
    assert 0.45 <= acc <= 0.85
    pretrain = digits_domain("pretrain", random_state=0)
    # in the pretraining rendering the classes are nearly solved (measured 0.99)
    assert float(zero_shot_evaluate(enc, pretrain, n_resamples=50).params["accuracy"]) > 0.9


def test_held_out_shape_classes_are_recognised_compositionally(enc):
    data = shapes_dataset(20, random_state=0)
    weights = zero_shot_weights(enc, data.classnames, data.templates)
    pred = (encode_images(enc, data.images) @ weights.T).argmax(1).numpy()
    held = np.isin(np.array(SHAPES_CLASSES)[data.labels], SHAPES_HELD_OUT)
    acc_held = (pred == data.labels)[held].mean()
    acc_seen = (pred == data.labels)[~held].mean()
    # chance is 1/32 = 0.031; with 160 held-out images its binomial sd is 0.014, so 0.15 is
    # more than 8 sd above chance (measured 0.35): names never paired with an image in
    # pretraining are still placed by their words. Seen classes stay easier (measured 0.70).
    assert acc_held > 0.15
    assert acc_seen > acc_held


def test_retraining_reproduces_the_weights_from_the_same_seed():
    kwargs = {"steps": 3, "batch_size": 16, "n_per_shape_class": 2, "log_every": 1}
    a, res = train_tiny_clip(random_state=5, **kwargs)
    b, _ = train_tiny_clip(random_state=5, **kwargs)
    c, _ = train_tiny_clip(random_state=6, **kwargs)
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert not all(torch.equal(sa[k], sc[k]) for k in sa)
    assert list(res.history["step"]) == [1, 2, 3] and np.isfinite(res.history["loss"]).all()
    assert res.iterations.converged


def test_contrastive_loss_is_clip_loss_with_one_caption_per_image():
    g = torch.Generator().manual_seed(0)
    img = torch.nn.functional.normalize(torch.randn(6, 4, generator=g), dim=1)
    txt = torch.nn.functional.normalize(torch.randn(6, 4, generator=g), dim=1)
    logits = 10.0 * img @ txt.T
    target = torch.arange(6)
    clip = 0.5 * (
        torch.nn.functional.cross_entropy(logits, target)
        + torch.nn.functional.cross_entropy(logits.T, target)
    )
    torch.testing.assert_close(contrastive_loss(img, txt, 10.0, torch.eye(6, dtype=bool)), clip)


def test_save_and_load_round_trip(enc, tmp_path, digits):
    path = tmp_path / "copy.pt"
    enc.save(path, note="copy")
    again = type(enc).load(path, device="cpu")
    assert again.metadata["note"] == "copy"
    assert torch.equal(again.encode_image(digits.images[:3]), enc.encode_image(digits.images[:3]))


@pytest.mark.parametrize(
    ("images", "error", "match"),
    [
        (torch.rand(2, 1, 16, 16), ValueError, "images"),  # one channel
        (torch.rand(2, 3, 8, 8), ValueError, "images"),  # wrong size
        (torch.rand(3, 16, 16), ValueError, "4-D"),  # no batch axis
        (torch.ones(2, 3, 16, 16, dtype=torch.long), TypeError, "floating"),
        (torch.full((2, 3, 16, 16), float("nan")), ValueError, "NaN"),
        (np.zeros((2, 3, 16, 16), dtype=np.float32), TypeError, "torch.Tensor"),
    ],
)
def test_bad_images_are_refused(enc, images, error, match):
    with pytest.raises(error, match=match):
        enc.encode_image(images)


def test_bad_texts_layers_and_prompt_inputs_are_refused(enc, digits):
    with pytest.raises(TypeError, match="one string"):
        enc.encode_text("a photo of the digit seven.")
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        enc.encode_text(["seven", 7])
    with pytest.raises(ValueError, match="at least one"):
        enc.encode_text([])
    with pytest.raises(ValueError, match="at most 30"):
        enc.tokenize([" ".join(["seven"] * 31)])
    with pytest.raises(ValueError, match="unknown layer names"):
        enc.image_layer_features(digits.images[:2], layers=["visual.block9"])
    ids = enc.tokenize(["seven"])
    with pytest.raises(ValueError, match="end-of-text"):
        enc.encode_text_embeddings(enc.token_embedding(ids), torch.zeros_like(ids))
    with pytest.raises(ValueError, match="shape"):
        enc.encode_text_embeddings(enc.token_embedding(ids), ids[:, :5])
    with pytest.raises(ValueError, match="repeat"):
        zero_shot_weights(enc, ["seven", "seven"])
    with pytest.raises(ValueError, match="'{}'"):
        zero_shot_weights(enc, ["seven"], templates=["a photo"])


def test_layer_features_have_the_block_widths(enc, digits):
    feats = enc.image_layer_features(digits.images[:5])
    assert [tuple(f.shape) for f in feats] == [(5, 32), (5, 32), (5, 64), (5, 96)]
    (last,) = enc.image_layer_features(digits.images[:5], layers=["visual.block3"])
    torch.testing.assert_close(last, feats[-1])


def test_tiny_clip_on_each_device(device, digits):
    enc = tiny_clip(device)
    assert enc.device.type == device
    images = digits.images[:16]  # left on the CPU: the encoder moves them
    feats = enc.encode_image(images)
    text = zero_shot_weights(enc, digits.classnames, digits.templates)
    assert feats.device.type == device and text.device.type == device
    cpu = tiny_clip("cpu")
    # CUDA convolutions may run in TF32 (10-bit mantissa): agreement to ~1e-3 on unit vectors
    torch.testing.assert_close(feats.cpu(), cpu.encode_image(images), atol=5e-3, rtol=0)
    torch.testing.assert_close(
        text.cpu(), zero_shot_weights(cpu, digits.classnames, digits.templates), atol=5e-3, rtol=0
    )


def test_inputs_are_not_modified(enc, digits):
    images = digits.images[:6].clone()
    before = images.clone()
    classnames = ["seven", "one"]
    templates = ("a photo of the digit {}.",)
    enc.encode_image(images)
    enc.image_layer_features(images)
    encode_images(enc, images, batch_size=4)
    zero_shot_weights(enc, classnames, templates)
    ids = enc.tokenize(["x x seven"])
    ids_before, embeds = ids.clone(), enc.token_embedding(ids)
    embeds_before = embeds.clone()
    enc.encode_text_embeddings(embeds, ids)
    assert torch.equal(images, before) and classnames == ["seven", "one"]
    assert torch.equal(ids, ids_before) and torch.equal(embeds, embeds_before)
