"""Backends keep input order; Monte Carlo studies are seeded, backend-independent and correct.

Process and dask workers must unpickle the functions defined here. ``tests/`` has no
``__init__.py``, so pytest imports this file as a top-level module ``test_distributed``, which a
worker could import by reference only with this directory on its ``sys.path``. Registering the
module for cloudpickle's pickle-by-value makes cloudpickle (used by the process backend when it
is installed, and by dask always) ship these functions' code instead, so no worker imports this
file. Without cloudpickle the process backend pickles by reference and still works under
pytest's default import mode: the forkserver inherits the parent's ``sys.path``, to which pytest
has prepended this directory.
"""

import sys
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from scipy import special

from statcore.distributed import (
    Backend,
    DaskBackend,
    MonteCarloResult,
    MonteCarloStudy,
    ProcessBackend,
    SerialBackend,
    ThreadBackend,
    as_dask_array,
    compute_delayed,
    get_backend,
    is_dask_backend,
    is_dask_client,
)
from statcore.results import TestResult

try:
    import cloudpickle
except ImportError:
    pass
else:
    cloudpickle.register_pickle_by_value(sys.modules[__name__])

Z975 = special.ndtri(0.975)


def _slow_square(i):
    """Later items finish first, so completion order is the reverse of input order."""
    time.sleep(0.02 * (5 - i))
    return i * i


def _fail_on_three(i):
    if i == 3:
        raise ValueError("item 3 is bad")
    return i


def _ztest(random_state, n, mu=0.0):
    """Two-sided z-test of mean 0 on N(mu, 1) data with known unit variance."""
    x = random_state.standard_normal(n) + mu
    z = np.sqrt(n) * x.mean()
    pvalue = 2 * special.ndtr(-abs(z))
    return {"statistic": z, "pvalue": pvalue, "reject": pvalue <= 0.05}


def _uniform(random_state, **params):
    return {"u": random_state.random()}


@dataclass
class _HTest:
    statistic: float
    pvalue: float


def _ztest_object(random_state, n):
    out = _ztest(random_state, n)
    return _HTest(out["statistic"], out["pvalue"])


def _ztest_result(random_state, n):
    out = _ztest(random_state, n)
    return TestResult(method="z-test", statistic=out["statistic"], pvalue=out["pvalue"])


GRID = {"n": [10, 30], "mu": [0.0, 0.5]}


# ---------------------------------------------------------------------------------- backends


@pytest.mark.parametrize(
    ("backend", "kwargs", "cls"),
    [
        (None, {}, SerialBackend),
        ("serial", {}, SerialBackend),
        ("threads", {"n_workers": 3}, ThreadBackend),
        ("processes", {"n_workers": 2}, ProcessBackend),
    ],
)
def test_map_keeps_input_order(backend, kwargs, cls):
    with get_backend(backend, **kwargs) as be:
        assert isinstance(be, cls)
        assert be.name == cls.name
        assert be.map(_slow_square, range(6)) == [0, 1, 4, 9, 16, 25]
        assert be.map(_slow_square, []) == []
    if kwargs:
        assert be.n_workers == kwargs["n_workers"]


def test_map_progress_bar(capsys):
    assert SerialBackend().map(_slow_square, [4, 5], progress=True, desc="squares") == [16, 25]
    err = capsys.readouterr().err
    assert "squares" in err and "2/2" in err


@pytest.mark.parametrize("backend", ["serial", "threads"])
def test_map_reraises_the_error(backend):
    with get_backend(backend) as be, pytest.raises(ValueError, match="item 3 is bad"):
        be.map(_fail_on_three, range(6))


def test_closed_pool_refuses_work():
    be = get_backend("threads", n_workers=2)
    be.close()
    with pytest.raises(RuntimeError):
        be.map(_slow_square, [5])


def test_get_backend_returns_a_backend_as_is():
    be = SerialBackend()
    assert get_backend(be) is be
    assert isinstance(be, Backend)
    assert repr(get_backend("threads", n_workers=2)) == "ThreadBackend(n_workers=2)"


