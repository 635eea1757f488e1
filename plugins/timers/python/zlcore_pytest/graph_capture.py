"""The `graph` timer: capture n calls of the op into a device graph, time replays.

Loaded only when the backend declares graph_capture (rules.yaml); timing
dispatches to it through _state.GRAPH. The graph class comes from ZL_GRAPH_API
("torch.cuda.CUDAGraph", "torch.musa.MUSAGraph", "torch_npu.npu.NPUGraph", ...);
streams, events and synchronize come from torch.<ZL_TORCH_DEVICE>.

Procedure per (shape, side):
  1. warm up on a side stream, outside capture, so compilation and autotuning
     never happen inside the graph; one eager estimate of the per-call time;
  2. capture n calls, n sized so a replay is long enough that the replay launch
     is noise next to it (the same unrolling triton.testing.do_bench_cudagraph
     does), re-captured once with a larger n if the first replay was too short;
  3. one discarded replay (the first replay of a fresh graph ran 2x slow on an
     H200), then windows of K timed replays with device events; each window
     leads with one more replay whose time is dropped (on the H200 the first
     replay after the host synchronized read up to 3 % slow in most windows).
     No L2 flush between calls, like do_bench_cudagraph, which is FlagGems'
     own --mode cudagraph;
  4. the pace must hold. A memory-bound op held its pace on an H200 from the
     start; a GEMM on random data did not: its pace is the 700 W power
     limit's. After 20 ms or more of idle it ran 10-16 % fast for 40-70 ms,
     stepped down by ~120 ms, then held plateaus a clock step or two apart
     with slow excursions (+5 to +14 % for ~200 ms) about once a second; a
     short rest brought its boost back (bench/gpu_settle_trace.py,
     bench/gpu_rest_trace.py). So: ZL_GRAPH_SETTLE_MS (70) of untimed load
     first, past the longest boost seen, then ZL_GRAPH_MIN_WINDOWS (3)
     windows of ~20 ms. If their medians agree within half of
     ZL_GRAPH_STABLE_PCT, one probe: the device rests ZL_GRAPH_PROBE_REST_MS
     (100) and replays a few times. Unless its fastest replay beats the
     windows' median by more than ZL_GRAPH_BOOST_PCT (2 %), the pace held and
     the latency is the median of the windows' samples.
  5. otherwise the pace is the power limit's, and a short reading of it is
     wherever the controller happened to be (a plateau 1-4 % off another, an
     excursion, the boost). The sustained procedure starts the kernel from
     the same state every time and spans a full cycle: rest ZL_GRAPH_REST_MS
     (300), then windows until ZL_GRAPH_SUSTAINED_MS (1200) of load, the
     reading being the median of the samples taken after
     ZL_GRAPH_SUSTAINED_FROM_MS (200), the step down behind them. Such a
     reading moved by up to ~0.9 % from the next one on the H200, so there
     are ZL_GRAPH_READINGS (2) of them, each after its own rest, and the
     latency is the mean of their medians (docs/graph-timer.md).
The budget (ZL_GRAPH_BUDGET_MS, 130) is the settling and the windows: the
device time per (shape, side) when the pace holds, compilation and tuning
excluded, plus the probe's rest and ~20 ms of its replays; a kernel longer
than a window still gets ZL_GRAPH_MIN_SAMPLES replays, and one whose pace is
the power limit's costs ZL_GRAPH_READINGS times the rest and
ZL_GRAPH_SUSTAINED_MS more (~3.2 s).
"""

import gc
import importlib
import math
import time
from typing import List, NamedTuple, Optional

import pytest

from . import _bench, _env, _state, _stats

