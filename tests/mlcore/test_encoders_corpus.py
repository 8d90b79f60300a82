"""mlcore.encoders: the digits and shapes domains and the pretraining captions."""

import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits

from mlcore.encoders import (
    SHAPES_CLASSES,
    SHAPES_HELD_OUT,
    digits_domain,
    shapes_dataset,
)
from mlcore.encoders.corpus import (
    SEGMENT_MATRIX,
    SEGMENTS,
    caption_batch,
    caption_vocabulary,
    pretraining_corpus,
)


def test_digit_splits_are_disjoint_and_cover_the_digits():
    pre = digits_domain("pretrain", random_state=0)
    down = digits_domain("downstream", random_state=0)
    assert len(pre) + len(down) == len(load_digits().target)
    assert pre.images.shape[1:] == (3, 16, 16) and pre.images.dtype == torch.float32
    assert pre.classnames == down.classnames and down.classnames[7] == "seven"
    # the split is fixed, the rendering seeded: the label sequence does not depend on the seed
    assert np.array_equal(digits_domain("downstream", random_state=3).labels, down.labels)
    assert not torch.equal(digits_domain("downstream", random_state=3).images, down.images)
    assert torch.equal(digits_domain("downstream", random_state=0).images, down.images)
    # the downstream rendering is lower contrast: a smaller spread of pixel values per image
    spread = lambda d: d.images.flatten(1).std(dim=1).mean()  # noqa: E731
    assert spread(down) < spread(pre)
    assert set(np.unique(down.labels)) == set(range(10))


def test_seven_segment_patterns():
    assert SEGMENT_MATRIX.shape == (10, 7)
    lit = dict(zip(SEGMENTS, SEGMENT_MATRIX[1], strict=True))
    assert [s for s, on in lit.items() if on] == ["upper right", "lower right"]  # "1"
    assert SEGMENT_MATRIX[8].all() and SEGMENT_MATRIX.sum(axis=1)[7] == 3
    assert len({tuple(r) for r in SEGMENT_MATRIX}) == 10  # the attributes separate the digits


def test_shape_classes_and_held_out_design():
    assert len(SHAPES_CLASSES) == 32 and len(set(SHAPES_CLASSES)) == 32
    assert SHAPES_CLASSES[24:] == SHAPES_HELD_OUT  # the held-out classes are the last 8
    words = np.array([c.split() for c in SHAPES_HELD_OUT])
    # a Latin design: each shape and colour held out twice, each size four times
    for column, count in ((0, 4), (1, 2), (2, 2)):
        assert set(np.unique(words[:, column], return_counts=True)[1]) == {count}
    data = shapes_dataset(4, classes=["large red cross", "small blue circle"], random_state=1)
    assert data.classnames == ["large red cross", "small blue circle"]
    assert data.attributes.shape == (2, 10) and (data.attributes.sum(axis=1) == 3).all()
    red = data.images[data.labels == 0]
    # a red shape: among pixels brighter than the background, red dominates blue
    assert red[:, 0].mean() > red[:, 2].mean()


def test_pretraining_corpus_excludes_held_out_shapes():
    images, attrs = pretraining_corpus(random_state=0, n_per_shape_class=3)
    shapes = attrs[attrs[:, 0] < 0]
    names = {"{} {} {}".format(*w) for w in _names(shapes)}
    assert names.isdisjoint(SHAPES_HELD_OUT) and len(names) == 24
    assert len(images) == len(attrs) == 900 + 24 * 3


def _names(rows):
    from mlcore.encoders.corpus import COLOURS, SHAPES, SIZES

    return [(SIZES[s], COLOURS[c], SHAPES[k]) for _, k, c, s in rows]


def test_captions_fit_exactly_the_images_they_describe():
    rows = np.array([[7, -1, -1, -1], [3, -1, -1, -1], [-1, 0, 0, 0], [-1, 0, 0, 1], [-1, 1, 0, 0]])
    captions, fits = caption_batch(rows, np.random.default_rng(0))
    assert fits.diagonal().all()
    assert not fits[:2, 2:].any() and not fits[2:, :2].any()  # digits and shapes never mix
    vocab = set(caption_vocabulary())
    assert all(set(c.replace(",", " ").replace(".", " ").split()) <= vocab for c in captions)
    # a partial caption ("a red shape") fits every red shape, a full one only its class
    many, fit_many = caption_batch(np.repeat(rows[2:], 40, axis=0), np.random.default_rng(1))
    partial = [j for j, c in enumerate(many) if c == "a red shape."]
    assert partial and fit_many[:, partial[0]].all()


def test_bad_domain_arguments():
    with pytest.raises(ValueError, match="split"):
        digits_domain("test")
    with pytest.raises(ValueError, match="<size> <colour> <shape>"):
        shapes_dataset(2, classes=["red circle"])
    with pytest.raises(ValueError, match="repeat"):
        shapes_dataset(2, classes=["small red circle"] * 2)
    with pytest.raises(ValueError, match="n_per_class"):
        shapes_dataset(0)