def test_get_backend_errors():
    with pytest.raises(
        ValueError,
        match="`backend` must be one of 'serial', 'threads', 'processes', 'dask'; got 'gpu'",
    ):
        get_backend("gpu")
    with pytest.raises(ValueError, match="`backend` must be one of .*; got 3"):
        get_backend(3)
    with pytest.raises(ValueError, match="`n_workers` sizes the 'threads' and 'processes'"):
        get_backend("serial", n_workers=2)
    with pytest.raises(ValueError, match=r"`n_workers` must lie in \[1, inf\]; got 0"):
        get_backend("threads", n_workers=0)
    with pytest.raises(TypeError, match="`n_workers` must be an integer"):
        get_backend("processes", n_workers=1.5)


def test_dask_backend_without_dask(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"pip install statcore\[dist\]"):
        get_backend("dask")


# ----------------------------------------------------------------------- Monte Carlo studies


def test_replicates_identical_on_serial_threads_and_processes():
    results = {
        name: MonteCarloStudy(_ztest, GRID, 40, random_state=2024, backend=backend).run()
        for name, backend in [
            ("serial", None),
            ("threads", get_backend("threads", n_workers=3)),
            ("processes", "processes"),
        ]
    }
    reference = results["serial"].replicates
    assert list(reference.columns) == ["n", "mu", "replicate", "statistic", "pvalue", "reject"]
    assert len(reference) == 4 * 40
    assert reference["reject"].dtype == bool
    for name, res in results.items():
        assert res.backend == name
        assert res.random_state_used == 2024
        pd.testing.assert_frame_equal(res.replicates, reference)


def test_streams_are_spawned_children_by_position():
    res = MonteCarloStudy(_uniform, {"k": [0, 1, 2]}, 5, random_state=123).run()
    children = np.random.SeedSequence(123).spawn(3 * 5)
    expected = [np.random.default_rng(child).random() for child in children]
    np.testing.assert_array_equal(res.replicates["u"].to_numpy(), expected)
    np.testing.assert_array_equal(res.replicates["replicate"], np.tile(np.arange(5), 3))
    np.testing.assert_array_equal(res.replicates["k"], np.repeat([0, 1, 2], 5))


def test_size_and_power_of_the_z_test():
    res = MonteCarloStudy(_ztest, {"n": [20], "mu": [0.0, 0.5]}, 4000, random_state=7).run()
    rates = res.rejection_rate(alpha=0.05)
    power = special.ndtr(-Z975 + 0.5 * np.sqrt(20)) + special.ndtr(-Z975 - 0.5 * np.sqrt(20))
    truth = np.array([0.05, power])
    se = np.sqrt(truth * (1 - truth) / 4000)
    assert np.all(np.abs(rates["estimate"].to_numpy() - truth) < 3 * se)
    assert list(rates.columns) == [
        "n",
        "mu",
        "estimate",
        "std_error",
        "conf_low",
        "conf_high",
        "n_rep",
    ]
    # the boolean output is the same rejection rate
    reject = res.tidy().query("metric == 'reject'")
    np.testing.assert_allclose(reject["estimate"], rates["estimate"])
    np.testing.assert_allclose(reject["std_error"], rates["std_error"])


def test_monte_carlo_standard_errors_by_hand():
    replicates = pd.DataFrame(
        {"replicate": [0, 1, 2, 3], "x": [1.0, 2.0, 3.0, 4.0], "hit": [True, True, False, False]}
    )
    res = MonteCarloResult(
        method="hand",
        replicates=replicates,
        grid=pd.DataFrame(index=range(1)),
        outputs=("x", "hit"),
        n_rep=4,
    )
    tidy = res.tidy().set_index("metric")
    # x: mean 2.5, sd sqrt(5/3), se sd / 2;  hit: p = 0.5, se sqrt(0.25 / 4) = 0.25
    se_x = np.sqrt(5 / 3) / 2
    assert tidy.loc["x", "estimate"] == 2.5
    assert tidy.loc["x", "std_error"] == pytest.approx(se_x, rel=1e-14)
    assert tidy.loc["hit", "estimate"] == 0.5
    assert tidy.loc["hit", "std_error"] == pytest.approx(0.25, rel=1e-14)
    assert tidy.loc["x", "conf_low"] == pytest.approx(2.5 - Z975 * se_x)
    assert tidy.loc["hit", "conf_high"] == pytest.approx(0.5 + Z975 * 0.25)
    assert list(tidy["n_rep"]) == [4, 4]
    ninety = res.tidy(alpha=0.1).set_index("metric")
    assert ninety.loc["x", "conf_high"] == pytest.approx(2.5 + special.ndtri(0.95) * se_x)


