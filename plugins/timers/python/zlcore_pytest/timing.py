"""Replaces the suite's Benchmark.get_latency with zlcore's planned timer.

Patched in pytest_sessionstart, not at import: FlagGems' base.py copies Config
from its conftest when first imported, and Config only exists after the
conftest's pytest_configure. triton.testing.do_bench is never patched: Triton's
autotuner looks it up there, so a global patch would become the tuning timer.

Timer per FlagGems mode:
  kernel, cudagraph  -> ZL_TIMER (a name rules.yaml gives; the timers package
                        maps it to its module), with a per-shape fallback to
                        ZL_TIMER_FALLBACK where the graph timer cannot measure;
  operator, wrapper  -> FlagGems' own get_latency (they measure host overhead on
                        purpose); the row's timer is the mode name.
The settings are parsed once, at configure: a bad one stops the run (exit 4).
"""

import gc
import os
import time

import pytest

from . import _bench, _child, _env, _heap, _phases, _state
from ._memory import DeviceMemory, SideMemory, SuiteOutOfMemory, out_of_memory
from . import timers as registry
from .timers import sticky
from .timers.base import CaptureFailed, SideCall, SideThrottled, SideTiming, one_line
from .timers.placement import MemoryBudget, Placer, clone_inputs, memory_for
from .timers.settings import SettingsError, TimerSettings

GOVERNED_MODES = ("kernel", "cudagraph")
_SESSION = pytest.StashKey()


def _safe(fn):
    try:
        return fn()
    except Exception:
        return None


class _Builder:
    """SideCall.build for one side: FlagGems' callable on given arguments.

    A backward bench's grad output is drawn once and cloned into each later
    placement, so the suite's random stream advances as it would without them.
    """

    def __init__(self, bench, op):
        self.bench = bench
        self.op = op
        self.grad_output = None

    def __call__(self, args, kwargs):
        given = None
        if self.grad_output is not None:
            (given,), _ = clone_inputs((self.grad_output,), {})
        fn, grad_to_none, grad_output = _bench.build_fn(self.bench, self.op, args, kwargs, grad_output=given)
        if self.grad_output is None:
            self.grad_output = grad_output
        return fn, grad_to_none


class HarnessOutOfMemory(RuntimeError):
    """zlcore's measurement of a side ran out of device memory, also lean: the row's error, not the op's."""


