"""``HeadHooks``: per-head reads and writes on any transformer, through forward hooks.

Every method of :mod:`mlcore.interp` sees a model through this adapter only. A layer's heads are
read where they are still separate: the input of the attention out-projection (``z``, the
concatenated head outputs, ``n_heads * head_dim`` wide), as Todd et al. (2024) do with baukit's
``TraceDict`` on ``o_proj`` / ``out_proj``. Writes are of two kinds: replacing one head's ``z`` at
the last position (activation patching) and adding a vector to the residual stream after a layer
at the last position (function-vector injection).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from statcore.validation import check_option, check_positive_int, describe

#: Where a head's output is read from ``z``: the input of the out-projection (HF models,
#: TinyTransformer) or the output of a hook point (TransformerLens ``hook_z``).
Z_SOURCES = ("input", "output")


@dataclass(frozen=True)
class HeadLayout:
    """Where the heads and the residual stream of one model live, by module name.

    Parameters
    ----------
    z_modules : sequence of str
        One module per layer whose input (``z_source="input"``) or output (``"output"``) is the
        per-head attention output ``z``: (batch, time, n_heads * head_dim), or (batch, time,
        n_heads, head_dim) for TransformerLens' ``hook_z``.
    residual_modules : sequence of str
        One module per layer whose output is the residual stream after that layer (a tensor, or a
        tuple whose first item is one).
    n_heads : int
    out_weight : callable
        ``out_weight(layer) -> Tensor (d_model, n_heads * head_dim)``: the out-projection matrix
        that maps ``z`` to the residual stream (without its bias).
    attention : callable, optional
        ``attention(hooks, layer, captured) -> (pattern (b, H, t, t), values (b, t, H, head_dim))``
        from what ``attention_modules`` captured; None where the layout cannot give the
        attention pattern (span decomposition and hybrid patching then refuse the model).
    attention_modules : sequence of str
        Modules to capture for ``attention`` (one per layer), with ``attention_capture`` saying
        whether their forward inputs (``"input"``), outputs (``"output"``) or, for
        TransformerLens, their ``hook_pattern`` and ``hook_v`` outputs (``"tl"``) are kept.
    z_source : {"input", "output"}
    positions_keyword : str, optional
        The model's keyword argument for explicit position indices (``positions`` for
        TinyTransformer, ``position_ids`` for Hugging Face models); None where the model takes
        none (``positions=`` is then refused).
    name : str
        The architecture's name, for messages.

    References
    ----------
    Todd, E., Li, M. L., Sharma, A. S., Mueller, A., Wallace, B. C. and Bau, D. (2024). Function
    vectors in large language models. *ICLR 2024*.
    """

    z_modules: tuple[str, ...]
    residual_modules: tuple[str, ...]
    n_heads: int
    out_weight: Callable
    attention: Callable | None = None
    attention_modules: tuple[str, ...] = ()
    attention_capture: str = "output"
    z_source: str = "input"
    positions_keyword: str | None = None
    name: str = "custom"


def _tiny_transformer_layout(model) -> HeadLayout:
    n = len(model.blocks)

    def attention(hooks, layer, captured):
        # Recomputed from the block's input by the block's own qkv_heads, so that
        # sum_j pattern_j * v_j reproduces the captured z (checked by span_decomposition).
        x, positions = captured
        t = x.shape[1]
        q, k, v = model.blocks[layer].qkv_heads(x, positions)
        scores = q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5)
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        pattern = scores.masked_fill(~causal, float("-inf")).softmax(-1)
        return pattern, v.transpose(1, 2)

    return HeadLayout(
        z_modules=tuple(f"blocks.{i}.proj" for i in range(n)),
        residual_modules=tuple(f"blocks.{i}" for i in range(n)),
        n_heads=model.n_heads,
        out_weight=lambda layer: model.blocks[layer].proj.weight,
        attention=attention,
        attention_modules=tuple(f"blocks.{i}" for i in range(n)),
        attention_capture="input",
        positions_keyword="positions",
        name="mlcore.nn.TinyTransformer",
    )


def _gpt2_layout(model) -> HeadLayout:
    prefix = "transformer." if hasattr(model, "transformer") else ""
    core = model.transformer if prefix else model
    n = len(core.h)

    def attention(hooks, layer, captured):
        # GPT-2's eager attention: softmax(q k^T * scaling + causal mask) with no position
        # terms inside attention (positions are added to the embeddings).
        attn = core.h[layer].attn
        qkv = captured
        b, t, _ = qkv.shape
        q, k, v = qkv.split(attn.split_size, dim=2)
        q, k, v = (a.view(b, t, attn.num_heads, attn.head_dim).transpose(1, 2) for a in (q, k, v))
        scores = (q @ k.transpose(-1, -2)) * attn.scaling
        causal = torch.ones(t, t, dtype=torch.bool, device=qkv.device).tril()
        pattern = scores.masked_fill(~causal, torch.finfo(scores.dtype).min).softmax(-1)
        return pattern, v.transpose(1, 2)

    return HeadLayout(
        z_modules=tuple(f"{prefix}h.{i}.attn.c_proj" for i in range(n)),
        residual_modules=tuple(f"{prefix}h.{i}" for i in range(n)),
        n_heads=core.h[0].attn.num_heads,
        # Conv1D stores its weight as (in, out)
        out_weight=lambda layer: core.h[layer].attn.c_proj.weight.T,
        attention=attention,
        attention_modules=tuple(f"{prefix}h.{i}.attn.c_attn" for i in range(n)),
        positions_keyword="position_ids",
        name="transformers GPT-2",
    )


def _llama_like_layout(model, modules) -> HeadLayout:
    # Llama / Mistral / Qwen / GPT-J naming: the pattern needs the model's rotary and grouped
    # keys, so this layout reads and patches heads but gives no attention pattern.
    names = [n for n in modules if n.endswith((".self_attn.o_proj", ".attn.out_proj"))]
    residual = [n.rsplit(".", 2)[0] for n in names]
    config = getattr(model, "config", None)
    n_heads = getattr(config, "num_attention_heads", None) or getattr(config, "n_head", None)
    if n_heads is None:
        raise ValueError("`model` has out-projections but no config.num_attention_heads")
    return HeadLayout(
        z_modules=tuple(names),
        residual_modules=tuple(residual),
        n_heads=int(n_heads),
        out_weight=lambda layer: modules[names[layer]].weight,
        name="transformers (o_proj / out_proj naming)",
    )


def _transformer_lens_layout(model) -> HeadLayout:
    # TransformerLens (not installed where this was written; follows its documented hook names):
    # hook points are identity modules, so ordinary forward hooks read and replace their outputs.
    n = model.cfg.n_layers

    def attention(hooks, layer, captured):
        pattern, values = captured
        return pattern, values

    return HeadLayout(
        z_modules=tuple(f"blocks.{i}.attn.hook_z" for i in range(n)),
        residual_modules=tuple(f"blocks.{i}.hook_resid_post" for i in range(n)),
        n_heads=model.cfg.n_heads,
        # W_O is (n_heads, d_head, d_model)
        out_weight=lambda layer: model.blocks[layer].attn.W_O.flatten(0, 1).T,
        attention=attention,
        attention_modules=tuple(f"blocks.{i}.attn" for i in range(n)),
        attention_capture="tl",
        z_source="output",
        name="TransformerLens HookedTransformer",
    )


def detect_layout(model: torch.nn.Module) -> HeadLayout:
    """The :class:`HeadLayout` of a known architecture.

    Recognised: :class:`mlcore.nn.TinyTransformer`; Hugging Face GPT-2 (``h.{l}.attn.c_proj``);
    Llama-style ``self_attn.o_proj`` and GPT-J-style ``attn.out_proj`` naming (heads only, no
    attention pattern); TransformerLens ``HookedTransformer`` (``blocks.{l}.attn.hook_z``,
    ``hook_pattern``, ``hook_v``, ``hook_resid_post``). Anything else: pass a
    :class:`HeadLayout` to :class:`HeadHooks`.

    Notes
    -----
    The TransformerLens layout follows TransformerLens' documented hook names; TransformerLens
    is not installed here, so that layout is untested.

    References
    ----------
    Todd, E., Li, M. L., Sharma, A. S., Mueller, A., Wallace, B. C. and Bau, D. (2024). Function
    vectors in large language models. *ICLR 2024*.
    """
    from mlcore.nn import TinyTransformer

    if isinstance(model, TinyTransformer):
        return _tiny_transformer_layout(model)
    modules = dict(model.named_modules())
    if type(model).__name__ == "HookedTransformer" and hasattr(model, "cfg"):
        return _transformer_lens_layout(model)
    if any(n.endswith("h.0.attn.c_proj") for n in modules):
        return _gpt2_layout(model)
    if any(n.endswith((".self_attn.o_proj", ".attn.out_proj")) for n in modules):
        return _llama_like_layout(model, modules)
    shown = [n for n in modules if n][:10]
    raise ValueError(
        "`model` has no attention out-projection under a known name (TinyTransformer "
        "'blocks.{l}.proj', GPT-2 'h.{l}.attn.c_proj', Llama 'self_attn.o_proj', GPT-J "
        "'attn.out_proj', TransformerLens 'blocks.{l}.attn.hook_z'); pass "
        "`layout=HeadLayout(...)`. "
        f"Its modules include {shown}"
    )


def _first(output):
    return output[0] if isinstance(output, tuple | list) else output


class HeadHooks:
    """Read, patch and steer the attention heads of a transformer.

    Parameters
    ----------
    model : torch.nn.Module
        A causal language model called as ``model(ids)`` and returning logits (batch, time,
        vocab), or an object with a ``.logits`` attribute (Hugging Face). It is used in
        ``eval()`` mode under ``torch.no_grad()``; its training flag is restored afterwards and
        every hook is removed after each call, even when the call fails.
    layout : HeadLayout, optional
        Where the heads live; by default :func:`detect_layout`.

    Notes
    -----
    With no patch and no added vector, the hooks only read, so logits are bitwise those of the
    bare model (tested). Prompts of a batch share one length and carry no padding mask: the
    answer is read, and edits made, at the last position. The TransformerLens layout follows
    its documented hook names but was written without TransformerLens installed and is
    untested.

    References
    ----------
    Todd, E., Li, M. L., Sharma, A. S., Mueller, A., Wallace, B. C. and Bau, D. (2024). Function
    vectors in large language models. *ICLR 2024*. (Code: ericwtodd/function_vectors.)

    Examples
    --------
    >>> from mlcore.nn import TinyTransformer
    >>> hooks = HeadHooks(TinyTransformer(11, 16, 2, 4))
    >>> hooks.n_layers, hooks.n_heads, hooks.head_dim
    (2, 4, 4)
    """

    def __init__(self, model: torch.nn.Module, *, layout: HeadLayout | None = None):
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"`model` must be a torch.nn.Module; got {describe(model)}")
        if layout is None:
            layout = detect_layout(model)
        elif not isinstance(layout, HeadLayout):
            raise TypeError(f"`layout` must be a HeadLayout or None; got {describe(layout)}")
        check_option(layout.z_source, name="layout.z_source", options=Z_SOURCES)
        check_positive_int(layout.n_heads, name="layout.n_heads")
        modules = dict(model.named_modules())
        wanted = [*layout.z_modules, *layout.residual_modules, *layout.attention_modules]
        missing = [n for n in wanted if n not in modules]
        if missing:
            raise ValueError(f"`model` has no modules named {missing[:5]} (from its layout)")
        if not layout.z_modules or len(layout.z_modules) != len(layout.residual_modules):
            raise ValueError(
                "`layout` must name one z module and one residual module per layer; got "
                f"{len(layout.z_modules)} and {len(layout.residual_modules)}"
            )
        self.model = model
        self.layout = layout
        self._modules = modules
        weight = layout.out_weight(0)
        self.d_model = int(weight.shape[0])
        self.n_heads = layout.n_heads
        if weight.shape[1] % self.n_heads:
            raise ValueError(
                f"the out-projection input width {weight.shape[1]} is not a multiple of "
                f"n_heads={self.n_heads}"
            )
        self.head_dim = int(weight.shape[1]) // self.n_heads

    @property
    def n_layers(self) -> int:
        return len(self.layout.z_modules)

    @property
    def device(self) -> torch.device:
        for tensor in self.model.parameters():
            return tensor.device
        return torch.device("cpu")

    def out_weight(self, layer: int, head: int) -> torch.Tensor:
        """The out-projection columns of one head: (d_model, head_dim)."""
        w = self.layout.out_weight(layer)
        return w[:, head * self.head_dim : (head + 1) * self.head_dim]

    def head_to_residual(self, layer: int, head: int, z: torch.Tensor) -> torch.Tensor:
        """A head's contribution to the residual stream, ``W_O[:, head] z`` (no bias)."""
        return z @ self.out_weight(layer, head).detach().T.to(z.dtype)

    def _check_heads(self, heads, *, name="heads"):
        out = []
        for item in heads:
            layer, head = (int(v) for v in item)
            if not (0 <= layer < self.n_layers and 0 <= head < self.n_heads):
                raise ValueError(
                    f"`{name}` must hold (layer, head) pairs with layer < {self.n_layers} and "
                    f"head < {self.n_heads}; got {item!r}"
                )
            out.append((layer, head))
        if not out:
            raise ValueError(f"`{name}` must name at least one (layer, head)")
        return out

    def _check_ids(self, ids, *, name="ids"):
        if not isinstance(ids, torch.Tensor) or ids.ndim != 2 or ids.dtype.is_floating_point:
            raise ValueError(
                f"`{name}` must be an integer tensor (batch, time); got {describe(ids)}"
            )
        if ids.shape[0] == 0 or ids.shape[1] == 0:
            raise ValueError(f"`{name}` must not be empty; got shape {tuple(ids.shape)}")
        return ids.to(self.device)

    @contextmanager
    def _hooked(self, *, capture_z=False, capture_attention=False, patch=None, add=None):
        """Attach the hooks of one forward pass; yields the dict the capture hooks fill."""
        layout, modules, store = self.layout, self._modules, {"z": {}, "attention": {}}
        handles = []
        split = self.n_heads, self.head_dim

        def z_hook(layer):
            def edit(z):
                shaped = z if z.ndim == 4 else z.unflatten(-1, split)
                if capture_z:
                    store["z"][layer] = shaped.detach().clone()
                if patch and layer in patch:
                    shaped = shaped.clone()
                    for head, value in patch[layer].items():
                        shaped[:, -1, head] = value.to(shaped.dtype)
                    return shaped if z.ndim == 4 else shaped.flatten(-2)
                return None

            if layout.z_source == "input":

                def pre(_m, args):
                    new = edit(args[0])
                    return None if new is None else (new, *args[1:])

                return modules[layout.z_modules[layer]].register_forward_pre_hook(pre)
            return modules[layout.z_modules[layer]].register_forward_hook(
                lambda _m, _a, out: edit(out)
            )

        def residual_hook(layer, vector):
            def hook(_m, _a, out):
                hidden = _first(out).clone()
                hidden[:, -1] += vector.to(hidden.dtype)
                return (hidden, *out[1:]) if isinstance(out, tuple) else hidden

            return modules[layout.residual_modules[layer]].register_forward_hook(hook)

        def attention_hooks(layer):
            name = layout.attention_modules[layer]
            if layout.attention_capture == "input":

                def pre(_m, args, kwargs):
                    positions = args[1] if len(args) > 1 else kwargs.get("positions")
                    store["attention"][layer] = (args[0].detach(), positions)

                return [modules[name].register_forward_pre_hook(pre, with_kwargs=True)]
            if layout.attention_capture == "tl":
                parts = {}

                def keep(key):
                    def hook(_m, _a, out):
                        parts[key] = out.detach()
                        if len(parts) == 2:
                            store["attention"][layer] = (parts["pattern"], parts["v"])

                    return hook

                return [
                    modules[f"{name}.hook_pattern"].register_forward_hook(keep("pattern")),
                    modules[f"{name}.hook_v"].register_forward_hook(keep("v")),
                ]

            def hook(_m, _a, out):
                store["attention"][layer] = _first(out).detach()

            return [modules[name].register_forward_hook(hook)]

        try:
            if capture_z or patch:
                layers = range(self.n_layers) if capture_z else sorted(patch)
                handles += [z_hook(layer) for layer in layers]
            if add is not None:
                handles.append(residual_hook(*add))
            if capture_attention:
                for layer in range(self.n_layers):
                    handles += attention_hooks(layer)
            yield store
        finally:
            for handle in handles:
                handle.remove()

    def _forward(self, ids, positions):
        keywords = {} if positions is None else {self.layout.positions_keyword: positions}
        out = self.model(ids, **keywords)
        return out.logits if hasattr(out, "logits") else out

    def _check_positions(self, positions, ids):
        """Explicit position indices (time,) or (batch, time) as a LongTensor, or None."""
        if positions is None:
            return None
        if self.layout.positions_keyword is None:
            raise ValueError(
                f"`positions` needs a model that takes position indices; the layout of `model` "
                f"({self.layout.name}) names none (HeadLayout.positions_keyword)"
            )
        if (
            not isinstance(positions, torch.Tensor)
            or positions.dtype.is_floating_point
            or positions.shape[-1] != ids.shape[1]
            or positions.ndim not in (1, 2)
            or (positions.ndim == 2 and positions.shape[0] != ids.shape[0])
        ):
            raise ValueError(
                f"`positions` must be an integer tensor (time,) or (batch, time) matching `ids` "
                f"{tuple(ids.shape)}; got {describe(positions)}"
            )
        if positions.ndim == 1 and self.layout.positions_keyword == "position_ids":
            positions = positions.expand(ids.shape[0], -1)
        return positions.to(self.device)

    def run(
        self, ids, *, patch=None, add=None, capture_z=False, capture_attention=False,
        positions=None,
    ):  # fmt: skip
        """One forward pass with optional edits; returns ``(logits, captured)``.

        Parameters
        ----------
        ids : LongTensor (batch, time)
        patch : dict, optional
            ``{(layer, head): value}``: the head's ``z`` at the last position is replaced by
            ``value`` (head_dim,) or (batch, head_dim).
        add : (layer, vector), optional
            ``vector`` (d_model,) or (batch, d_model) is added to the residual stream after
            ``layer`` at the last position.
        capture_z, capture_attention : bool
            Keep every layer's ``z`` (batch, time, heads, head_dim) / its attention inputs.
        positions : LongTensor (time,) or (batch, time), optional
            Position indices of the tokens (default ``0 .. time - 1``): a prompt cut out of a
            longer one keeps its original positions this way.
        """
        ids = self._check_ids(ids)
        positions = self._check_positions(positions, ids)
        by_layer = None
        if patch:
            by_layer = {}
            for (layer, head), value in zip(
                self._check_heads(patch, name="patch"), patch.values(), strict=True
            ):
                by_layer.setdefault(layer, {})[head] = value.to(self.device)
        if add is not None:
            layer, vector = add
            if not 0 <= int(layer) < self.n_layers:
                raise ValueError(f"`layer` must be in [0, {self.n_layers - 1}]; got {layer!r}")
            vector = torch.as_tensor(vector, device=self.device)
            if vector.shape[-1] != self.d_model:
                raise ValueError(
                    f"the added vector must have d_model={self.d_model} entries; got shape "
                    f"{tuple(vector.shape)}"
                )
            add = (int(layer), vector)
        if capture_attention and self.layout.attention is None:
            raise ValueError(
                f"the layout of `model` ({self.layout.name}) gives no attention pattern; span "
                "decomposition and hybrid patching need one (pass a HeadLayout with `attention`)"
            )
        was_training = self.model.training
        self.model.eval()
        try:
            with (
                torch.no_grad(),
                self._hooked(
                    capture_z=capture_z,
                    capture_attention=capture_attention,
                    patch=by_layer,
                    add=add,
                ) as store,
            ):
                logits = self._forward(ids, positions)
        finally:
            self.model.train(was_training)
        return logits, store

    def logits(self, ids, **edits) -> torch.Tensor:
        """Logits (batch, time, vocab) of ``ids`` with the edits of :meth:`run`."""
        return self.run(ids, **edits)[0]

    def head_activations(self, ids, *, positions=None) -> torch.Tensor:
        """Every head's ``z`` at the last position: (batch, n_layers, n_heads, head_dim)."""
        _, store = self.run(ids, capture_z=True, positions=positions)
        return torch.stack([store["z"][layer][:, -1] for layer in range(self.n_layers)], dim=1)

    def attention(self, ids, *, positions=None):
        """Per layer ``(pattern (b, H, t, t), values (b, t, H, head_dim), z (b, t, H, d))``."""
        _, store = self.run(ids, capture_z=True, capture_attention=True, positions=positions)
        with torch.no_grad():
            return [
                (*self.layout.attention(self, layer, store["attention"][layer]), store["z"][layer])
                for layer in range(self.n_layers)
            ]


def answer_probability(logits: torch.Tensor, answers: torch.Tensor) -> torch.Tensor:
    """P(answer) at the last position, from logits (batch, time, vocab) (the metric of Todd
    et al.'s indirect effect)."""
    return F.softmax(logits[:, -1].float(), dim=-1).gather(1, answers.view(-1, 1)).squeeze(1)
