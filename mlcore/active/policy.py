"""Policies for Sea²: a small transformer over image tokens and pose history, the rule-based
explorer whose trajectories supervise it, and the random and forward-only baselines.

Every policy is an ``nn.Module`` called as ``policy(image, history, query) -> logits`` with

- ``image`` ``(B, 3, H, W)``: the current view;
- ``history`` ``(B, L, 6 + n_actions)``: one row per past step, oldest first, left-padded with
  zero rows; a row is ``(valid, x, y, cos θ, sin θ, confidence, one-hot previous action)``
  (:func:`history_features`), the last row the current step;
- ``query`` ``(B,)`` long: the object class asked for;
- ``logits`` ``(B, n_actions)``: unnormalised action log-probabilities.

A VLM policy plugs in through the same call (render the history as text, map its answer to
action logits).
"""

from __future__ import annotations

import math
import numbers

import torch
from torch import nn

from mlcore._checks import check_tensor
from mlcore._device import torch_generator
from mlcore.active.env import ACTIONS
from statcore.validation import check_positive_int, check_scalar

#: Columns of a history row before the one-hot previous action.
HISTORY_FIELDS = ("valid", "x", "y", "cos", "sin", "confidence")


def history_features(poses, confidences, actions, *, n_actions: int, length: int) -> torch.Tensor:
    """The ``(length, 6 + n_actions)`` history of one episode up to its current step.

    Parameters
    ----------
    poses : Tensor (t + 1, 4)
        Poses ``(x, y, cos θ, sin θ)`` from the start to the current step.
    confidences : Tensor (t + 1,)
        The perception module's confidence in the query at each of those steps.
    actions : Tensor (t,)
        The actions taken so far (the previous action of step ``s`` is ``actions[s - 1]``).
    n_actions, length : int
        Size of the one-hot and number of rows kept (the most recent; older steps are dropped).
    """
    check_tensor(poses, name="poses", dims=("step", "pose"), sizes={"pose": 4}, nonempty=True,
                 kind="floating", finite=True)  # fmt: skip
    t1 = len(poses)
    check_tensor(confidences, name="confidences", dims=("step",), sizes={"step": t1},
                 kind="floating", finite=True)  # fmt: skip
    check_tensor(actions, name="actions", dims=("step",), sizes={"step": t1 - 1},
                 kind="integer")  # fmt: skip
    n_actions = check_positive_int(n_actions, name="n_actions")
    length = check_positive_int(length, name="length")
    if len(actions) and bool(((actions < 0) | (actions >= n_actions)).any()):
        raise ValueError(f"`actions` must hold action indices in [0, {n_actions - 1}]")
    return _history_rows(poses, confidences, actions, n_actions, length)


def _history_rows(poses, confidences, actions, n_actions, length):
    # history_features' work on checked arguments: a rollout builds one history per episode and
    # step from tensors it made itself, where the checks would cost a third of the time.
    t1 = len(poses)
    prev = torch.zeros(t1, n_actions, dtype=poses.dtype, device=poses.device)
    if t1 > 1:
        prev[torch.arange(1, t1, device=poses.device), actions.long()] = 1.0
    rows = torch.cat(
        [
            torch.ones(t1, 1, dtype=poses.dtype, device=poses.device),
            poses,
            confidences[:, None],
            prev,
        ],
        dim=1,
    )[-length:]
    pad = rows.new_zeros(length - len(rows), rows.shape[1])
    return torch.cat([pad, rows])