DEFAULTS = {
    # Device time per (shape, side) when the pace holds: the settling, then
    # min_windows windows.
    "budget_ms": 130.0,
    # Part of the budget replayed untimed before the first window: a GEMM's
    # boost after idle lasted up to 70 ms on the H200.
    "settle_ms": 70.0,
    "samples": 10,
    "min_samples": 3,
    "min_replay_ms": 1.0,
    "max_calls": 10000,
    "estimate_calls": 5,
    # Window medians further apart than half of this (percent) were taken
    # while the device changed pace; 1 % is the run-to-run target.
    "stable_pct": 1.0,
    "min_windows": 3,
    # The probe: after this idle a power-limited kernel is back at its boost.
    # On the H200 5 ms was too short, 20 ms usually enough, 100 ms always in
    # one trace; 30 ms missed 3 of 32 power-limited sides over two runs, 50 ms
    # 2 of 26 (one found nothing behind 4096^3's load, one 2.7 %).
    "probe_rest_ms": 100.0,
    # ... 5-17 % faster than under load; a side whose pace held within
    # -0.9..+0.6 % (graph replay noise on kernels of a few us).
    "boost_pct": 2.0,
    # The sustained procedure: a rest after which the path repeated (300 ms
    # and 1.5 s led to the same plateaus, 30 ms to slower ones), then a full
    # cycle of the power controller, counted from the step down.
    "rest_ms": 300.0,
    "sustained_ms": 1200.0,
    "sustained_from_ms": 200.0,
    # Sustained readings per side, each after its own rest; the latency is the
    # mean of their medians. Readings a second apart differed by up to 0.9 %
    # on the H200; over two runs the worst pair of sides read 0.87 % apart
    # from one reading, 0.55 % from the mean of two, 0.68 % of three.
    "readings": 2,
    # A safety cap on each sustained reading's windows (1200 ms takes 60-120).
    "max_windows": 1000,
}
# The probe's replays span about this much load (at least one replay).
PROBE_MS = 20.0
# Triton's do_bench_cudagraph uses this n when the estimate reads 0 ms.
CALLS_WHEN_ESTIMATE_IS_ZERO = 1000


def resolve_dotted(name):
    """Import the longest importable module prefix of `name`, then walk attributes."""
    parts = name.split(".")
    if not name or not all(parts):
        raise ValueError(f"bad graph API name {name!r}")
    last_error = None
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError as exc:
            last_error = exc
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"cannot import any prefix of {name!r}: {last_error}")


def _one_line(exc, limit=300):
    text = str(exc).strip()
    text = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {text}"[:limit]


