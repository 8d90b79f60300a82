"""mlcore.merging: merge identities, TIES against a numpy reference, DARE's expectation, the
difficulty tracker on flipped labels, and the overtraining phenomenon on the digits toy."""

import copy

import numpy as np
import pandas as pd
import pytest
import torch

from mlcore.merging import (
    DifficultyResult,
    ExampleDifficultyTracker,
    MergeStudyResult,
    MergeTrajectoryStudy,
    digits_merging_toy,
    late_gradient_share,
    lora_task_vector,
    merge,
    select_stops,
    task_vectors,
)


def random_sd(seed, *, scale=1.0, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    sd = {
        "a.weight": scale * torch.randn(7, 5, generator=g),
        "a.bias": scale * torch.randn(7, generator=g),
        "b.weight": scale * torch.randn(3, 7, generator=g),
        "bn.num_batches_tracked": torch.tensor(seed, dtype=torch.int64),
    }
    return {k: v.to(device) for k, v in sd.items()}


def experts_of(base, seeds, scale=0.1):
    return [
        {
            k: (v + random_sd(s, scale=scale)[k] if v.is_floating_point() else v.clone())
            for k, v in base.items()
        }
        for s in seeds
    ]


def max_diff(a, b):
    return max(float((a[k].double() - b[k].double()).abs().max()) for k in a)


# --- identities (exact: max abs difference 0) -------------------------------------------------


def test_task_arithmetic_single_expert_returns_the_expert():
    base = random_sd(0)
    (expert,) = experts_of(base, [1])
    out = merge(base, [expert], "task_arithmetic", scaling=1.0)
    float_keys = [k for k in base if base[k].is_floating_point()]
    assert all(torch.equal(out[k], expert[k]) for k in float_keys)
    # integer buffers are the base's, not merged
    assert torch.equal(out["bn.num_batches_tracked"], base["bn.num_batches_tracked"])


def test_average_of_identical_experts_returns_that_expert():
    base = random_sd(0)
    (expert,) = experts_of(base, [1])
    for k_experts in (2, 3, 5, 7):
        out = merge(base, [expert] * k_experts, "average")
        assert all(torch.equal(out[k], expert[k]) for k in ("a.weight", "a.bias", "b.weight"))


def test_dare_without_drops_equals_task_arithmetic():
    base = random_sd(0)
    experts = experts_of(base, [1, 2, 3])
    for scaling in (0.3, 1.0):
        ta = merge(base, experts, "task_arithmetic", scaling=scaling)
        dare = merge(base, experts, "dare", drop_rate=0.0, scaling=scaling, random_state=0)
        assert max_diff(ta, dare) == 0.0


@pytest.mark.parametrize("trim_scope", ["model", "tensor"])
def test_ties_full_density_same_signs_equals_the_mean(trim_scope):
    base = random_sd(0)
    shift = {k: v.abs() + 0.01 for k, v in random_sd(9).items() if v.is_floating_point()}
    experts = [
        {k: (base[k] + (0.1 * s + 0.5) * shift[k] if k in shift else base[k]) for k in base}
        for s in range(4)
    ]  # every task vector is positive everywhere
    ties = merge(base, experts, "ties", density=1.0, trim_scope=trim_scope)
    assert max_diff(ties, merge(base, experts, "average")) == 0.0


def test_modules_in_modules_out_and_inputs_untouched():
    torch.manual_seed(0)
    base = torch.nn.Sequential(
        torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6), torch.nn.Linear(6, 2)
    )
    experts = [copy.deepcopy(base) for _ in range(3)]
    for i, e in enumerate(experts):
        with torch.no_grad():
            for p in e.parameters():
                p.add_(0.1 * (i + 1))
    before = [copy.deepcopy(m.state_dict()) for m in (base, *experts)]
    sd_experts = [e.state_dict() for e in experts]
    sd_before = copy.deepcopy(sd_experts)
    for method in ("average", "task_arithmetic", "ties", "dare"):
        out = merge(base, experts, method, random_state=0)
        assert isinstance(out, torch.nn.Module) and out is not base
        merge(base.state_dict(), sd_experts, method, random_state=0)
    for m, sd in zip((base, *experts), before, strict=True):
        assert max_diff(m.state_dict(), sd) == 0.0
    for sd, old in zip(sd_experts, sd_before, strict=True):
        assert max_diff(sd, old) == 0.0
    # average of experts shifted by 0.1, 0.2, 0.3: the base shifted by 0.2
    out = merge(base, experts, "average")
    np.testing.assert_allclose(
        out[0].weight.detach().numpy(), base[0].weight.detach().numpy() + 0.2, atol=1e-6
    )  # float32 rounding of the shifted weights


