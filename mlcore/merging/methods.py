"""Task vectors and the four classic merges: average, task arithmetic, TIES and DARE.

Every merge works on state dicts (``{name: tensor}``) or ``nn.Module`` s and returns the same
kind as ``base``. The merge is written straight into the result, in the base's dtype, slice by
slice: each slice of the task vectors exists only briefly, in float64, and each merged entry is
rounded once. For float32 models this keeps the identities of the methods exact (a task vector
``theta_k - theta_0`` of two float32 numbers is exact in float64, and so is ``theta_0 + tau``)
and sums of many experts from losing bits, while memory stays at the result plus a few slices
(TIES adds one flat work buffer of the model's size, in float32 at least, for its magnitude
ranking and elected signs). Other entries (integer buffers such as a BatchNorm's
``num_batches_tracked``) are copied from ``base``. Inputs are never modified.
"""

from __future__ import annotations

import copy
import functools
import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import torch

from mlcore._checks import check_finite
from mlcore._device import torch_generator
from statcore.validation import check_option, check_scalar, describe

METHODS = ("average", "task_arithmetic", "ties", "dare")
TRIM_SCOPES = ("model", "tensor")
DARE_COMBINES = ("task_arithmetic", "ties")


def _state_dict(obj, *, name: str, check: bool = True) -> Mapping[str, torch.Tensor]:
    """The tensors of a module or a state dict, as a read-only view (nothing is copied yet).

    ``check=False`` leaves the finiteness check to the caller (:func:`merge` notices non-finite
    entries in its running sums, without a pass of its own over every input)."""
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
    if sd is not None and not check:
        return sd
    if sd is not None:
        # a NaN or inf weight would spread into every merged entry it touches (and TIES'
        # magnitude ranking), silently: refuse it here, naming the entry
        for key, value in sd.items():
            check_finite(value.detach(), name=f"{name}[{key!r}]")
        return sd
    raise TypeError(f"`{name}` must be a torch.nn.Module or a state dict; got {describe(obj)}")


def _expert_dicts(
    experts, *, name: str = "experts", check: bool = True
) -> list[Mapping[str, torch.Tensor]]:
    if isinstance(experts, torch.nn.Module | Mapping) or not isinstance(experts, Sequence):
        raise TypeError(
            f"`{name}` must be a sequence (list or tuple) of modules or state dicts; got "
            f"{describe(experts)}"
        )
    if len(experts) == 0:
        raise ValueError(f"`{name}` must hold at least one expert; got an empty sequence")
    return [_state_dict(e, name=f"{name}[{k}]", check=check) for k, e in enumerate(experts)]


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


# Entries per slice of a tensor: a slice's float64 temporaries (1 MiB each, a handful for TIES)
# stay in cache, and a 15M-parameter merge takes about a hundred slices, so the per-op dispatch
# is small (1 << 15 was twice as slow, 1 << 19 no faster).
_SLICE = 1 << 17


def _slices(n: int):
    for start in range(0, n, _SLICE):
        yield start, min(n, start + _SLICE)


def _refuse_non_finite(base_sd, expert_sds) -> None:
    """The full finiteness check, naming the first bad entry: run up front for DARE, otherwise
    only once a merge's running sums turn out non-finite (a non-finite input always does that)."""
    named = [] if base_sd is None else [("base", base_sd)]
    named += [(f"experts[{k}]", sd) for k, sd in enumerate(expert_sds)]
    for name, sd in named:
        for key, value in sd.items():
            check_finite(value.detach(), name=f"{name}[{key!r}]")


def _kth_largest_(values: torch.Tensor, k: int) -> float:
    """The ``k``-th largest entry of a 1-D scratch tensor (reordered in place on the CPU)."""
    n = values.numel()
    if values.device.type == "cpu":
        # numpy's introselect works in place and is ten times faster than torch.kthvalue
        array = values.numpy()
        array.partition(n - k)
        return float(array[n - k])
    return float(torch.kthvalue(values, n - k + 1).values)


