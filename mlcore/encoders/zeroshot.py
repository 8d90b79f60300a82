"""Zero-shot classification with any dual encoder: class weights from prompts, batched image
features, and an evaluation with a bootstrap interval."""

from __future__ import annotations

import torch

from mlcore._checks import check_tensor
from mlcore._device import as_numpy
from mlcore.encoders._inputs import check_class_indices, check_texts, normalize
from mlcore.encoders.metrics import per_class_accuracy
from mlcore.encoders.protocol import check_dual_encoder
from mlcore.results import EvaluationResult
from statcore.validation import check_positive_int

DEFAULT_TEMPLATES = ("a photo of a {}.",)


def check_classnames(classnames, *, name: str = "classnames") -> list[str]:
    """A non-empty list of distinct strings."""
    classnames = check_texts(classnames, name=name)
    seen = set()
    repeated = [c for c in classnames if c in seen or seen.add(c)]
    if repeated:
        raise ValueError(f"`{name}` must not repeat a class; repeated: {sorted(set(repeated))}")
    return classnames


def _check_templates(templates) -> list[str]:
    templates = check_texts(templates, name="templates")
    for t in templates:
        if t.count("{}") != 1:
            raise ValueError(
                f"each of `templates` must hold one '{{}}' for the class name; got {t!r}"
            )
    return templates


@torch.no_grad()
def zero_shot_weights(encoder, classnames, templates=DEFAULT_TEMPLATES) -> torch.Tensor:
    """CLIP's zero-shot classifier: one prompt-ensembled text feature per class.

    Parameters
    ----------
    encoder : DualEncoder
    classnames : sequence of str
        Distinct class names, in the order of the classifier's outputs.
    templates : sequence of str
        Prompt templates with one ``{}`` for the class name.

    Returns
    -------
    Tensor (C, embed_dim)
        For each class the mean of its normalised template features, renormalised (the
        prompt ensembling of Radford et al. 2021, Sec. 3.1.4), on the encoder's device,
        without a graph.

    References
    ----------
    Radford, Kim, Hallacy, et al. (2021). Learning transferable visual models from natural
    language supervision. *ICML 2021*.

    Examples
    --------
    >>> from mlcore.encoders import tiny_clip
    >>> zero_shot_weights(tiny_clip("cpu"), ["zero", "one"]).shape
    torch.Size([2, 64])
    """
    encoder = check_dual_encoder(encoder)
    classnames = check_classnames(classnames)
    templates = _check_templates(templates)
    texts = [t.format(c) for c in classnames for t in templates]
    chunks = [encoder.encode_text(texts[i : i + 1024]) for i in range(0, len(texts), 1024)]
    feats = normalize(torch.cat(chunks)).reshape(len(classnames), len(templates), -1)
    return normalize(feats.mean(dim=1))


@torch.no_grad()
def encode_images(encoder, images, batch_size: int = 256) -> torch.Tensor:
    """Normalised image features (n, embed_dim) in batches, without a graph.

    Parameters
    ----------
    encoder : DualEncoder
    images : Tensor (n, C, H, W)
        On any device; each batch is moved to the encoder's.
    batch_size : int

    Returns
    -------
    Tensor (n, embed_dim) on the encoder's device.
    """
    encoder = check_dual_encoder(encoder)
    batch_size = check_positive_int(batch_size, name="batch_size")
    check_tensor(images, name="images", ndim=4, kind="floating", nonempty=True)
    return torch.cat(
        [
            encoder.encode_image(images[i : i + batch_size].to(encoder.device))
            for i in range(0, len(images), batch_size)
        ]
    )


def zero_shot_logits(encoder, features, weights) -> torch.Tensor:
    """``logit_scale * features @ weights.T``: CLIP's zero-shot logits (n, C).

    Parameters
    ----------
    encoder : DualEncoder
        Supplies ``logit_scale``.
    features : Tensor (n, embed_dim)
        Normalised image features (:func:`encode_images`).
    weights : Tensor (C, embed_dim)
        Class weights (:func:`zero_shot_weights`); moved to the device and dtype of
        ``features``.

    Returns
    -------
    Tensor (n, C)

    References
    ----------
    Radford, Kim, Hallacy, et al. (2021). Learning transferable visual models from natural
    language supervision. *ICML 2021*.
    """
    check_tensor(features, name="features", ndim=2, kind="floating")
    check_tensor(weights, name="weights", ndim=2, kind="floating")
    if features.shape[1] != weights.shape[1]:
        raise ValueError(
            f"`features` width {features.shape[1]} must equal `weights` width {weights.shape[1]}"
        )
    return encoder.logit_scale * features @ weights.to(features.device, features.dtype).T


def zero_shot_evaluate(
    encoder,
    data,
    *,
    classnames=None,
    templates=None,
    n_resamples: int = 1000,
    random_state=0,
) -> EvaluationResult:
    """Zero-shot top-1 accuracy of an encoder on a domain (per-class accuracies in the notes).

    Parameters
    ----------
    encoder : DualEncoder
    data : Domain
        From :func:`digits_domain` or :func:`shapes_dataset` (anything with ``images``,
        ``labels``, ``classnames`` and ``templates``).
    classnames, templates : sequence of str, optional
        Default ``data.classnames`` and ``data.templates``.
    n_resamples : int
        Bootstrap replicates of the per-example interval.
    random_state : None, int or Generator
        Bootstrap indices.

    Returns
    -------
    EvaluationResult
        ``params`` ``accuracy`` with a percentile bootstrap interval; ``notes`` the per-class
        accuracies.
    """
    encoder = check_dual_encoder(encoder)
    classnames = check_classnames(data.classnames if classnames is None else classnames)
    labels = check_class_indices(
        data.labels, name="data.labels", n=len(data.labels), n_classes=len(classnames),
        of="`classnames`",
    )  # fmt: skip
    weights = zero_shot_weights(
        encoder, classnames, data.templates if templates is None else templates
    )
    features = encode_images(encoder, data.images)
    pred = as_numpy(zero_shot_logits(encoder, features, weights).argmax(dim=1))
    correct = (pred == labels).astype(float)
    per_class = per_class_accuracy(labels, pred)
    notes = (
        "per-class accuracy: "
        + ", ".join(f"{classnames[k]} {a:.2f}" for k, a in per_class.items()),
    )
    return EvaluationResult.from_per_example(
        {"accuracy": correct},
        n_resamples=n_resamples,
        random_state=random_state,
        method=f"zero-shot on {getattr(data, 'name', 'data')}",
        notes=notes,
    )
