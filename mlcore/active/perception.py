"""The frozen perception module: a small CNN detector trained once on clean rendered views."""

from __future__ import annotations

import copy
import functools
import hashlib
import numbers

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from mlcore._checks import check_tensor
from mlcore._device import seeded_torch, torch_generator
from mlcore.active.env import ActiveRoomEnv, check_pose_env
from statcore.validation import check_scalar, describe

#: Room seeds from here up are the detector's source rooms, apart from any policy's rooms.
SOURCE_ROOMS = 10**6


class TinyDetector(nn.Module):
    """A small CNN naming the object in the centre of a view: ``n_classes`` objects plus
    background (the last logit).

    Parameters
    ----------
    n_classes : int
        Object classes; the module outputs ``n_classes + 1`` logits.
    width : int
        Channels of the first convolution (the second has twice as many).
    """

    def __init__(self, n_classes: int = 4, width: int = 16):
        super().__init__()
        self.n_classes = check_scalar(n_classes, name="n_classes", kind=numbers.Integral, low=1)
        width = check_scalar(width, name="width", kind=numbers.Integral, low=1)
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(4),
            nn.Flatten(),
        )
        self.head = nn.Sequential(
            nn.Linear(32 * width, 64), nn.ReLU(), nn.Linear(64, n_classes + 1)
        )

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(images))


class FrozenPerception(nn.Module):
    """A perception module that no training can change: ``(obs, query) -> (pred, conf)``.

    The module is deep-copied (the caller's stays as it was), put in eval mode and every
    parameter's ``requires_grad`` is switched off; calls run under ``torch.no_grad``. Its
    confidence for the query is the only feedback Sea²'s policy training sees.

    Parameters
    ----------
    module : nn.Module
        Any module mapping images ``(B, 3, H, W)`` to class logits ``(B, n_outputs)``; the
        query is an index into those outputs.

    Notes
    -----
    ``pred`` is the argmax class and ``conf`` the softmax probability of the query class. The
    paper's perception modules are off-the-shelf grounding, segmentation and 3D-box models; here
    any classifier of the view's central object stands in (Fidelity: reconstruction).
    """

    def __init__(self, module: nn.Module):
        super().__init__()
        if not isinstance(module, nn.Module):
            raise TypeError(f"`module` must be a torch nn.Module; got {describe(module)}")
        self.module = copy.deepcopy(module).eval()
        for p in self.module.parameters():
            p.requires_grad_(False)

    def train(self, mode: bool = True):
        # A frozen module stays in eval mode (dropout and batch-norm statistics fixed).
        return super().train(False)

    @torch.no_grad()
    def forward(self, obs: torch.Tensor, query) -> tuple[torch.Tensor, torch.Tensor]:
        """Predicted class ``(B,)`` and the confidence ``(B,)`` in the query class."""
        check_tensor(obs, name="obs", ndim=4, kind="floating", finite=True)
        logits = self.module(obs)
        query = torch.as_tensor(query, device=logits.device).expand(len(obs))
        if query.min() < 0 or query.max() >= logits.shape[1]:
            raise ValueError(
                f"`query` must index the perception module's {logits.shape[1]} outputs; got "
                f"values from {int(query.min())} to {int(query.max())}"
            )
        probs = logits.softmax(dim=1)
        return probs.argmax(dim=1), probs.gather(1, query[:, None].long())[:, 0]


def state_dict_hash(module: nn.Module) -> str:
    """SHA-256 of a module's ``state_dict`` (names, dtypes, shapes and bytes), to show it is
    unchanged."""
    digest = hashlib.sha256()
    for name, tensor in module.state_dict().items():
        t = tensor.detach().cpu().contiguous()
        digest.update(f"{name}:{t.dtype}:{tuple(t.shape)}".encode())
        # numpy has no bfloat16; its float32 widening is exact, so the hash still sees every bit.
        digest.update((t.float() if t.dtype == torch.bfloat16 else t).numpy().tobytes())
    return digest.hexdigest()


def rendered_views(env: ActiveRoomEnv, n_views: int, *, random_state: int = 0):
    """Views of the detector's source rooms (no nuisance) with the class of the central object.

    Returns
    -------
    images : ndarray (n, 3, H, W) float32
    labels : ndarray (n,) int64
        Object class, or ``env.n_classes`` for background. Background views are thinned to
        about one in ``n_classes + 1``, so that the classes are balanced.
    """
    clean = ActiveRoomEnv(**{**env.config(), "nuisance": 0.0})
    rng = np.random.default_rng(random_state)
    images, labels = [], []
    while len(images) < n_views:
        obs, info = clean.reset(
            seed=int(rng.integers(2**31)), options={"room": SOURCE_ROOMS + int(rng.integers(10**5))}
        )
        label = info["centre_class"]
        if label < 0:
            if rng.random() > 1 / (env.n_classes + 1):
                continue
            label = env.n_classes
        images.append(obs["image"])
        labels.append(label)
    return np.stack(images), np.array(labels, dtype=np.int64)


@functools.lru_cache(maxsize=4)
def _train_detector(config: tuple, n_views: int, n_steps: int, seed: int) -> TinyDetector:
    env = ActiveRoomEnv(**dict(config))
    images, labels = rendered_views(env, n_views, random_state=seed)
    gen = torch_generator(seed)
    with seeded_torch(seed):
        model = TinyDetector(env.n_classes)
    x, y = torch.from_numpy(images), torch.from_numpy(labels)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(n_steps):
        idx = torch.randint(len(x), (128,), generator=gen)
        loss = F.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()


def pretrained_detector(
    env: ActiveRoomEnv, *, n_views: int = 6000, n_steps: int = 600, random_state: int = 0
) -> FrozenPerception:
    """The frozen detector for ``env``'s renders, trained once (cached per configuration).

    A :class:`TinyDetector` is trained with cross-entropy on ``n_views`` labelled views of the
    source rooms rendered without the nuisance (the "generic domain" the paper's pre-trained
    models come from); the nuisance region of ``env``'s rooms is then a domain shift it never
    saw. Training is deterministic in ``random_state`` and cached in-process, so every call with
    the same arguments returns an identical (fresh, frozen) copy.

    Parameters
    ----------
    env : ActiveRoomEnv
    n_views, n_steps : int
        Training views and Adam steps (batches of 128).
    random_state : int

    Returns
    -------
    FrozenPerception
    """
    check_pose_env(env)
    if not isinstance(env, ActiveRoomEnv):
        raise TypeError(
            "`pretrained_detector` renders views with ActiveRoomEnv; for another environment "
            f"wrap your own detector in FrozenPerception; got {describe(env)}"
        )
    if not isinstance(random_state, int) or random_state < 0:
        raise TypeError(f"`random_state` must be a non-negative int; got {describe(random_state)}")
    n_views = check_scalar(n_views, name="n_views", kind=numbers.Integral, low=1)
    n_steps = check_scalar(n_steps, name="n_steps", kind=numbers.Integral, low=1)
    config = env.config()
    # The detector reads images; the episode length does not change what it is trained on.
    config.pop("max_steps")
    model = _train_detector(tuple(sorted(config.items())), n_views, n_steps, random_state)
    return FrozenPerception(model)