class PoseTransformerPolicy(nn.Module):
    """Sea²'s pose controller in miniature: a transformer over a query token, image patches and
    the pose history.

    The query token (an embedding of the queried class) is followed by the view's
    ``patch × patch`` patches (linear embeddings plus learned positions) and the history rows
    (linear embeddings plus learned recency positions; padding rows are masked out); the
    query token's output is mapped to action logits.

    Parameters
    ----------
    n_actions, n_classes : int
    image_size, patch : int
        The view's side and the patch side (``patch`` must divide ``image_size``).
    history_len : int
        History rows the policy reads.
    d_model, n_heads, n_layers : int

    Notes
    -----
    Fidelity: reconstruction. The paper fine-tunes a VLM (image, text query, history in the
    prompt) to emit low-level pose actions; this is the same interface at CPU scale.
    """

    def __init__(
        self,
        *,
        n_actions: int = len(ACTIONS),
        n_classes: int = 4,
        image_size: int = 16,
        patch: int = 4,
        history_len: int = 16,
        d_model: int = 32,
        n_heads: int = 2,
        n_layers: int = 2,
    ):
        super().__init__()
        for name, value in (
            ("n_actions", n_actions),
            ("n_classes", n_classes),
            ("image_size", image_size),
            ("patch", patch),
            ("history_len", history_len),
            ("d_model", d_model),
            ("n_heads", n_heads),
            ("n_layers", n_layers),
        ):
            check_scalar(value, name=name, kind=numbers.Integral, low=1)
        if image_size % patch:
            raise ValueError(f"`patch` ({patch}) must divide `image_size` ({image_size})")
        self.n_actions, self.history_len, self.patch = n_actions, history_len, patch
        n_patches = (image_size // patch) ** 2
        self.query_embed = nn.Embedding(n_classes, d_model)
        self.patch_embed = nn.Linear(3 * patch * patch, d_model)
        self.patch_pos = nn.Parameter(torch.zeros(n_patches, d_model))
        self.history_embed = nn.Linear(len(HISTORY_FIELDS) + n_actions, d_model)
        self.history_pos = nn.Parameter(torch.zeros(history_len, d_model))
        layer = nn.TransformerEncoderLayer(
            d_model, n_heads, dim_feedforward=2 * d_model, dropout=0.0, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, n_actions)
        nn.init.normal_(self.patch_pos, std=0.02)
        nn.init.normal_(self.history_pos, std=0.02)

    def forward(
        self, image: torch.Tensor, history: torch.Tensor, query: torch.Tensor
    ) -> torch.Tensor:
        b, p = len(image), self.patch
        patches = image.unfold(2, p, p).unfold(3, p, p)  # (B, 3, h, w, p, p)
        patches = patches.permute(0, 2, 3, 1, 4, 5).reshape(b, -1, 3 * p * p)
        history = history[:, -self.history_len :]
        tokens = torch.cat(
            [
                self.query_embed(query.long())[:, None],
                self.patch_embed(patches) + self.patch_pos,
                self.history_embed(history) + self.history_pos[-history.shape[1] :],
            ],
            dim=1,
        )
        padding = torch.cat(
            [
                torch.zeros(b, 1 + patches.shape[1], dtype=torch.bool, device=image.device),
                history[..., 0] == 0,
            ],
            dim=1,
        )
        return self.head(self.encoder(tokens, src_key_padding_mask=padding)[:, 0])


class RandomPolicy(nn.Module):
    """Uniformly random actions: logits drawn afresh at each call (argmax is a uniform draw).

    Parameters
    ----------
    n_actions : int
    random_state : None, int, numpy Generator or torch.Generator
        Seeds the policy's own torch generator (CPU); None draws fresh entropy.
    """

    def __init__(self, n_actions: int = len(ACTIONS), *, random_state=None):
        super().__init__()
        self.n_actions = check_scalar(n_actions, name="n_actions", kind=numbers.Integral, low=1)
        self.generator = torch_generator(random_state)

    def forward(self, image, history, query):
        draws = torch.rand(len(image), self.n_actions, generator=self.generator)
        return draws.to(image.device)


class ForwardPolicy(nn.Module):
    """Always ``forward`` (the forward-only baseline of the paper)."""

    def __init__(
        self, n_actions: int = len(ACTIONS), *, forward_action: int = ACTIONS.index("forward")
    ):
        super().__init__()
        self.n_actions, self.forward_action = n_actions, forward_action

    def forward(self, image, history, query):
        logits = image.new_full((len(image), self.n_actions), -1e4)
        logits[:, self.forward_action] = 0.0
        return logits


class RuleExplorer(nn.Module):
    """The rule-based exploration that supervises Sea²'s first stage, as a policy.

    An in-place sweep: turn right ``n_headings - 1`` times, seeing every heading once and
    reading the perception module's confidence in the query at each. Then turn (the shorter
    way) to the heading of highest confidence and move forward while the confidence does not
    drop by more than ``tol``; stop at a drop, a collision (the pose did not change), or a
    confidence of at least ``stop_confidence``. It reads only the history (poses,
    confidences, previous actions), so it needs no labels.

    Parameters
    ----------
    n_headings : int
        Headings of the environment (a full turn is ``n_headings`` turns).
    tol : float
        Confidence drop that ends the approach.
    stop_confidence : float
        Confidence at which the approach stops early.

    Notes
    -----
    Fidelity: reconstruction. The paper's SFT data are "rule-based exploration trajectories
    that systematically probe indoor scenes"; the rules are not in the text read. The method
    note's reading was a move toward the least-confident direction (exploring the unknown); this
    explorer moves toward the most confident heading, which is what improves a frozen
    detector's final view in a single room.
    """

    def __init__(self, n_headings: int = 8, *, tol: float = 0.05, stop_confidence: float = 0.95):
        super().__init__()
        self.n_headings = check_scalar(n_headings, name="n_headings", kind=numbers.Integral, low=2)
        self.tol = check_scalar(tol, name="tol", kind=numbers.Real, low=0)
        self.stop_confidence = check_scalar(
            stop_confidence, name="stop_confidence", kind=numbers.Real, low=0, high=1
        )
        self.n_actions = len(ACTIONS)

    def _action(self, rows: torch.Tensor) -> int:
        rows = rows[rows[:, 0] > 0]
        t = len(rows) - 1
        sweep = self.n_headings - 1
        if t < sweep:
            return ACTIONS.index("right")
        conf = rows[:, 5]
        best = int(torch.argmax(conf[: sweep + 1]))
        target = math.atan2(float(rows[best, 4]), float(rows[best, 3]))
        now = math.atan2(float(rows[-1, 4]), float(rows[-1, 3]))
        gap = (target - now + math.pi) % (2 * math.pi) - math.pi
        if abs(gap) > math.pi / self.n_headings:
            return ACTIONS.index("left" if gap > 0 else "right")
        previous = ACTIONS[int(torch.argmax(rows[-1, len(HISTORY_FIELDS) :]))] if t else None
        if previous == "forward":
            blocked = bool(torch.equal(rows[-1, 1:3], rows[-2, 1:3]))
            if blocked or conf[-1] < conf[-2] - self.tol:
                return ACTIONS.index("stop")
        if conf[-1] >= self.stop_confidence:
            return ACTIONS.index("stop")
        return ACTIONS.index("forward")

    def forward(self, image, history, query):
        logits = history.new_full((len(history), self.n_actions), -1e4)
        for i, rows in enumerate(history):
            logits[i, self._action(rows)] = 0.0
        return logits
