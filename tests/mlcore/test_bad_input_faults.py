"""The specific faults issue 38 names in mlcore, each with a test that fails on the old code."""

import math

import numpy as np
import pytest
import torch

from mlcore import decoding, interp, merging
from mlcore.adapt import lorentz as L
from mlcore.nn import TinyTransformer

F64 = torch.float64


def _points(k=1.0, dtype=F64):
    v = torch.randn(5, 3, generator=torch.Generator().manual_seed(0), dtype=dtype)
    return L.expmap0(v, k)


@pytest.mark.parametrize("k", [1.0, 0.5, 1e-4])
@pytest.mark.parametrize("dtype", [torch.float32, F64])
def test_lorentz_distance_of_a_point_to_itself_is_exactly_zero(k, dtype):
    x = _points(k, dtype)
    assert torch.equal(L.dist(x, x, k), torch.zeros(5, dtype=dtype))
    y = _points(k, dtype).flip(0)
    d = L.dist(x, y, k)
    assert torch.allclose(d, L.dist(y, x, k)) and (d[[0, 1, 3, 4]] > 0).all()


def test_lorentz_distance_keeps_a_finite_gradient_at_zero():
    x = _points().requires_grad_(True)
    L.dist(x, x.detach(), 1.0).sum().backward()
    assert torch.isfinite(x.grad).all()


@pytest.mark.parametrize("fn", ["dist", "dist0", "logmap0", "logmap", "expmap", "transport"])
def test_lorentz_refuses_points_off_the_hyperboloid(fn):
    x = _points()
    off = x.clone()
    off[0, 1] += 0.5  # the constraint <x, x>_L = -1/K now misses by order 1
    calls = {
        "dist": lambda p: L.dist(p, x, 1.0),
        "dist0": lambda p: L.dist0(p, 1.0),
        "logmap0": lambda p: L.logmap0(p, 1.0),
        "logmap": lambda p: L.logmap(p, x, 1.0),
        "expmap": lambda p: L.expmap(p, torch.zeros_like(p), 1.0),
        "transport": lambda p: L.transport(p, x, torch.zeros_like(p), 1.0),
    }
    with pytest.raises(ValueError, match="`x` must lie on the hyperboloid"):
        calls[fn](off)
    with pytest.raises(ValueError, match="upper sheet"):
        calls[fn](-x)
    with pytest.raises(ValueError, match="on the hyperboloid"):
        L.dist0(x, 2.0)  # points of curvature 1 are off L_2
    calls[fn](x)  # the points themselves pass
    calls[fn](L.project(off, 1.0))  # and so do drifted ones put back


def test_lorentz_inputs_are_not_modified():
    x, y = _points(), _points().flip(0)
    x0, y0 = x.clone(), y.clone()
    L.logmap(x, y, 1.0)
    assert torch.equal(x, x0) and torch.equal(y, y0)


def test_token_disagreement_with_minus_inf_logits_stays_finite_and_correct():
    # a -inf logit is a token of probability 0: KL and JS must treat 0 log 0 as 0
    base = torch.tensor([[0.0, 0.0, -math.inf]])
    reasoner = torch.tensor([[0.0, math.log(3.0), -math.inf]])
    finite = decoding.token_disagreement(base[:, :2], reasoner[:, :2], "kl")
    for measure in ("kl", "js"):
        value = decoding.token_disagreement(base, reasoner, measure)
        assert torch.isfinite(value).all()
        assert torch.allclose(value, decoding.token_disagreement(base[:, :2], reasoner[:, :2],
                                                                 measure))  # fmt: skip
    assert torch.allclose(decoding.token_disagreement(base, reasoner, "kl"), finite)
    # the reasoner sure of a token the base rules out: an infinite KL, not NaN
    kl = decoding.token_disagreement(torch.tensor([[0.0, -math.inf]]), torch.tensor([[0.0, 0.0]]))
    assert math.isinf(float(kl[0]))


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_token_disagreement_refuses_nan_and_plus_inf_logits(bad):
    logits = torch.zeros(2, 3)
    spoiled = logits.clone()
    spoiled[1, 2] = bad
    with pytest.raises(ValueError, match="`reasoner_logits`"):
        decoding.token_disagreement(logits, spoiled)
    with pytest.raises(ValueError, match="all -inf"):
        decoding.token_disagreement(torch.full((1, 3), -math.inf), torch.zeros(1, 3))


@pytest.mark.parametrize("where", ["base", "expert"])
def test_merge_refuses_experts_with_nan_parameters(where):
    torch.manual_seed(0)
    base, experts = torch.nn.Linear(3, 2), [torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)]
    spoiled = base if where == "base" else experts[1]
    with torch.no_grad():
        spoiled.weight[0, 1] = math.nan
    before = [p.detach().clone() for m in (base, *experts) for p in m.parameters()]
    name = r"`base\['weight'\]`" if where == "base" else r"`experts\[1\]\['weight'\]`"
    for method in ("average", "ties", "dare"):
        with pytest.raises(ValueError, match=name):
            merging.merge(base, experts, method, random_state=0)
    with pytest.raises(ValueError, match=name):
        merging.task_vectors(base, experts)
    after = [p.detach() for m in (base, *experts) for p in m.parameters()]
    assert all(
        torch.equal(a.nan_to_num(), b.nan_to_num()) for a, b in zip(after, before, strict=True)
    )


def test_late_gradient_share_refuses_nan_parameters():
    net = torch.nn.Linear(3, 2)
    with torch.no_grad():
        net.bias[0] = math.nan
    x, y = torch.zeros(4, 3), torch.tensor([0, 1, 0, 1])

    def loss(out, t):
        return torch.nn.functional.cross_entropy(out, t, reduction="none")

    with pytest.raises(ValueError, match=r"`model\.bias`"):
        merging.late_gradient_share(net, loss, x, y)


def test_interp_refuses_nan_activations():
    torch.manual_seed(0)
    hooks = interp.HeadHooks(TinyTransformer(12, 16, 2, 2).eval())
    prompts = torch.randint(0, 12, (3, 5), generator=torch.Generator().manual_seed(0))
    acts = interp.mean_head_activations(hooks, prompts)
    spoiled = acts.clone()
    spoiled[1, 0, 2] = math.nan
    with pytest.raises(ValueError, match="`activations` must be finite"):
        interp.function_vector(hooks, spoiled, [(1, 0)])
    with pytest.raises(ValueError, match="`source` must be finite"):
        interp.indirect_effects(hooks, prompts, torch.tensor([1, 2, 3]), spoiled)
    vector = interp.function_vector(hooks, acts, [(1, 0)]).detach().clone()
    vector[3] = math.nan
    with pytest.raises(ValueError, match="`vector` must be finite"):
        interp.steered_accuracy(hooks, prompts, torch.tensor([1, 2, 3]), vector, layer=0)
    with pytest.raises(ValueError, match="`layer`"):
        interp.steered_accuracy(hooks, prompts, torch.tensor([1, 2, 3]), vector, layer=-5)


def test_select_stops_refuses_text_histories():
    with pytest.raises((TypeError, ValueError), match="`histories"):
        merging.select_stops(np.array([["0.5", "0.9"]]))
