"""`--profile`: the profile pass after each side's measurement, its kernels in the rows, its trace kept."""

import json
import os
import sys
import types

import pytest

from conftest import ALL_PLUGINS, PLUGINS, STUBS

sys.path[:0] = [str(PLUGINS)]

from zlcore_pytest import profile, torch_profile  # noqa: E402

FAST = ["--level", "core", "--warmup", "1", "--iter", "5"]

# A timer and a profiler that write what they do, in order, to one log.
ORDER_TIMER = """
import os
from zlcore_pytest.timers.base import SideTiming
NAME = 'logged'
class Logged:
    name = NAME
    def settings_report(self):
        return None
    def measure(self, call):
        with open(os.environ['ORDER_LOG'], 'a') as f:
            f.write('measure ' + call.context['side'] + '\\n')
        fn, _ = call.build(call.args, call.kwargs)
        fn()
        return SideTiming.over_placements(NAME, [1.0])
def create(settings, placer):
    return Logged()
"""
FAKE_PROFILER = """
import json
import os
NAME = 'fake'
def profile(fn, calls, trace_path, grad_to_none):
    if os.environ.get('FAKE_PROFILE_FAILS'):
        raise RuntimeError('the profiler is busy')
    side = 'gems' if trace_path.endswith('-gems.json.tmp') else 'base'
    with open(os.environ['ORDER_LOG'], 'a') as f:
        f.write('profile ' + side + '\\n')
    for _ in range(calls):
        fn()
    with open(trace_path, 'w') as f:
        json.dump({'traceEvents': [], 'side': side}, f)
    launch = [(side + '_main', 30.0), (side + '_tail', 10.0)]
    return launch * calls
"""


@pytest.fixture
def lib(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "logged_timer.py").write_text(ORDER_TIMER)
    (lib / "fake_profiler.py").write_text(FAKE_PROFILER)
    return lib


def profiled(run_child, lib, tmp_path, plugins=ALL_PLUGINS + ["profile"], **env):
    settings = dict(ZL_TIMER="logged", ZL_TIMER_MODULE="logged_timer", ZL_TIMER_FALLBACK="",
                    ZL_PROFILER="fake", ZL_PROFILER_MODULE="fake_profiler", ORDER_LOG=str(tmp_path / "order.log"),
                    PYTHONPATH=os.pathsep.join([str(PLUGINS), str(lib), str(STUBS)]))
    settings.update(env)
    return run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST, plugins=plugins,
                     **settings)


def test_the_profile_pass_follows_each_sides_measurement_never_inside_it(run_child, lib, tmp_path):
    run = profiled(run_child, lib, tmp_path)
    assert run.rc == 0, run.output
    shapes = len(run.rows())
    assert shapes > 1
    log = (tmp_path / "order.log").read_text().splitlines()
    assert log == ["measure base", "profile base", "measure gems", "profile gems"] * shapes
    # The pass's time is its own phase, not the measurement's.
    phases = run.child("phases")
    assert phases["counts"]["profiling"] == 2 * shapes
    assert phases["counts"]["measuring:gems"] == phases["counts"]["measuring:base"] == shapes


def test_rows_carry_each_sides_top_kernels_and_the_trace_kept_in_the_run_directory(run_child, lib, tmp_path):
    run = profiled(run_child, lib, tmp_path)
    assert run.rc == 0, run.output
    traces = set()
    for row in run.rows():
        assert row["error"] is None and row["latency_ms"] == 1.0
        assert row["kernels"] == [{"name": "gems_main", "share": 0.75, "us": 30.0},
                                  {"name": "gems_tail", "share": 0.25, "us": 10.0}]
        assert row["kernels_base"] == [{"name": "base_main", "share": 0.75, "us": 30.0},
                                       {"name": "base_tail", "share": 0.25, "us": 10.0}]
        for key, side in (("profile_trace", "gems"), ("profile_trace_base", "base")):
            trace = row[key]
            assert trace.startswith("profile/abs-float16-") and trace.endswith(f"-{side}.json")
            assert json.loads((run.run_dir / trace).read_text())["side"] == side
            traces.add(trace)
    assert len(traces) == 2 * len(run.rows())  # one file per (shape, side)
    assert sorted(p.name for p in (run.run_dir / "profile").iterdir()) == sorted(t[8:] for t in traces)


