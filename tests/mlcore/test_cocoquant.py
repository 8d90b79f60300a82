"""CoCoQuant (mlcore.quant): quantiser, roofline arithmetic, the ILP against brute force, the
frontier, the one-process rewrite numerics, sensitivity hooks, and bad input."""

import itertools

import numpy as np
import pandas as pd
import pytest
import torch

from mlcore.quant import TinyTPLM, payload_linear, run_tensor_parallel, simulate_tp_allreduce
from mlcore.quant.allocate import (
    AllocationResult,
    allocate_precision,
    baseline_allocation,
    pareto_frontier,
)
from mlcore.quant.cost import (
    HARDWARE,
    HardwareSpec,
    QuantOp,
    RooflineCostModel,
    measure_hardware,
)
from mlcore.quant.quantizers import (
    dequantize,
    fake_quantize,
    pack_int4,
    quantize,
    unpack_int4,
)
from mlcore.quant.sensitivity import SensitivityCalibrator, linear_ops, quantized


@pytest.mark.parametrize("bits", [8, 4, 3])
def test_round_to_nearest_error_is_at_most_half_a_scale(bits):
    x = torch.randn(16, 64, generator=torch.Generator().manual_seed(0)) * 3
    q, scales = quantize(x, bits, group_size=16)
    qmax = 2 ** (bits - 1) - 1
    assert q.dtype == torch.int8 and int(q.abs().max()) <= qmax
    assert scales.shape == (16, 4)
    err = (dequantize(q, scales) - x).abs().reshape(16, 4, 16)
    # Half a scale, plus float32 rounding of x / scale and of q * scale (a few ulps of |x|).
    bound = scales.unsqueeze(-1) / 2 + 4 * torch.finfo(torch.float32).eps * x.abs().max()
    assert bool((err <= bound).all())
    # The group's largest entry lands on ±qmax: absmax scaling clips nothing.
    assert bool((q.reshape(16, 4, 16).abs().amax(-1) == qmax).all())


def test_int4_packing_round_trips_and_halves_the_bytes():
    q, _ = quantize(torch.randn(8, 32, generator=torch.Generator().manual_seed(1)), 4)
    packed = pack_int4(q)
    assert packed.dtype == torch.uint8 and packed.numel() == q.numel() // 2
    assert torch.equal(unpack_int4(packed), q)


def test_fake_quantize_at_16_bits_is_the_tensor_and_inputs_are_not_modified():
    x = torch.randn(4, 8)
    before = x.clone()
    assert fake_quantize(x, 16) is x
    fake_quantize(x, 4, group_size=4)
    assert torch.equal(x, before)


def test_quantiser_errors_name_the_argument():
    with pytest.raises(ValueError, match="group_size"):
        quantize(torch.randn(2, 10), 8, group_size=4)
    with pytest.raises(ValueError, match="bits"):
        quantize(torch.randn(2, 8), 9)
    with pytest.raises(ValueError, match="`x` must be finite"):
        quantize(torch.tensor([[1.0, float("nan")]]), 8)
    with pytest.raises(TypeError, match="floating"):
        quantize(torch.ones(2, 4, dtype=torch.int64), 8)


def test_roofline_arithmetic_of_spec_check_3():
    cm = RooflineCostModel(
        "abstract"
    )  # P16 = 1e14, P8 = 2e14, BW = 1e12, link 1e11, α = 5 µs, p = 8
    # Each value must round to the quoted digits of the published table: within half a unit of the last one.
    compute, memory = cm.gemm_times(4096, 4096, 4096, 16)
    assert compute == pytest.approx(1.374e-3, abs=0.0005e-3) and compute > memory
    assert memory == pytest.approx(0.101e-3, abs=0.0005e-3)
    assert cm.gemm_time(4096, 4096, 4096, 8) == pytest.approx(0.687e-3, abs=0.0005e-3)
    compute, memory = cm.gemm_times(1, 4096, 4096, 16)
    assert memory == pytest.approx(33.6e-6, abs=0.05e-6) and memory > compute
    assert cm.gemm_time(1, 4096, 4096, 4) == pytest.approx(8.40e-6, abs=0.005e-6)
    assert cm.allreduce_time(4096 * 4096, 16) == pytest.approx(657e-6, abs=0.5e-6)
    assert cm.allreduce_time(4096 * 4096, 8) == pytest.approx(364e-6, abs=0.5e-6)
    # Exact formulas: 2(p-1)/p · S / BW + 2(p-1)α; the rewrite is RS(16) + AG(b).
    n, p = 4096 * 4096, 8
    assert cm.allreduce_time(n, 16) == 2 * (p - 1) / p * 2 * n / 1e11 + 2 * (p - 1) * 5e-6
    assert cm.comm_time(n, 8) == pytest.approx(
        (p - 1) / p * (2 * n + n) / 1e11 + 2 * (p - 1) * 5e-6, rel=1e-12
    )