def test_standard_errors_agree_with_the_replicates():
    res = MonteCarloStudy(_ztest, GRID, 50, random_state=3).run()
    tidy = res.tidy()
    assert list(tidy.columns) == [
        "n",
        "mu",
        "metric",
        "estimate",
        "std_error",
        "conf_low",
        "conf_high",
        "n_rep",
    ]
    assert list(tidy["metric"][:3]) == ["statistic", "pvalue", "reject"]
    reps = res.replicates
    for (n, mu, metric), row in tidy.set_index(["n", "mu", "metric"]).iterrows():
        values = reps.loc[(reps["n"] == n) & (reps["mu"] == mu), metric].to_numpy(dtype=float)
        sd = (
            np.sqrt(values.mean() * (1 - values.mean()))
            if metric == "reject"
            else values.std(ddof=1)
        )
        assert row["estimate"] == pytest.approx(values.mean())
        assert row["std_error"] == pytest.approx(sd / np.sqrt(50))
    tables = res.summary().tables
    assert list(tables) == ["statistic", "pvalue", "reject"]
    pd.testing.assert_frame_equal(
        tables["pvalue"],
        tidy.query("metric == 'pvalue'").drop(columns="metric").reset_index(drop=True),
    )


def test_seeds():
    first = MonteCarloStudy(_ztest, GRID, 10, random_state=1).run().replicates
    again = MonteCarloStudy(_ztest, GRID, 10, random_state=1).run().replicates
    other = MonteCarloStudy(_ztest, GRID, 10, random_state=2).run().replicates
    pd.testing.assert_frame_equal(first, again)
    assert not np.any(first["statistic"].to_numpy() == other["statistic"].to_numpy())
    seq = MonteCarloStudy(_ztest, GRID, 10, random_state=np.random.SeedSequence(1)).run()
    pd.testing.assert_frame_equal(seq.replicates, first)


def test_unseeded_study_records_its_entropy():
    study = MonteCarloStudy(_ztest, GRID, 10)
    one, two = study.run(), study.run()
    assert isinstance(one.random_state_used, int)
    assert one.random_state_used != two.random_state_used
    repeat = MonteCarloStudy(_ztest, GRID, 10, random_state=one.random_state_used).run()
    pd.testing.assert_frame_equal(repeat.replicates, one.replicates)


def test_generator_and_child_seed_sequences():
    res = MonteCarloStudy(_ztest, GRID, 10, random_state=np.random.default_rng(5)).run()
    assert res.random_state_used == int.from_bytes(np.random.default_rng(5).bytes(16), "little")
    rng = np.random.default_rng(5)
    study = MonteCarloStudy(_ztest, GRID, 10, random_state=rng)
    pd.testing.assert_frame_equal(study.run().replicates, res.replicates)
    assert study.run().random_state_used != res.random_state_used  # the stream moved on
    child = np.random.SeedSequence(9).spawn(1)[0]
    used = MonteCarloStudy(_ztest, GRID, 10, random_state=child).run().random_state_used
    assert used == int.from_bytes(child.generate_state(4, np.uint32).tobytes(), "little")
    assert child.n_children_spawned == 0


def test_grid_forms():
    product = MonteCarloStudy(_uniform, {"a": [1, 2], "b": ["x", "y", "z"], "c": 0.5}, 2)
    assert product.points[:2] == [{"a": 1, "b": "x", "c": 0.5}, {"a": 1, "b": "y", "c": 0.5}]
    assert product.n_points == 6
    points = [{"a": 1, "b": "x"}, {"a": 5, "b": "q"}]
    listed = MonteCarloStudy(_uniform, points, 3, random_state=0).run()
    framed = MonteCarloStudy(_uniform, pd.DataFrame(points), 3, random_state=0).run()
    pd.testing.assert_frame_equal(listed.replicates, framed.replicates)
    pd.testing.assert_frame_equal(listed.grid, pd.DataFrame(points))
    empty = MonteCarloStudy(_uniform, {}, 4, random_state=0).run()
    assert list(empty.replicates.columns) == ["replicate", "u"]
    assert empty.n_points == 1 and len(empty.tidy()) == 1