class GraphTimer:
    def __init__(self, api_name=None, settings=None):
        self.api_name = api_name if api_name is not None else _env.graph_api()
        self._settings = dict(DEFAULTS)
        self._settings.update(settings or _settings_from_env())
        self._graph_class = None
        self._device = None
        self._capture_ms = 0.0

    def settings(self):
        return dict(self._settings, api=self.api_name or None)

    def _resolve(self):
        if self._graph_class is None:
            if not self.api_name:
                raise _state.CaptureFailed("no graph API named (ZL_GRAPH_API is empty)")
            try:
                device = _bench.device_module()
                graph_class = resolve_dotted(self.api_name)
            except Exception as exc:
                raise _state.CaptureFailed(f"graph API {self.api_name} unavailable: {_one_line(exc)}") from exc
            self._device, self._graph_class = device, graph_class
        return self._device, self._graph_class

    # -- the procedure ----------------------------------------------------------

    def measure(self, fn, grad_to_none=None, probe=None):
        device, graph_class = self._resolve()
        started = time.perf_counter()
        stream = device.Stream()
        stream.wait_stream(device.current_stream())
        cluster = None
        try:
            with device.stream(stream):
                # Errors here are the op's own (the shape's error), so they propagate.
                fn()
                if probe is not None:
                    cluster = probe(fn)  # the second call: tuning is done, only winners launch
                else:
                    fn()
                _clear_grads(grad_to_none)
                device.synchronize()
                warmed = time.perf_counter()  # compilation and tuning are behind us
                eager_ms = self._eager_estimate(device, fn)
            try:
                timing = self._capture_and_time(device, graph_class, stream, fn, grad_to_none, eager_ms)
            except _state.CaptureFailed as failed:
                failed.cluster = cluster
                raise
        finally:
            device.current_stream().wait_stream(stream)
        timing.cluster = cluster
        timing.eager_ms = eager_ms
        # What this (shape, side) cost in wall time: the warm-up calls (any
        # compilation and tuning) apart from the measurement itself.
        timing.warmup_ms = (warmed - started) * 1000.0
        timing.measure_ms = (time.perf_counter() - warmed) * 1000.0
        return timing

    def _eager_estimate(self, device, fn):
        calls = int(self._settings["estimate_calls"])
        start = device.Event(enable_timing=True)
        end = device.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        device.synchronize()
        return start.elapsed_time(end) / calls

    def _window_ms(self):
        # The budget holds the settling and the minimum of windows (fewer,
        # down to ZL_GRAPH_MIN_WINDOWS=1, are sized alike).
        s = self._settings
        return (s["budget_ms"] - s["settle_ms"]) / max(3, s["min_windows"])

    def _calls_for(self, eager_ms):
        s = self._settings
        target_ms = max(s["min_replay_ms"], self._window_ms() / (s["samples"] + 1))
        if eager_ms <= 0:
            calls = CALLS_WHEN_ESTIMATE_IS_ZERO
        else:
            calls = int(target_ms / eager_ms)
        return int(min(max(calls, 1), s["max_calls"]))

    def _capture_and_time(self, device, graph_class, stream, fn, grad_to_none, eager_ms):
        s = self._settings
        self._capture_ms = 0.0  # host time spent capturing, part of measure_ms
        calls = self._calls_for(eager_ms)
        graph = self._capture(device, graph_class, stream, fn, grad_to_none, calls)
        try:
            first_ms = self._replay_ms(device, stream, graph)  # discarded
            if first_ms < s["min_replay_ms"] and calls < s["max_calls"]:
                # A host-bound eager estimate undersized n: capture once more, larger.
                wanted = math.ceil(calls * s["min_replay_ms"] * 1.25 / max(first_ms, 1e-6))
                more = int(min(max(wanted, calls + 1), s["max_calls"]))
                _drop(graph)
                graph = None
                graph = self._capture(device, graph_class, stream, fn, grad_to_none, more)
                calls = more
                first_ms = self._replay_ms(device, stream, graph)  # discarded
            # The discarded replay can run 2x slow; the eager estimate is an upper bound
            # too when launches are host-bound. The smaller one sizes the sample count.
            replay_ms = min(first_ms, calls * eager_ms) if eager_ms > 0 else first_ms
            window_samples = int(self._window_ms() / replay_ms) if replay_ms > 0 else s["samples"]
            count = int(min(max(window_samples, s["min_samples"]), s["samples"]))
            settle = int(math.ceil(s["settle_ms"] / replay_ms)) if replay_ms > 0 else 0
            reading = self._read_pace(device, stream, graph, calls, count, settle, replay_ms)
        finally:
            if graph is not None:
                _drop(graph)
        return _state.SideTiming(
            timer="graph",
            latency_ms=reading.latency_ms,
            samples_ms=reading.samples,
            # A sustained reading's full range is its controller's excursions.
            spread_pct=(_stats.spread_pct(reading.samples) if reading.sustained is None
                        else _stats.middle_half_pct(reading.samples)),
            calls_per_replay=calls,
            extra={"calls_per_replay": calls, "discarded_replay_ms": first_ms, "windows": len(reading.pace),
                   "settled": reading.settled,
                   "sustained": reading.sustained, "capture_ms": self._capture_ms, "pace": reading.pace,
                   "after_rest_pct": None if reading.after_rest_pct is None else round(reading.after_rest_pct, 2),
                   "readings": reading.readings},
        )

    def _read_pace(self, device, stream, graph, calls, count, settle, replay_ms):
        """Steps 4 and 5: the median of the held pace's samples, or the mean
        of the sustained readings' medians."""
        s = self._settings
        windows, _ = self._windows_until(device, stream, graph, calls, count, settle * replay_ms, settle,
                                         lambda w, load: len(w) >= s["min_windows"])
        pace = _pace(windows)
        medians = [m for _, m in pace]
        samples = [x for _, w in windows for x in w]
        faster = None
        if _stats.range_pct(medians) <= s["stable_pct"] / 2:
            held = _stats.median(samples)
            faster = self._faster_after_rest_pct(device, stream, graph, calls, held, replay_ms)
            if faster <= s["boost_pct"]:
                return _Reading(held, samples, pace, None, True, faster)
            why = f"ran {faster:.1f} % faster after a {s['probe_rest_ms']:g} ms rest"
        else:
            why = f"window medians {_stats.range_pct(medians):.1f} % apart"
        # Step 5, `readings` times. Load counts from the end of each rest; the
        # pace entries too.
        readings, counted_all, complete = [], [], True
        for _ in range(s["readings"]):
            _rest(device, s["rest_ms"])
            windows, load = self._windows_until(device, stream, graph, calls, count, 0.0, 0,
                                                lambda w, load: load >= s["sustained_ms"] or len(w) >= s["max_windows"])
            counted = [x for start, w in windows if start >= s["sustained_from_ms"] for x in w]
            # Cut short by the window cap: the last window stands in, and the
            # side counts as unsettled.
            complete = complete and bool(counted) and load >= s["sustained_ms"]
            counted = counted or windows[-1][1]
            readings.append(_stats.median(counted))
            counted_all += counted
            pace += _pace(windows)
        return _Reading(sum(readings) / len(readings), counted_all, pace, why, complete, faster, readings)

    def _windows_until(self, device, stream, graph, calls, count, load_ms, settle, done):
        """Windows of `count` samples, the first after `settle` untimed replays,
        until done(windows, load_ms). Returns the windows, each (device load
        before its samples, ms per call of each sample), and the load after them."""
        windows = []
        while not windows or not done(windows, load_ms):
            lead, samples = self._window(device, stream, graph, calls, count, 0 if windows else settle)
            windows.append((load_ms + lead, [ms / calls for ms in samples]))
            load_ms += lead + sum(samples)
        return windows, load_ms

    def _faster_after_rest_pct(self, device, stream, graph, calls, held_ms, replay_ms):
        """How much faster than `held_ms` a few replays run after a short rest:
        a power-limited kernel is back at its boost, a steady one is not."""
        s = self._settings
        _rest(device, s["probe_rest_ms"])
        # The fastest replay, the first included: a boost after a rest that
        # short may last only a few replays. Up to four, no more than ~20 ms
        # of them: the boost lasted 40-70 ms, and a long kernel's probe costs
        # its replays.
        replays = int(min(s["min_samples"] + 1, max(1, math.ceil(PROBE_MS / replay_ms)))) if replay_ms > 0 else 1
        probe = min(self._timed_replays(device, stream, graph, replays, 0)) / calls
        return (held_ms - probe) / held_ms * 100.0 if held_ms > 0 else 0.0

    def _window(self, device, stream, graph, calls, count, settle):
        """The lead replay's time and the `count` samples' times (ms per replay)."""
        times = self._timed_replays(device, stream, graph, count + 1, settle)
        return times[0], times[1:]

    def _capture(self, device, graph_class, stream, fn, grad_to_none, calls):
        device.synchronize()
        # No collector-driven frees mid-capture. torch.cuda.graph runs a full
        # gc.collect() for this, whose cost grows with the heap torch and
        # FlagGems leave; pausing the collector for the capture is enough.
        collecting = gc.isenabled()
        gc.disable()
        started = time.perf_counter()
        try:
            return self._capture_paused(device, graph_class, stream, fn, grad_to_none, calls)
        finally:
            self._capture_ms += (time.perf_counter() - started) * 1000.0
            if collecting:
                gc.enable()

    def _capture_paused(self, device, graph_class, stream, fn, grad_to_none, calls):
        graph = graph_class()
        capturing = False
        try:
            with device.stream(stream):
                graph.capture_begin()
                capturing = True
                for _ in range(calls):
                    _clear_grads(grad_to_none)
                    fn()
                capturing = False
                graph.capture_end()
        except Exception as exc:
            if capturing:
                try:
                    with device.stream(stream):
                        graph.capture_end()
                except Exception:
                    pass  # an invalidated capture reports its error here too; the first one is kept
            _drop(graph)
            _sync_quietly(device)
            raise _state.CaptureFailed(f"graph capture of {calls} calls failed: {_one_line(exc)}") from exc
        return graph

    def _timed_replays(self, device, stream, graph, count, settle):
        """Replays back to back with an event between each: no host gap, so the
        device stays under the same load (and clocks) for every sample."""
        try:
            with device.stream(stream):
                for _ in range(settle):
                    graph.replay()
                events = [device.Event(enable_timing=True) for _ in range(count + 1)]
                events[0].record()
                for i in range(count):
                    graph.replay()
                    events[i + 1].record()
            events[-1].synchronize()
            return [float(events[i].elapsed_time(events[i + 1])) for i in range(count)]
        except Exception as exc:
            _sync_quietly(device)
            raise _state.CaptureFailed(f"graph replay failed: {_one_line(exc)}") from exc

    def _replay_ms(self, device, stream, graph):
        try:
            with device.stream(stream):
                start = device.Event(enable_timing=True)
                end = device.Event(enable_timing=True)
                start.record()
                graph.replay()
                end.record()
            end.synchronize()
            return float(start.elapsed_time(end))
        except Exception as exc:
            _sync_quietly(device)
            raise _state.CaptureFailed(f"graph replay failed: {_one_line(exc)}") from exc