def _random_instance(rng, n_layers=2):
    """8 ops per instance (2 layers × qkv, out, out.allreduce, fc1), random shapes and
    sensitivities that grow as the precision drops."""
    ops = []
    for layer in range(n_layers):
        M = int(rng.integers(1, 4096))
        ops += [
            QuantOp(f"qkv{layer}", "gemm", M=M, N=int(rng.integers(256, 4096)), K=4096),
            QuantOp(f"out{layer}", "gemm", M=M, N=4096, K=int(rng.integers(256, 4096))),
            QuantOp(f"ar{layer}", "comm", M=M, N=4096, consumer=f"fc{layer}"),
            QuantOp(f"fc{layer}", "gemm", M=M, N=int(rng.integers(256, 8192)), K=4096),
        ]
    s8 = rng.uniform(0.001, 0.05, size=len(ops))
    sens = pd.DataFrame(
        {16: 0.0, 8: s8, 4: s8 + rng.uniform(0.01, 0.3, size=len(ops))},
        index=[op.name for op in ops],
    )
    return ops, sens


@pytest.mark.parametrize("coupling", ["free", "aligned"])
def test_ilp_equals_brute_force_on_20_random_instances(coupling):
    rng = np.random.default_rng(2026)
    hardware = [HARDWARE["abstract"], HARDWARE["l40s-pcie"], HARDWARE["a100-nvlink"]]
    for trial in range(20):
        ops, sens = _random_instance(rng)
        cm = RooflineCostModel(hardware[trial % 3], scale_group_size=128)
        eps = float(rng.uniform(0.0, sens[4].sum()))
        ilp = allocate_precision(ops, cm, sens, eps, coupling=coupling)
        brute = allocate_precision(ops, cm, sens, eps, coupling=coupling, backend="brute")
        # HiGHS runs with MIP gap 0 on normalised times; 1e-9 is the acceptance tolerance of the allocation.
        assert ilp.latency_s == pytest.approx(brute.latency_s, rel=1e-9)
        assert ilp.delta_loss <= eps + 1e-12
        # The result's latency is the cost model's own sum for its bits.
        assert ilp.latency_s == pytest.approx(cm.latency(ops, ilp.bits), rel=1e-12)


def test_enumeration_is_exhaustive_3_pow_8():
    # The brute force enumerates all 6,561 allocations of 8 ops × 3 precisions.
    assert len(list(itertools.product(range(3), repeat=8))) == 6561


def test_free_coupling_is_never_slower_than_aligned():
    rng = np.random.default_rng(7)
    for _ in range(5):
        ops, sens = _random_instance(rng)
        cm = RooflineCostModel("l40s-pcie")
        eps = float(rng.uniform(0.0, sens[4].sum()))
        free = allocate_precision(ops, cm, sens, eps, coupling="free")
        aligned = allocate_precision(ops, cm, sens, eps, coupling="aligned")
        assert free.latency_s <= aligned.latency_s * (1 + 1e-12)
        for op in ops:
            if op.kind == "comm":
                assert aligned.bits[op.name] == aligned.bits[op.consumer]