class _Merger:
    """One merge written slice by slice into preallocated ``targets``.

    Task vectors exist only per slice, in float64: there ``theta_k - theta_0`` of float32 (or
    lower) entries is exact, sums of a few of them too, and the merged entry is rounded once,
    when it is written in the target's dtype. Memory beyond the result: a few slices, and for
    TIES one flat work buffer per group of keys.
    """

    def __init__(self, targets, keys, base_sd, expert_sds, scaling, random_state):
        self.targets = {key: targets[key].view(-1) for key in keys}
        self.keys = keys
        self.base_sd, self.expert_sds = base_sd, expert_sds
        self.K = len(expert_sds)
        self.scaling = scaling
        self.random_state = random_state
        self.generators: dict = {}
        self.buffers: dict = {}
        self.work_dtype = torch.float32  # TIES's, set per group of keys

    def inputs(self, key):
        device = self.targets[key].device
        base = None if self.base_sd is None else self.base_sd[key].detach().reshape(-1)
        experts = [sd[key].detach().to(device).reshape(-1) for sd in self.expert_sds]
        return base, experts

    def buffer(self, key, slot: int, dtype=torch.float64) -> torch.Tensor:
        """Scratch slice ``slot`` on the device of ``key``, allocated once per merge."""
        device = self.targets[key].device
        if (device, slot, dtype) not in self.buffers:
            self.buffers[device, slot, dtype] = torch.empty(_SLICE, dtype=dtype, device=device)
        return self.buffers[device, slot, dtype]

    def generator(self, device) -> torch.Generator:
        if device not in self.generators:
            self.generators[device] = torch_generator(self.random_state, device=device)
        return self.generators[device]

    def drop_masks(self, key, keep: float) -> list[torch.Tensor]:
        """DARE's keep masks of ``key``, one per expert, drawn whole so that a seed gives the same
        masks whatever the slicing."""
        target = self.targets[key]
        gen = self.generator(target.device)
        return [
            torch.rand(target.numel(), generator=gen, device=target.device) < keep
            for _ in range(self.K)
        ]

    @staticmethod
    def tau(out, base, expert, start, stop):
        out.copy_(expert[start:stop])
        if base is not None:
            out.sub_(base[start:stop])
        return out

    def write(self, key, merged, base, start, stop):
        target = self.targets[key][start:stop]
        if base is None:
            target.copy_(merged)
        else:
            torch.add(base[start:stop], merged, out=target)

    # ---------------------------------------------------------------- sums of task vectors

    def sum_(self, *, mean: bool, drop_rate: float) -> None:
        """Average, task arithmetic and DARE's task-arithmetic combination."""
        keep = 1.0 - drop_rate
        totals: dict = {}
        for key in self.keys:
            base, experts = self.inputs(key)
            masks = self.drop_masks(key, keep) if drop_rate else None
            acc_full, tmp_full = self.buffer(key, 0), self.buffer(key, 1)
            for start, stop in _slices(self.targets[key].numel()):
                acc = acc_full[: stop - start]
                if masks is None:
                    # sum_k theta_k - K theta_0, exact in float64 like sum_k tau_k, at one op
                    # per expert instead of two
                    acc.copy_(experts[0][start:stop])
                    for expert in experts[1:]:
                        acc.add_(expert[start:stop])
                    if base is not None:
                        acc.sub_(base[start:stop], alpha=self.K)
                else:
                    acc.zero_()
                    tmp = tmp_full[: stop - start]
                    for expert, mask in zip(experts, masks, strict=True):
                        self.tau(tmp, base, expert, start, stop).div_(keep)
                        acc.add_(tmp.mul_(mask[start:stop]))
                if mean:
                    acc.div_(self.K)
                elif self.scaling != 1.0:
                    acc.mul_(self.scaling)
                # no float64 sum of float32 entries overflows, so a non-finite slice sum means a
                # non-finite input: one sum per slice instead of a pass over every input
                device = acc.device
                totals[device] = totals.get(device, 0.0) + acc.sum()
                self.write(key, acc, base, start, stop)
        if not all(bool(torch.isfinite(total)) for total in totals.values()):
            _refuse_non_finite(self.base_sd, self.expert_sds)

    # ---------------------------------------------------------------- TIES

    def trimmed(self, key, out, base, expert, start, stop, threshold, mask, keep):
        """One expert's task vector on a slice, trimmed below ``threshold`` (magnitudes in the
        work dtype, as the threshold was found) and DARE-dropped by ``mask``."""
        self.tau(out, base, expert, start, stop)
        if threshold is not None:
            magnitude = self.buffer(key, 2, self.work_dtype)[: stop - start]
            below = self.buffer(key, 3, torch.bool)[: stop - start]
            torch.lt(magnitude.copy_(out).abs_(), threshold, out=below)
            out.masked_fill_(below, 0.0)
        if mask is not None:
            out.div_(keep).mul_(mask[start:stop])
        return out

    def thresholds(self, group, work, density) -> list[float]:
        """Each expert's ``int(density * n)``-th largest magnitude over the group (ties at it are
        kept): its magnitudes fill ``work``, one expert at a time."""
        n = work.numel()
        k = int(density * n)
        out = []
        for index in range(self.K):
            for key, view in zip(group, self._views(work, group), strict=True):
                base, experts = self.inputs(key)
                if base is None:
                    view.copy_(experts[index])
                elif base.dtype == experts[index].dtype == work.dtype:
                    torch.sub(experts[index], base, out=view)
                else:  # in the work dtype, not the inputs' (a half type)
                    view.copy_(experts[index]).sub_(base)
            work.abs_()
            if not bool(torch.isfinite(work.sum())):
                _refuse_non_finite(self.base_sd, self.expert_sds)
            out.append(-math.inf if k == n else math.inf if k == 0 else _kth_largest_(work, k))
        return out

    def ties_(self, groups, density: float | None, drop_rate: float) -> None:
        """TIES over each group of keys, one ranking of magnitudes per group and expert
        (``density=None``: no trim, DARE's TIES combination).

        Three passes: the thresholds, the elected signs (kept in an int8 buffer) and the
        disjoint mean, written into the targets. DARE's masks are drawn again for the third pass
        from the generators' saved states.
        """
        keep = 1.0 - drop_rate
        for group in groups:
            device = self.targets[group[0]].device
            n = sum(self.targets[key].numel() for key in group)
            dtypes = [self.targets[key].dtype for key in group]
            # ranking in a half type would tie most magnitudes: float32 at least
            self.work_dtype = functools.reduce(torch.promote_types, dtypes, torch.float32)
            if density is None:
                cuts = [None] * self.K
            else:
                cuts = self.thresholds(
                    group, torch.empty(n, dtype=self.work_dtype, device=device), density
                )
            # the elected signs (-1, 0, 1) in one byte each, allocated once the magnitudes are
            # freed and before the targets are written: the peak stays near one model
            work = torch.empty(n, dtype=torch.int8, device=device)
            state = self.generator(device).get_state() if drop_rate else None
            sign_sum = 0.0
            for key, elected in zip(group, self._views(work, group), strict=True):
                base, experts = self.inputs(key)
                masks = self.drop_masks(key, keep) if drop_rate else [None] * self.K
                acc_full, tmp_full = self.buffer(key, 0), self.buffer(key, 1)
                for start, stop in _slices(self.targets[key].numel()):
                    acc, tmp = acc_full[: stop - start].zero_(), tmp_full[: stop - start]
                    for expert, cut, mask in zip(experts, cuts, masks, strict=True):
                        acc.add_(self.trimmed(key, tmp, base, expert, start, stop, cut, mask, keep))
                    acc.sign_()
                    sign_sum = sign_sum + acc.sum()
                    elected[start:stop].copy_(acc)
            # A coordinate whose signed mass cancels exactly takes the sign of the majority of
            # coordinates, as in the authors' code (resolve_zero_signs, "majority").
            majority = 1.0 if float(sign_sum) >= 0 else -1.0
            if drop_rate:
                self.generator(device).set_state(state)
            for key, elected in zip(group, self._views(work, group), strict=True):
                base, experts = self.inputs(key)
                masks = self.drop_masks(key, keep) if drop_rate else [None] * self.K
                acc_full, tmp_full = self.buffer(key, 0), self.buffer(key, 1)
                count_full, agree_full = self.buffer(key, 4), self.buffer(key, 5, torch.bool)
                product_full = self.buffer(key, 6)
                for start, stop in _slices(self.targets[key].numel()):
                    size = stop - start
                    acc, tmp = acc_full[:size].zero_(), tmp_full[:size]
                    count, agree, product = (
                        count_full[:size].zero_(),
                        agree_full[:size],
                        product_full[:size],
                    )
                    signs = elected[start:stop].masked_fill_(elected[start:stop] == 0, majority)
                    for expert, cut, mask in zip(experts, cuts, masks, strict=True):
                        self.trimmed(key, tmp, base, expert, start, stop, cut, mask, keep)
                        # signs is never 0, so trimmed (zero) entries never agree
                        torch.gt(torch.mul(tmp, signs, out=product), 0.0, out=agree)
                        acc.add_(tmp.mul_(agree))
                        count.add_(agree)
                    acc.div_(count.clamp_(min=1.0))
                    if self.scaling != 1.0:
                        acc.mul_(self.scaling)
                    self.write(key, acc, base, start, stop)

    def _views(self, work, group):
        start = 0
        for key in group:
            size = self.targets[key].numel()
            yield work[start : start + size]
            start += size