class _Reading(NamedTuple):
    """What step 4 or 5 read."""

    latency_ms: float
    samples: List[float]
    pace: List[List[float]]  # per window: load before its samples, its median
    sustained: Optional[str]  # why the sustained procedure ran; None: the pace held
    settled: bool  # False: the window cap cut a sustained reading short
    after_rest_pct: Optional[float]  # the probe's finding; None: no probe, the pace moved
    readings: Optional[List[float]] = None  # each sustained reading's median; None: the pace held


def _pace(windows):
    return [[round(start, 1), float(f"{_stats.median(w):.6g}")] for start, w in windows]


def _rest(device, ms):
    """Leave the device idle for `ms`: nothing queued, then a host sleep."""
    device.synchronize()
    time.sleep(ms / 1000.0)


def _clear_grads(grad_to_none):
    # Same per-call reset as do_bench_cudagraph, so backward benches capture alike.
    if grad_to_none:
        for x in grad_to_none:
            x.grad = None


def _drop(graph):
    reset = getattr(graph, "reset", None)
    if reset is not None:
        try:
            reset()
        except Exception:
            pass


def _sync_quietly(device):
    try:
        device.synchronize()
    except Exception:
        pass


def _settings_from_env():
    return {
        "budget_ms": _env.positive_float("ZL_GRAPH_BUDGET_MS", DEFAULTS["budget_ms"]),
        "settle_ms": _env.non_negative_float("ZL_GRAPH_SETTLE_MS", DEFAULTS["settle_ms"]),
        "samples": _env.positive_int("ZL_GRAPH_SAMPLES", DEFAULTS["samples"]),
        "min_samples": _env.positive_int("ZL_GRAPH_MIN_SAMPLES", DEFAULTS["min_samples"]),
        "min_replay_ms": _env.positive_float("ZL_GRAPH_MIN_REPLAY_MS", DEFAULTS["min_replay_ms"]),
        "max_calls": _env.positive_int("ZL_GRAPH_MAX_CALLS", DEFAULTS["max_calls"]),
        "stable_pct": _env.positive_float("ZL_GRAPH_STABLE_PCT", DEFAULTS["stable_pct"]),
        "min_windows": _env.positive_int("ZL_GRAPH_MIN_WINDOWS", DEFAULTS["min_windows"]),
        "probe_rest_ms": _env.non_negative_float("ZL_GRAPH_PROBE_REST_MS", DEFAULTS["probe_rest_ms"]),
        "boost_pct": _env.positive_float("ZL_GRAPH_BOOST_PCT", DEFAULTS["boost_pct"]),
        "rest_ms": _env.non_negative_float("ZL_GRAPH_REST_MS", DEFAULTS["rest_ms"]),
        "sustained_ms": _env.positive_float("ZL_GRAPH_SUSTAINED_MS", DEFAULTS["sustained_ms"]),
        "sustained_from_ms": _env.non_negative_float("ZL_GRAPH_SUSTAINED_FROM_MS", DEFAULTS["sustained_from_ms"]),
        "max_windows": _env.positive_int("ZL_GRAPH_MAX_WINDOWS", DEFAULTS["max_windows"]),
        "readings": _env.positive_int("ZL_GRAPH_READINGS", DEFAULTS["readings"]),
    }


def _check_settings(settings):
    """The settings' relations a reading needs; a message naming the variables, or None."""
    if settings["budget_ms"] <= settings["settle_ms"]:
        return (f"ZL_GRAPH_BUDGET_MS ({settings['budget_ms']:g}) must exceed ZL_GRAPH_SETTLE_MS "
                f"({settings['settle_ms']:g}): the budget holds the settling and the windows")
    if settings["sustained_ms"] <= settings["sustained_from_ms"]:
        return (f"ZL_GRAPH_SUSTAINED_MS ({settings['sustained_ms']:g}) must exceed ZL_GRAPH_SUSTAINED_FROM_MS "
                f"({settings['sustained_from_ms']:g}): no sample would count")
    return None


def pytest_configure(config):
    timer = GraphTimer()
    problem = _check_settings(timer.settings())
    if problem:
        raise pytest.UsageError(f"zlcore graph timer: {problem}")
    _state.GRAPH = timer


def pytest_unconfigure(config):
    _state.GRAPH = None