def test_pareto_frontier_is_monotone_and_all_16_at_zero_budget():
    rng = np.random.default_rng(3)
    ops, sens = _random_instance(rng)
    cm = RooflineCostModel("abstract")
    front = pareto_frontier(ops, cm, sens, n_eps=10)
    lat = front.frontier["latency_s"].to_numpy()
    assert front.frontier["eps"].is_monotonic_increasing
    assert (np.diff(lat) <= 1e-15).all()
    zero = front.allocations[0]
    assert zero.eps == 0.0 and (zero.bits == 16).all()
    hand = 0.0
    for op in ops:  # the fp16 roofline summed by hand
        if op.kind == "gemm":
            flops, moved = 2 * op.M * op.N * op.K, 2 * (op.M * op.K + op.K * op.N + op.M * op.N)
            hand += max(flops / 1e14, moved / 1e12)
        else:
            hand += 2 * 7 / 8 * 2 * op.M * op.N / 1e11 + 2 * 7 * 5e-6
    assert zero.latency_s == pytest.approx(hand, rel=1e-12)
    # The baselines' budgets are on the grid, so the frontier dominates them in prediction.
    for name, row in front.baselines.iterrows():
        at = front.frontier[np.isclose(front.frontier["eps"], row["delta_loss"], rtol=0, atol=0)]
        assert len(at) == 1 and at["latency_s"].iloc[0] <= row["latency_s"] * (1 + 1e-12), name
    assert set(front.tidy()["allocation"]) == {"ILP", "all-16", "comm-int8", "gemm-int8"}


def test_infeasible_budget_and_memory_raise_clear_errors():
    ops = [
        QuantOp("a", "gemm", M=8, N=64, K=64, bits=(8, 4)),
        QuantOp("b", "gemm", M=8, N=64, K=64, bits=(8, 4)),
    ]
    sens = {"a": {8: 0.01, 4: 0.1}, "b": {8: 0.02, 4: 0.2}}
    cm = RooflineCostModel("abstract")
    with pytest.raises(ValueError, match=r"`eps`=0.001 is infeasible.*reaches is 0.03"):
        allocate_precision(ops, cm, sens, 0.001)
    with pytest.raises(ValueError, match="memory_budget"):
        allocate_precision(ops, cm, sens, 1.0, memory_budget=100.0)
    # Enough memory for 4-bit weights only: the ILP must pick 4 bits.
    res = allocate_precision(ops, cm, sens, 1.0, memory_budget=64 * 64)
    assert (res.bits == 4).all()


def test_bad_inputs_name_the_argument():
    cm = RooflineCostModel("abstract")
    ops = [QuantOp("g", "gemm", M=8, N=64, K=64)]
    with pytest.raises(ValueError, match="kind"):
        QuantOp("x", "conv", M=1, N=1, K=1)
    with pytest.raises(ValueError, match="consumer 'nope'"):
        cm.table([QuantOp("c", "comm", M=1, N=8, consumer="nope")])
    with pytest.raises(ValueError, match="no row for the op 'g'"):
        allocate_precision(ops, cm, {"other": {16: 0, 8: 0, 4: 0}}, 0.1)
    with pytest.raises(ValueError, match="eps"):
        allocate_precision(ops, cm, {"g": {16: 0, 8: 0, 4: 0}}, -1.0)
    with pytest.raises(ValueError, match="16-bit entry"):
        HardwareSpec("x", {8: 1e12}, 1e12, 1e11, 1e-6)
    with pytest.raises(ValueError, match="hardware"):
        RooflineCostModel("tpu-v9")
    with pytest.raises(ValueError, match="brute"):
        many = [QuantOp(f"g{i}", "gemm", M=1, N=8, K=8) for i in range(14)]
        allocate_precision(
            many, cm, {op.name: {16: 0, 8: 0, 4: 0} for op in many}, 0.1, backend="brute"
        )


def test_world_size_that_does_not_divide_the_hidden_size_is_refused():
    model = TinyTPLM(16, d_model=32, n_heads=4, d_ff=64)
    with pytest.raises(ValueError, match=r"`tp_size`=3 does not divide"):
        linear_ops(model, tokens=8, tp_size=3, **model.tp_plan())
    ids = torch.zeros(2, 9, dtype=torch.int64)
    with pytest.raises(ValueError, match=r"`world_size`=3 must divide the model's n_heads"):
        run_tensor_parallel(model, ids, world_size=3)
    with pytest.raises(ValueError, match="group_size"):
        run_tensor_parallel(model, ids, world_size=2, group_size=32)