def test_task_vectors_are_differences():
    base = random_sd(0)
    experts = experts_of(base, [1, 2])
    tv = task_vectors(base, experts)
    assert set(tv[0]) == {"a.weight", "a.bias", "b.weight"}
    for e, t in zip(experts, tv, strict=True):
        assert torch.equal(t["a.weight"], e["a.weight"].double() - base["a.weight"].double())


# --- TIES against a direct numpy implementation ----------------------------------------------


def numpy_ties(vectors, density, scaling=1.0):
    """Yadav et al. (2023), written out directly: rows are tasks, columns coordinates."""
    tau = np.array(vectors, dtype=np.float64)
    n = tau.shape[1]
    k = int(density * n)
    trimmed = np.zeros_like(tau)
    for i, row in enumerate(tau):
        if k > 0:
            threshold = np.sort(np.abs(row))[::-1][k - 1]
            trimmed[i] = np.where(np.abs(row) >= threshold, row, 0.0)
    elected = np.sign(trimmed.sum(axis=0))
    elected[elected == 0] = 1.0 if elected.sum() >= 0 else -1.0
    merged = np.zeros(n)
    for j in range(n):
        agree = [t for t in trimmed[:, j] if t != 0 and np.sign(t) == elected[j]]
        merged[j] = np.mean(agree) if agree else 0.0
    return scaling * merged


@pytest.mark.parametrize("density", [0.05, 0.2, 0.5, 1.0])
def test_ties_matches_numpy_reference(density):
    rng = np.random.default_rng(int(density * 100))
    keys = {"w": (6, 9), "b": (9,), "v": (4, 4, 2)}
    vectors = [
        {k: torch.tensor(rng.standard_normal(shape)) for k, shape in keys.items()} for _ in range(4)
    ]
    before = copy.deepcopy(vectors)
    # model scope: one ranking over the concatenated vector
    out = merge(None, vectors, "ties", density=density, scaling=0.7)
    assert all(max_diff(v, b) == 0.0 for v, b in zip(vectors, before, strict=True))
    flat = [np.concatenate([v[k].numpy().ravel() for k in keys]) for v in vectors]
    ours = np.concatenate([out[k].numpy().ravel() for k in keys])
    # both sides are float64 over the same few additions: agreement to rounding (1e-12)
    np.testing.assert_allclose(ours, numpy_ties(flat, density, 0.7), atol=1e-12, rtol=0)
    # tensor scope: one ranking per tensor
    out = merge(None, vectors, "ties", density=density, trim_scope="tensor")
    for k in keys:
        ref = numpy_ties([v[k].numpy().ravel() for v in vectors], density)
        np.testing.assert_allclose(out[k].numpy().ravel(), ref, atol=1e-12, rtol=0)


def test_ties_on_a_float32_model_matches_reference():
    base = random_sd(0)
    experts = experts_of(base, [1, 2, 3], scale=0.5)
    out = merge(base, experts, "ties", density=0.3)
    keys = ["a.weight", "a.bias", "b.weight"]
    flat = [
        np.concatenate([(e[k].double() - base[k].double()).numpy().ravel() for k in keys])
        for e in experts
    ]
    ref = numpy_ties(flat, 0.3)
    got = np.concatenate([(out[k].double() - base[k].double()).numpy().ravel() for k in keys])
    # the result is rounded to float32 once: |error| <= half an ulp of |theta| <~ 4 * 6e-8
    np.testing.assert_allclose(got, ref, atol=3e-7, rtol=0)


