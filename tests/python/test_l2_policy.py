"""`--l2 cold` in the timers (ZL_L2, ZL_L2_BYTES): the clears captured and subtracted,
the rows that say so, and warm rows exactly as before the policy."""

import sys

import pytest

from conftest import PLUGINS
from test_plugins import COST, FAST, ROW_KEYS, approx, by_shape

ABS_F16 = ["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST
L2_BYTES = 1000  # the clear writes twice this: 2000 bytes at COST a byte on the stub's clock
COLD_KEYS = ["l2", "l2_clear_ms", "l2_clear_base_ms", "l2_clear_bytes", "l2_timing"]
# A cold row: the measurement's keys, the clears', then the roofline's.
ROOFLINE_AT = ROW_KEYS.index("achieved_gbps")
COLD_ROW_KEYS = ROW_KEYS[:ROOFLINE_AT] + COLD_KEYS + ROW_KEYS[ROOFLINE_AT:]


def _cold_reads_what_warm_reads(warm, cold, timing):
    assert warm.rc == 0 and cold.rc == 0, warm.output + cold.output
    warm_rows, cold_rows = by_shape(warm.rows()), by_shape(cold.rows())
    assert warm_rows.keys() == cold_rows.keys()
    for shape, row in cold_rows.items():
        # The clears' time is out of the number: the stub's op costs the same
        # with the cache cleared, so cold reads what warm reads.
        assert row["latency_ms"] == approx(warm_rows[shape]["latency_ms"])
        assert row["latency_base_ms"] == approx(warm_rows[shape]["latency_base_ms"])
        assert row["placements_ms"] == [approx(t) for t in warm_rows[shape]["placements_ms"]]
        # The eager estimate too (it sizes the capture; cluster_fix checks the graph against it).
        assert row["eager_ms"] == approx(warm_rows[shape]["eager_ms"])
        assert row["calls_per_replay"] == warm_rows[shape]["calls_per_replay"]
        assert list(row) == COLD_ROW_KEYS
        assert row["l2"] == "cold" and row["l2_clear_bytes"] == 2 * L2_BYTES and row["l2_timing"] == timing
        # What one clear took, on each side's clock (use_gems halves the gems side's kernels).
        assert row["l2_clear_base_ms"] == approx(2 * L2_BYTES * COST)
        assert row["l2_clear_ms"] == approx(2 * L2_BYTES * COST / 2)
    assert cold.child("timing")["l2"] == "cold"  # what the timers read, in the plugin's report
    return warm.stub_state(), cold.stub_state()


def test_cold_graph_timer_brackets_each_call_with_events_captured_after_its_clear(run_child):
    warm = run_child(ABS_F16, ZL_L2="warm")
    cold = run_child(ABS_F16, ZL_L2="cold", ZL_L2_BYTES=str(L2_BYTES))
    warm_state, cold_state = _cold_reads_what_warm_reads(warm, cold, "bracketed")
    # One graph where warm captures one, replayed as often: the clears run
    # in it, but only the events around each call are read.
    assert cold_state["captures_begun"] == warm_state["captures_begun"]
    assert cold_state["replays"] == warm_state["replays"]
    assert warm_state["zero_launches"] == 0 and cold_state["zero_launches"] > 0


def test_without_graph_events_the_clears_are_captured_alone_and_subtracted(run_child):
    warm = run_child(ABS_F16, ZL_L2="warm", STUB_NO_EXTERNAL_EVENTS="1")
    cold = run_child(ABS_F16, ZL_L2="cold", ZL_L2_BYTES=str(L2_BYTES), STUB_NO_EXTERNAL_EVENTS="1")
    warm_state, cold_state = _cold_reads_what_warm_reads(warm, cold, "subtracted")
    # Two graphs where warm captures one (the calls with clears, the clears
    # alone), each replayed as often as warm's one.
    assert cold_state["captures_begun"] == 2 * warm_state["captures_begun"]
    assert cold_state["replays"] == 2 * warm_state["replays"]
    assert warm_state["zero_launches"] == 0 and cold_state["zero_launches"] > 0


def test_the_clear_buffer_is_zlcores_memory_on_the_row(run_child):
    big = 1 << 26  # a 128 MiB buffer: larger than anything the fake suite allocates
    warm = run_child(ABS_F16)
    cold = run_child(ABS_F16, ZL_L2="cold", ZL_L2_BYTES=str(big))
    assert warm.rc == 0 and cold.rc == 0, warm.output + cold.output
    for shape, row in by_shape(cold.rows()).items():
        before = by_shape(warm.rows())[shape]
        # The buffer on top of the placements (which need not add the same
        # bytes at the peak: the sides' order of frees decides that).
        for key in ("memory_added_bytes", "memory_added_base_bytes"):
            assert row[key] > 2 * big and row[key] > before[key]


def test_warm_rows_and_settings_are_as_before_the_policy(run_child):
    unset = run_child(ABS_F16)
    warm = run_child(ABS_F16, ZL_L2="warm")
    assert unset.rc == 0 and warm.rc == 0, unset.output + warm.output
    for row in warm.rows():
        assert list(row) == ROW_KEYS
    assert warm.child("timing")["settings"] == unset.child("timing")["settings"]
    assert unset.child("timing")["l2"] == warm.child("timing")["l2"] == "warm"
    assert [r["latency_ms"] for r in warm.rows()] == [r["latency_ms"] for r in unset.rows()]


def test_cold_direct_timer_clears_outside_the_events_on_its_events_path(run_child):
    # The 64x512x8 shape is too slow for do_bench at a 12 ms budget: timed by
    # events, each call after a clear that its events leave out.
    args = ABS_F16
    env = dict(ZL_TIMER="direct", ZL_TIMER_FALLBACK="", ZL_DIRECT_REPEAT="3", ZL_DIRECT_BUDGET_MS="12")
    warm = run_child(args, **env)
    cold = run_child(args, ZL_L2="cold", ZL_L2_BYTES=str(L2_BYTES), **env)
    assert warm.rc == 0 and cold.rc == 0, warm.output + cold.output
    row = by_shape(cold.rows())["[[64, 512, 8]]"]
    assert row["placements_base_ms"] == by_shape(warm.rows())["[[64, 512, 8]]"]["placements_base_ms"]
    assert row["l2"] == "cold" and row["l2_clear_ms"] is None
    assert cold.stub_state()["zero_launches"] > 0 and warm.stub_state()["zero_launches"] == 0
    # do_bench's shapes: do_bench clears its own 256 MB; zlcore adds none.
    fast = by_shape(cold.rows())["[[64, 64]]"]
    assert fast["l2"] == "cold" and fast["placements_ms"] == by_shape(warm.rows())["[[64, 64]]"]["placements_ms"]


@pytest.mark.parametrize("env, words", [
    ({"ZL_L2": "lukewarm"}, "ZL_L2='lukewarm' is not one of warm, cold"),
    ({"ZL_L2": "cold"}, "ZL_L2=cold needs ZL_L2_BYTES"),
    ({"ZL_L2": "cold", "ZL_L2_BYTES": "0"}, "ZL_L2=cold needs ZL_L2_BYTES"),
])
def test_a_bad_l2_setting_stops_the_run_before_it_measures(run_child, env, words):
    run = run_child(ABS_F16, **env)
    assert run.rc == 4, run.output
    assert words in run.output
    assert run.rows() == []


def test_the_host_timer_refuses_cold(run_child):
    run = run_child(ABS_F16, ZL_TIMER="host", ZL_TIMER_FALLBACK="", ZL_L2="cold", ZL_L2_BYTES=str(L2_BYTES))
    assert run.rc == 4, run.output
    assert "ZL_L2=cold: the host timer reads the host's clock around loops" in run.output


class _Mechanism:
    """A GraphDevice stand-in: a replay takes 1 ms a call plus 3 ms a clear
    (the clears alone read +1 ms on every other replay, so that the median is
    what must be subtracted)."""

    def __init__(self, fail_second_capture=False):
        self.released = []
        self.clear_timings = 0
        self.fail_second_capture = fail_second_capture
        self.captures = 0

    def capture(self, placed, calls):
        self.captures += 1
        if self.fail_second_capture and self.captures == 2:
            raise RuntimeError("capture failed")
        for _ in range(calls):  # as GraphDevice.capture runs them
            placed.fn()
        return {"calls": calls, "clears_only": isinstance(placed, _clear_module()._ClearsOnly)}

    def replays(self, graph, count, untimed=0):
        if graph["clears_only"]:
            self.clear_timings += 1
            return [3.0 * graph["calls"] + (i % 2) for i in range(count)]
        return [4.0 * graph["calls"]] * count

    def replay_ms(self, graph):
        return self.replays(graph, 1)[0]

    def release(self, graph, trim=True):
        self.released.append(graph["clears_only"])

    capture_ms = 7.0


def _clear_module():
    if str(PLUGINS) not in sys.path:
        sys.path.insert(0, str(PLUGINS))
    from zlcore_pytest.timers import l2_clear
    return l2_clear


class _Clear:
    bytes = 2000

    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1


class _Placed:
    index = 0
    grad_to_none = None

    def __init__(self):
        self.calls = 0

    def fn(self):
        self.calls += 1


def test_the_cold_mechanism_clears_before_every_call_and_subtracts_the_clears_median():
    l2_clear = _clear_module()
    inner, clear, placed = _Mechanism(), _Clear(), _Placed()
    mech = l2_clear.ColdGraphDevice(inner, clear)
    graph = mech.capture(placed, 4)
    assert placed.calls == 4 and clear.calls == 8  # a clear before each call, then the clears alone
    # 4 calls at 4 ms (op and clear) less the clears' median (12 or 13 ms: 12.5).
    assert mech.replays(graph, 4) == [16.0 - 12.5] * 4
    assert mech.replay_ms(graph) == 16.0 - 12.0
    assert mech.capture_ms == 7.0  # everything else is the wrapped mechanism's
    assert mech.row_data() == {"l2": "cold", "l2_clear_ms": approx((12.5 / 4 + 12.0 / 4) / 2),
                               "l2_clear_bytes": 2000, "l2_timing": "subtracted"}
    mech.release(graph)
    assert sorted(inner.released) == [False, True]  # both graphs


def test_a_clears_capture_that_fails_releases_the_ops_graph():
    l2_clear = _clear_module()
    inner = _Mechanism(fail_second_capture=True)
    mech = l2_clear.ColdGraphDevice(inner, _Clear())
    with pytest.raises(RuntimeError):
        mech.capture(_Placed(), 2)
    assert inner.released == [False]


class _Log:
    """Events and a clear that write what happened, in order, to one list."""

    def __init__(self):
        self.seen = []
        self.count = 0

    def event(self):
        log = self

        class Event:
            def __init__(self):
                log.count += 1
                self.name = f"e{log.count}"
                self.t = None

            def record(self):
                log.seen.append(self.name)

            def elapsed_time(self, end):
                return end.t - self.t

        return Event()


def test_the_bracketed_mechanism_times_each_call_between_its_own_events_after_its_clear():
    l2_clear = _clear_module()
    log = _Log()

    class Inner(_Mechanism):
        def replay_ms(self, graph):
            # 3 ms of clear, then 1 ms of call, each call: set the events as a replay would.
            t = 0.0
            for s, e in zip(self.graph.starts, self.graph.ends):
                t += 3.0
                s.t = t
                t += 1.0
                e.t = t
            return t

    class Clear(_Clear):
        def __call__(self):
            super().__call__()
            log.seen.append("clear")

    inner, clear, placed = Inner(), Clear(), _Placed()
    placed.fn = lambda: log.seen.append("call")
    mech = l2_clear.BracketedColdGraphDevice(inner, clear, log.event)
    graph = mech.capture(placed, 2)
    inner.graph = graph
    assert log.seen == ["clear", "e1", "call", "e3", "clear", "e2", "call", "e4"]
    assert mech.replays(graph, 3) == [2.0] * 3  # the calls alone: 1 ms each
    assert mech.replay_ms(graph) == 2.0
    assert mech.row_data() == {"l2": "cold", "l2_clear_ms": 3.0, "l2_clear_bytes": 2000, "l2_timing": "bracketed"}
    mech.release(graph)
    assert inner.released == [False]


def test_a_bracketed_graph_holds_the_calls_that_fit_a_replay_with_their_clears():
    l2_clear = _clear_module()
    log = _Log()

    class Inner(_Mechanism):
        def eager_ms(self, fn, calls, enough_ms=None):
            return 0.05 if fn is clear else 0.051  # a clear alone, then a call after a clear

        def replay_ms(self, graph):
            t = 0.0
            for s, e in zip(self.graph.starts, self.graph.ends):
                s.t, e.t = t + 0.05, t + 0.051
                t += 0.051
            return t

    inner, clear, placed = Inner(), _Clear(), _Placed()
    mech = l2_clear.BracketedColdGraphDevice(inner, clear, log.event, replay_ms=2.0)
    assert mech.eager_ms(placed.fn, 10) == approx(0.001)
    graph = mech.capture(placed, 1024)  # what the policy asks for a 1 us op
    inner.graph = graph
    assert placed.calls == 40 == clear.calls  # 2 ms of 50 us clears
    assert mech.replays(graph, 2) == [approx(1024 * 0.001)] * 2  # read as the calls asked for
    assert mech.row_data()["l2_clear_ms"] == approx(0.05)
    assert mech.capture(_Placed(), 8).captured == 8  # never more than asked
    small = l2_clear.BracketedColdGraphDevice(inner, clear, log.event, replay_ms=0.1)
    small.eager_ms(placed.fn, 10)
    assert small.capture(_Placed(), 1024).captured == l2_clear.MIN_BRACKETED_CALLS


def test_a_device_without_graph_events_gets_the_subtracted_mechanism():
    l2_clear = _clear_module()

    class OldEvent:
        def __init__(self, enable_timing=False):
            pass

    class Device:
        Event = OldEvent

    inner = _Mechanism()
    inner.device = Device()
    assert isinstance(l2_clear.cold_device(inner, _Clear()), l2_clear.ColdGraphDevice)
    Device.Event = staticmethod(lambda enable_timing=False, external=False: object())
    assert isinstance(l2_clear.cold_device(inner, _Clear()), l2_clear.BracketedColdGraphDevice)
