"""Correlates get_latency calls with (op, dtype, shape) rows.

FlagGems' run() loop, per dtype and shape: creates a BenchmarkMetrics, calls
get_latency(torch_op) for latency_base, then get_latency(op) under
flag_gems.use_gems() for latency, fills speedup / gbps / tflops into the metric,
and at the end of each dtype calls update_result(op_name, asdict(result)).

The results plugin hooks the metric's constructor, update_result and each test's
end; the timing plugin reports every side it measures. Both reach the one
Tracker of the session through config.stash (_state.ROWS). A shape's row is final
(and written) when the next metric is created, update_result runs, or the test
ends, whichever comes first. Without metric tracking (a suite or subclass whose
loop builds its own metrics), a row ends when the shape changes or both sides
are taken, and gbps/tflops stay null.
"""

from . import _bench, _roofline, profile
from ._text import describe, first_line

SIDES = ("base", "gems")


class ShapeRow:
    def __init__(self, bench=None, metric=None, test_node=None):
        self.bench = bench
        self.metric = metric
        self.test_node = test_node
        self.dtype = None
        self.shape_detail = None
        self.started = set()
        self.sides = {}
        self.side_errors = {}
        self.error = None
        self.op_name = None
        self.moved = None  # (input bytes, largest input bytes) of the measured side
        # Device memory (bytes): the suite's own peak before each side, and
        # what zlcore's measurement added on top of it, per side (_memory.py).
        self.suite_peak = None
        self.added = {}
        self.throttled = {}  # side -> SideThrottled: the clock check got no clean window
        self.profiles = {}  # side -> what its profile pass found (profile.py), when the run profiles


class Tracker:
    def __init__(self):
        self.current = None
        self.test_node = None
        self.sink = None  # callable(dict); set by the results plugin

    # -- events from the suite -------------------------------------------------

    def begin_test(self, node_id):
        self.flush()
        self.test_node = node_id

    def end_test(self):
        self.flush()
        self.test_node = None

    def set_dtype(self, bench, dtype):
        try:
            bench._zl_dtype = _bench.dtype_name(dtype)
        except Exception:
            pass

    def metric_created(self, metric):
        self.flush()
        self.current = ShapeRow(metric=metric, test_node=self.test_node)

    def update_result(self, op_name, data):
        row = self.current
        if row is not None:
            dtype = data.get("dtype") if isinstance(data, dict) else None
            if dtype is not None:
                row.dtype = _bench.dtype_name(dtype)
            if row.op_name is None:
                row.op_name = op_name
        self.flush()

    def note_failure(self, message):
        """The test failed; the unfinished shape (if any) carries the message."""
        row = self.current
        if row is None or row.error is not None:
            return
        # A row whose started sides all finished is a complete shape; the failure
        # came after it (e.g. building the next input) and is not its error.
        if not row.started or row.started != set(row.sides):
            row.error = first_line(message)

    # -- events from the timing plugin ----------------------------------------

    def side_for(self, bench, op, args, kwargs):
        """The row and side ("base" or "gems") a get_latency call measures."""
        shape = _bench.shape_of(bench, args, kwargs)
        row = self.current
        side = None
        if row is not None and (row.bench is None or row.bench is bench):
            if row.shape_detail is None or shape is None or row.shape_detail == shape or row.metric is not None:
                side = self._free_side(bench, op, row)
        if side is None:
            self.flush()
            row = ShapeRow(bench=bench, test_node=self.test_node)
            self.current = row
            side = self._free_side(bench, op, row)
        row.bench = bench
        if row.shape_detail is None:
            row.shape_detail = shape
        if row.dtype is None:
            row.dtype = getattr(bench, "_zl_dtype", None) or _bench.infer_dtype(args, kwargs)
        row.started.add(side)
        if row.moved is None:
            row.moved = _roofline.input_bytes(args, kwargs)
        return row, side

    @staticmethod
    def _free_side(bench, op, row):
        gems_op = getattr(bench, "gems_op", None)
        if gems_op is not None and op is gems_op:
            return None if "gems" in row.started else "gems"
        metrics = getattr(bench, "to_bench_metrics", None)
        wants_base = metrics is None or "latency_base" in metrics
        if wants_base and "base" not in row.started and "gems" not in row.started:
            return "base"
        if "gems" not in row.started:
            return "gems"
        return None

    def side_done(self, row, side, timing):
        row.sides[side] = timing

    def side_memory(self, row, side, suite_peak, added):
        if suite_peak is not None:
            row.suite_peak = suite_peak if row.suite_peak is None else max(row.suite_peak, suite_peak)
        if added is not None:
            row.added[side] = added

    def side_failed(self, row, side, exc):
        row.side_errors[side] = describe(exc, 500)

    def side_throttled(self, row, side, exc):
        row.throttled[side] = exc
        row.side_errors[side] = f"throttled: {exc.reason}"[:500]

    # -- output ----------------------------------------------------------------

    def flush(self):
        row, self.current = self.current, None
        if row is None:
            return None
        built = build_row(row)
        if built is not None and self.sink is not None:
            self.sink(built)
        return built