# --- DARE ------------------------------------------------------------------------------------


def test_dare_rescaling_keeps_the_expectation():
    base = {"w": torch.zeros(200, dtype=torch.float64)}
    g = torch.Generator().manual_seed(3)
    experts = [{"w": torch.randn(200, generator=g, dtype=torch.float64)} for _ in range(2)]
    p, draws = 0.5, 2000
    gen = torch.Generator().manual_seed(11)
    total = torch.zeros(200, dtype=torch.float64)
    kept = 0
    for _ in range(draws):
        out = merge(base, experts, "dare", drop_rate=p, random_state=gen)["w"]
        total += out
    for _ in range(50):
        kept += int(
            (merge(None, experts[:1], "dare", drop_rate=p, random_state=gen)["w"] != 0).sum()
        )
    mean = total / draws
    target = experts[0]["w"] + experts[1]["w"]
    # each entry tau/(1-p) w.p. 1-p: variance tau^2 p/(1-p) per expert, independent draws
    sd = torch.sqrt((experts[0]["w"] ** 2 + experts[1]["w"] ** 2) * p / (1 - p) / draws)
    z = ((mean - target) / sd).abs()
    # 200 standard normal |z|: P(max > 4.5) ~ 200 * 6.8e-6 = 1.4e-3
    assert float(z.max()) < 4.5
    # kept fraction: Binomial(10,000, 0.5), sd 0.005: 5 sd = 0.025
    assert abs(kept / (50 * 200) - (1 - p)) < 0.025


def test_dare_random_state_reproducible_and_checked():
    base = random_sd(0)
    experts = experts_of(base, [1, 2])
    a = merge(base, experts, "dare", drop_rate=0.5, random_state=5)
    b = merge(base, experts, "dare", drop_rate=0.5, random_state=5)
    c = merge(base, experts, "dare", drop_rate=0.5, random_state=6)
    assert max_diff(a, b) == 0.0 and max_diff(a, c) > 0
    # a numpy Generator is a random_state like any other (issue 37): same stream, same merge
    d = merge(base, experts, "dare", drop_rate=0.5, random_state=np.random.default_rng(0))
    e = merge(base, experts, "dare", drop_rate=0.5, random_state=np.random.default_rng(0))
    assert max_diff(d, e) == 0.0
    with pytest.raises(TypeError, match="random_state"):
        merge(base, experts, "dare", random_state="seed")


def test_dare_ties_combination_elects_signs():
    base = {"w": torch.zeros(3)}
    experts = [{"w": torch.tensor([1.0, -2.0, 3.0])}, {"w": torch.tensor([1.0, 4.0, -1.0])}]
    out = merge(base, experts, "dare", drop_rate=0.0, combine="ties")
    assert torch.equal(out["w"], torch.tensor([1.0, 4.0, 3.0]))


# --- LoRA, devices, bad input ---------------------------------------------------------------


def test_lora_task_vector_is_scaled_product_and_merges():
    g = torch.Generator().manual_seed(0)
    adapters = []
    for _ in range(2):
        adapters.append(
            {
                "base_model.model.fc.lora_A.weight": torch.randn(2, 5, generator=g),
                "base_model.model.fc.lora_B.weight": torch.randn(4, 2, generator=g),
            }
        )
    deltas = [lora_task_vector(a, scaling=0.5) for a in adapters]
    a0 = adapters[0]
    expected = 0.5 * (
        a0["base_model.model.fc.lora_B.weight"].double()
        @ a0["base_model.model.fc.lora_A.weight"].double()
    )
    assert torch.equal(deltas[0]["base_model.model.fc.weight"], expected)
    merged = merge(None, deltas, "average")["base_model.model.fc.weight"]
    assert torch.allclose(
        merged,
        (deltas[0]["base_model.model.fc.weight"] + deltas[1]["base_model.model.fc.weight"]) / 2,
    )
    with pytest.raises(ValueError, match="lora_B"):
        lora_task_vector({"x.lora_A.weight": torch.ones(2, 3)})


