"""mlcore.encoders: the protocol, the transformers / open_clip / callable adapters, the hooks.

open_clip cannot be installed here (its torchvision dependency fails with the CPU torch build),
so :class:`OpenCLIPEncoder` is tested against ``StandInOpenCLIP`` below: a minimal module with
open_clip's attribute names whose ``encode_text`` / ``encode_image`` copy open_clip's
``CLIP.encode_text`` (model.py) and ``text_global_pool`` (transformer.py) line for line.
"""

import math

import pytest
import torch
from torch import nn

from mlcore.encoders import (
    CallableEncoder,
    DualEncoder,
    HFCLIPEncoder,
    OpenCLIPEncoder,
    PromptableTextEncoder,
    check_dual_encoder,
    collect_multilevel,
    zero_shot_weights,
)

VOCAB = ["a", "photo", "of", "the", "digit", "seven", "small", "red", "circle", "x"]


def word_tokenizer(bos, eos, pad, length):
    """A callable tokenizer over VOCAB (ids from 4): bos words eos, padded to ``length``."""

    def tokenize(texts):
        rows = []
        for text in texts:
            words = [4 + VOCAB.index(w) for w in text.lower().replace(".", "").split()]
            row = [bos, *words, eos]
            rows.append(row + [pad] * (length - len(row)))
        return torch.tensor(rows)

    return tokenize


def hf_clip(eos_token_id):
    # only the transformers tests skip without the `hf` extra; the open_clip stand-in, the
    # callable adapter, the protocol checks and the hooks run everywhere
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.CLIPConfig(
        text_config={
            "vocab_size": 64, "hidden_size": 32, "intermediate_size": 48,
            "num_hidden_layers": 2, "num_attention_heads": 4, "max_position_embeddings": 12,
            "eos_token_id": eos_token_id, "bos_token_id": 1, "pad_token_id": 0,
        },
        vision_config={
            "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 3,
            "num_attention_heads": 4, "image_size": 16, "patch_size": 4, "num_channels": 3,
        },
        projection_dim=24,
    )  # fmt: skip
    return transformers.CLIPModel(config).eval()


@pytest.fixture(params=["first-eos", "legacy-argmax"])
def hf(request):
    # transformers pools at the first eos id, or (configs with eos_token_id 2, before its
    # PR #24773) at the largest id: the tokenizer then puts the largest id last
    if request.param == "first-eos":
        model, tok = hf_clip(3), word_tokenizer(1, 3, 0, 12)
    else:
        model, tok = hf_clip(2), word_tokenizer(1, 63, 0, 12)
    return model, HFCLIPEncoder(model, tok)


TEXTS = ["a photo of the digit seven.", "a small red circle.", "x x x x seven"]


def test_hf_adapter_matches_get_text_and_image_features(hf):
    model, enc = hf
    assert isinstance(enc, DualEncoder) and isinstance(enc, PromptableTextEncoder)
    check_dual_encoder(enc, promptable=True)
    assert enc.embed_dim == 24 and math.isclose(enc.logit_scale, math.exp(2.6592), rel_tol=1e-4)
    ids = enc.tokenize(TEXTS)
    with torch.no_grad():
        raw_text = model.get_text_features(input_ids=ids)
        raw_text = getattr(raw_text, "pooler_output", raw_text)
        images = torch.rand(5, 3, 16, 16, generator=torch.Generator().manual_seed(1))
        raw_image = model.get_image_features(pixel_values=images)
        raw_image = getattr(raw_image, "pooler_output", raw_image)
        norm = nn.functional.normalize
        # same computation, same order of operations: float32 round-off only
        torch.testing.assert_close(
            enc.encode_text(TEXTS), norm(raw_text, dim=-1), atol=1e-5, rtol=0
        )
        torch.testing.assert_close(
            enc.encode_text_embeddings(enc.token_embedding(ids), ids),
            norm(raw_text, dim=-1),
            atol=1e-5,
            rtol=0,
        )
        torch.testing.assert_close(
            enc.encode_image(images), norm(raw_image, dim=-1), atol=1e-5, rtol=0
        )


