"""Task vectors and the four classic merges: average, task arithmetic, TIES and DARE.

Every merge works on state dicts (``{name: tensor}``) or ``nn.Module`` s and returns the same
kind as ``base``. Floating-point entries are combined in float64 and cast back to the base's
dtype: for float32 models this makes the identities of the methods exact (a task vector
``theta_k - theta_0`` of two float32 numbers is exact in float64, and so is ``theta_0 + tau``),
and it keeps sums of many experts from losing bits. Other entries (integer buffers such as a
BatchNorm's ``num_batches_tracked``) are copied from ``base``. Inputs are never modified.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import torch

from mlcore._checks import check_finite
from mlcore._device import torch_generator
from statcore.validation import check_option, check_scalar, describe

METHODS = ("average", "task_arithmetic", "ties", "dare")
TRIM_SCOPES = ("model", "tensor")
DARE_COMBINES = ("task_arithmetic", "ties")


def _state_dict(obj, *, name: str) -> Mapping[str, torch.Tensor]:
    """The tensors of a module or a state dict, as a read-only view (nothing is copied yet)."""
    if isinstance(obj, torch.nn.Module):
        sd = obj.state_dict()
    elif isinstance(obj, Mapping):
        for key, value in obj.items():
            if not isinstance(value, torch.Tensor):
                raise TypeError(
                    f"`{name}` must map parameter names to tensors; entry {key!r} is "
                    f"{describe(value)}"
                )
        sd = obj
    else:
        sd = None
    if sd is not None:
        # a NaN or inf weight would spread into every merged entry it touches (and TIES'
        # magnitude ranking), silently: refuse it here, naming the entry
        for key, value in sd.items():
            check_finite(value.detach(), name=f"{name}[{key!r}]")
        return sd
    raise TypeError(f"`{name}` must be a torch.nn.Module or a state dict; got {describe(obj)}")


def _expert_dicts(experts, *, name: str = "experts") -> list[Mapping[str, torch.Tensor]]:
    if isinstance(experts, torch.nn.Module | Mapping) or not isinstance(experts, Sequence):
        raise TypeError(
            f"`{name}` must be a sequence (list or tuple) of modules or state dicts; got "
            f"{describe(experts)}"
        )
    if len(experts) == 0:
        raise ValueError(f"`{name}` must hold at least one expert; got an empty sequence")
    return [_state_dict(e, name=f"{name}[{k}]") for k, e in enumerate(experts)]


def _check_matching(reference: Mapping, other: Mapping, *, ref_name: str, name: str) -> None:
    """Same keys and shapes, so that a merge never silently drops or broadcasts a tensor."""
    missing = [k for k in reference if k not in other]
    extra = [k for k in other if k not in reference]
    if missing or extra:
        raise ValueError(
            f"`{name}` must have the keys of `{ref_name}`; missing {missing[:5]}, "
            f"unexpected {extra[:5]}"
        )
    for key, tensor in reference.items():
        if tuple(other[key].shape) != tuple(tensor.shape):
            raise ValueError(
                f"`{name}[{key!r}]` must have the shape of `{ref_name}[{key!r}]` "
                f"{tuple(tensor.shape)}; got {tuple(other[key].shape)}"
            )


def _floating(tensor: torch.Tensor) -> bool:
    return tensor.is_floating_point()


def _delta(expert: torch.Tensor, base: torch.Tensor) -> torch.Tensor:
    return expert.detach().to(device=base.device, dtype=torch.float64) - base.detach().to(
        torch.float64
    )


def task_vectors(base, experts) -> list[OrderedDict]:
    """Task vectors ``tau_k = theta_k - theta_0`` of fine-tuned experts.

    Parameters
    ----------
    base : torch.nn.Module or state dict
        The pre-trained model ``theta_0``.
    experts : sequence of torch.nn.Module or state dict
        Models fine-tuned from ``base`` (same keys and shapes).

    Returns
    -------
    list of OrderedDict
        One state dict per expert holding the float64 differences of the floating-point
        entries (integer buffers are not part of a task vector), on ``base``'s devices.

    References
    ----------
    Ilharco, Ribeiro, Wortsman, Gururangan, Schmidt, Hajishirzi and Farhadi (2023). Editing
    models with task arithmetic. ICLR.

    Examples
    --------
    >>> base = {"w": torch.zeros(2)}
    >>> task_vectors(base, [{"w": torch.tensor([1.0, -1.0])}])[0]["w"]
    tensor([ 1., -1.], dtype=torch.float64)
    """
    base_sd = _state_dict(base, name="base")
    expert_sds = _expert_dicts(experts)
    for k, sd in enumerate(expert_sds):
        _check_matching(base_sd, sd, ref_name="base", name=f"experts[{k}]")
    return [
        OrderedDict((key, _delta(sd[key], t)) for key, t in base_sd.items() if _floating(t))
        for sd in expert_sds
    ]


def lora_task_vector(adapter, *, scaling: float = 1.0) -> OrderedDict:
    """The dense task vector ``scaling * B @ A`` of a LoRA adapter, keyed by the base weight.

    Parameters
    ----------
    adapter : state dict
        A LoRA adapter's tensors in peft's naming (what ``peft.get_peft_model_state_dict``
        returns): pairs ``<prefix>.lora_A[.<name>].weight`` of shape (r, in) and
        ``<prefix>.lora_B[.<name>].weight`` of shape (out, r).
    scaling : float
        ``lora_alpha / r`` of the adapter (peft's ``LoraConfig``); 1.0 when the factors already
        include it.

    Returns
    -------
    OrderedDict
        ``{"<prefix>.weight": delta}`` float64 tensors, ready for :func:`merge` with
        ``base=None`` or added to a base model's state dict.

    Notes
    -----
    peft is not needed (and was not installed where this was written): the adapter is read by
    its key names only. Merging the dense products rather than the factors keeps the merge a
    merge of weight updates (merging A and B separately does not merge ``B @ A``). The paper
    studies LoRA experts too; how it merged them was not read, so this step is a
    reconstruction.

    Examples
    --------
    >>> adapter = {"layer.lora_A.weight": torch.ones(1, 3), "layer.lora_B.weight": torch.ones(2, 1)}
    >>> lora_task_vector(adapter, scaling=0.5)["layer.weight"].shape
    torch.Size([2, 3])
    """
    adapter = _state_dict(adapter, name="adapter")
    scaling = check_scalar(scaling, name="scaling")
    out = OrderedDict()
    for key, a in adapter.items():
        if ".lora_A" not in key:
            continue
        b_key = key.replace(".lora_A", ".lora_B", 1)
        if b_key not in adapter:
            raise ValueError(f"`adapter` has {key!r} but no matching {b_key!r}")
        b = adapter[b_key]
        if a.ndim != 2 or b.ndim != 2 or b.shape[1] != a.shape[0]:
            raise ValueError(
                f"`adapter` factors {b_key!r} {tuple(b.shape)} and {key!r} {tuple(a.shape)} "
                "must be (out, r) and (r, in) matrices"
            )
        prefix = key.split(".lora_A", 1)[0]
        out[f"{prefix}.weight"] = scaling * (
            b.detach().to(torch.float64) @ a.detach().to(device=b.device, dtype=torch.float64)
        )
    if not out:
        raise ValueError("`adapter` holds no `lora_A` weights; is it a LoRA adapter state dict?")
    return out


def _trim_(stacked: torch.Tensor, density: float) -> torch.Tensor:
    """Zero, in place, all but the ``int(density * n)`` largest magnitudes of each row (ties
    at the threshold are kept)."""
    n = stacked.shape[1]
    k = int(density * n)
    if k == 0:
        return stacked.zero_()
    magnitude = stacked.abs()
    threshold = torch.kthvalue(magnitude, n - k + 1, dim=1, keepdim=True).values
    return stacked.masked_fill_(magnitude < threshold, 0.0)


def _elect_and_mean_(stacked: torch.Tensor) -> torch.Tensor:
    """TIES's sign election by total mass, then the mean of the entries that agree with it
    (``stacked``, a private temporary, is overwritten)."""
    elected = torch.sign(stacked.sum(dim=0))
    # A coordinate whose signed mass cancels exactly takes the sign of the majority of
    # coordinates, as in the authors' code (resolve_zero_signs, "majority").
    majority = 1.0 if float(elected.sum()) >= 0 else -1.0
    elected.masked_fill_(elected == 0, majority)
    # elected is never 0 now, so zero (trimmed) entries never agree
    agree = torch.sign(stacked) == elected
    stacked.masked_fill_(~agree, 0.0)
    return stacked.sum(dim=0) / agree.sum(dim=0).clamp_(min=1)


def _flat(vectors: list[Mapping[str, torch.Tensor]], keys: list[str]) -> torch.Tensor:
    """A new (K, n) float64 tensor: row k is vector k's entries ``keys`` concatenated."""
    first = vectors[0][keys[0]]
    n = sum(vectors[0][key].numel() for key in keys)
    out = torch.empty(len(vectors), n, dtype=torch.float64, device=first.device)
    for row, v in zip(out, vectors, strict=True):
        start = 0
        for key in keys:
            size = v[key].numel()
            row[start : start + size].copy_(v[key].reshape(-1))
            start += size
    return out


def _unflat(flat: torch.Tensor, like: Mapping[str, torch.Tensor], keys: list[str]) -> dict:
    out, start = {}, 0
    for key in keys:
        size = like[key].numel()
        out[key] = flat[start : start + size].reshape(like[key].shape)
        start += size
    return out


def _ties(vectors, keys, density, trim_scope, trim=True):
    if trim_scope == "model":
        by_device: dict = {}
        for key in keys:
            by_device.setdefault(vectors[0][key].device, []).append(key)
        merged = {}
        for group in by_device.values():
            stacked = _flat(vectors, group)
            if trim:
                _trim_(stacked, density)
            merged.update(_unflat(_elect_and_mean_(stacked), vectors[0], group))
        return merged
    merged = {}
    for key in keys:
        stacked = _flat(vectors, [key])
        if trim:
            _trim_(stacked, density)
        merged[key] = _elect_and_mean_(stacked).reshape(vectors[0][key].shape)
    return merged


def _dare(vectors, keys, drop_rate, random_state):
    if drop_rate == 0.0:
        return vectors
    keep = 1.0 - drop_rate
    generators: dict = {}
    dropped = []
    for v in vectors:
        out = OrderedDict()
        for key in keys:
            t = v[key]
            device = t.device
            if device not in generators:
                generators[device] = torch_generator(random_state, device=device)
            mask = torch.rand(t.shape, generator=generators[device], device=device) < keep
            out[key] = torch.where(mask, t / keep, torch.zeros_like(t))
        dropped.append(out)
    return dropped


def _merge_vectors(vectors, keys, method, scaling, density, drop_rate, combine, trim_scope, rs):
    """The merged task vector, float64, one entry per key."""
    if method == "average":
        return {
            key: torch.stack([v[key] for v in vectors]).sum(dim=0) / len(vectors) for key in keys
        }
    if method == "ties":
        merged = _ties(vectors, keys, density, trim_scope)
    else:
        if method == "dare":
            vectors = _dare(vectors, keys, drop_rate, rs)
        if method == "dare" and combine == "ties":
            merged = _ties(vectors, keys, 1.0, trim_scope, trim=False)
        else:
            merged = {key: torch.stack([v[key] for v in vectors]).sum(dim=0) for key in keys}
    if scaling == 1.0:
        return merged
    return {key: scaling * value for key, value in merged.items()}


def merge(
    base,
    experts,
    method: str = "average",
    *,
    scaling: float | None = None,
    density: float = 0.2,
    drop_rate: float = 0.9,
    combine: str = "task_arithmetic",
    trim_scope: str = "model",
    random_state=None,
):
    """Merge fine-tuned experts of one base model into a single model.

    With task vectors ``tau_k = theta_k - theta_0`` (:func:`task_vectors`):

    - ``"average"``: ``theta_0 + (1/K) sum_k tau_k`` (the mean of the experts; ``scaling`` is
      not used);
    - ``"task_arithmetic"``: ``theta_0 + scaling * sum_k tau_k``;
    - ``"ties"``: trim each ``tau_k`` to its ``density`` fraction of largest magnitudes, elect a
      sign per coordinate by the sign of the summed trimmed entries, average the entries that
      agree with it (the disjoint mean), and add ``scaling`` times the result;
    - ``"dare"``: drop each entry of each ``tau_k`` with probability ``drop_rate`` and rescale
      the survivors by ``1 / (1 - drop_rate)`` (so each entry keeps its expectation), then
      combine by task arithmetic or, with ``combine="ties"``, by TIES's sign election and
      disjoint mean (no second trim).

    Parameters
    ----------
    base : torch.nn.Module, state dict or None
        The pre-trained model ``theta_0``. ``None``: ``experts`` are task vectors already
        (e.g. from :func:`lora_task_vector`) and the merged task vector is returned.
    experts : sequence of torch.nn.Module or state dict
        The fine-tuned models (or task vectors when ``base`` is None), with the keys and
        shapes of ``base``.
    method : {"average", "task_arithmetic", "ties", "dare"}
    scaling : float, optional
        The task-vector coefficient lambda; default 1.0 (``"average"`` is fixed at 1/K).
    density : float in [0, 1]
        TIES: fraction of entries kept per task vector.
    drop_rate : float in [0, 1)
        DARE: drop probability ``p``.
    combine : {"task_arithmetic", "ties"}
        DARE: how the sparsified vectors are combined.
    trim_scope : {"model", "tensor"}
        TIES: rank magnitudes over the whole task vector (the paper's and authors' choice) or
        within each tensor (mergekit's choice).
    random_state : None, int or torch.Generator
        DARE's drop masks; an int seeds one generator per device.

    Returns
    -------
    Same kind as ``base``
        A new module (a deep copy of ``base`` with merged weights) or a new state dict
        (``OrderedDict``) in ``base``'s dtypes and devices; with ``base=None``, a float64 task
        vector. Nothing passed in is modified.

    Notes
    -----
    Fidelity: the merges follow the original papers. TIES keeps ``int(density * n)`` entries
    (ties at the threshold kept); the authors' code keeps one more entry than that and fails at
    density 1. A coordinate whose elected sign is 0 (exact cancellation) takes the sign of the
    majority, as in the authors' code. DARE's drop masks are drawn in the order experts, then
    keys.

    References
    ----------
    Ilharco et al. (2023). Editing models with task arithmetic. ICLR.
    Yadav, Tam, Choshen, Raffel and Bansal (2023). TIES-Merging: resolving interference when
    merging models. NeurIPS.
    Yu, Yu, Yu, Huang and Li (2024). Language models are Super Mario: absorbing abilities from
    homologous models as a free lunch (DARE). ICML.

    Examples
    --------
    >>> base = {"w": torch.zeros(3)}
    >>> experts = [{"w": torch.tensor([1.0, -2.0, 0.5])}, {"w": torch.tensor([3.0, 2.0, -0.5])}]
    >>> merge(base, experts, "average")["w"]
    tensor([2., 0., 0.])
    >>> merge(base, experts, "ties", density=1.0)["w"]
    tensor([2.0000, 2.0000, 0.5000])
    """
    method = check_option(method, name="method", options=METHODS)
    trim_scope = check_option(trim_scope, name="trim_scope", options=TRIM_SCOPES)
    combine = check_option(combine, name="combine", options=DARE_COMBINES)
    density = check_scalar(density, name="density", low=0.0, high=1.0)
    drop_rate = check_scalar(drop_rate, name="drop_rate", low=0.0, high=1.0, high_inclusive=False)
    if method == "average" and scaling is not None:
        raise ValueError(
            "`scaling` does not apply to method='average' (fixed at 1/K); use "
            "method='task_arithmetic' for another coefficient"
        )
    scaling = 1.0 if scaling is None else check_scalar(scaling, name="scaling")
    if method == "dare":
        torch_generator(random_state)  # refuse a bad `random_state` before any work
    if base is None:
        vectors = _expert_dicts(experts)
        for k, v in enumerate(vectors[1:], start=1):
            _check_matching(vectors[0], v, ref_name="experts[0]", name=f"experts[{k}]")
        keys = [key for key, t in vectors[0].items() if _floating(t)]
        vectors = [{key: v[key].detach().to(torch.float64) for key in keys} for v in vectors]
        merged = _merge_vectors(
            vectors, keys, method, scaling, density, drop_rate, combine, trim_scope, random_state
        )
        return OrderedDict((key, merged[key]) for key in keys)
    base_sd = _state_dict(base, name="base")
    vectors = task_vectors(base_sd, experts)
    keys = list(vectors[0])
    merged = _merge_vectors(
        vectors, keys, method, scaling, density, drop_rate, combine, trim_scope, random_state
    )
    out = OrderedDict()
    for key, tensor in base_sd.items():
        if key in merged:
            out[key] = (tensor.detach().to(torch.float64) + merged[key]).to(tensor.dtype)
        else:
            out[key] = tensor.detach().clone()
    if isinstance(base, torch.nn.Module):
        model = copy.deepcopy(base)
        model.load_state_dict(out)
        return model
    return out