def _metric_value(metric, name):
    if metric is None:
        return None
    value = getattr(metric, name, None)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _combined_reason(base, gems):
    reasons = []
    for side, timing in (("base", base), ("gems", gems)):
        if timing is not None and timing.fallback_reason:
            reasons.append((side, timing.fallback_reason))
    if not reasons:
        return None
    if len(reasons) == 1 or reasons[0][1] == reasons[1][1]:
        return reasons[0][1]
    return "; ".join(f"{side}: {reason}" for side, reason in reasons)


def build_row(row):
    """The results.jsonl object for a finished shape, or None if nothing was measured."""
    metric = row.metric
    metric_error = getattr(metric, "error_msg", None) if metric is not None else None
    error = metric_error or row.error
    if error is None and row.side_errors:
        error = "; ".join(f"{side}: {msg}" for side, msg in sorted(row.side_errors.items()))
    suite_timed = not row.sides and _metric_value(metric, "latency") is not None
    if not row.sides and error is None and not suite_timed:
        return None  # a metric that never reached get_latency and did not fail: not a shape

    shape_detail = row.shape_detail
    if metric is not None and getattr(metric, "shape_detail", None) is not None:
        shape_detail = _bench.plain_shape(metric.shape_detail)

    base = row.sides.get("base")
    gems = row.sides.get("gems")
    latency_base = _metric_value(metric, "latency_base")
    if latency_base is None and base is not None:
        latency_base = base.latency_ms
    latency = _metric_value(metric, "latency")
    if latency is None and gems is not None:
        latency = gems.latency_ms
    speedup = _metric_value(metric, "speedup")
    if speedup is None and latency_base is not None and latency:
        speedup = latency_base / latency

    main = gems if gems is not None else base
    clusters = [t.cluster for t in (base, gems) if t is not None and t.cluster is not None]
    bench = row.bench
    op = getattr(bench, "op_name", None) or row.op_name
    return _roofline.place(_with_profile(_with_l2(_with_clock({
        "op": op,
        "test_node": row.test_node,
        "dtype": row.dtype,
        "shape": _bench.shape_key(shape_detail),
        "shape_detail": shape_detail,
        "mode": _bench.mode(),
        "bench_level": _bench.bench_level(),
        "latency_base_ms": latency_base,
        "latency_ms": latency,
        "speedup": speedup,
        # A benchmark that overrides get_latency without calling it timed
        # itself: its numbers are the suite's, and the row says so.
        "timer": gems.timer if gems is not None else ("suite" if suite_timed else None),
        "timer_base": base.timer if base is not None else ("suite" if suite_timed and latency_base else None),
        "fallback_reason": _combined_reason(base, gems),
        "repeats": main.repeats if main is not None else None,
        "placements_ms": list(gems.placements_ms) if gems is not None else None,
        "placements_base_ms": list(base.placements_ms) if base is not None else None,
        "samples_ms": list(gems.samples_ms) if gems is not None else None,
        "samples_base_ms": list(base.samples_ms) if base is not None else None,
        "spread_pct": gems.spread_pct if gems is not None else None,
        "spread_base_pct": base.spread_pct if base is not None else None,
        "warmup_ms": gems.warmup_ms if gems is not None else None,
        "warmup_base_ms": base.warmup_ms if base is not None else None,
        "measure_ms": gems.measure_ms if gems is not None else None,
        "measure_base_ms": base.measure_ms if base is not None else None,
        "capture_ms": _extra(gems, "capture_ms"),
        "capture_base_ms": _extra(base, "capture_ms"),
        "windows": _extra(gems, "windows"),
        "windows_base": _extra(base, "windows"),
        # How each graph was sized: the eager estimate per call, the calls a
        # replay holds, and the fresh graph's discarded first replay (ms).
        "eager_ms": gems.eager_ms if gems is not None else None,
        "eager_base_ms": base.eager_ms if base is not None else None,
        "calls_per_replay": _extra(gems, "calls_per_replay"),
        "calls_per_replay_base": _extra(base, "calls_per_replay"),
        "discarded_replay_ms": _extra(gems, "discarded_replay_ms"),
        "discarded_replay_base_ms": _extra(base, "discarded_replay_ms"),
        "pace": _extra(gems, "pace"),
        "pace_base": _extra(base, "pace"),
        "sustained": _extra(gems, "sustained"),
        "sustained_base": _extra(base, "sustained"),
        "after_rest_pct": _extra(gems, "after_rest_pct"),
        "after_rest_base_pct": _extra(base, "after_rest_pct"),
        "readings": _extra(gems, "readings"),
        "readings_base": _extra(base, "readings"),
        "device_state": _extra(gems, "device_state"),
        "device_state_base": _extra(base, "device_state"),
        "noise_note": _extra(gems, "noise_note"),
        "noise_note_base": _extra(base, "noise_note"),
        "extras_stopped": _extra(gems, "extras_stopped"),
        "fresh_placements": _extra(gems, "fresh_placements"),
        "fresh_placements_base": _extra(base, "fresh_placements"),
        "settled_ms": _extra(gems, "settled_ms"),
        "settled_base_ms": _extra(base, "settled_ms"),
        "gbps": _metric_value(metric, "gbps"),
        "tflops": _metric_value(metric, "tflops"),
        "cluster_kernel": any(clusters) if clusters else None,
        "memory_suite_peak_bytes": row.suite_peak,
        "memory_added_bytes": row.added.get("gems"),
        "memory_added_base_bytes": row.added.get("base"),
        "placement_note": _extra(gems, "placement_note"),
        "placement_note_base": _extra(base, "placement_note"),
        "error": error,
    }, row, base, gems), base, gems), row), row.moved, _roofline.peaks())


