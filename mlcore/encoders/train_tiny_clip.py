"""Retrain the tiny CLIP checkpoint shipped with mlcore, from a fixed seed.

    python -m mlcore.encoders.train_tiny_clip [--out PATH] [--steps N] [--threads T]

The defaults reproduce ``mlcore/encoders/tiny_clip.pt`` (the same torch version and thread
count give the same weights) in a few minutes on one CPU core.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from mlcore._checkpoints import retrain_main
from mlcore._device import seeded_torch, torch_generator
from mlcore._iterations import budget_result
from mlcore.encoders.corpus import caption_batch, caption_vocabulary, pretraining_corpus
from mlcore.encoders.tiny import CHECKPOINT, TinyCLIP
from statcore.progress import progress as progress_bar
from statcore.validation import check_positive, check_positive_int, check_random_state

#: the settings of the shipped checkpoint
SETTINGS = {
    "steps": 1200,
    "batch_size": 128,
    "lr": 2e-3,
    "weight_decay": 0.05,
    "warmup": 50,
    "n_per_shape_class": 60,
    "random_state": 0,
}


def _augment(images: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """Shift each image by up to one pixel (wrapping) and add noise of sd 0.03."""
    shifts = torch.randint(-1, 2, (len(images), 2), generator=g)
    out = torch.stack(
        [
            torch.roll(img, (int(dy), int(dx)), dims=(1, 2))
            for img, (dy, dx) in zip(images, shifts, strict=True)
        ]
    )
    return out + 0.03 * torch.randn(out.shape, generator=g)


def contrastive_loss(image_features, text_features, scale, fits) -> torch.Tensor:
    """Symmetric InfoNCE with a target spread over every caption that fits an image.

    ``fits[i, j]`` says caption ``j`` describes image ``i``; the image-to-text target of row
    ``i`` is uniform over its fitting captions, the text-to-image target of column ``j`` over
    its fitting images. With one caption per image and no duplicates this is CLIP's loss; with
    the repeated class captions of a small corpus it stops the loss from pushing apart an image
    and a caption that truly describes it.
    """
    logits = scale * image_features @ text_features.T
    fits = fits.to(logits.dtype)
    loss_i = torch.sum(-(fits / fits.sum(1, keepdim=True)) * F.log_softmax(logits, dim=1), 1)
    loss_t = torch.sum(-(fits / fits.sum(0, keepdim=True)) * F.log_softmax(logits, dim=0), 0)
    return 0.5 * (loss_i.mean() + loss_t.mean())


def train_tiny_clip(
    *,
    steps: int = SETTINGS["steps"],
    batch_size: int = SETTINGS["batch_size"],
    lr: float = SETTINGS["lr"],
    weight_decay: float = SETTINGS["weight_decay"],
    warmup: int = SETTINGS["warmup"],
    n_per_shape_class: int = SETTINGS["n_per_shape_class"],
    random_state=SETTINGS["random_state"],
    log_every: int = 50,
    progress: bool = False,
    **config,
):
    """Train a :class:`TinyCLIP` contrastively on the offline corpus.

    Parameters
    ----------
    steps : int
        AdamW steps (linear warm-up over ``warmup`` steps, then cosine decay; gradients
        clipped at norm 1).
    batch_size : int
        Image-caption pairs per step.
    lr, weight_decay : float
        AdamW's peak learning rate and decoupled weight decay.
    warmup : int
        Warm-up steps.
    n_per_shape_class : int
        Rendered pretraining images per seen shape class.
    random_state : int
        Seeds the corpus, the initialisation, the batches, captions and augmentation: the same
        seed, thread count and torch version give the same weights.
    log_every : int
        Steps between logged records.
    progress : bool
        Show a progress bar.
    **config
        :class:`TinyCLIP` architecture options.

    Returns
    -------
    model : TinyCLIP
        Trainable, in eval mode, on the CPU.
    result : mlcore.TrainingResult
        Loss and batch retrieval accuracy every ``log_every`` steps.

    References
    ----------
    Radford, Kim, Hallacy, et al. (2021). Learning transferable visual models from natural
    language supervision. *ICML 2021* (symmetric InfoNCE).
    """
    steps = check_positive_int(steps, name="steps")
    batch_size = check_positive_int(batch_size, name="batch_size", minimum=2)
    lr = check_positive(lr, name="lr")
    weight_decay = check_positive(weight_decay, name="weight_decay", strict=False)
    log_every = check_positive_int(log_every, name="log_every")
    rng = check_random_state(random_state)
    images, attributes = pretraining_corpus(random_state=rng, n_per_shape_class=n_per_shape_class)
    g = torch_generator(rng)
    with seeded_torch(rng):
        model = TinyCLIP(caption_vocabulary(), **config)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)

    def rate(step):
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1 + np.cos(np.pi * (step - warmup) / max(steps - warmup, 1)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, rate)
    records, start = [], time.perf_counter()
    model.train()
    for step in progress_bar(range(1, steps + 1), enabled=progress, desc="train_tiny_clip"):
        idx = rng.choice(len(images), size=min(batch_size, len(images)), replace=False)
        captions, fits = caption_batch(attributes[idx], rng)
        batch = _augment(images[torch.as_tensor(idx)], g)
        img = model.encode_image(batch)
        txt = model.encode_text(captions)
        scale = model.log_logit_scale.clamp(max=np.log(100)).exp()
        loss = contrastive_loss(img, txt, scale, torch.as_tensor(fits))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % log_every == 0 or step == steps:
            with torch.no_grad():
                hit = torch.as_tensor(fits)[torch.arange(len(idx)), (img @ txt.T).argmax(1)]
            records.append(
                {
                    "step": step,
                    "loss": loss.detach(),
                    "lr": sched.get_last_lr()[0],
                    "retrieval_accuracy": hit.float().mean(),
                    "logit_scale": scale.detach(),
                }
            )
    result = budget_result(
        records,
        method="tiny CLIP pretraining (symmetric InfoNCE)",
        wall_time_s=time.perf_counter() - start,
        device="cpu",
        function="train_tiny_clip",
        n_iter=steps,
        maxiter=steps,
        criterion=f"contrastive loss after a fixed budget of {steps} steps",
        remedy="lower `lr`",
    )
    return model.eval(), result


def main(argv=None) -> None:
    retrain_main(
        argv,
        description=__doc__.splitlines()[0],
        default_out=Path(__file__).with_name(CHECKPOINT),
        settings=SETTINGS,
        train=lambda settings: train_tiny_clip(**settings, progress=True),
    )


if __name__ == "__main__":
    main()