def test_merge_follows_the_device(device):
    base = random_sd(0, device=device)
    experts = [
        {k: v + 0.1 * i if v.is_floating_point() else v for k, v in base.items()}
        for i in range(1, 3)
    ]
    for method in ("average", "ties", "dare"):
        out = merge(base, experts, method, random_state=0)
        assert all(t.device.type == device for t in out.values())
        assert out["a.weight"].dtype == torch.float32


def test_bad_input_names_the_argument():
    base = random_sd(0)
    experts = experts_of(base, [1, 2])
    wrong = dict(experts[1])
    wrong["a.bias"] = torch.zeros(8)
    with pytest.raises(ValueError, match=r"experts\[1\]\['a.bias'\]"):
        merge(base, [experts[0], wrong], "average")
    missing = {k: v for k, v in experts[1].items() if k != "b.weight"}
    with pytest.raises(ValueError, match=r"`experts\[1\]` must have the keys"):
        merge(base, [experts[0], missing])
    with pytest.raises(ValueError, match="method"):
        merge(base, experts, "soup")
    with pytest.raises(ValueError, match="density"):
        merge(base, experts, "ties", density=1.5)
    with pytest.raises(ValueError, match="drop_rate"):
        merge(base, experts, "dare", drop_rate=1.0)
    with pytest.raises(TypeError, match="experts"):
        merge(base, experts[0])
    with pytest.raises(ValueError, match="at least one"):
        merge(base, [])
    with pytest.raises(ValueError, match="scaling"):
        merge(base, experts, "average", scaling=0.5)


# --- difficulty tracker, stops ------------------------------------------------------------


def test_tracker_counts_on_a_scripted_history():
    # example 0: wrong, right, wrong, right -> learned at 3, one forgetting event
    # example 1: right throughout -> learned at 0; example 2: never right
    pattern = {0: [0, 1, 0, 1], 1: [1, 1, 1, 1], 2: [0, 0, 0, 0]}
    tracker = ExampleDifficultyTracker(3)
    for epoch in range(4):
        logits = torch.zeros(3, 2)
        for i, seq in pattern.items():
            logits[i, 0 if seq[epoch] else 1] = 3.0  # the target is class 0
        tracker.update(torch.arange(3), logits, torch.zeros(3, dtype=torch.int64), epoch=epoch)
    res = tracker.result()
    assert isinstance(res, DifficultyResult)
    t = res.table
    assert t["learned_epoch"].tolist()[:2] == [3.0, 0.0] and np.isnan(t["learned_epoch"][2])
    assert t["first_correct_epoch"].tolist()[:2] == [1.0, 0.0]
    assert t["forgetting_events"].tolist() == [1, 0, 0]
    np.testing.assert_allclose(res.unlearned_fraction(), [2 / 3, 2 / 3, 2 / 3, 1 / 3])
    assert list(res.hardest(1 / 3, by="learned_epoch")) == [2]
    res.summary()
    assert len(res.tidy()) == 4
    with pytest.raises(ValueError, match="ids"):
        tracker.update(
            torch.tensor([5]), torch.zeros(1, 2), torch.zeros(1, dtype=torch.int64), epoch=0
        )


def test_select_stops_rules():
    acc = [[0.5, 0.8, 0.92, 0.97], [0.7, 0.95, 0.96, 0.99], [0.1, 0.2, 0.3, 0.4]]
    assert select_stops(acc, threshold=0.9).tolist() == [2, 1, 3]
    assert select_stops(
        [[0.5, 0.3, 0.1]], criterion="unlearned_fraction", threshold=0.3
    ).tolist() == [1]
    # gains over the next 2 checkpoints: 0.3, 0.05, then the last two cannot be judged
    assert select_stops(
        [[0.5, 0.8, 0.82, 0.85, 0.85]], criterion="plateau", threshold=0.1, patience=2
    ).tolist() == [1]
    with pytest.raises(ValueError, match="criterion"):
        select_stops(acc, criterion="loss")