def _extra(timing, key):
    return timing.extra.get(key) if timing is not None else None


def _with_clock(out, row, base, gems):
    """The graph timer's clock check per side (timers/clock_check.py): windows
    dropped for a low SM clock, the clocks read, and why a side that got no
    clean window has no number (null where the check did not run)."""
    for side, timing, suffix in (("gems", gems, ""), ("base", base, "_base")):
        throttled = row.throttled.get(side)
        out["clock_dropped_windows" + suffix] = (throttled.dropped if throttled is not None
                                                 else _extra(timing, "clock_dropped_windows"))
    for side, timing, name in (("gems", gems, "sm_clock_mhz"), ("base", base, "sm_clock_base_mhz")):
        throttled = row.throttled.get(side)
        out[name] = throttled.clocks if throttled is not None else _extra(timing, "sm_clock_mhz")
    for side, name in (("gems", "throttled"), ("base", "throttled_base")):
        throttled = row.throttled.get(side)
        out[name] = throttled.reason if throttled is not None else None
    return out


def _with_profile(out, row):
    """A profiled row's kernels per side (profile.py); an unprofiled row has none of these keys."""
    out.update(profile.row_fields(row))
    return out


def _with_l2(out, base, gems):
    """A cold row says so and what one clear took on each side (timers/l2_clear.py);
    a warm row has none of these keys, as before the policy existed."""
    if _extra(gems, "l2") is None and _extra(base, "l2") is None:
        return out
    out.update({"l2": "cold", "l2_clear_ms": _extra(gems, "l2_clear_ms"),
                "l2_clear_base_ms": _extra(base, "l2_clear_ms"),
                "l2_clear_bytes": _extra(gems, "l2_clear_bytes") or _extra(base, "l2_clear_bytes"),
                "l2_timing": _extra(gems, "l2_timing") or _extra(base, "l2_timing")})
    return out