def test_hf_prompt_embeddings_are_causal_and_differentiable(hf):
    _, enc = hf
    ids = enc.tokenize(["x x x x seven"])
    embeds = enc.token_embedding(ids).detach().clone().requires_grad_(True)
    enc.encode_text_embeddings(embeds, ids)[0].sum().backward()
    per_position = embeds.grad[0].abs().sum(dim=1)
    eot = 6  # <bos> x x x x seven <eos>
    assert (per_position[: eot + 1] > 0).all() and (per_position[eot + 1 :] == 0).all()
    with torch.no_grad():  # replacing the "x" prompt words changes the feature
        moved = embeds.detach().clone()
        moved[0, 1:5] += 1.0
        assert not torch.allclose(
            enc.encode_text_embeddings(moved, ids), enc.encode_text_embeddings(embeds, ids)
        )


def test_hf_layer_features_are_token_means_of_hidden_states(hf):
    model, enc = hf
    images = torch.rand(4, 3, 16, 16, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        feats = enc.image_layer_features(images)
        hidden = model.vision_model(pixel_values=images, output_hidden_states=True).hidden_states
    assert enc.image_layer_names == tuple(f"vision_model.encoder.layers.{i}" for i in range(3))
    for i, f in enumerate(feats):  # hidden_states[0] is the embedding output
        torch.testing.assert_close(f, hidden[i + 1].mean(dim=1))


def test_hf_adapter_errors():
    model = hf_clip(3)
    with pytest.raises(ValueError, match="tokenizer"):
        HFCLIPEncoder(model).encode_text(["a photo"])
    with pytest.raises(TypeError, match="CLIPModel"):
        HFCLIPEncoder(nn.Linear(2, 2))
    enc = HFCLIPEncoder(model, word_tokenizer(1, 3, 0, 12))
    with pytest.raises(ValueError, match="images"):
        enc.encode_image(torch.rand(2, 3, 32, 32))
    with pytest.raises(ValueError, match="not a submodule"):
        HFCLIPEncoder(model, image_layer_names=["vision_model.encoder.layers.7"])
    with pytest.raises(ValueError, match="width"):
        ids = enc.tokenize(["seven"])
        enc.encode_text_embeddings(torch.zeros(1, 12, 5), ids)


# --- open_clip ---------------------------------------------------------------------------
class _Block(nn.Module):
    """open_clip's ResidualAttentionBlock: pre-norm attention and MLP, batch first."""

    def __init__(self, width, heads):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.mlp = nn.Sequential(
            nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width)
        )

    def forward(self, x, attn_mask=None):
        y = self.ln_1(x)
        x = x + self.attn(y, y, y, need_weights=False, attn_mask=attn_mask)[0]
        return x + self.mlp(self.ln_2(x))


class _Transformer(nn.Module):
    def __init__(self, width, layers, heads):
        super().__init__()
        self.batch_first = True
        self.resblocks = nn.ModuleList([_Block(width, heads) for _ in range(layers)])

    def get_cast_dtype(self):
        return self.resblocks[0].mlp[0].weight.dtype

    def forward(self, x, attn_mask=None):
        for r in self.resblocks:
            x = r(x, attn_mask=attn_mask)
        return x


class _Visual(nn.Module):
    def __init__(self, width=32, embed_dim=24):
        super().__init__()
        self.image_size = (16, 16)
        self.conv1 = nn.Conv2d(3, width, 4, stride=4, bias=False)
        self.positional_embedding = nn.Parameter(0.02 * torch.randn(16, width))
        self.transformer = _Transformer(width, 2, 4)
        self.ln_post = nn.LayerNorm(width)
        self.proj = nn.Parameter(0.1 * torch.randn(width, embed_dim))

    def forward(self, x):
        x = self.conv1(x).flatten(2).transpose(1, 2) + self.positional_embedding
        x = self.transformer(x)
        return self.ln_post(x.mean(dim=1)) @ self.proj