def test_test_result_like_outputs():
    for fn in (_ztest_object, _ztest_result):
        res = MonteCarloStudy(fn, {"n": [15]}, 20, random_state=11).run()
        assert res.outputs == ("statistic", "pvalue")
        ref = MonteCarloStudy(_ztest, {"n": [15]}, 20, random_state=11).run().replicates
        pd.testing.assert_frame_equal(res.replicates, ref.drop(columns="reject"))


def _maybe_nan(random_state, k):
    value = random_state.standard_normal()
    return {"v": np.nan if value > 1.0 else value, "count": int(k)}


def test_nan_outputs_are_left_out():
    res = MonteCarloStudy(_maybe_nan, {"k": [1]}, 200, random_state=4).run()
    values = res.replicates["v"].to_numpy()
    n_valid = int(np.sum(~np.isnan(values)))
    assert 0 < n_valid < 200
    row = res.tidy().set_index("metric").loc["v"]
    assert row["n_rep"] == n_valid
    assert row["estimate"] == pytest.approx(np.nanmean(values))
    assert row["std_error"] == pytest.approx(np.nanstd(values, ddof=1) / np.sqrt(n_valid))
    assert res.replicates["count"].dtype == np.int64
    assert any("non-NaN" in note for note in res.summary().notes)


def test_reports():
    res = MonteCarloStudy(_ztest, GRID, 20, random_state=8, progress=False).run()
    glance = res.glance()
    assert list(glance.columns) == [
        "method",
        "nobs",
        "n_points",
        "n_rep",
        "backend",
        "wall_time_s",
        "random_state_used",
    ]
    assert glance.loc[0, "n_points"] == 4 and glance.loc[0, "nobs"] == 80
    assert glance.loc[0, "backend"] == "serial" and glance.loc[0, "wall_time_s"] > 0
    assert res.method == "Monte Carlo study of _ztest"
    text = res.summary().as_text()
    assert "reject" in text and "random_state_used" in text
    assert repr(res).startswith("<MonteCarloResult: Monte Carlo study of _ztest, nobs=80>")
    assert "4 design point(s) x 20 replicates" in repr(res)
    assert res.to_dict()["n_rep"] == 20 and len(res.to_dict()["tidy"]) == 12
    assert "<table" in res._repr_html_()


def test_plot():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = MonteCarloStudy(_ztest, GRID, 20, random_state=8).run()
    ax = res.plot()
    assert ax.get_xlabel() == "n"
    assert len(ax.containers) == 3 * 2  # 3 outputs x 2 values of mu
    ax = res.plot(metric="reject")
    assert len(ax.containers) == 2
    flat = MonteCarloStudy(_uniform, [{"b": "x"}, {"b": "y"}], 5, random_state=0).run()
    assert flat.plot().get_xlabel() == "design point"
    with pytest.raises(ValueError, match="`metric` must be one of"):
        res.plot(metric="nope")
    plt.close("all")


def test_study_progress_bar(capsys):
    MonteCarloStudy(_ztest, GRID, 5, random_state=0, progress=True).run()
    assert "Monte Carlo" in capsys.readouterr().err


def _not_a_mapping(random_state):
    return [1, 2]


def _array_output(random_state, n):
    return {"x": np.zeros(n)}


def _keys_change(random_state, n):
    return {"a": 1.0} if n < 3 else {"b": 1.0}


def _clashing(random_state, n):
    return {"n": 1.0}


def _raises(random_state, n):
    raise ZeroDivisionError("boom")