def test_a_failed_profile_pass_is_the_rows_note_and_the_numbers_stand(run_child, lib, tmp_path):
    run = profiled(run_child, lib, tmp_path, FAKE_PROFILE_FAILS="1")
    assert run.rc == 0, run.output
    for row in run.rows():
        assert row["error"] is None and row["latency_ms"] == 1.0
        assert row["profile_error"] == row["profile_error_base"] == "RuntimeError: the profiler is busy"
        assert row["kernels"] is None and row["profile_trace"] is None
    assert not list((run.run_dir / "profile").iterdir())  # no half trace left


@pytest.mark.parametrize("plugins, env", [(ALL_PLUGINS, {}), (ALL_PLUGINS + ["profile"], {"ZL_PROFILER_MODULE": ""})])
def test_an_unprofiled_run_has_rows_without_profile_keys(run_child, lib, tmp_path, plugins, env):
    run = profiled(run_child, lib, tmp_path, plugins=plugins, **env)
    assert run.rc == 0, run.output
    assert run.rows() and not any(k.startswith(("kernels", "profile")) for r in run.rows() for k in r)
    assert (tmp_path / "order.log").read_text().splitlines()[:2] == ["measure base", "measure gems"]
    assert not (run.run_dir / "profile").exists()


def test_a_profiler_module_that_cannot_be_imported_stops_the_run(run_child, lib, tmp_path):
    run = profiled(run_child, lib, tmp_path, ZL_PROFILER_MODULE="no_such_profiler")
    assert run.rc == 4, run.output
    assert "zlcore profile: profiler 'fake': cannot import no_such_profiler" in run.output


def test_a_profiler_that_cannot_run_here_stops_the_run_before_it_measures(run_child, lib, tmp_path):
    (lib / "unusable_profiler.py").write_text(
        "def check():\n    raise ImportError('no profiler library')\n"
        "def profile(fn, calls, trace_path, grad_to_none):\n    raise AssertionError('never called')\n")
    run = profiled(run_child, lib, tmp_path, ZL_PROFILER_MODULE="unusable_profiler")
    assert run.rc == 4, run.output
    assert "zlcore profile: profiler 'fake' cannot run here: ImportError: no profiler library" in run.output
    assert not (tmp_path / "order.log").exists()  # nothing measured


def test_the_torch_profiler_needs_torch_and_its_profiler(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.profiler", None)  # what an import finds where it is absent
    with pytest.raises(ImportError):
        torch_profile.check()


def test_top_kernels_sums_launches_per_name_and_keeps_the_costliest():
    launches = [("a", 0.5), ("b", 6.0), ("a", 0.5), ("c", 3.0)] * 2  # two calls of the op
    assert profile.top_kernels(launches, calls=2, top=2) == [{"name": "b", "share": 0.6, "us": 6.0},
                                                             {"name": "c", "share": 0.3, "us": 3.0}]
    assert profile.top_kernels([], calls=5) == []


def _event(name, kind, self_cpu=0.0, elapsed=0.0):
    return types.SimpleNamespace(name=name, device_type=f"DeviceType.{kind}", self_cpu_time_total=self_cpu,
                                 time_range=types.SimpleNamespace(elapsed_us=lambda: elapsed))


def test_torch_profiler_events_count_device_kernels_or_host_operators_by_activity():
    events = [_event("aten::abs", "CPU", self_cpu=5.0), _event("abs_kernel", "CUDA", elapsed=3.0)]
    assert torch_profile.launches(events, "cuda") == [("abs_kernel", 3.0)]
    assert torch_profile.launches(events, "cpu") == [("aten::abs", 5.0)]