def test_simulated_rewrite_is_bit_identical_when_groups_divide_the_shard():
    gen = torch.Generator().manual_seed(4)
    shards = [
        torch.randn(16, 128, generator=gen) * torch.logspace(-1, 1, 16)[:, None] for _ in range(4)
    ]
    out = simulate_tp_allreduce(shards, 8, group_size=16)
    assert out["bit_identical"] and out["max_abs_diff"] == 0.0
    # The consumer GEMM fed by the payload is bit-identical too.
    w = torch.randn(32, 128, generator=gen)
    assert torch.equal(payload_linear(*out["fused"], w), payload_linear(*out["reference"], w))
    # Per-token scales over the full hidden size differ from per-shard ones; recorded here.
    per_token = simulate_tp_allreduce(shards, 8, group_size=None)
    assert not per_token["bit_identical"] and per_token["max_abs_diff"] > 0
    with pytest.raises(ValueError, match="straddles"):
        simulate_tp_allreduce(shards, 8, group_size=64)


def test_allocation_result_reports():
    rng = np.random.default_rng(5)
    ops, sens = _random_instance(rng)
    cm = RooflineCostModel("a100-nvlink")
    res = allocate_precision(ops, cm, sens, 0.1)
    assert isinstance(res, AllocationResult)
    assert list(res.tidy().columns) == ["op", "kind", "bits", "time_s", "sensitivity"]
    assert res.tidy()["time_s"].sum() == pytest.approx(res.latency_s, rel=1e-12)
    assert res.speedup >= 1.0
    assert "speedup" in str(res.summary())
    base = baseline_allocation(ops, cm, sens, "comm-int8")
    assert set(base.bits[[o.name for o in ops if o.kind == "comm"]]) == {8}
    res.to_dict()


def test_sensitivity_hooks_leave_the_model_unchanged(device):
    torch.manual_seed(0)
    model = TinyTPLM(16, d_model=32, n_heads=2, n_layers=1, d_ff=64).to(device)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    ids = torch.randint(0, 16, (4, 12), generator=torch.Generator().manual_seed(0)).to(device)
    ops = linear_ops(model, tokens=44, tp_size=2, **model.tp_plan())
    with torch.no_grad():
        before = model(ids)
    res = SensitivityCalibrator(model, [ids], ops, group_size=8).fit()
    with torch.no_grad():
        after = model(ids)
        with quantized(model, ops, {op.name: 4 for op in ops}, group_size=8):
            quant = model(ids)
    assert torch.equal(before, after)
    assert not torch.equal(before, quant)  # the hooks did act while inside the context
    assert all(torch.equal(state[k], v) for k, v in model.state_dict().items())
    assert not any(m._forward_hooks for m in model.modules())
    assert list(res.table.columns) == [16, 8, 4] and (res.table[16] == 0).all()
    assert np.allclose(res.raw, (res.losses - res.base_loss) / res.base_loss, rtol=0, atol=0)
    # Quantising one op moves the logits more at 4 bits than at 8 (steps 127/7 ≈ 18× coarser);
    # the untrained model's loss changes are too small to order reliably, the outputs are not.
    with torch.no_grad():
        for op in ops:
            moved = {}
            for b in (8, 4):
                with quantized(model, ops, {op.name: b}, group_size=8):
                    moved[b] = float((model(ids) - before).abs().max())
            assert moved[4] > moved[8] > 0, op.name
    assert set(res.tidy()["bits"]) == {16, 8, 4}


def test_measured_hardware_profile_is_positive():
    hw = measure_hardware(size=64, repeats=2, tp_size=2)
    assert hw.peak_flops[16] > 0 and hw.memory_bandwidth > 0
    assert RooflineCostModel(hw).gemm_time(64, 64, 64, 8) > 0