def _empty_copy(module: torch.nn.Module, keys: list[str]) -> torch.nn.Module:
    """A deep copy of ``module`` whose floating-point entries ``keys`` are left unset (fresh
    contiguous tensors): the merge overwrites them, so copying their data would only cost time."""
    memo = {}
    entries = module.state_dict(keep_vars=True)
    for key in keys:
        tensor = entries[key]
        if type(tensor) not in (torch.Tensor, torch.nn.Parameter):
            continue
        fresh = torch.empty(tensor.shape, dtype=tensor.dtype, device=tensor.device)
        if isinstance(tensor, torch.nn.Parameter):
            fresh = torch.nn.Parameter(fresh, requires_grad=tensor.requires_grad)
        memo[id(tensor)] = fresh
    return copy.deepcopy(module, memo)


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
    density 1. Magnitudes are ranked as rounded to the work dtype (the experts' dtype, float32
    at least), so an entry that rounds to the threshold stays too. A coordinate whose elected
    sign is 0 (exact cancellation) takes the sign of the majority, as in the authors' code.
    DARE's drop masks are drawn in the order keys, then experts, one whole tensor at a time.

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
        base_sd = None
        expert_sds = _expert_dicts(experts, check=False)
        for k, sd in enumerate(expert_sds[1:], start=1):
            _check_matching(expert_sds[0], sd, ref_name="experts[0]", name=f"experts[{k}]")
        keys = [key for key, t in expert_sds[0].items() if _floating(t)]
        first = expert_sds[0]
        out = OrderedDict(
            (key, torch.empty(first[key].shape, dtype=torch.float64, device=first[key].device))
            for key in keys
        )
        targets = out
    else:
        base_sd = _state_dict(base, name="base", check=False)
        expert_sds = _expert_dicts(experts, check=False)
        for k, sd in enumerate(expert_sds):
            _check_matching(base_sd, sd, ref_name="base", name=f"experts[{k}]")
        keys = [key for key, t in base_sd.items() if _floating(t)]
        if isinstance(base, torch.nn.Module):
            out = _empty_copy(base, keys)
            targets = out.state_dict()
        else:
            out = OrderedDict(
                (
                    key,
                    torch.empty(t.shape, dtype=t.dtype, device=t.device)
                    if _floating(t)
                    else t.detach().clone(),
                )
                for key, t in base_sd.items()
            )
            targets = out
    if method == "dare":
        _refuse_non_finite(base_sd, expert_sds)
    merger = _Merger(targets, keys, base_sd, expert_sds, scaling, random_state)
    drop = drop_rate if method == "dare" else 0.0
    if method == "ties" or (method == "dare" and combine == "ties"):
        if trim_scope == "model":
            by_device: dict = {}
            for key in keys:
                by_device.setdefault(targets[key].device, []).append(key)
            groups = list(by_device.values())
        else:
            groups = [[key] for key in keys]
        merger.ties_(groups, density if method == "ties" else None, drop)
    else:
        merger.sum_(mean=method == "average", drop_rate=drop)
    return out
