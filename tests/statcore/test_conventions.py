"""The shared conventions every method area builds on: iteration record, estimator base,
progress and backend helpers, renamed keywords."""

import warnings

import numpy as np
import pandas as pd
import pytest

from statcore._compat import renamed_keywords, renamed_method
from statcore._progress import progress
from statcore.base import Estimator
from statcore.distributed import SerialBackend, ThreadBackend, borrowed_backend
from statcore.exceptions import ConvergenceWarning
from statcore.results import IterationRecord, Results


def _record(**kwargs):
    base = dict(function="f", n_iter=10, maxiter=10, tol=1e-6, criterion="change")
    return IterationRecord.from_run(**{**base, **kwargs})


def test_reaching_maxiter_is_never_converged():
    with pytest.warns(ConvergenceWarning, match=r"f reached maxiter=10 .*change = 0\.1"):
        record = _record(last_value=0.1)
    assert record.status == "maxiter" and not record.converged


def test_meeting_the_criterion_on_the_last_allowed_iteration_converges():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        record = _record(last_value=1e-7)
    assert record.converged and record.status == "converged"


def test_a_collapsed_step_is_stalled_not_converged():
    with pytest.warns(ConvergenceWarning, match="stalled after 3 iterations"):
        record = _record(n_iter=3, last_value=1e-3, stalled=True)
    assert record.status == "stalled"
    with pytest.warns(ConvergenceWarning, match="stalled"):
        assert _record(n_iter=3, last_value=1e-3).status == "stalled"


def test_non_finite_criterion_is_diverged():
    with pytest.warns(ConvergenceWarning, match="diverged") as caught:
        record = _record(n_iter=4, last_value=np.inf, remedy="lower the step")
    assert record.status == "diverged"
    assert len(caught) == 1 and "lower the step" in str(caught[0].message)


def test_status_must_be_known_and_history_a_frame():
    with pytest.raises(ValueError, match="`status` must be one of"):
        IterationRecord(function="f", status="done", n_iter=1, maxiter=1, tol=1.0, criterion="c")
    with pytest.raises(TypeError, match="`history` must be a pandas DataFrame"):
        IterationRecord(
            function="f", status="converged", n_iter=1, maxiter=1, tol=1.0, criterion="c",
            history=[1, 2],
        )


def test_results_read_converged_and_n_iter_from_the_record():
    with pytest.warns(ConvergenceWarning):
        record = _record(last_value=1.0)
    res = Results(method="m", iterations=record)
    assert res.converged is False and res.n_iter == 10
    assert any("reached maxiter=10" in note for note in res.summary().notes)
    with pytest.raises(ValueError, match="contradicts the iteration record"):
        Results(method="m", iterations=record, converged=True)


class _Mean(Estimator):
    method_name = "mean"

    def __init__(self, x):
        self.x = np.asarray(x, dtype=float)

    @property
    def nobs(self):
        return len(self.x)

    @renamed_keywords(trim="trim_fraction")
    def fit(self, *, trim_fraction=0.0, scale=1.0):
        return Results(method=self.method_name, **self._result_fields())


def test_estimator_records_fit_options_and_repr():
    model = _Mean([1.0, 2.0, 3.0])
    res = model.fit(scale=2.0)
    assert dict(res.fit_options) == {"trim_fraction": 0.0, "scale": 2.0}
    assert res.model is model and res.nobs == 3
    assert repr(model) == "_Mean(nobs=3)"
    with pytest.raises(NotImplementedError, match="no formula interface"):
        _Mean.from_formula("y ~ x", pd.DataFrame())


def test_old_keyword_spelling_warns_and_is_recorded_under_the_new_name():
    with pytest.warns(FutureWarning, match="`trim=` is now spelled `trim_fraction=`"):
        res = _Mean([1.0, 2.0]).fit(trim=0.1)
    assert res.fit_options["trim_fraction"] == 0.1
    with pytest.raises(TypeError, match="got both `trim_fraction` and its old spelling"):
        _Mean([1.0]).fit(trim=0.1, trim_fraction=0.2)


def test_renamed_method_is_an_alias_that_warns():
    class Thing:
        def history(self, k=1):
            return k + 1

    renamed_method(Thing, "trace", "history")
    with pytest.warns(FutureWarning, match=r"Thing.trace\(\) is now Thing.history\(\)"):
        assert Thing().trace(k=2) == 3


def test_progress_disabled_is_silent_and_iterable(capsys):
    with progress(3, enabled=False, desc="x") as bar:
        bar.update()
        bar.set_postfix(loss=1.0)
    assert list(progress([1, 2], enabled=False)) == [1, 2]
    assert list(progress([1, 2], enabled=True, desc="shown")) == [1, 2]
    assert "shown" in capsys.readouterr().err


def test_borrowed_backend_closes_only_what_it_made():
    with borrowed_backend("threads", n_workers=1) as made:
        assert isinstance(made, ThreadBackend)
    with pytest.raises(RuntimeError):  # its executor is shut down
        made.map(abs, [1])
    with ThreadBackend(1) as mine:
        with borrowed_backend(mine) as same:
            assert same is mine
        assert mine.map(abs, [-2]) == [2]
    with borrowed_backend(None) as serial:
        assert isinstance(serial, SerialBackend)