def test_late_gradient_share_matches_a_loop():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    x, y = torch.randn(20, 3), torch.randint(0, 2, (20,))

    def loss_fn(out, t):
        return torch.nn.functional.cross_entropy(out, t, reduction="none")

    norms = []
    for i in range(20):
        model.zero_grad()
        loss_fn(model(x[i : i + 1]), y[i : i + 1]).sum().backward()
        norms.append(float(torch.sqrt(sum((p.grad**2).sum() for p in model.parameters()))))
    norms = np.array(norms)
    scores = np.arange(20.0)
    expected = norms[-4:].sum() / norms.sum()
    got = late_gradient_share(model, loss_fn, x, y, top_q=0.2, scores=scores)
    # vmap and the loop sum the same float32 products in different orders
    assert got == pytest.approx(expected, rel=1e-5)


# --- the phenomenon on the digits toy (5 seeds) ----------------------------------------------

SEEDS = range(5)
STOP_THRESHOLD = 0.85  # aggressive: 10% of labels are flipped, so stop 5 points below 0.9


def _trajectories(label_noise):
    """The digits toy and its task-arithmetic merge trajectory for each seed, on one thread."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        out = []
        for seed in SEEDS:
            toy = digits_merging_toy(seed, label_noise=label_noise)
            study = MergeTrajectoryStudy(
                toy.model, toy.base, toy.checkpoints, toy.evaluate, "task_arithmetic", scaling=1.0
            )
            out.append((toy, study, study.run()))
        return out
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def toys():
    return _trajectories(0.1)


def test_tracker_finds_flipped_labels(toys):
    for toy, _, _ in toys:
        for res, flipped in zip(toy.difficulty, toy.flipped, strict=True):
            n = len(res.table)
            clean = np.setdiff1d(np.arange(n), flipped)
            learned = res.table["learned_epoch"].fillna(res.epochs[-1] + 1).to_numpy()
            assert learned[flipped].mean() >= 2 * learned[clean].mean()
            # top-q EL2N with q the flipped share: recall = precision; measured 0.86-0.97
            top = res.hardest(len(flipped) / n, by="el2n")
            assert np.isin(flipped, top).mean() >= 0.6
            forgets = res.table["forgetting_events"].to_numpy()
            assert forgets[flipped].mean() > forgets[clean].mean()


def test_flipped_examples_dominate_late_gradients(toys):
    def loss_fn(out, t):
        return torch.nn.functional.cross_entropy(out, t, reduction="none")

    for toy, _, _ in toys[:2]:
        model = copy.deepcopy(toy.model)
        x, y = toy.training_set(0)
        scores = np.isin(np.arange(len(y)), toy.flipped[0]).astype(float)
        q = len(toy.flipped[0]) / len(y)
        model.load_state_dict(toy.checkpoints[0][-1])
        share = late_gradient_share(model, loss_fn, x, y, top_q=q, scores=scores)
        # the flipped 10% carry >= 3x their share of the per-example gradient norm at the
        # last epoch (measured 0.46 and 0.40 for seeds 0 and 1); the share is already high
        # after the first epoch (0.33, 0.52), so no increase is claimed
        assert share >= 3 * q


def test_merged_accuracy_peaks_before_expert_accuracy(toys):
    results = [res for _, _, res in toys]
    assert all(isinstance(r, MergeStudyResult) for r in results)
    for res in results:
        assert res.merged_peak_step < res.expert_peak_step
    mean = pd.concat([r.tidy() for r in results]).groupby("step").mean()
    assert mean["merged_accuracy"].idxmax() < mean["expert_accuracy"].idxmax()
    # and the expert curve still ends higher than it starts, while the merge falls
    assert mean["expert_accuracy"].iloc[-1] > mean["expert_accuracy"].iloc[0]
    assert mean["merged_accuracy"].iloc[-1] < mean["merged_accuracy"].max() - 0.05


def test_stopping_rule_beats_the_last_epoch(toys):
    gains = []
    for toy, study, res in toys:
        stops = select_stops(
            toy.train_accuracy, criterion="train_accuracy", threshold=STOP_THRESHOLD
        )
        at_stop = study.evaluate_stops(stops)["merged_accuracy"].mean()
        last = res.tidy()["merged_accuracy"].iloc[-1]
        gains.append(at_stop - last)
    # measured gains 8 to 36 points per seed; the claim is >= 2 points on average and per seed
    assert np.mean(gains) >= 0.02 and min(gains) >= 0.02


def _norm_matched_last_merge(toy, study):
    """Task arithmetic of the last-epoch experts, each task vector rescaled to the norm of its
    first-epoch one (a label-free reference): what is left of the damage is not its size."""
    last = task_vectors(toy.base, [ck[-1] for ck in toy.checkpoints])
    first = task_vectors(toy.base, [ck[0] for ck in toy.checkpoints])

    def norm(vector):
        return torch.sqrt(sum(v.float().square().sum() for v in vector.values()))

    experts = [
        {name: toy.base[name] + delta * (norm(ref) / norm(vec)) for name, delta in vec.items()}
        for vec, ref in zip(last, first, strict=True)
    ]
    merged = merge(toy.base, experts, "task_arithmetic", scaling=1.0)
    return float(np.mean([study._score(merged, k) for k in range(len(experts))]))


@pytest.fixture(scope="module")
def clean_toys():
    return _trajectories(0.0)


def test_the_late_merge_damage_needs_flipped_labels_and_is_a_matter_of_scale(toys, clean_toys):
    """The controls of the early-stopping claim, 5 seeds, task arithmetic at scaling 1:

    - clean labels: no early peak and no late drop (merged peak at epochs 9-29, peak minus
      last 0.000-0.029; with 10 % flipped: peak at epochs 1-3, drop 0.21-0.37);
    - norm matching: the last-epoch task vectors rescaled to their first-epoch norms merge to
      0.95 (flipped) and 0.96 (clean) mean accuracy, above the merged peak (0.84 / 0.93) and
      far above the plain last-epoch merge (0.56 / 0.92). In this toy the memorised flips hurt
      the merge through the task vectors' growth, not through where they point.
    """

    def drops(runs):
        return np.array([r.tidy()["merged_accuracy"].max() - r.tidy()["merged_accuracy"].iloc[-1]
                         for _, _, r in runs])  # fmt: skip

    assert drops(clean_toys).mean() < 0.02 < 0.2 < drops(toys).mean()
    assert np.mean([r.merged_peak_step for _, _, r in clean_toys]) > 5
    for runs in (toys, clean_toys):
        matched = np.array([_norm_matched_last_merge(toy, study) for toy, study, _ in runs])
        peak = np.array([r.tidy()["merged_accuracy"].max() for _, _, r in runs])
        last = np.array([r.tidy()["merged_accuracy"].iloc[-1] for _, _, r in runs])
        assert matched.mean() > peak.mean()
        # never much below the plain last-epoch merge (clean seed 1: 0.960 against 0.972)
        assert (matched >= last - 0.02).all()
    flipped_matched = np.array([_norm_matched_last_merge(t, s) for t, s, _ in toys])
    flipped_last = np.array([r.tidy()["merged_accuracy"].iloc[-1] for _, _, r in toys])
    assert (flipped_matched - flipped_last).min() > 0.2


def test_study_reports(toys):
    import matplotlib

    matplotlib.use("Agg")
    _, study, res = toys[0]
    assert list(res.tidy().columns) == [
        "step",
        "expert_accuracy",
        "merged_accuracy",
        "normalized_accuracy",
    ]
    assert "merged_peak_step" in res.glance().columns
    str(res.summary())
    res.to_dict()
    res.plot()
    with pytest.raises(ValueError, match="stops"):
        study.evaluate_stops([0])
