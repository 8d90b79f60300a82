"""Offline image-text domains for the tiny CLIP: handwritten digits and rendered shapes.

Two small domains stand in for the web-scale corpora real CLIP models are trained on.

- **Digits** (:func:`digits_domain`): scikit-learn's 1797 handwritten digits (8x8), upsampled to
  16x16 and coloured. The images are split once, by a fixed permutation, into a ``"pretrain"``
  half (clean rendering; the tiny CLIP is trained on it) and a disjoint ``"downstream"`` half
  rendered with a shift (blur, noise, low contrast, wider translation), on which the tiny CLIP's
  zero-shot accuracy is good but imperfect. Each class also carries its seven-segment
  display pattern, the attribute space of the zero-shot notes.
- **Shapes** (:func:`shapes_dataset`): a shape (circle, square, triangle, cross) in a colour
  (red, green, blue, yellow) at a size (small, large) drawn with numpy at a random position:
  32 classes named like ``"small red circle"``. ``SHAPES_HELD_OUT`` lists the 8
  combinations that never appear in pretraining (every shape, colour and size does), so
  zero-shot recognition of them is compositional.

Every sample of both domains has an attribute tuple, from which :func:`pretraining_corpus`
builds templated captions (full class descriptions, seven-segment descriptions, partial shape
descriptions such as ``"a red shape"``) and the matrix of which caption truly describes which
image.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from statcore.validation import check_option, check_positive_int, check_random_state

IMAGE_SIZE = 16
DIGIT_NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
#: The segments of a seven-segment display, in the column order of the attribute matrix.
SEGMENTS = ("top", "upper left", "upper right", "middle", "lower left", "lower right", "bottom")
_LIT = {  # which segments a seven-segment display lights for each digit
    0: ("top", "upper left", "upper right", "lower left", "lower right", "bottom"),
    1: ("upper right", "lower right"),
    2: ("top", "upper right", "middle", "lower left", "bottom"),
    3: ("top", "upper right", "middle", "lower right", "bottom"),
    4: ("upper left", "upper right", "middle", "lower right"),
    5: ("top", "upper left", "middle", "lower right", "bottom"),
    6: ("top", "upper left", "middle", "lower left", "lower right", "bottom"),
    7: ("top", "upper right", "lower right"),
    8: SEGMENTS,
    9: ("top", "upper left", "upper right", "middle", "lower right", "bottom"),
}
#: (10, 7) 0/1 seven-segment patterns of the digits, columns in ``SEGMENTS`` order.
SEGMENT_MATRIX = np.array([[s in _LIT[d] for s in SEGMENTS] for d in range(10)], dtype=float)

SHAPES = ("circle", "square", "triangle", "cross")
COLOURS = ("red", "green", "blue", "yellow")
SIZES = ("small", "large")
_RGB = {
    "red": (0.9, 0.15, 0.1),
    "green": (0.15, 0.8, 0.2),
    "blue": (0.15, 0.3, 0.95),
    "yellow": (0.9, 0.85, 0.1),
}
_RADIUS = {"small": (2.5, 3.5), "large": (5.0, 6.5)}
#: The shape classes that never appear in pretraining: for shape k and size s, colour
#: (k + 2 s) mod 4 (a Latin design: each shape and each colour is held out twice, each size four
#: times, and every attribute value is still seen in pretraining).
SHAPES_HELD_OUT = tuple(
    f"{size} {COLOURS[(k + 2 * s) % 4]} {shape}"
    for s, size in enumerate(SIZES)
    for k, shape in enumerate(SHAPES)
)
#: All 32 shape classes: the 24 seen in pretraining first, then ``SHAPES_HELD_OUT``, so the
#: second half of the list (CoOp's "novel" half) holds every held-out class.
SHAPES_CLASSES = (
    tuple(
        name
        for name in (f"{z} {c} {s}" for z in SIZES for c in COLOURS for s in SHAPES)
        if name not in SHAPES_HELD_OUT
    )
    + SHAPES_HELD_OUT
)
#: Default zero-shot prompt templates of each domain.
DIGIT_TEMPLATES = ("a photo of the digit {}.", "a handwritten {}.", "the digit {}.")
SHAPE_TEMPLATES = ("a photo of a {}.", "a {}.")
SPLITS = ("pretrain", "downstream")
_DIGIT_SEED = 20250  # fixes which digits images are pretraining and which downstream, forever


@dataclass(frozen=True, eq=False, repr=False)
class Domain:
    """A labelled image domain with class names ready for prompts.

    Attributes
    ----------
    images : Tensor of shape (n, 3, 16, 16)
        Float images in [0, 1] (up to noise), on the CPU.
    labels : ndarray of int, shape (n,)
        Indices into ``classnames``.
    classnames : list of str
        Class names that read well in a prompt (``"seven"``, ``"small red circle"``).
    attributes : ndarray of shape (n_classes, n_attributes)
        Class-level attribute vectors: seven-segment patterns for digits, one-hot
        shape/colour/size for shapes.
    attribute_names : list of str
        Names of the attribute columns.
    templates : tuple of str
        Zero-shot prompt templates suited to the domain (``"{}"`` takes the class name).
    name : str
        ``"digits/downstream"``, ``"shapes/pretrain"``, ...
    sample_attributes : ndarray of int, shape (n, 4)
        Per image ``(digit, shape, colour, size)`` indices, -1 where not applicable (what
        the pretraining captions are built from).
    """

    images: torch.Tensor
    labels: np.ndarray
    classnames: list
    attributes: np.ndarray
    attribute_names: list
    templates: tuple
    name: str
    sample_attributes: np.ndarray = field(default=None)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def n_classes(self) -> int:
        return len(self.classnames)

    def __repr__(self) -> str:
        return (
            f"Domain({self.name!r}, n={len(self)}, n_classes={self.n_classes}, "
            f"image shape={tuple(self.images.shape[1:])})"
        )

    def subset(self, index) -> Domain:
        """The samples at ``index`` (integer array or boolean mask), same classes."""
        index = np.asarray(index)
        if index.dtype == bool:
            index = np.flatnonzero(index)
        return Domain(
            images=self.images[torch.as_tensor(index, dtype=torch.long)],
            labels=self.labels[index].copy(),
            classnames=list(self.classnames),
            attributes=self.attributes.copy(),
            attribute_names=list(self.attribute_names),
            templates=self.templates,
            name=self.name,
            sample_attributes=None
            if self.sample_attributes is None
            else self.sample_attributes[index].copy(),
        )


def _gaussian_blur(images: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Blur each image (n, C, H, W) with its own separable Gaussian of width ``sigma[i]``."""
    radius = 3
    offsets = np.arange(-radius, radius + 1)
    kernels = np.exp(-0.5 * (offsets[None, :] / np.maximum(sigma[:, None], 1e-6)) ** 2)
    kernels /= kernels.sum(axis=1, keepdims=True)
    padded = np.pad(images, ((0, 0), (0, 0), (radius, radius), (0, 0)), mode="edge")
    out = sum(
        kernels[:, j, None, None, None] * padded[:, :, j : j + images.shape[2], :]
        for j in range(2 * radius + 1)
    )
    padded = np.pad(out, ((0, 0), (0, 0), (0, 0), (radius, radius)), mode="edge")
    return sum(
        kernels[:, j, None, None, None] * padded[:, :, :, j : j + images.shape[3]]
        for j in range(2 * radius + 1)
    )


