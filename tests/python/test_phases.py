"""Where a child's seconds go (the phases plugin) and what device memory each row needed."""

import sys

import pytest

from conftest import PLUGINS

sys.path[:0] = [str(PLUGINS)]

from zlcore_pytest._memory import DeviceMemory, SideMemory  # noqa: E402
from zlcore_pytest._phases import PhaseClock  # noqa: E402

FAST = ["--level", "core", "--warmup", "1", "--iter", "5"]
PARTS = {"imports", "collection", "compiling", "autotuning", "suite", "teardown", "measuring"}


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_nested_phases_count_once_for_the_innermost():
    t = FakeClock()
    clock = PhaseClock(t)
    t.now = 2.0                       # imports: 2
    clock.switch("suite")
    t.now = 3.0                       # suite: 1
    with clock.phase("measuring:gems"):
        t.now = 4.0                   # measuring: 1
        with clock.phase("autotuning"):
            t.now = 4.5               # autotuning: 0.5
            with clock.phase("compiling"):
                t.now = 7.5           # compiling: 3
            t.now = 8.0               # autotuning: +0.5
        t.now = 9.0                   # measuring: +1
    t.now = 9.25                      # suite: +0.25
    report = clock.as_json()
    assert report["seconds"] == {"imports": 2.0, "collection": 0.0, "suite": 1.25, "teardown": 0.0,
                                 "compiling": 3.0, "autotuning": 1.0, "measuring": 2.0}
    assert report["measuring_by_side"] == {"gems": 2.0}
    assert sum(report["seconds"].values()) == pytest.approx(report["span_s"]) == 9.25
    assert report["counts"] == {"measuring:gems": 1, "autotuning": 1, "compiling": 1}


def test_a_phase_that_raises_still_ends():
    t = FakeClock()
    clock = PhaseClock(t)
    with pytest.raises(ValueError):
        with clock.phase("compiling"):
            t.now = 1.0
            raise ValueError("compiler error")
    t.now = 3.0
    assert clock.seconds() == {"compiling": 1.0, "imports": 2.0}


