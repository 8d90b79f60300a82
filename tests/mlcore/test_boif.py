"""BOIF (mlcore.fewshot): exact Bayes fusion, its reductions, Tip-Adapter parity, training,
results and errors."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from scipy import stats
from scipy.special import logsumexp
from torch import nn

from mlcore.fewshot import (
    BOIF,
    BOIFHead,
    BOIFResult,
    MultiLevelAdapter,
    TipAdapter,
    TipAdapterClassifier,
    cache_likelihood,
    compare_fewshot,
    simulate_fewshot,
    vmf_concentration,
)


class SecondSource(nn.Module):
    """An 'adapter' that hands the likelihood pathway the second evidence source."""

    def forward(self, features, layer_features):
        return layer_features[0]


def _unit(a):
    return a / np.linalg.norm(a, axis=-1, keepdims=True)


@pytest.mark.parametrize("cache", ["prototype", "kde"])
def test_exact_bayes_two_gaussian_sources(cache):
    # x1 | y ~ N(w_y, s1^2 I) reaches the prior head, x2 | y ~ (1/m_y) sum_j N(k_yj, s2^2 I)
    # the cache (one key per class for "prototype": a single Gaussian; 1 to 3 keys for "kde",
    # so that the 1/m_y of a class's density matters); x1 and x2 independent given y, uniform
    # class prior. With logit_scale = 1/s1^2 and beta = 1/s2^2 both heads are exact
    # log-densities up to constants in x, so log-softmax of the fused logits must be the
    # posterior computed independently from scipy's Gaussian densities.
    rng = np.random.default_rng(0)
    n_classes, d, n, s1, s2 = 4, 6, 200, 0.8, 0.6
    counts = [1] * n_classes if cache == "prototype" else [1, 3, 2, 3]
    w = _unit(rng.standard_normal((n_classes, d)))
    keys = [_unit(rng.standard_normal((m, d))) for m in counts]
    y = rng.integers(0, n_classes, n)
    x1 = w[y] + s1 * rng.standard_normal((n, d))
    x2 = np.array([keys[c][rng.integers(counts[c])] for c in y])
    x2 = x2 + s2 * rng.standard_normal((n, d))

    model = BOIF(torch.tensor(w), 1 / s1**2, cache=cache, beta=1 / s2**2, alpha=1.0,
                 adapter=SecondSource())  # fmt: skip
    key_labels = np.repeat(np.arange(n_classes), counts)
    res = model.fit(torch.zeros(len(key_labels), d, dtype=torch.float64), key_labels,
                    layer_features=[torch.tensor(np.vstack(keys))])  # fmt: skip
    fused = res.head(torch.tensor(x1), [torch.tensor(x2)])
    got = torch.log_softmax(fused, dim=1).numpy()

    cov1, cov2 = s1**2 * np.eye(d), s2**2 * np.eye(d)
    log_joint = np.column_stack([
        stats.multivariate_normal(w[c], cov1).logpdf(x1)
        + logsumexp([stats.multivariate_normal(k, cov2).logpdf(x2) for k in keys[c]], axis=0)
        - np.log(counts[c])
        for c in range(n_classes)
    ])  # fmt: skip
    posterior = log_joint - logsumexp(log_joint, axis=1, keepdims=True)
    # in float64 the two computations differ by rounding only (~1e-13): a 1e-6 bound
    assert np.max(np.abs(got - posterior)) <= 1e-6


def _random_problem(seed=0, n_classes=5, d=8, n=40, shots=3, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    w = F.normalize(torch.randn(n_classes, d, generator=g, dtype=dtype), dim=1)
    support = F.normalize(torch.randn(n_classes * shots, d, generator=g, dtype=dtype), dim=1)
    labels = torch.arange(n_classes).repeat_interleave(shots)
    query = F.normalize(torch.randn(n, d, generator=g, dtype=dtype), dim=1)
    return w, support, labels, query


@pytest.mark.parametrize(
    ("module", "estimator"), [(BOIFHead, BOIF), (TipAdapter, TipAdapterClassifier)]
)
def test_empty_cache_gives_zero_shot_logits(module, estimator):
    w, _, _, query = _random_problem()
    head = module(w, 30.0)
    zero_shot = 30.0 * (query @ w.T)
    torch.testing.assert_close(head(query), zero_shot, rtol=0, atol=0)
    res = estimator(w, 30.0).fit(query[:0], np.array([], dtype=int))
    assert res.nobs == 0 and isinstance(res.head, module)
    torch.testing.assert_close(res.head(query), zero_shot, rtol=0, atol=0)


@pytest.mark.parametrize("cache", ["prototype", "kde", "tip"])
def test_identical_text_weights_give_the_cache_classifier(cache):
    w, support, labels, query = _random_problem()
    same = w[:1].repeat(len(w), 1)  # one text embedding for every class: a flat prior
    res = BOIF(same, 30.0, cache=cache, beta=4.0, alpha=0.7).fit(support, labels)
    res = res.evaluate(query)
    likelihood = cache_likelihood(query, F.normalize(support, dim=1), labels, len(w),
                                  cache=cache, beta=4.0)  # fmt: skip
    np.testing.assert_array_equal(res.predict("fused"), likelihood.argmax(1).numpy())
    np.testing.assert_array_equal(res.predict("fused"), res.predict("likelihood"))


def test_gamma_zero_adapter_is_a_no_op():
    g = torch.Generator().manual_seed(1)
    f = F.normalize(torch.randn(10, 8, generator=g), dim=1)
    layers = [torch.randn(10, 5, generator=g), torch.randn(10, 3, generator=g)]
    adapter = MultiLevelAdapter([5, 3], 8, gamma_init=0.0, random_state=0)
    # renormalising a unit float32 vector moves it by rounding only (~1e-7)
    torch.testing.assert_close(adapter(f, layers), f, rtol=0, atol=1e-6)
    w = F.normalize(torch.randn(4, 8, generator=g), dim=1)
    labels = torch.arange(4).repeat_interleave(2)
    plain = BOIF(w, 20.0).fit(f[:8], labels).head
    adapted = BOIF(w, 20.0, adapter=adapter)
    adapted = adapted.fit(f[:8], labels, layer_features=[h[:8] for h in layers], epochs=0).head
    # the adapter's ~1e-7 rounding times the logit scale 20 (and the cache's beta): ~1e-5
    torch.testing.assert_close(adapted(f, layers), plain(f), rtol=0, atol=1e-5)


def test_tip_adapter_logits_match_the_reference_code():
    # gaopengcuhk/Tip-Adapter, main.py run_tip_adapter and utils.build_cache_model, in float64
    # so that the 1e-6 bound of the notes tests the formula rather than float32 rounding
    g = torch.Generator().manual_seed(3)
    n_classes, d, m, n = 7, 16, 21, 50
    clip_weights = F.normalize(torch.randn(n_classes, d, generator=g, dtype=torch.float64), dim=1)
    raw_keys = torch.randn(m, d, generator=g, dtype=torch.float64)
    labels = torch.arange(m) % n_classes
    features = F.normalize(torch.randn(n, d, generator=g, dtype=torch.float64), dim=1)
    beta, alpha = 5.5, 2.3

    cache_keys = raw_keys / raw_keys.norm(dim=-1, keepdim=True)
    cache_keys = cache_keys.permute(1, 0)
    cache_values = F.one_hot(labels).to(torch.float64)
    affinity = features @ cache_keys
    cache_logits = ((-1) * (beta - beta * affinity)).exp() @ cache_values
    clip_logits = 100.0 * features @ clip_weights.T
    tip_logits = clip_logits + cache_logits * alpha

    fit = TipAdapterClassifier(clip_weights, 100.0, beta=beta, alpha=alpha).fit(raw_keys, labels)
    tip = fit.head
    # float64 throughout, the same formula in another order: rounding (~1e-13) far below 1e-6
    assert torch.max(torch.abs(tip(features) - tip_logits)) <= 1e-6
    res = tip.evaluate(features)
    np.testing.assert_allclose(res.likelihood_logits, cache_logits.numpy(), rtol=0, atol=1e-6)


def test_fit_trains_the_adapter_and_leaves_inputs_alone():
    task = simulate_fewshot(n_classes=6, n_per_class=10, random_state=0)
    adapter = MultiLevelAdapter([h.shape[1] for h in task.layer_features], 32, random_state=0)
    before = {k: v.clone() for k, v in adapter.state_dict().items()}
    weights = task.text_weights.clone()
    model = BOIF(task.text_weights, task.logit_scale, adapter=adapter)
    res = model.fit(task.features, task.labels, layer_features=task.layer_features, epochs=30,
                    random_state=0)  # fmt: skip
    hist = res.history.history
    assert len(hist) == 30 and res.n_iter == 30 and res.converged
    # the support loss must fall: a broken gradient path (the gate never moving) would not
    assert hist["loss"].iloc[-1] < hist["loss"].iloc[0]
    assert res.gamma != 0.0
    for k, v in adapter.state_dict().items():
        torch.testing.assert_close(v, before[k], rtol=0, atol=0)
    torch.testing.assert_close(task.text_weights, weights, rtol=0, atol=0)
    again = model.fit(task.features, task.labels, layer_features=task.layer_features, epochs=30,
                      random_state=0)  # fmt: skip
    np.testing.assert_array_equal(again.fused_logits, res.fused_logits)


def test_result_reports_pathways_weights_and_plots():
    task = simulate_fewshot(n_classes=5, n_per_class=12, random_state=1)
    adapter = MultiLevelAdapter([h.shape[1] for h in task.layer_features], 32)
    model = BOIF(task.text_weights, task.logit_scale, adapter=adapter, classnames=task.classnames)
    fit = model.fit(task.features[::3], task.labels[::3],
                    layer_features=[h[::3] for h in task.layer_features], epochs=5,
                    random_state=0)  # fmt: skip
    res = fit.evaluate(task.features, task.labels, layer_features=task.layer_features)
    assert isinstance(res, BOIFResult)
    t = res.tidy()
    assert list(t["pathway"]) == ["prior", "likelihood", "fused"]
    acc = res.accuracy
    assert acc["fused"] == pytest.approx(np.mean(res.fused_logits.argmax(1) == task.labels))
    # the head sums the two terms in float32; this float64 sum differs by that rounding only
    np.testing.assert_allclose(
        res.fused_logits, res.prior_logits + res.fusion_alpha * res.likelihood_logits, atol=1e-5
    )
    weights = res.fusion_weights
    assert {"alpha", "beta", "gamma", "layer[0]", "layer[1]"} <= set(weights.index)
    assert weights[["layer[0]", "layer[1]"]].sum() == pytest.approx(1.0)
    assert res.shots.sum() == len(task.labels[::3])
    text = str(res.summary())
    assert "pathways" in text and "fusion weights" in text
    assert res.glance()["accuracy"].iloc[0] == acc["fused"]
    res.plot()
    res.plot("history")
    fit.plot("history")
    with pytest.raises(ValueError, match="no fitted head"):
        res.evaluate(task.features, task.labels, layer_features=task.layer_features)
    plt.close("all")


def test_bad_inputs_name_the_argument():
    w, support, labels, query = _random_problem()
    with pytest.raises(ValueError, match="classnames"):
        BOIFHead(w, 10.0, classnames=["a", "b"])
    with pytest.raises(ValueError, match="cache"):
        BOIFHead(w, 10.0, cache="gda")
    with pytest.raises(ValueError, match="logit_scale"):
        BOIFHead(w, -1.0)
    head = BOIF(w, 10.0)
    with pytest.raises(ValueError, match="labels"):
        head.fit(support, labels + 10)
    with pytest.raises(ValueError, match="features"):
        head.fit(support[:, :3], labels)
    bad = support.clone()
    bad[0, 0] = float("nan")
    with pytest.raises(ValueError, match="finite"):
        head.fit(bad, labels)
    with pytest.raises(ValueError, match="none of classes"):
        head.fit(support[labels < 3], labels[labels < 3])
    with pytest.raises(ValueError, match="dtype and device"):
        BOIFHead(w, 10.0)(query.float())
    with pytest.raises(TypeError, match="`head` must be a BOIFHead"):
        BOIF.from_head(MultiLevelAdapter([4], 8))
    with pytest.raises(TypeError, match="`head` must be a TipAdapter"):
        TipAdapterClassifier.from_head(BOIFHead(w, 10.0))
    adapted = BOIF(w, 10.0, adapter=MultiLevelAdapter([4], w.shape[1]).double())
    with pytest.raises(ValueError, match="layer_features"):
        adapted.fit(support, labels)
    with pytest.raises(ValueError, match="layer_features"):
        MultiLevelAdapter([4, 4], 8)(query.float(), [torch.zeros(len(query), 4)])
    task = simulate_fewshot(n_classes=3, n_per_class=4, layer_dims=(), random_state=0)
    with pytest.raises(ValueError, match="shots is more than class"):
        compare_fewshot(task.features, task.labels, task.text_weights, 10.0, shots=(5,))
    with pytest.raises(ValueError, match="labels"):
        compare_fewshot(task.features, task.labels, task.text_weights[:2], 10.0)


def test_head_runs_on_the_device(device):
    w, support, labels, query = _random_problem(dtype=torch.float32)
    adapter = MultiLevelAdapter([3], w.shape[1], gamma_init=0.1, random_state=0)
    layers_s = [torch.linspace(-1, 1, len(support) * 3).reshape(-1, 3)]
    layers_q = [torch.linspace(1, -1, len(query) * 3).reshape(-1, 3)]
    results = {}
    for dev in ("cpu", device):
        model = BOIF.from_head(BOIFHead(w, 20.0, cache="kde", adapter=adapter).to(dev))
        fit = model.fit(support.to(dev), labels.to(dev),
                        layer_features=[h.to(dev) for h in layers_s], epochs=5, random_state=0)  # fmt: skip
        out = fit.head(query.to(dev), [h.to(dev) for h in layers_q])
        assert out.device.type == torch.device(dev).type
        results[dev] = out.cpu()
    # the same float32 computation on two devices: kernels may sum in another order (~1e-5)
    torch.testing.assert_close(results[device], results["cpu"], rtol=1e-4, atol=1e-4)


def test_synthetic_study_fusion_is_no_worse_than_either_pathway():
    # the synthetic design of simulate_fewshot (Gaussian classes, noisy text prototypes), default
    # simulator (zero-shot accuracy ~0.6); 5 seeds, K in {1, 2, 4}. Measured (seed 0):
    # BOIF - prior +8/+24/+28 points, BOIF - likelihood +8/+6/+0.2 points (the K = 4
    # interval covers 0), reported as measured rather than asserted.
    task = simulate_fewshot(random_state=0)
    study = compare_fewshot(
        task.features, task.labels, task.text_weights, task.logit_scale,
        layer_features=task.layer_features, shots=(1, 2, 4), n_seeds=5, random_state=0,
    )  # fmt: skip
    methods = {"BOIF", "BOIF without adapter", "prior only", "likelihood only", "Tip-Adapter"}
    assert set(study.tidy()["method"]) == methods
    # fused accuracy >= the better pathway - 0.5 points at every K
    for baseline in ("prior only", "likelihood only"):
        assert (study.contrast("BOIF", baseline)["estimate"] >= -0.005).all()
    # and above the zero-shot prior with a paired 95% t-interval over seeds at every K
    assert (study.contrast("BOIF", "prior only")["conf_low"] > 0).all()
    assert len(study.scores) == 5 * 3 * len(methods)


@pytest.mark.parametrize("cache", ["prototype", "kde", "tip"])
def test_training_likelihood_leaves_each_example_out(cache):
    from mlcore.fewshot.boif import _support_likelihood

    g = torch.Generator().manual_seed(4)
    labels = torch.tensor([0, 0, 0, 1, 1, 2])  # class 2 has one shot: it keeps its own key
    emb = F.normalize(torch.randn(len(labels), 5, generator=g, dtype=torch.float64), dim=1)
    got = _support_likelihood(emb, labels, 3, cache=cache, beta=3.0)
    for i in range(len(labels)):
        keep = torch.ones(len(labels), dtype=torch.bool)
        if (labels == labels[i]).sum() > 1:
            keep[i] = False
        want = cache_likelihood(emb[i : i + 1], emb[keep], labels[keep], 3, cache=cache, beta=3.0)
        # the same float64 sums in another order
        torch.testing.assert_close(got[i : i + 1], want, rtol=1e-12, atol=1e-12)


def test_vmf_concentration_recovers_kappa():
    # von Mises-Fisher draws with known kappa (scipy); 10 classes x 40 draws in d = 16. The
    # Banerjee approximation is within a few percent at this kappa (Banerjee et al. 2005,
    # Table 1); sampling error of A^2 from ~7800 pairs adds ~2%: 10% bound.
    rng = np.random.default_rng(5)
    d, kappa = 16, 30.0
    mus = _unit(rng.standard_normal((10, d)))
    x = np.vstack([stats.vonmises_fisher(mu, kappa).rvs(40, random_state=rng) for mu in mus])
    labels = torch.arange(10).repeat_interleave(40)
    est = vmf_concentration(torch.tensor(x), labels)
    assert est == pytest.approx(kappa, rel=0.1)


def test_tune_beta_sets_the_vmf_concentration_and_needs_two_shots():
    task = simulate_fewshot(n_classes=4, n_per_class=6, random_state=2)
    model = BOIF(task.text_weights, task.logit_scale, beta=5.0)
    res = model.fit(task.features, task.labels, tune_beta=True)
    want = vmf_concentration(task.features, torch.as_tensor(task.labels))
    assert res.cache_beta == pytest.approx(want) and res.head.beta == res.cache_beta
    assert model.head.beta == 5.0  # the estimator keeps its specification
    one_shot = np.searchsorted(task.labels, np.arange(4))
    res = model.fit(task.features[one_shot], task.labels[one_shot], tune_beta=True)
    assert res.cache_beta == 5.0 and "one shot per class" in res.notes[0]


def _adapted_task():
    task = simulate_fewshot(n_classes=4, n_per_class=6, random_state=3)
    adapter = MultiLevelAdapter([h.shape[1] for h in task.layer_features], 32, random_state=0)
    return task, adapter


def _state(module):
    return {k: v.clone() for k, v in module.state_dict().items()}


def _assert_same_state(module, state):
    got = module.state_dict()
    assert set(got) == set(state)
    for k, v in state.items():
        torch.testing.assert_close(got[k], v, rtol=0, atol=0)


def test_fit_returns_a_new_result_and_changes_neither_estimator_nor_modules():
    task, adapter = _adapted_task()
    prepared = BOIFHead(task.text_weights, task.logit_scale, adapter=adapter)
    adapter_state, head_state = _state(adapter), _state(prepared)
    model = BOIF.from_head(prepared)
    spec = _state(model.head)
    fit = {"layer_features": task.layer_features, "epochs": 5, "random_state": 0}
    first = model.fit(task.features, task.labels, **fit)
    second = model.fit(task.features, task.labels, **fit)
    assert isinstance(first, BOIFResult) and first is not second
    assert first.head is not second.head and first.model is model
    assert first.head.keys.shape[0] == len(task.labels)
    np.testing.assert_array_equal(first.fused_logits, second.fused_logits)
    # the options are recorded by the estimator base, defaults filled in
    assert first.fit_options["epochs"] == 5 and first.fit_options["lr"] == 1e-3
    assert first.fit_options["random_state"] == 0
    _assert_same_state(adapter, adapter_state)
    _assert_same_state(prepared, head_state)
    _assert_same_state(model.head, spec)
    assert prepared.keys.shape[0] == 0 and model.head.keys.shape[0] == 0
    tip = TipAdapter(task.text_weights, task.logit_scale)
    tip_model = TipAdapterClassifier.from_head(tip)
    a, b = tip_model.fit(task.features, task.labels), tip_model.fit(task.features, task.labels)
    assert a is not b and a.head is not b.head and a.method == "Tip-Adapter"
    assert tip.keys.shape[0] == 0 and dict(a.fit_options).keys() == {"features", "labels"}
    assert "BOIF(" in repr(model) and "TipAdapterClassifier(" in repr(tip_model)


@pytest.mark.parametrize("kind", ["none", "int", "generator"])
def test_random_state_none_int_or_generator(kind):
    task, adapter = _adapted_task()
    model = BOIF(task.text_weights, task.logit_scale, adapter=adapter)
    fit = {"layer_features": task.layer_features, "epochs": 3}
    states = {"none": None, "int": 7, "generator": np.random.default_rng(7)}
    res = model.fit(task.features, task.labels, random_state=states[kind], **fit)
    assert np.isfinite(res.fused_logits).all() and res.n_iter == 3
    if kind == "none":  # None keeps the adapter as passed: the same run every time
        again = model.fit(task.features, task.labels, random_state=None, **fit)
        np.testing.assert_array_equal(again.fused_logits, res.fused_logits)
    else:  # an int reproduces; a fresh Generator with the same seed draws the same seed
        again = model.fit(task.features, task.labels, random_state=7 if kind == "int"
                          else np.random.default_rng(7), **fit)  # fmt: skip
        np.testing.assert_array_equal(again.fused_logits, res.fused_logits)
        other = model.fit(task.features, task.labels, random_state=8, **fit)
        assert not np.array_equal(other.fused_logits, res.fused_logits)


def test_adapter_construction_leaves_torchs_global_generator_alone():
    before = torch.random.get_rng_state()
    MultiLevelAdapter([5, 3], 8, random_state=0)
    assert torch.equal(torch.random.get_rng_state(), before)


def test_deprecated_module_fit_warns_and_fills_the_module():
    task, adapter = _adapted_task()
    fit = {"layer_features": task.layer_features, "epochs": 5, "random_state": 0}
    head = BOIFHead(task.text_weights, task.logit_scale, adapter=adapter)
    with pytest.warns(FutureWarning, match="BOIF"):
        old = head.fit(task.features, task.labels, **fit)
    new = BOIF(task.text_weights, task.logit_scale, adapter=adapter).fit(
        task.features, task.labels, **fit
    )
    np.testing.assert_array_equal(old.fused_logits, new.fused_logits)
    # the module itself is fitted, as it used to be: its logits are the new estimator's head's
    query = (task.features, task.layer_features)
    torch.testing.assert_close(head(*query), new.head(*query), rtol=0, atol=0)
    assert head.history is not None and head.keys.shape[0] == len(task.labels)
    tip = TipAdapter(task.text_weights, task.logit_scale)
    with pytest.warns(FutureWarning, match="TipAdapterClassifier"):
        tip.fit(task.features, task.labels)
    want = TipAdapterClassifier(task.text_weights, task.logit_scale).fit(task.features, task.labels)
    torch.testing.assert_close(tip(task.features), want.head(task.features), rtol=0, atol=0)