def test_calibration_and_allocation_work_on_any_causal_lm():
    torch.manual_seed(1)

    class Bigram(torch.nn.Module):
        """Not a TinyTPLM: an embedding, an up and a down projection."""

        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(16, 32)
            self.up = torch.nn.Linear(32, 64)
            self.down = torch.nn.Linear(64, 16)

        def forward(self, ids):
            return self.down(torch.relu(self.up(self.emb(ids))))

    model = Bigram()
    ids = torch.randint(0, 16, (8, 10), generator=torch.Generator().manual_seed(2))
    ops = linear_ops(model, tokens=72, tp_size=2, row_parallel=["down"])
    assert [op.name for op in ops] == ["up", "down", "down.allreduce"]
    assert ops[0].N == 32 and ops[1].K == 32  # column- and row-parallel halves
    sens = SensitivityCalibrator(model, [ids], ops, group_size=16).fit()
    front = pareto_frontier(ops, RooflineCostModel("l40s-pcie"), sens, n_eps=4)
    front = front.measure(lambda bits: float((bits < 16).sum()), name="low-bit ops")
    assert front.measured_name == "low-bit ops"
    assert front.dominates(column="delta_loss").all()  # by construction of the budget grid
    assert "measured" in front.tidy()


def test_results_draw_their_plots():
    pytest.importorskip("matplotlib").use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(8)
    ops, sens = _random_instance(rng)
    cm = RooflineCostModel("abstract")
    front = pareto_frontier(ops, cm, sens, n_eps=3).measure(lambda bits: 1.0, name="ppl")
    ax = front.plot()
    assert ax.get_ylabel() == "ppl" and len(ax.collections) == 3  # one marker per baseline
    assert len(front.allocations[-1].plot().patches) == len(ops)
    plt.close("all")


def test_sensitivity_calibrator_is_an_estimator_and_fit_returns_a_new_result():
    from statcore.base import Estimator

    torch.manual_seed(0)
    model = TinyTPLM(16, d_model=16, n_heads=2, n_layers=1, d_ff=32)
    ids = torch.randint(0, 16, (2, 8), generator=torch.Generator().manual_seed(0))
    ops = linear_ops(model, tokens=14, tp_size=2, **model.tp_plan())[:2]
    calibrator = SensitivityCalibrator(model, [ids, ids], ops, bits=(16, 8), group_size=8)
    assert isinstance(calibrator, Estimator) and calibrator.nobs == 2
    res = calibrator.fit(progress=False)
    assert res is not calibrator and res.model is calibrator and res.nobs == 2
    assert dict(res.fit_options) == {"progress": False}
    # the constructor's old `progress` still works for one release
    with pytest.warns(FutureWarning, match="now an option of fit"):
        old = SensitivityCalibrator(model, [ids], ops, bits=(16, 8), group_size=8, progress=False)
    assert list(old.fit().table.columns) == [16, 8]


def test_the_old_tp_module_serves_its_names_with_a_future_warning():
    import mlcore.quant
    from mlcore.quant import tp

    for name in ("TinyTPLM", "run_tensor_parallel", "tp_forward", "TPRunResult", "batches"):
        with pytest.warns(FutureWarning, match=f"mlcore.quant.tp.{name} is now"):
            obj = getattr(tp, name)
        assert name == "tp_forward" or obj is getattr(mlcore.quant, name)
    with pytest.raises(AttributeError):
        tp.no_such_name  # noqa: B018


def test_pack_int4_refuses_values_outside_the_int4_range():
    q = torch.tensor([[-8, 7, 0, 3]], dtype=torch.int8)
    assert torch.equal(unpack_int4(pack_int4(q)), q)
    with pytest.raises(ValueError, match=r"`q` must hold int4 values in \[-8, 7\]"):
        pack_int4(torch.tensor([[9, 1]], dtype=torch.int8))  # was packed as another number
    with pytest.raises(TypeError, match="`q` must be"):
        pack_int4(torch.tensor([[1.5, 1.0]]))
    with pytest.raises(TypeError, match="`packed` must be a uint8 tensor"):
        unpack_int4(q)