def test_a_child_reports_its_phases_adding_up_to_its_session(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs or clustermm"] + FAST)
    assert run.rc == 0, run.output
    phases = run.child("phases")
    assert set(phases["seconds"]) >= PARTS, phases
    assert sum(phases["seconds"].values()) == pytest.approx(phases["span_s"], abs=0.01)
    assert set(phases["measuring_by_side"]) == {"base", "gems"}
    assert all(v > 0 for v in phases["measuring_by_side"].values())
    # clustermm's kernel compiles once, through the hook point.
    assert phases["hooked"] == ["triton.runtime.jit.JITFunction._do_compile"]
    assert phases["counts"]["compiling"] == 1
    # Nine shapes (abs: six, clustermm: three), two sides each: the timer's phase once per side.
    assert phases["counts"]["measuring:base"] == phases["counts"]["measuring:gems"] == 9


def test_compile_hooks_wrap_once_and_come_off(monkeypatch):
    import types

    from zlcore_pytest import phases

    class JITFunction:
        def _do_compile(self):
            return "kernel"

    original = JITFunction.__dict__["_do_compile"]
    jit = types.ModuleType("triton.runtime.jit")
    jit.JITFunction = JITFunction
    monkeypatch.setitem(__import__("sys").modules, "triton.runtime.jit", jit)
    phases.install()
    phases.install()  # idempotent: one wrapper
    assert JITFunction.__dict__["_do_compile"].__wrapped__ is original
    before = phases.CLOCK.counts.get("compiling", 0)
    assert JITFunction()._do_compile() == "kernel"
    assert phases.CLOCK.counts["compiling"] == before + 1
    phases.uninstall()
    assert JITFunction.__dict__["_do_compile"] is original
    # A wrapper an earlier session of a warm worker left behind (its end never
    # ran) is replaced, not wrapped again.
    JITFunction._do_compile = phases._wrap(original, "compiling")
    phases.install()
    assert JITFunction.__dict__["_do_compile"].__wrapped__ is original
    phases.uninstall()
    assert JITFunction.__dict__["_do_compile"] is original


def test_compiles_on_other_threads_leave_the_sessions_clock_alone():
    # Compiling ahead runs Triton's compiler on worker threads while the
    # session's thread waits (and clocks that wait); the wrapper must not push
    # phases onto the one clock from those threads.
    import threading

    from zlcore_pytest import phases

    wrapped = phases._wrap(lambda: "kernel", "compiling")
    before = phases.CLOCK.counts.get("compiling", 0)
    answers = []
    worker = threading.Thread(target=lambda: answers.append(wrapped()))
    worker.start()
    worker.join()
    assert answers == ["kernel"]
    assert phases.CLOCK.counts.get("compiling", 0) == before
    assert wrapped() == "kernel"
    assert phases.CLOCK.counts["compiling"] == before + 1


def test_rows_say_the_suites_peak_and_what_the_measurement_added(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs"] + FAST)
    assert run.rc == 0, run.output
    for row in run.rows():
        itemsize = 2 if row["dtype"] == "float16" else 4
        numel = eval(row["shape"])[0]
        nbytes = itemsize
        for n in numel:
            nbytes *= n
        # The suite holds at least the input; each placement clones it (and
        # the timed calls' outputs come on top), so the added peak is at least
        # one clone of the input, on each side.
        assert row["memory_suite_peak_bytes"] >= nbytes, row
        assert row["memory_added_bytes"] >= nbytes and row["memory_added_base_bytes"] >= nbytes, row
    timing = run.child("timing")["memory"]
    assert timing["suite_peak_bytes"] == max(r["memory_suite_peak_bytes"] for r in run.rows())
    assert timing["added_peak_bytes"] == max(r["memory_added_bytes"] for r in run.rows())
    setup = run.child("device_setup")
    assert setup["memory_at_start"]["device_total_bytes"] == 80 << 30
    assert setup["memory_at_end"]["allocated_bytes"] is not None


class FakeDevice:
    """A device module whose allocator counts what the test says."""

    def __init__(self):
        self.allocated = 0
        self.peak = 0

    def is_initialized(self):
        return True

    def memory_allocated(self):
        return self.allocated

    def max_memory_allocated(self):
        return self.peak

    def reset_peak_memory_stats(self):
        self.peak = self.allocated

    def take(self, n):
        self.allocated += n
        self.peak = max(self.peak, self.allocated)

    def give(self, n):
        self.allocated -= n


def test_side_memory_splits_the_suites_peak_from_the_measurements(monkeypatch):
    import types

    device = FakeDevice()
    fake_torch = types.SimpleNamespace(fakedev=device)
    monkeypatch.setitem(__import__("sys").modules, "torch", fake_torch)
    memory = DeviceMemory("fakedev")
    device.take(100)   # the suite's inputs
    device.take(50)    # a reference output
    device.give(50)
    side = SideMemory(memory)
    with side:
        device.take(300)  # placements
        device.give(300)
        device.take(20)
        device.give(20)
    assert side.suite_peak == 150
    assert side.added == 300
    # The next side's suite peak starts from the end of this one.
    with SideMemory(memory) as nxt:
        pass
    assert nxt.suite_peak == 100 and nxt.added == 0


def test_memory_is_unknown_where_the_device_is_not_initialized(monkeypatch):
    import types

    device = FakeDevice()
    device.is_initialized = lambda: False
    monkeypatch.setitem(__import__("sys").modules, "torch", types.SimpleNamespace(fakedev=device))
    memory = DeviceMemory("fakedev")
    assert memory.allocated() is None and memory.peak() is None
    assert DeviceMemory("cpu").snapshot() == {"device_total_bytes": None, "device_free_bytes": None,
                                              "allocated_bytes": None, "reserved_bytes": None}
