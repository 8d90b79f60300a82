"""Task arithmetic and TIES merges of three float32 experts of a 14.7-million-parameter model.

Anchors: plain torch written the obvious way (a loop over the state dict for task arithmetic;
one flat (K, n) stack, ``torch.kthvalue`` and the sign election for TIES, as in the authors'
code), and mergekit's own merge functions (``GeneralizedTaskArithmeticMerge.merge_group``, one
call per tensor; mergekit trims each tensor by itself, so ours runs with
``trim_scope="tensor"`` there). Every side returns a new ``nn.Module``; setup checks that both
sides of a case give the same weights.
"""

import copy
from importlib.metadata import version

import torch
from mergekit.merge_methods import registry
from mergekit.merge_methods.base import TensorGroup

from mlcore.merging import merge

SCALING, DENSITY, N_EXPERTS = 0.5, 0.2, 3
_models = {}


def setup():
    if _models:
        return
    torch.manual_seed(0)
    base = torch.nn.Sequential(
        torch.nn.Embedding(8192, 512),
        torch.nn.Linear(512, 2048),
        torch.nn.Linear(2048, 2048),
        torch.nn.Linear(2048, 2048),
        torch.nn.Linear(2048, 512),
        torch.nn.LayerNorm(512),
    )
    experts = [copy.deepcopy(base) for _ in range(N_EXPERTS)]
    with torch.no_grad():
        for expert in experts:
            for p in expert.parameters():
                p.add_(0.01 * torch.randn_like(p))
    _models.update(base=base, experts=experts)
    # float32 rounding apart, the merges agree everywhere but where magnitudes tie at a trim
    # threshold: ours keeps every tied entry, mergekit exactly k (a handful in a million)
    for ours, anchor in (
        (_ours_ta, _torch_ta),
        (_ours_ta, _mergekit_ta),
        (_ours_ties, _torch_ties),
        (_ours_ties_tensor, _mergekit_ties),
    ):
        a, b = ours().state_dict(), anchor().state_dict()
        differ = sum(int(((a[k] - b[k]).abs() > 1e-6).sum()) for k in a)
        assert differ <= 1e-5 * sum(t.numel() for t in a.values()), (anchor.__name__, differ)


def _result(state):
    model = copy.deepcopy(_models["base"])
    model.load_state_dict(state)
    return model


def _ours_ta():
    return merge(_models["base"], _models["experts"], "task_arithmetic", scaling=SCALING)


def _ours_ties():
    return merge(_models["base"], _models["experts"], "ties", density=DENSITY)


def _ours_ties_tensor():
    return merge(_models["base"], _models["experts"], "ties", density=DENSITY, trim_scope="tensor")


def _torch_ta():
    base = _models["base"].state_dict()
    experts = [e.state_dict() for e in _models["experts"]]
    out = {}
    for key, b in base.items():
        out[key] = b + sum((sd[key] - b) * SCALING for sd in experts)
    return _result(out)


def _torch_ties():
    base = _models["base"].state_dict()
    experts = [e.state_dict() for e in _models["experts"]]
    tau = torch.stack(
        [torch.cat([(sd[k] - b).flatten() for k, b in base.items()]) for sd in experts]
    )
    n = tau.shape[1]
    k = int(DENSITY * n)
    threshold = tau.abs().kthvalue(n - k + 1, dim=1, keepdim=True).values
    tau[tau.abs() < threshold] = 0
    elected = torch.sign(tau.sum(dim=0))
    elected[elected == 0] = 1.0 if elected.sum() >= 0 else -1.0
    agree = torch.sign(tau) == elected
    merged = (tau * agree).sum(dim=0) / agree.sum(dim=0).clamp(min=1)
    out, start = {}, 0
    for key, b in base.items():
        out[key] = b + merged[start : start + b.numel()].reshape(b.shape)
        start += b.numel()
    return _result(out)


def _mergekit(name, **parameters):
    method = registry.get(name)
    base = _models["base"].state_dict()
    experts = [e.state_dict() for e in _models["experts"]]
    ids = range(1, N_EXPERTS + 1)
    shared = {"int8_mask": False, "rescale": False, "weight": dict.fromkeys(ids, 1.0)}
    out = {}
    for key, b in base.items():
        group = TensorGroup.from_tensors([b] + [sd[key] for sd in experts], base_index=0)
        out[key] = method.merge_group(group, **shared, **parameters)
    return _result(out)


def _mergekit_ta():
    return _mergekit("task_arithmetic", normalize=False, **{"lambda": SCALING})


def _mergekit_ties():
    density = dict.fromkeys(range(1, N_EXPERTS + 1), DENSITY)
    return _mergekit("ties", normalize=True, density=density, **{"lambda": 1.0})


_MERGEKIT = f"mergekit {version('mergekit')}"
CASES = [
    {
        "name": "task arithmetic, 3 experts, 14.7M float32 params",
        "setup": setup,
        "ours": _ours_ta,
        "anchor": _torch_ta,
        "anchor_name": f"torch {torch.__version__.split('+')[0]} (state-dict loop)",
        "peak_memory": True,
    },
    {
        "name": "task arithmetic, 3 experts, 14.7M float32 params (vs mergekit)",
        "setup": setup,
        "ours": _ours_ta,
        "anchor": _mergekit_ta,
        "anchor_name": f"{_MERGEKIT} (task_arithmetic merge_group)",
    },
    {
        "name": "TIES, 3 experts, 14.7M float32 params",
        "setup": setup,
        "ours": _ours_ties,
        "anchor": _torch_ties,
        "anchor_name": f"torch {torch.__version__.split('+')[0]} (flat stack, kthvalue)",
        "peak_memory": True,
        "repeat": 3,
    },
    {
        "name": "TIES per tensor, 3 experts, 14.7M float32 params (vs mergekit)",
        "setup": setup,
        "ours": _ours_ties_tensor,
        "anchor": _mergekit_ties,
        "anchor_name": f"{_MERGEKIT} (ties merge_group)",
        "repeat": 3,
    },
]