def text_global_pool(x, text=None, pool_type="argmax", eos_token_id=None):
    """open_clip.transformer.text_global_pool, verbatim."""
    if pool_type == "first":
        pooled = x[:, 0]
    elif pool_type == "last":
        pooled = x[:, -1]
    elif pool_type == "argmax":
        pooled = x[torch.arange(x.shape[0], device=x.device), text.argmax(dim=-1)]
    elif pool_type == "eos":
        idx = (text == eos_token_id).int().argmax(dim=-1)
        pooled = x[torch.arange(x.shape[0], device=x.device), idx]
    else:
        pooled = x
    return pooled


class StandInOpenCLIP(nn.Module):
    """open_clip.model.CLIP's attributes and encode_image / encode_text, at toy size."""

    def __init__(self, pool_type="argmax", eos_id=None, context_length=12, width=32):
        super().__init__()
        torch.manual_seed(0)
        self.visual = _Visual(embed_dim=24)
        self.transformer = _Transformer(width, 2, 4)
        self.context_length = context_length
        self.vocab_size = 64
        self.token_embedding = nn.Embedding(64, width)
        self.positional_embedding = nn.Parameter(0.02 * torch.randn(context_length, width))
        self.ln_final = nn.LayerNorm(width)
        self.text_projection = nn.Parameter(0.1 * torch.randn(width, 24))
        self.text_pool_type = pool_type
        self.text_eos_id = eos_id
        mask = torch.empty(context_length, context_length).fill_(float("-inf")).triu_(1)
        self.register_buffer("attn_mask", mask, persistent=False)
        self.logit_scale = nn.Parameter(torch.ones([]) * math.log(1 / 0.07))

    def encode_image(self, image, normalize: bool = False):
        features = self.visual(image)
        return nn.functional.normalize(features, dim=-1) if normalize else features

    def encode_text(self, text, normalize: bool = False):
        cast_dtype = self.transformer.get_cast_dtype()
        x = self.token_embedding(text).to(cast_dtype)
        x = x + self.positional_embedding.to(cast_dtype)
        x = self.transformer(x, attn_mask=self.attn_mask)
        x = self.ln_final(x)
        x = text_global_pool(
            x, text, self.text_pool_type, eos_token_id=getattr(self, "text_eos_id", None)
        )
        if self.text_projection is not None:
            if isinstance(self.text_projection, nn.Linear):
                x = self.text_projection(x)
            else:
                x = x @ self.text_projection
        return nn.functional.normalize(x, dim=-1) if normalize else x


@pytest.mark.parametrize(("pool", "eos"), [("argmax", 63), ("eos", 3)])
def test_open_clip_adapter_matches_the_model_and_a_manual_text_forward(pool, eos):
    model = StandInOpenCLIP(pool_type=pool, eos_id=eos if pool == "eos" else None).eval()
    enc = OpenCLIPEncoder(model, word_tokenizer(1, eos, 0, 12))
    assert isinstance(enc, DualEncoder) and isinstance(enc, PromptableTextEncoder)
    assert enc.embed_dim == 24 and math.isclose(enc.logit_scale, 1 / 0.07, rel_tol=1e-5)
    ids = enc.tokenize(TEXTS)
    with torch.no_grad():
        torch.testing.assert_close(enc.encode_text(TEXTS), model.encode_text(ids, normalize=True))
        images = torch.rand(3, 3, 16, 16, generator=torch.Generator().manual_seed(3))
        torch.testing.assert_close(
            enc.encode_image(images), model.encode_image(images, normalize=True)
        )
        # perturbed word embeddings, run through the attributes by hand
        embeds = enc.token_embedding(ids) + 0.3 * torch.randn(
            3, 12, 32, generator=torch.Generator().manual_seed(4)
        )
        x = model.transformer(embeds + model.positional_embedding, attn_mask=model.attn_mask)
        x = model.ln_final(x)
        pos = ids.argmax(dim=-1) if pool == "argmax" else (ids == eos).int().argmax(dim=-1)
        manual = nn.functional.normalize(x[torch.arange(3), pos] @ model.text_projection, dim=-1)
        torch.testing.assert_close(enc.encode_text_embeddings(embeds, ids), manual)
        feats = enc.image_layer_features(images)
    assert enc.image_layer_names == (
        "visual.transformer.resblocks.0",
        "visual.transformer.resblocks.1",
    )
    assert [tuple(f.shape) for f in feats] == [(3, 32), (3, 32)]