class Timing:
    """One session's timing: the plan, the timers, the patch and the report."""

    def __init__(self, config):
        self.config = config
        try:
            self.settings = TimerSettings.from_env()
            sticky.check(self.settings.graph.sustained_rows)
        except SettingsError as exc:
            raise pytest.UsageError(f"zlcore timing: {exc}") from None
        self.memory = DeviceMemory(_env.torch_device())
        self.placer = Placer(self.settings.placement, memory_for(_env.torch_device()),
                             MemoryBudget(self.memory, self.settings.placement.memory_pct))
        self.sides_lean = 0  # sides measured on the suite's own inputs (placement.py, "Memory")
        self.memory_peaks = {}  # the rows' largest figures, for the identity's memory.*
        self.planned = _env.planned_timer() or None
        self.fallback = _env.fallback_timer()
        self.effective = None
        self.reason = None
        self.modules = {}
        self.timers = {}
        self.patched = None
        self.patch_error = None
        self._original = None
        self._patched_class = None
        self._builder = None
        self.sides_by_timer = {}
        self.fallback_shapes = []
        # Graph-timed sides read by the sustained procedure (a power-limited
        # pace), and those among them the window cap cut short.
        self.sides_extended = 0
        self.sides_unsettled = 0
        # Failed captures after which the stream still read as capturing.
        self.captures_left_open = 0
        # Where a run's time goes: inside the timer (every side) against the
        # whole session (collection and the suite's own per-shape work too).
        self._began = time.perf_counter()
        self.measuring_s = 0.0
        self.compile_only = _env.compile_only()
        self.sides_compiled = 0  # sides a compile-only run called once
        self._resolve_plan()

    # -- plan ----------------------------------------------------------------------

    def _resolve_plan(self):
        env = os.environ
        for name in filter(None, (self.planned, self.fallback)):
            try:
                registry.module_name(name, env)
            except registry.UnknownTimer as exc:
                var = "ZL_TIMER" if name == self.planned else "ZL_TIMER_FALLBACK"
                raise pytest.UsageError(f"zlcore timing: {var}={name!r}: {exc}") from None
        if not self.planned:
            # Outside zlcore: the closest timer to FlagGems' own kernel mode.
            self.effective = "direct" if _env.uses_torch_device() else "host"
            self.reason = "ZL_TIMER unset"
        else:
            self.effective = self.planned
            try:
                self.timer(self.planned)
            except ImportError as exc:
                self.effective = self.fallback if self.fallback and self.fallback != self.planned else "direct"
                self.reason = f"{self.planned} timer unavailable: {exc}"
        # A timer that cannot be created is a usage error now rather than mid-run.
        self.timer(self.effective)
        if self.fallback and self.fallback != self.effective:
            try:
                self.timer(self.fallback)
            except ImportError as exc:
                raise pytest.UsageError(f"zlcore timing: fallback {exc}") from None

    def timer(self, name):
        """The timer object for `name`, created on first use."""
        timer = self.timers.get(name)
        if timer is None:
            module = registry.load(name, os.environ)
            try:
                timer = module.create(self.settings, self.placer)
            except SettingsError as exc:
                raise pytest.UsageError(f"zlcore timing: {exc}") from None
            self.modules[name] = module.__name__
            self.timers[name] = timer
        return timer

    # -- report --------------------------------------------------------------------

    def settings_report(self):
        s = self.settings
        out = {
            "direct_repeat": s.direct.repeat,
            "direct_budget_ms": s.direct.budget_ms,
            "host_repeat": s.host.repeat,
            "host_loops": s.host.loops,
            "host_clock": s.host.clock,
            "warmup_ms": _safe(_bench.warmup_ms),
            "repetition_ms": _safe(_bench.repetition_ms),
            "placement": {"seed": s.placement.seed, "max_shift_mb": s.placement.max_shift_mb,
                          "memory_pct": s.placement.memory_pct},
        }
        for name, timer in sorted(self.timers.items()):
            own = timer.settings_report()
            if own is not None:
                out[name] = own
        return out

    def clock_check_report(self):
        graph = self.timers.get("graph")
        report = getattr(graph, "clock_check_report", None)
        if report is not None:
            return report()
        return {"setting": self.settings.graph.clock_check, "active": False,
                "why_off": "the graph timer is not in this run's plan", "sides_checked": 0, "sides_unchecked": 0,
                "windows_dropped": 0, "sides_throttled": 0}

    def as_json(self):
        return {
            "schema": 1,
            "planned_timer": self.planned,
            "timer_effective": self.effective,
            "timer_reason": self.reason,
            "fallback_timer": self.fallback or None,
            "timer_modules": dict(sorted(self.modules.items())),
            "mode": _safe(_bench.mode),
            "governed": _safe(_bench.mode) in GOVERNED_MODES,
            "bench_package": _env.bench_package(),
            "patched": self.patched,
            "patch_error": self.patch_error,
            "graph_api": _env.graph_api() or None,
            "cluster_fix_loaded": self.config.stash.get(_state.CLUSTER, None) is not None,
            "settings": self.settings_report(),
            # The L2 policy the timers ran with (ZL_L2), as the child read
            # it; the identity's caliber field is timer.l2, the core's.
            "l2": self.settings.l2.policy,
            # The graph timer's clock check: its setting, whether it was
            # active and why not, what it dropped (the identity's timer.clock_check).
            "clock_check": self.clock_check_report(),
            "sides_by_timer": dict(sorted(self.sides_by_timer.items())),
            "fallback_shapes": list(self.fallback_shapes),
            "sides_extended": self.sides_extended,
            "sides_unsettled": self.sides_unsettled,
            "captures_left_open": self.captures_left_open,
            "sides_lean": self.sides_lean,
            "compile_only": self.compile_only,
            "sides_compiled": self.sides_compiled,
            "seconds_measuring": round(self.measuring_s, 4),
            "seconds_in_session": round(time.perf_counter() - self._began, 4),
            "memory": dict(sorted(self.memory_peaks.items())),
        }

    def write_report(self):
        return _child.write_json("timing", self.as_json())

    # -- patching ------------------------------------------------------------------

    def install(self):
        if self._patched_class is not None:
            return True
        try:
            cls = _bench.benchmark_class(_bench.base_module())
            original = cls.__dict__["get_latency"]
        except Exception as exc:
            self.patch_error = f"{type(exc).__name__}: {exc}"
            return False
        timing = self

        def get_latency(bench, op, *args, **kwargs):
            return timing.get_latency(bench, op, args, kwargs)

        self._original = original
        cls.get_latency = get_latency
        self._patched_class = cls
        self.patched = f"{_bench.base_module_name()}.Benchmark.get_latency"
        self.patch_error = None
        return True

    def uninstall(self):
        if self._patched_class is not None:
            self._patched_class.get_latency = self._original
        self._original = None
        self._patched_class = None

    def get_latency(self, bench, op, args, kwargs):
        if self.compile_only:
            return self._compile_side(bench, op, args, kwargs)
        tracker = _state.tracker(self.config)
        row, side = tracker.side_for(bench, op, args, kwargs)
        started = time.perf_counter()
        memory = SideMemory(self.memory)
        try:
            with memory, _phases.measuring(side):
                timing = self._measure_side(bench, op, args, kwargs, row, side)
        except HarnessOutOfMemory as exc:
            # zlcore's measurement ran out of memory even lean: the row says
            # so, and the op goes on to its next shape.
            tracker.side_failed(row, side, exc)
            return float("nan")
        except SideThrottled as exc:
            # No clean window (timers/clock_check.py): the side has no number,
            # the row says why, and the op goes on to its next shape.
            tracker.side_throttled(row, side, exc)
            return float("nan")
        except Exception as exc:
            tracker.side_failed(row, side, exc)
            raise
        finally:
            elapsed = time.perf_counter() - started
            self.measuring_s += elapsed
            tracker.side_memory(row, side, memory.suite_peak, memory.added)
            self._note_peak("suite_peak_bytes", memory.suite_peak)
            self._note_peak("added_peak_base_bytes" if side == "base" else "added_peak_bytes", memory.added)
        if timing.measure_ms is None:
            timing.measure_ms = elapsed * 1000.0
        tracker.side_done(row, side, timing)
        self.sides_by_timer[timing.timer] = self.sides_by_timer.get(timing.timer, 0) + 1
        self.sides_extended += 1 if timing.extra.get("sustained") else 0
        self.sides_unsettled += 1 if timing.extra.get("settled") is False else 0
        profiler = self.config.stash.get(_state.PROFILE, None)
        if profiler is not None:  # after the measurement, outside its windows (profile.py)
            builder = self._builder if self._builder is not None else _Builder(bench, op)
            profiler.after_side(row, side, lambda: builder(args, kwargs))
        return timing.latency_ms

    def _compile_side(self, bench, op, args, kwargs):
        """`zlcore run --compile-only`: the side runs once, so that its kernels
        compile into the caches (a batch's compile-ahead pass, docs/batch.md);
        nothing is timed and no row is written. The latency returned is a
        placeholder the suite may divide by."""
        started = time.perf_counter()
        try:
            with _phases.measuring("gems"):
                fn, _, _ = _bench.build_fn(bench, op, args, kwargs)
                fn()
                if _env.uses_torch_device():
                    _bench.device_module().synchronize()
        finally:
            self.measuring_s += time.perf_counter() - started
        self.sides_compiled += 1
        return 1.0

    def _note_peak(self, name, value):
        if value is not None:
            self.memory_peaks[name] = max(value, self.memory_peaks.get(name, 0))

    # -- measuring -----------------------------------------------------------------

    def _measure_side(self, bench, op, args, kwargs, row, side):
        self._builder = None
        mode = _bench.mode()
        if mode not in GOVERNED_MODES:
            latency = float(self._original(bench, op, *args, **kwargs))
            return SideTiming.over_placements(mode, [latency])

        context = {
            "op": getattr(bench, "op_name", None),
            "dtype": row.dtype,
            "shape": _bench.shape_key(row.shape_detail),
            "side": side,
        }
        cluster = self.config.stash.get(_state.CLUSTER, None)
        probe = (lambda f: cluster.probe(f, context)) if cluster is not None else None
        call = SideCall(tuple(args), dict(kwargs), _Builder(bench, op), context, probe)
        self._builder = call.build  # the profile pass reuses its grad output (profile.py)

        self.placer.begin_side()
        why = None
        try:
            timing = self._measure_planned(call, cluster, context)
        except Exception as exc:
            if isinstance(exc, SuiteOutOfMemory) or not out_of_memory(exc):
                raise
            why = f"out of memory in zlcore's measurement ({one_line(exc)})"
            del exc  # its traceback holds the placement's copies
        if why is not None:
            timing = self._measure_lean(call, why)
        return self._noted(timing)

    def _measure_planned(self, call, cluster, context):
        name = self.effective
        try:
            timing = self.timer(name).measure(call)
            if cluster is not None and timing.cluster:
                cluster.check(timing)
        except CaptureFailed as failed:
            return self._fall_back(call, failed, cluster, context)
        if self.planned and name != self.planned:
            timing.fallback_reason = self.reason
        return timing

    def _measure_lean(self, call, why):
        """The side again with the least memory the method allows: no copies,
        no shift, and no graph (whose pool holds the calls' outputs) where a
        fallback timer is planned."""
        gc.collect()
        self.memory.empty_cache()
        self.placer.begin_side(lean_because=why)
        name = self.fallback or self.effective
        call.probe = None
        try:
            timing = self.timer(name).measure(call)
        except Exception as exc:
            if out_of_memory(exc) and not isinstance(exc, SuiteOutOfMemory):
                raise HarnessOutOfMemory(f"{why}; again lean, on the suite's own inputs: {one_line(exc)}") from None
            raise
        timing.fallback_reason = why if name == self.effective else f"{why}: {name} on the suite's own inputs"
        return timing

    def _noted(self, timing):
        """A side measured on the suite's own inputs is one placement, however
        often it was read: its row keeps one value, and says why."""
        note = self.placer.note
        if note is None:
            return timing
        self.sides_lean += 1
        timing.extra["placement_note"] = note
        timing.placements_ms = [timing.latency_ms]
        timing.spread_pct = 0.0
        return timing

    def _fall_back(self, call, failed, cluster, context):
        reason = failed.reason
        if failed.left_open:
            self.captures_left_open += 1
        if cluster is not None:
            reason = cluster.explain(reason, failed.cluster)
        fallback = self.fallback if self.fallback and self.fallback != self.effective else ""
        if not fallback:
            raise RuntimeError(f"{self.effective} timer failed and no fallback timer is planned: {reason}") from failed
        call.probe = None  # the probe ran in the failed attempt
        call.warm_call_ms = failed.eager_ms
        try:
            timing = self.timer(fallback).measure(call)
        except Exception as exc:
            raise RuntimeError(f"{fallback} timer failed ({one_line(exc)}) after: {reason}") from exc
        timing.cluster = failed.cluster
        timing.fallback_reason = reason
        self.fallback_shapes.append(dict(context, reason=reason, timer=fallback))
        _safe(self.write_report)  # keep the list on disk in case the child dies later
        return timing


# -- pytest hooks ----------------------------------------------------------------


def pytest_configure(config):
    config.stash[_SESSION] = Timing(config)
    _state.tracker(config)


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    timing = session.config.stash[_SESSION]
    timing.install()  # may fail before the suite is importable; retried after collection
    _safe(timing.write_report)


def pytest_collection_finish(session):
    _heap.freeze_imports()  # the suite's per-shape gc.collect() then skips the imports
    timing = session.config.stash[_SESSION]
    if timing._patched_class is None:
        timing.install()
    _safe(timing.write_report)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    timing = session.config.stash[_SESSION]
    timing.uninstall()
    timing.write_report()
