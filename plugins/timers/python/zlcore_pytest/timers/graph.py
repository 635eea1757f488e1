"""The `graph` timer: capture calls of the op into a device graph, time replays, on several placements.

For backends that declare graph_capture (rules.yaml). The graph class comes
from ZL_GRAPH_API ("torch.cuda.CUDAGraph", "torch.musa.MUSAGraph",
"torch_npu.npu.NPUGraph", ...); streams, events and synchronize from
torch.<ZL_TORCH_DEVICE>. This module joins the pieces: the warm-up on the
suite's own inputs (compilation and tuning happen there, never inside a
graph), the mechanism (graph_device.py), the placements (placement.py) and
the policy (graph_policy.py), and turns the policy's reading into a row's
SideTiming.
"""

import contextlib
import importlib
import time

from .. import _bench, _device_state, _env
from .._memory import SuiteOutOfMemory, out_of_memory
from . import graph_policy, l2_clear, sticky
from .base import CaptureFailed, SideThrottled, SideTiming, clear_grads, one_line
from .clock_check import ClockSides
from .graph_device import GraphDevice, PrivatePools
from .settings import SettingsError

NAME = "graph"
# A first eager call whose host part alone took this long ends the estimate
# there: the side is bound by its host (a Python or NumPy reference of seconds a
# call), and four more calls would only multiply its cost.
ESTIMATE_ENOUGH_MS = 50.0


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


def tested_side(context):
    """Whether compare tests this side's placements: the op's own side does;
    the torch side ("base") is the row's control, read for its latency only."""
    return context.get("side") != "base"


class _Placed:
    """A placement's callable; emptied when the placement ends, so its clones can go."""

    def __init__(self, index, fn, grad_to_none):
        self.index = index
        self.fn = fn
        self.grad_to_none = grad_to_none


class GraphTimer:
    name = NAME

    def __init__(self, settings, placer):
        self.settings = settings.graph
        self.l2 = settings.l2
        self.placer = placer
        self._resolved = None
        self._stream = None  # one side stream for every side (graph_device.py says why)
        self.sustained_rows = sticky.SustainedRows(self.settings.sustained_rows)
        self.clock_sides = ClockSides(self.settings.clock_check)
        if self.settings.clock_check == "on" and self._state_reader() is None:
            raise SettingsError("ZL_GRAPH_CLOCK_CHECK=on needs the device's SM clock, and this run has no "
                                "device-state reader (the backend answers no ABI 1.2 state queries); "
                                "auto or off measure without the check")

    def settings_report(self):
        return self.settings.report()

    def _mechanism(self):
        if self._resolved is None:
            api = self.settings.api
            if not api:
                raise CaptureFailed("no graph API named (ZL_GRAPH_API is empty)")
            try:
                device = _bench.device_module()
                self._resolved = (device, resolve_dotted(api), PrivatePools.for_device(device))
                self._stream = device.Stream()
            except Exception as exc:
                raise CaptureFailed(f"graph API {api} unavailable: {one_line(exc)}") from exc
        device, graph_class, pools = self._resolved
        return GraphDevice(device, graph_class, stream=self._stream, pools=pools)

    def _state_reader(self):
        if not hasattr(self, "_reader"):
            self._reader = _device_state.reader()
        return self._reader

    def clock_check_report(self):
        """What the timing report (and the identity's timer.clock_check) says of the clock check."""
        return self.clock_sides.report(self._state_reader())

    def measure(self, call):
        mech = self._mechanism()
        s = self.settings
        started = time.perf_counter()
        cluster = None
        with mech.side_stream():
            # Errors here are the op's own (the shape's error), so they
            # propagate; out of memory here is the suite's too, on its own
            # inputs, and no leaner measurement would avoid it.
            try:
                fn, grad_to_none = call.build(call.args, call.kwargs)
                fn()
                if call.probe is not None:
                    cluster = call.probe(fn)  # the second call: tuning is done, only winners launch
                else:
                    fn()
                clear_grads(grad_to_none)
                mech.synchronize()
            except Exception as exc:
                if out_of_memory(exc):
                    raise SuiteOutOfMemory(f"the op's own calls on the suite's inputs: {one_line(exc)}") from exc
                raise
            warmed = time.perf_counter()  # compilation and tuning are behind us
            # Cold: every graph clears the L2 before each call, and its
            # timings leave the clears out (l2_clear.py). On the side stream,
            # as the placements' clones are.
            clear = l2_clear.for_side(self.l2, _env.torch_device())
            if clear is not None:
                mech = l2_clear.cold_device(mech, clear, s.replay_ms)
            eager_ms = mech.eager_ms(fn, s.estimate_calls, enough_ms=ESTIMATE_ENOUGH_MS)
            del fn, grad_to_none
            rng = self.placer.rng(call.context)

            @contextlib.contextmanager
            def place(index):
                with self.placer.place(index, call.args, call.kwargs, rng) as p:
                    placed = _Placed(index, *call.build(p.args, p.kwargs))
                    # One eager call on the new storage before capturing it: a
                    # kernel variant that depends on where the inputs live
                    # compiles here, not inside the capture.
                    placed.fn()
                    clear_grads(placed.grad_to_none)
                    try:
                        yield placed
                    finally:
                        placed.fn = placed.grad_to_none = None

            pinned = self.sustained_rows.pinned(call.context)
            try:
                reading = graph_policy.measure(mech, place, eager_ms, s, state_reader=self._state_reader(),
                                               extra=tested_side(call.context), pinned=pinned)
            except CaptureFailed as failed:
                failed.cluster = cluster
                failed.eager_ms = eager_ms
                raise
            except SideThrottled as throttled:
                self.clock_sides.throttled(throttled)
                raise
        self.clock_sides.measured(reading)
        sustained = reading.sustained
        if sustained is not None and pinned is None:
            not_recorded = self.sustained_rows.add(call.context)
            if not_recorded:
                sustained = f"{sustained} ({not_recorded})"
        timing = SideTiming.over_placements(
            "graph", reading.placements_ms, reading.samples,
            calls_per_replay=reading.calls, cluster=cluster, eager_ms=eager_ms,
            extra={"calls_per_replay": reading.calls, "discarded_replay_ms": reading.discarded_ms,
                   "windows": len(reading.windows), "settled": reading.settled,
                   "sustained": sustained, "capture_ms": mech.capture_ms, "pace": reading.pace,
                   "after_rest_pct": reading.after_rest_pct, "readings": reading.readings,
                   "device_state": reading.device_state, "noise_note": reading.noise_note,
                   "extras_stopped": reading.extras_stopped, "fresh_placements": reading.fresh_placements,
                   "settled_ms": reading.settled_ms,
                   "clock_dropped_windows": reading.clock_dropped_windows, "sm_clock_mhz": reading.sm_clock_mhz,
                   # Cold only, so that a warm row reads as before the policy.
                   **(mech.row_data() if clear is not None else {})},
        )
        # What this (shape, side) cost in wall time: the warm-up calls (any
        # compilation and tuning) apart from the measurement itself.
        timing.warmup_ms = (warmed - started) * 1000.0
        timing.measure_ms = (time.perf_counter() - warmed) * 1000.0
        return timing


def create(settings, placer):
    return GraphTimer(settings, placer)