def _translate(images: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    """Shift each image by integer (dy, dx), filling with the image's border-free zeros."""
    out = np.zeros_like(images)
    h, w = images.shape[2:]
    for i, (dy, dx) in enumerate(shifts):
        ys, yd = (slice(0, h - dy), slice(dy, h)) if dy >= 0 else (slice(-dy, h), slice(0, h + dy))
        xs, xd = (slice(0, w - dx), slice(dx, w)) if dx >= 0 else (slice(-dx, w), slice(0, w + dx))
        out[i, :, yd, xd] = images[i, :, ys, xs]
    return out


def _upsample(gray: np.ndarray) -> np.ndarray:
    """(n, 8, 8) -> (n, 16, 16) bilinear."""
    t = torch.as_tensor(gray, dtype=torch.float32)[:, None]
    up = torch.nn.functional.interpolate(t, size=(IMAGE_SIZE, IMAGE_SIZE), mode="bilinear")
    return up[:, 0].numpy().astype(np.float64)


def _render_digits(gray: np.ndarray, split: str, rng: np.random.Generator) -> np.ndarray:
    """Colour and corrupt upsampled digit masks (n, 16, 16) in [0, 1] -> (n, 3, 16, 16)."""
    n = len(gray)
    if split == "pretrain":
        fg = rng.uniform(0.6, 1.0, size=(n, 3))
        bg = rng.uniform(0.0, 0.15, size=(n, 3))
        max_shift, sigma, noise = 1, np.zeros(n), 0.03
    else:
        # the shift: dimmer, lower-contrast colours, blur, wider translation and more noise
        fg = rng.uniform(0.35, 0.9, size=(n, 3))
        bg = rng.uniform(0.05, 0.35, size=(n, 3))
        max_shift, sigma, noise = 2, rng.uniform(0.6, 1.2, size=n), 0.12
    mask = _translate(gray[:, None], rng.integers(-max_shift, max_shift + 1, size=(n, 2)))
    if sigma.any():
        mask = _gaussian_blur(mask, sigma)
    images = bg[:, :, None, None] + (fg - bg)[:, :, None, None] * mask
    return images + noise * rng.standard_normal(images.shape)


def digits_domain(split: str = "downstream", *, random_state=0) -> Domain:
    """scikit-learn's handwritten digits as a coloured 16x16 image domain with class prompts.

    Parameters
    ----------
    split : {"downstream", "pretrain"}
        ``"pretrain"``: 900 images rendered cleanly (bright digit, dark background, translation
        of at most 1 pixel, noise sd 0.03), the digits half the tiny CLIP is trained on.
        ``"downstream"``: the other 897 images, never used in pretraining, rendered with a
        domain shift (Gaussian blur of sd 0.6-1.2 pixels, dimmer lower-contrast colours,
        translation up to 2 pixels, noise sd 0.12).
    random_state : None, int or numpy Generator
        Draws the colours, translations, blur and noise (not which images fall in which split:
        that is fixed).

    Returns
    -------
    Domain
        ``classnames`` ``"zero"``..``"nine"``; ``attributes`` the (10, 7) seven-segment patterns
        (``SEGMENT_MATRIX``, columns ``SEGMENTS``); ``templates``
        ``DIGIT_TEMPLATES``.

    References
    ----------
    Alpaydin and Kaynak (1998), *Optical Recognition of Handwritten Digits*, UCI Machine
    Learning Repository (the data of ``sklearn.datasets.load_digits``).

    Examples
    --------
    >>> d = digits_domain("downstream")
    >>> tuple(d.images.shape), d.classnames[7], d.attributes.shape
    ((897, 3, 16, 16), 'seven', (10, 7))
    """
    from sklearn.datasets import load_digits

    split = check_option(split, name="split", options=SPLITS)
    rng = check_random_state(random_state)
    digits = load_digits()
    order = np.random.default_rng(_DIGIT_SEED).permutation(len(digits.target))
    index = np.sort(order[:900] if split == "pretrain" else order[900:])
    gray = _upsample(digits.images[index] / 16.0)
    images = _render_digits(gray, split, rng)
    labels = digits.target[index].astype(np.int64)
    return Domain(
        images=torch.as_tensor(images, dtype=torch.float32),
        labels=labels,
        classnames=list(DIGIT_NAMES),
        attributes=SEGMENT_MATRIX.copy(),
        attribute_names=list(SEGMENTS),
        templates=DIGIT_TEMPLATES,
        name=f"digits/{split}",
        sample_attributes=_digit_sample_attributes(labels),
    )


def _digit_sample_attributes(labels: np.ndarray) -> np.ndarray:
    """Per-sample attribute rows ``(digit, shape, colour, size)``; -1 where not applicable."""
    out = -np.ones((len(labels), 4), dtype=np.int64)
    out[:, 0] = labels
    return out


def _shape_mask(shape: str, radius: np.ndarray, cy: np.ndarray, cx: np.ndarray) -> np.ndarray:
    """Anti-aliased-free 0/1 masks (n, 16, 16) of one shape at centres (cy, cx)."""
    yy, xx = np.mgrid[0:IMAGE_SIZE, 0:IMAGE_SIZE] + 0.5
    dy = yy[None] - cy[:, None, None]
    dx = xx[None] - cx[:, None, None]
    r = radius[:, None, None]
    if shape == "circle":
        return (dy**2 + dx**2 <= r**2).astype(float)
    if shape == "square":
        half = 0.8 * r
        return ((np.abs(dy) <= half) & (np.abs(dx) <= half)).astype(float)
    if shape == "triangle":  # apex up: the width grows linearly from the top to the base
        top, base = -r, 0.8 * r
        inside = (dy >= top) & (dy <= base) & (np.abs(dx) <= (dy - top) / (base - top) * r)
        return inside.astype(float)
    arm = np.maximum(0.3 * r, 0.75)  # a plus sign whose arms stay visible at the small size
    return (
        ((np.abs(dy) <= arm) & (np.abs(dx) <= r)) | ((np.abs(dx) <= arm) & (np.abs(dy) <= r))
    ).astype(float)


def _parse_shape_class(name) -> tuple[int, int, int]:
    if not isinstance(name, str):
        raise TypeError(f"`classes` must hold strings like 'small red circle'; got {name!r}")
    parts = name.split()
    if (
        len(parts) != 3
        or parts[0] not in SIZES
        or parts[1] not in COLOURS
        or parts[2] not in SHAPES
    ):
        raise ValueError(
            f"`classes` entries must read '<size> <colour> <shape>' with size in {SIZES}, colour "
            f"in {COLOURS} and shape in {SHAPES}; got {name!r}"
        )
    return SHAPES.index(parts[2]), COLOURS.index(parts[1]), SIZES.index(parts[0])


def shapes_dataset(
    n_per_class: int = 50, *, classes=None, split: str = "downstream", random_state=0
) -> Domain:
    """Rendered coloured shapes, one class per (size, colour, shape) combination.

    Parameters
    ----------
    n_per_class : int
        Images per class.
    classes : sequence of str, optional
        Class names ``"<size> <colour> <shape>"`` (sizes ``SIZES``, colours
        ``COLOURS``, shapes ``SHAPES``); default all 32 in ``SHAPES_CLASSES``
        order (the 24 pretraining classes, then the 8 of ``SHAPES_HELD_OUT``).
    split : {"downstream", "pretrain"}
        ``"downstream"`` renders with more noise (sd 0.15 against 0.05), colour jitter (sd 0.12
        against 0.05) and a lighter, noisier background than ``"pretrain"``.
    random_state : None, int or numpy Generator
        Draws positions, sizes within their range, colour jitter and noise.

    Returns
    -------
    Domain
        ``attributes`` one-hot rows over shape, colour and size (12 columns);
        ``templates`` ``SHAPE_TEMPLATES``.

    Notes
    -----
    A synthetic compositional domain of this package (no paper): shapes are drawn as 0/1
    masks on a 16x16 grid (no anti-aliasing), with numpy only.

    Examples
    --------
    >>> d = shapes_dataset(5, classes=["small red circle", "large blue square"])
    >>> tuple(d.images.shape), d.classnames
    ((10, 3, 16, 16), ['small red circle', 'large blue square'])
    """
    n_per_class = check_positive_int(n_per_class, name="n_per_class")
    split = check_option(split, name="split", options=SPLITS)
    rng = check_random_state(random_state)
    if classes is None:
        classes = list(SHAPES_CLASSES)
    elif isinstance(classes, str):
        raise TypeError("`classes` must be a sequence of class names, not one string")
    classes = list(classes)
    if not classes:
        raise ValueError("`classes` must name at least one class")
    if len(set(classes)) != len(classes):
        raise ValueError(f"`classes` must not repeat a class; got {classes}")
    parsed = [_parse_shape_class(c) for c in classes]
    jitter, noise, bg_hi = (0.05, 0.05, 0.15) if split == "pretrain" else (0.12, 0.15, 0.3)
    images, labels, rows = [], [], []
    for label, (k, c, s) in enumerate(parsed):
        lo, hi = _RADIUS[SIZES[s]]
        radius = rng.uniform(lo, hi, size=n_per_class)
        margin = radius + 0.5
        cy = rng.uniform(margin, IMAGE_SIZE - margin)
        cx = rng.uniform(margin, IMAGE_SIZE - margin)
        mask = _shape_mask(SHAPES[k], radius, cy, cx)[:, None]
        colour = np.clip(
            np.array(_RGB[COLOURS[c]]) + jitter * rng.standard_normal((n_per_class, 3)), 0, 1
        )
        bg = rng.uniform(0.0, bg_hi, size=(n_per_class, 3))
        img = bg[:, :, None, None] + (colour - bg)[:, :, None, None] * mask
        images.append(img + noise * rng.standard_normal(img.shape))
        labels.append(np.full(n_per_class, label))
        rows.append(np.tile([-1, k, c, s], (n_per_class, 1)))
    attributes = np.zeros((len(classes), len(SHAPES) + len(COLOURS) + len(SIZES)))
    for i, (k, c, s) in enumerate(parsed):
        attributes[i, [k, len(SHAPES) + c, len(SHAPES) + len(COLOURS) + s]] = 1.0
    return Domain(
        images=torch.as_tensor(np.concatenate(images), dtype=torch.float32),
        labels=np.concatenate(labels).astype(np.int64),
        classnames=classes,
        attributes=attributes,
        attribute_names=[*SHAPES, *COLOURS, *SIZES],
        templates=SHAPE_TEMPLATES,
        name=f"shapes/{split}",
        sample_attributes=np.concatenate(rows).astype(np.int64),
    )


def segment_phrase(digit: int) -> str:
    """The lit segments of ``digit`` in words: ``7 -> "top, upper right and lower right"``
    (for prompts such as ``f"a digit with the {segment_phrase(7)} segments lit."``)."""
    lit = list(_LIT[int(digit)])
    if len(lit) == 1:
        return lit[0]
    return ", ".join(lit[:-1]) + " and " + lit[-1]


#: Caption templates of pretraining; each is (template, which attributes it states).
_DIGIT_CAPTIONS = (
    "a photo of the digit {name}.",
    "a handwritten {name}.",
    "the digit {name}.",
    "a photo of a {name}.",
    "{name}",
    "a digit with the {segments} segments lit.",
    "a seven segment {name} with the {segments} segments lit.",
)
_SHAPE_CAPTIONS = (  # fields stated: (shape, colour, size)
    ("a photo of a {size} {colour} {shape}.", (1, 1, 1)),
    ("a {size} {colour} {shape}.", (1, 1, 1)),
    ("a {colour} {shape}.", (1, 1, 0)),
    ("a {size} {shape}.", (1, 0, 1)),
    ("a photo of a {shape}.", (1, 0, 0)),
    ("a {colour} shape.", (0, 1, 0)),
    ("a {size} {colour} shape.", (0, 1, 1)),
)


def caption_vocabulary() -> list[str]:
    """Every word of the pretraining captions and the default zero-shot templates."""
    words = set()
    texts = list(_DIGIT_CAPTIONS) + [t for t, _ in _SHAPE_CAPTIONS]
    texts += list(DIGIT_TEMPLATES) + list(SHAPE_TEMPLATES) + ["a photo of a {}."]
    fill = {"name": "", "segments": "", "size": "", "colour": "", "shape": ""}
    for t in texts:
        words.update(t.replace("{}", "").format(**fill).replace(",", " ").replace(".", " ").split())
    words.update(DIGIT_NAMES)
    words.update(" ".join(SEGMENTS).split())
    words.update(SHAPES + COLOURS + SIZES)
    words.update(("and", "digit", "shape", "image", "picture", "number", "of", "an", "the", "a"))
    return sorted(words)


def pretraining_corpus(*, random_state=0, n_per_shape_class: int = 60):
    """The image-caption pretraining corpus of the tiny CLIP.

    Digits ``"pretrain"`` images and shapes ``"pretrain"`` images of the 24 classes not in
    ``SHAPES_HELD_OUT``, with, per image, the attribute row
    ``(digit, shape, colour, size)`` (-1 where not applicable) that :func:`caption_batch`
    uses to caption it and to decide which captions describe which images.

    Returns
    -------
    images : Tensor (n, 3, 16, 16)
    attributes : ndarray of int (n, 4)
    """
    rng = check_random_state(random_state)
    digits = digits_domain("pretrain", random_state=rng)
    seen = [c for c in SHAPES_CLASSES if c not in SHAPES_HELD_OUT]
    shapes = shapes_dataset(n_per_shape_class, classes=seen, split="pretrain", random_state=rng)
    images = torch.cat([digits.images, shapes.images])
    return images, np.concatenate([digits.sample_attributes, shapes.sample_attributes])


def caption_batch(attributes: np.ndarray, rng: np.random.Generator):
    """A random templated caption for each attribute row, and which captions fit which rows.

    Parameters
    ----------
    attributes : ndarray of int (n, 4)
        Rows ``(digit, shape, colour, size)`` as in :func:`pretraining_corpus`.
    rng : numpy Generator

    Returns
    -------
    captions : list of str
    fits : ndarray of bool (n_images, n_captions)
        ``fits[i, j]``: caption ``j`` is a true description of image ``i`` (a partial shape
        caption such as ``"a red shape"`` fits every red shape). The diagonal is True.
    """
    n = len(attributes)
    captions = []
    stated = -np.ones((n, 4), dtype=np.int64)  # what each caption pins down; -1: not stated
    for i, (digit, k, c, s) in enumerate(attributes):
        if digit >= 0:
            template = _DIGIT_CAPTIONS[rng.integers(len(_DIGIT_CAPTIONS))]
            captions.append(
                template.format(name=DIGIT_NAMES[digit], segments=segment_phrase(digit))
            )
            stated[i, 0] = digit  # segment patterns are unique, so every digit caption pins it
        else:
            template, mask = _SHAPE_CAPTIONS[rng.integers(len(_SHAPE_CAPTIONS))]
            captions.append(template.format(shape=SHAPES[k], colour=COLOURS[c], size=SIZES[s]))
            stated[i, 0] = -2  # a shape caption never describes a digit
            for j, (on, value) in enumerate(zip(mask, (k, c, s), strict=True)):
                if on:
                    stated[i, 1 + j] = value
    img = attributes[:, None, :]
    cap = stated[None, :, :]
    digit_ok = np.where(cap[..., 0] == -2, img[..., 0] < 0, cap[..., 0] == img[..., 0])
    rest_ok = ((cap[..., 1:] == -1) | (cap[..., 1:] == img[..., 1:])).all(axis=-1)
    return captions, digit_ok & rest_ok