def test_bad_inputs():
    with pytest.raises(TypeError, match="`fn` must be callable; got 3"):
        MonteCarloStudy(3, {}, 10)
    with pytest.raises(ValueError, match=r"`n_rep` must lie in \[1, inf\]; got 0"):
        MonteCarloStudy(_uniform, {}, 0)
    with pytest.raises(TypeError, match="`n_rep` must be an integer"):
        MonteCarloStudy(_uniform, {}, 2.5)
    with pytest.raises(TypeError, match="`random_state` must be None"):
        MonteCarloStudy(_uniform, {}, 2, random_state="seed")
    with pytest.raises(ValueError, match="`backend` must be one of"):
        MonteCarloStudy(_uniform, {}, 2, backend="gpu")
    with pytest.raises(TypeError, match="`grid` must be a dict"):
        MonteCarloStudy(_uniform, "n", 2)
    with pytest.raises(ValueError, match="`grid` must hold at least one design point"):
        MonteCarloStudy(_uniform, [], 2)
    with pytest.raises(ValueError, match="`grid` must have at least one row"):
        MonteCarloStudy(_uniform, pd.DataFrame({"n": []}), 2)
    with pytest.raises(ValueError, match=r"`grid\['n'\]` must hold at least one value"):
        MonteCarloStudy(_uniform, {"n": []}, 2)
    with pytest.raises(ValueError, match="grid\\[1\\] has \\['m'\\]"):
        MonteCarloStudy(_uniform, [{"n": 1}, {"m": 2}], 2)
    with pytest.raises(TypeError, match=r"`grid\[0\]` must be a dict"):
        MonteCarloStudy(_uniform, [1, 2], 2)
    with pytest.raises(ValueError, match="got 'random_state'"):
        MonteCarloStudy(_uniform, {"random_state": [1]}, 2)


def test_bad_outputs_name_the_grid_point():
    with pytest.raises(TypeError, match=r"got \[1, 2\] at grid point \{\}, replicate 0"):
        MonteCarloStudy(_not_a_mapping, {}, 2).run()
    with pytest.raises(TypeError, match=r"output 'x' must be a scalar .* at grid point \{n=4\}"):
        MonteCarloStudy(_array_output, {"n": [4]}, 2).run()
    changed = r"\['b'\] at grid point \{n=5\}, replicate 0, but \['a'\] at grid point \{n=1\}"
    with pytest.raises(ValueError, match=changed):
        MonteCarloStudy(_keys_change, {"n": [1, 5]}, 2).run()
    with pytest.raises(ValueError, match=r"outputs \['n'\] clash"):
        MonteCarloStudy(_clashing, {"n": [1]}, 2).run()
    with pytest.raises(ZeroDivisionError, match="boom") as info:
        MonteCarloStudy(_raises, {"n": [7]}, 2).run()
    assert "raised by `fn` at grid point {n=7}, replicate 0" in info.value.__notes__
    res = MonteCarloStudy(_uniform, {}, 3).run()
    with pytest.raises(ValueError, match="needs an output named 'pvalue'; .* 'u'"):
        res.rejection_rate()


def test_bad_outputs_from_a_process_worker():
    with pytest.raises(TypeError, match=r"output 'x' must be a scalar .* at grid point \{n=4\}"):
        MonteCarloStudy(_array_output, {"n": [4]}, 2, backend="processes").run()


# ----------------------------------------------------------------------------------- dask


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def test_dask_map_keeps_input_order(dask_client):
    be = get_backend(dask_client)
    assert isinstance(be, DaskBackend) and be.n_workers == 2
    assert be.map(_slow_square, range(6), progress=True) == [0, 1, 4, 9, 16, 25]
    current = get_backend("dask")
    assert current.client is dask_client
    current.close()  # the client is the caller's: still usable
    assert current.map(_slow_square, [5]) == [25]


def test_dask_checks_recognise_clients_names_and_arrays(dask_client):
    da = pytest.importorskip("dask.array")
    assert is_dask_client(dask_client) and is_dask_backend(dask_client)
    assert is_dask_backend("dask") and not is_dask_backend("threads")
    assert not is_dask_client("dask") and not is_dask_backend(None)
    x = da.ones((6, 2), chunks=(3, 2))
    assert as_dask_array(x) is x and as_dask_array(np.ones(3)) is None
    sums = compute_delayed(np.sum, x.to_delayed().ravel(), dask_client)
    assert sums == [6.0, 6.0]


def test_dask_replicates_identical_to_serial(dask_client):
    serial = MonteCarloStudy(_ztest, GRID, 40, random_state=2024).run()
    dask = MonteCarloStudy(_ztest, GRID, 40, random_state=2024, backend=dask_client).run()
    assert dask.backend == "dask"
    pd.testing.assert_frame_equal(dask.replicates, serial.replicates)