def test_open_clip_adapter_errors():
    with pytest.raises(TypeError, match="open_clip"):
        OpenCLIPEncoder(nn.Linear(2, 2))
    enc = OpenCLIPEncoder(StandInOpenCLIP())
    with pytest.raises(ValueError, match="tokenizer"):
        enc.encode_text(["seven"])


# --- callables, protocol, hooks --------------------------------------------------------
def test_callable_encoder_normalises_and_checks_widths():
    proj = torch.randn(48, 8, generator=torch.Generator().manual_seed(0))
    enc = CallableEncoder(
        lambda x: x.flatten(1)[:, :48] @ proj,
        lambda texts: torch.stack([torch.full((8,), float(len(t))) for t in texts]),
        logit_scale=50.0,
        layer_fns={"pixels": lambda x: x},
    )
    assert isinstance(enc, DualEncoder) and not isinstance(enc, PromptableTextEncoder)
    feats = enc.encode_image(torch.rand(3, 3, 4, 4))
    torch.testing.assert_close(feats.norm(dim=1), torch.ones(3))
    assert enc.embed_dim == 8 and enc.logit_scale == 50.0
    assert zero_shot_weights(enc, ["a", "bb"]).shape == (2, 8)
    (pixels,) = enc.image_layer_features(torch.ones(2, 3, 4, 4))
    torch.testing.assert_close(pixels, torch.ones(2, 3))  # a feature map is averaged spatially
    bad = CallableEncoder(lambda x: torch.ones(len(x), 5), lambda t: torch.ones(len(t), 6))
    bad.encode_image(torch.rand(2, 3, 4, 4))
    with pytest.raises(ValueError, match="embed_dim is 5"):
        bad.encode_text(["a"])
    with pytest.raises(ValueError, match="logit_scale"):
        CallableEncoder(lambda x: x, lambda t: t, logit_scale=-1)
    with pytest.raises(ValueError, match="no layers"):
        bad.image_layer_features(torch.rand(1, 3, 2, 2))


def test_check_dual_encoder_names_what_is_missing():
    with pytest.raises(TypeError, match="encode_text, image_layer_names") as info:
        check_dual_encoder(type("Half", (), {"embed_dim": 3, "logit_scale": 1.0, "device": None,
                                              "encode_image": None, "image_layer_features": None})(),
                           "backbone")  # fmt: skip
    assert "`backbone`" in str(info.value)
    enc = CallableEncoder(lambda x: x.flatten(1), lambda t: torch.ones(len(t), 3))
    with pytest.raises(TypeError, match="tokenize, token_embedding, encode_text_embeddings"):
        check_dual_encoder(enc, promptable=True)


def test_collect_multilevel_pools_any_backbone_and_removes_its_hooks():
    net = nn.Sequential(
        nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Conv2d(4, 8, 3), nn.Flatten(), nn.LazyLinear(5)
    )
    x = torch.rand(2, 3, 8, 8)
    with collect_multilevel(net, ["0", "2", "4"]) as rec:
        net(x)
    conv0, conv2, head = rec.as_list()
    torch.testing.assert_close(conv0, net[0](x).mean(dim=(2, 3)))
    assert conv2.shape == (2, 8) and head.shape == (2, 5)
    assert all(not m._forward_hooks for m in net)
    with pytest.raises(RuntimeError, match="boom"), collect_multilevel(net, ["0"]):
        raise RuntimeError("boom")
    assert all(not m._forward_hooks for m in net)
    with pytest.raises(ValueError, match="not a submodule"), collect_multilevel(net, ["9"]):
        pass
    with pytest.raises(RuntimeError, match="did not run"), collect_multilevel(net, ["0"]) as rec:
        rec.as_list()
