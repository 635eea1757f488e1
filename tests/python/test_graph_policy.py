"""The graph timer's policy against synthetic replayers, and its mechanism's capture hygiene.

No torch, no device: FakeReplayer stands in for graph_device.GraphDevice and
scripts the per-call time of every replay from the placement it runs on, the
device load since the last rest and the length of that rest, the way an H200
behaved (docs/graph-timer.md).
"""

import contextlib
import sys
import time
from dataclasses import replace

import pytest

from conftest import PLUGINS

sys.path[:0] = [str(PLUGINS)]

from zlcore_pytest.timers import graph, graph_device, graph_policy  # noqa: E402
from zlcore_pytest.timers.base import CaptureFailed  # noqa: E402
from zlcore_pytest.timers.graph_device import GraphDevice, PrivatePools  # noqa: E402
from zlcore_pytest.timers.settings import GraphSettings, SettingsError, TimerSettings  # noqa: E402

# Rests short enough for a test: the fake replayer does not sleep anyway.
# Four placements and one sustained reading per placement: small numbers that
# keep the mechanics visible. The defaults (six, two readings) have tests of their own.
# No extra placements unless a test asks: the others read exactly `placements`.
# The full fixed settle (ZL_GRAPH_SETTLE_FLAT_MS=0), so the loads these tests
# count do not hang on when a fake pace looks flat; the flat settle, the
# default, has tests of its own below.
SETTINGS = GraphSettings(api="fake.Graph", placements=4, readings=0, noisy_placements=0, settle_flat_ms=0.0)


class FakeGraph:
    def __init__(self, placement, calls):
        self.placement = placement
        self.calls = calls
        self.replays = 0
        self.released = False


class FakeReplayer:
    """A mechanism whose replay of n calls lasts n * pace(placement, load, rest) ms.

    `load` is the device time replayed since the last rest, `rest` how long
    that rest was (None before any). A fresh graph's first replay runs 2x
    slow, like the H200's.
    """

    def __init__(self, pace, fail_capture=None, launch_ms=0.0, fresh=(), fresh_slow=(0, 1.0)):
        self.pace = pace
        # Placements whose memory the device had just handed out, and how
        # that memory behaves: its first n calls run `factor` slow (the H200's
        # 2^30-element abs: 4 calls, ~1.1x).
        self.fresh = set(fresh)
        self.fresh_slow = fresh_slow
        self.asked_fresh = []
        self.launch_ms = launch_ms  # each replay's own cost, whatever its calls
        self.fail_capture = fail_capture
        self.load = 0.0
        self.last_rest = None
        self.captures = []
        self.rests = []
        self.replayed = 0

    def capture(self, placed, calls):
        if self.fail_capture is not None and self.fail_capture(placed.index, len(self.captures)):
            raise CaptureFailed(f"graph capture of {calls} calls failed: RuntimeError: scripted")
        graph = FakeGraph(placed.index, calls)
        self.captures.append(graph)
        return graph

    def _one(self, graph):
        per_call = self.pace(graph.placement, self.load, self.last_rest)
        slow_calls, factor = self.fresh_slow
        if graph.placement in self.fresh and graph.replays * graph.calls < slow_calls:
            per_call *= factor
        ms = graph.calls * per_call * (2.0 if graph.replays == 0 else 1.0) + self.launch_ms
        graph.replays += 1
        self.replayed += 1
        self.load += ms
        return ms

    def replay_ms(self, graph):
        return self._one(graph)

    def replays(self, graph, count, untimed=0):
        for _ in range(untimed):
            self._one(graph)
        return [self._one(graph) for _ in range(count)]

    def took_fresh_memory(self):
        placement = self.captures[-1].placement
        self.asked_fresh.append(placement)
        return placement in self.fresh

    def rest(self, ms):
        self.load = 0.0
        self.last_rest = ms
        self.rests.append(ms)

    def release(self, graph):
        graph.released = True


class Placements:
    """place(index) for the policy; counts what was placed and released."""

    def __init__(self):
        self.entered = []
        self.exited = []

    @contextlib.contextmanager
    def __call__(self, index):
        self.entered.append(index)

        class Placed:
            pass

        placed = Placed()
        placed.index = index
        placed.fn = lambda: None
        placed.grad_to_none = None
        try:
            yield placed
        finally:
            self.exited.append(index)


def run(pace, settings=SETTINGS, eager_ms=None, extra=True, **kw):
    mech = FakeReplayer(pace, **kw)
    places = Placements()
    if eager_ms is None:
        eager_ms = pace(0, 1e9, None)
    reading = graph_policy.measure(mech, places, eager_ms, settings, extra=extra)
    return reading, mech, places


def test_steady_pace_reads_the_same_on_every_placement():
    reading, mech, places = run(lambda p, load, rest: 0.010)
    assert reading.sustained is None and reading.settled is True
    assert reading.placements_ms == [pytest.approx(0.010)] * 4
    assert reading.latency_ms == pytest.approx(0.010)
    assert reading.after_rest_pct == pytest.approx(0.0)
    assert reading.calls == 128  # the power of two nearest replay_ms (1.0) at 0.010 a call (100)
    # Four placements, each captured once, released, and its clones let go.
    assert places.entered == places.exited == [0, 1, 2, 3]
    assert [g.placement for g in mech.captures] == [0, 1, 2, 3]
    assert all(g.released for g in mech.captures)
    # The first placement: two windows after the settling; the others one each.
    assert [w.placement for w in reading.windows] == [0, 0, 1, 2, 3]
    assert reading.windows[0].load_ms >= SETTINGS.settle_ms
    # Samples per window: the first placement's windows judge the pace, so
    # they hold ZL_GRAPH_SAMPLES (10); the others placement_ms (4) of 1.28 ms replays.
    assert [len(w.samples) for w in reading.windows] == [10, 10, 3, 3, 3]
    assert mech.rests == [SETTINGS.probe_rest_ms]  # the probe, once
    assert reading.pace[2] == [pytest.approx(reading.windows[2].load_ms, abs=0.1), 0.01, 1]


def test_bimodal_placements_average_between_the_clusters_and_the_spread_shows_it():
    # Like FlagGems' layer_norm on the H200: placements land near 43 or 45 us,
    # each one stable on its own.
    def pace(placement, load, rest):
        return 0.045 if placement % 2 else 0.043

    reading, _, _ = run(pace)
    assert reading.placements_ms == [pytest.approx(v) for v in (0.043, 0.045, 0.043, 0.045)]
    assert reading.latency_ms == pytest.approx(0.044)
    assert 0.043 < reading.latency_ms < 0.045
    assert reading.sustained is None
    from zlcore_pytest.timers.base import SideTiming

    timing = SideTiming.over_placements("graph", reading.placements_ms, reading.samples)
    assert timing.latency_ms == pytest.approx(0.044) and timing.repeats == 4
    assert timing.spread_pct == pytest.approx(0.002 / 0.044 * 100)


def test_more_placements_cost_more_captures_not_more_settling():
    settings = replace(SETTINGS, placements=8)
    reading, mech, _ = run(lambda p, load, rest: 0.002, settings=settings)
    assert len(reading.placements_ms) == 8 and len(mech.captures) == 8
    settled = [w for w in reading.windows if w.load_ms >= settings.settle_ms]
    assert len(settled) == len(reading.windows)  # every window after the one settling


def power_limited(placement, load, rest):
    """An H200 GEMM: 12 % fast for 60 ms of load after a rest of 20 ms or more, then its plateau."""
    boosted = rest is None or rest >= 20
    return 0.100 * (0.88 if boosted and load < 60 else 1.0)


def test_a_boost_after_the_probe_rest_sends_the_side_to_sustained_readings():
    reading, mech, places = run(power_limited)
    assert reading.sustained == "ran 12.0 % faster after a 100 ms rest"
    assert reading.after_rest_pct == pytest.approx(12.0)
    # One sustained reading per placement, each on a fresh placement after its
    # own rest, counted after the step down: the plateau.
    assert mech.rests == [100.0] + [300.0] * 4
    assert places.entered == list(range(8)) and places.exited == places.entered
    assert reading.placements_ms == [pytest.approx(0.100)] * 4 == reading.readings  # no placement effect
    assert reading.latency_ms == pytest.approx(0.100)
    assert reading.settled is True
    sustained = [w for w in reading.windows if w.placement >= 4]
    assert sustained[0].median == pytest.approx(0.088)  # each reading starts at its boost
    assert all(w.load_ms < SETTINGS.sustained_ms for w in sustained)


def test_a_pace_that_drifts_under_load_is_caught_on_the_first_placement():
    # Slows by 0.2 % per ms of load, for 100 ms, then holds: the two windows of
    # the first placement read apart, and the sustained readings see the plateau.
    def drifting(placement, load, rest):
        return 0.050 * (1 + 0.002 * min(load, 100.0))

    reading, mech, places = run(drifting)
    assert reading.sustained is not None and reading.sustained.startswith("window medians ")
    assert reading.after_rest_pct is None  # no probe: the pace had already moved
    assert places.entered[:1] == [0] and places.entered[1:] == [4, 5, 6, 7]  # straight to sustained
    assert reading.placements_ms == [pytest.approx(0.060)] * 4
    assert mech.rests == [300.0] * 4


def test_a_boost_under_the_bar_is_not_one():
    def small(placement, load, rest):
        return 0.100 * (0.99 if rest is not None and load < 60 else 1.0)

    reading, _, _ = run(small)
    assert reading.sustained is None and reading.after_rest_pct == pytest.approx(1.0)


def test_a_sustained_reading_cut_short_by_the_window_cap_says_so():
    settings = replace(SETTINGS, max_windows=1)
    reading, _, _ = run(power_limited, settings=settings)
    assert reading.sustained is not None and reading.settled is False
    assert reading.placements_ms == [pytest.approx(0.088)] * 4  # the one (boosted) window stands in


def test_readings_may_be_fewer_than_placements():
    settings = replace(SETTINGS, readings=2)
    reading, mech, _ = run(power_limited, settings=settings)
    assert len(reading.readings) == 2 and mech.rests == [100.0, 300.0, 300.0]
    assert len(reading.placements_ms) == 4  # one value per placement all the same


def test_by_default_two_readings_set_the_level_and_placements_keep_their_factors():
    # A power-limited side whose placements differ by 2 %: the steady pass
    # sees the placements (at a boosted, unsettled pace), two sustained
    # readings see the plateau; each placement is reported at the plateau.
    def pace(placement, load, rest):
        factor = 1.02 if placement in (1, 3, 5) else 1.0
        return power_limited(placement, load, rest) * factor

    reading, mech, places = run(pace, settings=GraphSettings(api="fake.Graph"))
    assert GraphSettings().placements == 6 and GraphSettings().readings == 2
    assert mech.rests == [100.0, 300.0, 300.0]  # the probe, then two readings
    assert places.entered == list(range(8))  # six placements, two fresh ones for the readings
    assert len(reading.readings) == 2 and len(reading.placements_ms) == 6
    level = sum(reading.readings) / 2
    assert reading.latency_ms == pytest.approx(level)
    odd, even = reading.placements_ms[1], reading.placements_ms[0]
    assert odd / even == pytest.approx(1.02, rel=1e-3)


def test_scaled_to_level_keeps_the_mean_at_the_level():
    values = graph_policy.scaled_to_level([1.0, 2.0, 3.0], 10.0)
    assert values == [pytest.approx(5.0), pytest.approx(10.0), pytest.approx(15.0)]
    assert graph_policy.scaled_to_level([0.0, 0.0], 4.0) == [4.0, 4.0]


def test_an_undersized_graph_is_captured_again_larger():
    # A host-bound eager estimate (10x the real per-call time) undersizes n;
    # the graph's own warm replay reads the device and sizes it again.
    reading, mech, _ = run(lambda p, load, rest: 0.001, eager_ms=0.010)
    assert mech.captures[0].calls == 128 and mech.captures[1].calls == 1024
    assert mech.captures[0].released
    assert reading.calls == 1024
    assert all(g.calls == reading.calls for g in mech.captures[1:])
    assert reading.latency_ms == pytest.approx(0.001)


def test_processes_whose_eager_estimates_differ_build_the_same_graph():
    # A 2.5 us kernel behind a wrapper whose host time per call is 170 us in
    # one process and 250 us in the other, and a replay's own launch cost of
    # 5.5 us (normal_float_tensor 64x64 on the H200). Sized from the eager
    # estimate, the graphs held 8 and 4 calls and read 3.2 and 3.9 us a call.
    readings = [run(lambda p, load, rest: 0.0025, eager_ms=eager, launch_ms=0.0055)[0] for eager in (0.17, 0.25)]
    assert [r.calls for r in readings] == [512, 512]
    assert readings[0].latency_ms == pytest.approx(readings[1].latency_ms, rel=1e-9)
    assert readings[0].latency_ms == pytest.approx(0.0025, rel=0.01)


def test_calls_are_powers_of_two_within_the_capture_budget():
    s = SETTINGS
    assert graph_policy.calls_for(0.010, 0.010, s) == 128
    assert graph_policy.calls_for(0.0099, 0.0099, s) == 128  # a few percent apart: the same graph
    assert graph_policy.calls_for(0.0105, 0.0105, s) == 128
    assert graph_policy.calls_for(0.0137, 0.0137, s) == 64  # 73 calls: nearer 64 than 128 on a log scale
    assert graph_policy.calls_for(2.0, 2.0, s) == 1  # a long kernel: one call
    assert graph_policy.calls_for(0.6, 0.6, s) == 2
    # A 1 us kernel behind a 1 ms wrapper: no more than CAPTURE_BUDGET_MS of capture.
    assert graph_policy.calls_for(0.001, 1.0, s) == 128
    assert graph_policy.calls_for(0.0, 0.0, s) == graph_policy.CALLS_WHEN_ESTIMATE_IS_ZERO
    assert graph_policy.calls_for(1e-7, 1e-7, replace(s, max_calls=5000)) == 5000


def test_a_capture_that_fails_releases_what_it_placed():
    reading = None
    mech = FakeReplayer(lambda p, load, rest: 0.01, fail_capture=lambda index, n: index == 2)
    places = Placements()
    with pytest.raises(CaptureFailed, match="scripted"):
        reading = graph_policy.measure(mech, places, 0.01, SETTINGS)
    assert reading is None
    assert places.entered == places.exited == [0, 1, 2]
    assert all(g.released for g in mech.captures)


def test_settings_parse_with_clear_errors():
    assert TimerSettings.from_env({}).graph == GraphSettings()
    s = TimerSettings.from_env({"ZL_PLACEMENTS": " 6 ", "ZL_PLACEMENT_SEED": "7", "ZL_GRAPH_SETTLE_MS": "0",
                                "ZL_DIRECT_REPEAT": "", "ZL_HOST_REPEAT": "2"})
    assert s.graph.placements == 6 and s.placement.seed == 7 and s.graph.settle_ms == 0.0
    assert s.direct.repeat == 5 and s.host.repeat == 2 and s.host.clock == "wall"
    assert TimerSettings.from_env({"ZL_HOST_CLOCK": " Thread "}).host.clock == "thread"
    assert TimerSettings.from_env({"ZL_GRAPH_SETTLE_FLAT_MS": "2.5e0", "ZL_PLACEMENTS": "+7"}).graph.placements == 7
    assert s.graph.report()["readings"] == 2
    assert TimerSettings.from_env({"ZL_GRAPH_READINGS": "0"}).graph.report()["readings"] == 6  # one per placement
    for env, message in [
        ({"ZL_PLACEMENTS": "0"}, "ZL_PLACEMENTS='0' must be at least 1"),
        ({"ZL_PLACEMENTS": "four"}, "ZL_PLACEMENTS='four' is not an integer"),
        ({"ZL_PLACEMENT_MS": "0"}, "ZL_PLACEMENT_MS='0' must be above 0"),
        ({"ZL_GRAPH_SETTLE_MS": "-1"}, "ZL_GRAPH_SETTLE_MS='-1' must be at least 0"),
        ({"ZL_GRAPH_BOOST_PCT": "nan"}, "ZL_GRAPH_BOOST_PCT='nan' must be finite"),
        ({"ZL_HOST_REPEAT": "1.5"}, "ZL_HOST_REPEAT='1.5' is not an integer"),
        ({"ZL_HOST_CLOCK": "cpu"}, "ZL_HOST_CLOCK='cpu' is not one of wall, thread"),
        ({"ZL_GRAPH_SUSTAINED_MS": "150", "ZL_GRAPH_SUSTAINED_FROM_MS": "150"},
         "ZL_GRAPH_SUSTAINED_MS (150) must exceed ZL_GRAPH_SUSTAINED_FROM_MS (150): no sample would count"),
        ({"ZL_GRAPH_MIN_SAMPLES": "11"}, "ZL_GRAPH_MIN_SAMPLES (11) must not exceed ZL_GRAPH_SAMPLES (10)"),
        # Other scripts' digits and underscores parse in Python, not here.
        ({"ZL_PLACEMENTS_NOISY": "\uff15"}, "ZL_PLACEMENTS_NOISY='\uff15' is not an integer"),
        ({"ZL_GRAPH_SETTLE_FLAT_MS": "1_0"}, "ZL_GRAPH_SETTLE_FLAT_MS='1_0' is not a number"),
        ({"ZL_GRAPH_CLOCK_CHECK": "  "},
         "ZL_GRAPH_CLOCK_CHECK='  ' is blank; unset it (or set it empty) for the default"),
        # A typo must not make a run that never ends, or allocates without bound.
        ({"ZL_HOST_LOOPS": "99999999999999999999"}, "ZL_HOST_LOOPS='99999999999999999999' must be at most 1000"),
        ({"ZL_PLACEMENT_MAX_SHIFT_MB": "1e7"}, "ZL_PLACEMENT_MAX_SHIFT_MB='1e7' must be at most 16384"),
        ({"ZL_GRAPH_REST_MS": "1e9"}, "ZL_GRAPH_REST_MS='1e9' must be at most 600000"),
        ({"ZL_PLACEMENTS_NOISY_PCT": "101"}, "ZL_PLACEMENTS_NOISY_PCT='101' must be at most 100"),
    ]:
        with pytest.raises(SettingsError) as err:
            TimerSettings.from_env(env)
        assert str(err.value) == message


def test_the_probe_names_the_first_setting_the_child_would_refuse():
    from zlcore_pytest.timers.settings import environment_error

    assert environment_error({}) == ""
    # ZL_L2 and its size are zlcore's to set and check; a user's ZL_L2=cold is not refused here.
    assert environment_error({"ZL_L2": "cold"}) == ""
    assert environment_error({"ZL_PLACEMENTS": "x"}) == "ZL_PLACEMENTS='x' is not an integer"
    assert environment_error({"ZL_COMPILE_AHEAD": "lots"}).startswith("ZL_COMPILE_AHEAD='lots' is not allowed")


# -- the mechanism's capture hygiene -----------------------------------------------------


class FakeDeviceModule:
    """torch.<device> as far as GraphDevice uses it, with one capture state."""

    def __init__(self, end_ends_capture=True):
        self.capturing = None  # the stream a capture is open on
        self.end_ends_capture = end_ends_capture
        self.syncs = 0
        module = self

        class Stream:
            def __init__(self):
                self.synced = 0

            def wait_stream(self, other):
                pass

            def synchronize(self):
                self.synced += 1

        self.Stream = Stream
        self._default = Stream()
        self._stack = [self._default]

        class stream:
            def __init__(self, s):
                self.s = s

            def __enter__(self):
                module._stack.append(self.s)

            def __exit__(self, *exc):
                module._stack.pop()
                return False

        self.stream = stream

        class Graph:
            def __init__(self):
                self.reset_called = False
                self.ends = 0

            def capture_begin(self):
                module.capturing = module.current_stream()

            def capture_end(self):
                self.ends += 1
                if module.end_ends_capture:
                    module.capturing = None
                raise RuntimeError("capture invalidated")

            def reset(self):
                self.reset_called = True

        self.Graph = Graph

    def current_stream(self):
        return self._stack[-1]

    def synchronize(self):
        self.syncs += 1

    def is_current_stream_capturing(self):
        return self.capturing is not None and self.capturing is self.current_stream()


class TimedDeviceModule(FakeDeviceModule):
    """A FakeDeviceModule with events on a clock the calls advance."""

    def __init__(self):
        super().__init__()
        self.clock_ms = 0.0
        module = self

        class Event:
            def __init__(self, enable_timing=False):
                self.at = None

            def record(self):
                self.at = module.clock_ms

            def elapsed_time(self, end):
                return end.at - self.at

        self.Event = Event


def test_the_eager_estimate_stops_at_a_host_bound_first_call():
    # A NumPy reference of seconds a call would cost five of them before its
    # capture is even tried; its first call's host time is enough to size it.
    device = TimedDeviceModule()
    mech = GraphDevice(device, device.Graph)
    calls = []

    def host_bound():
        calls.append(1)
        device.clock_ms += 80.0
        time.sleep(0.06)

    def quick():
        calls.append(1)
        device.clock_ms += 0.01

    assert mech.eager_ms(host_bound, 5, enough_ms=50.0) == 80.0 and len(calls) == 1
    calls.clear()
    assert mech.eager_ms(quick, 5, enough_ms=50.0) == pytest.approx(0.01) and len(calls) == 5
    calls.clear()
    assert mech.eager_ms(host_bound, 2) == 80.0 and len(calls) == 2  # no bound: every call


def test_a_release_that_leaves_gigabytes_idle_empties_the_caches():
    # torch frees a released graph's pool only when the caches are emptied,
    # and its out-of-memory retry does not empty them inside a capture: six
    # placements of a 1G-element side left a later capture 90 GiB short.
    device = FakeDeviceModule()
    held = {"reserved": 0, "allocated": 0}
    emptied = []
    device.memory_reserved = lambda: held["reserved"]
    device.memory_allocated = lambda: held["allocated"]

    def empty_cache():
        emptied.append(held["reserved"] - held["allocated"])
        held["reserved"] = held["allocated"]

    device.empty_cache = empty_cache
    mech = GraphDevice(device, device.Graph)
    held.update(reserved=graph_device.TRIM_IDLE_BYTES + (40 << 30), allocated=40 << 30)
    mech.release(device.Graph())  # 8 GiB idle: kept, the next placement reuses it
    assert emptied == []
    held["reserved"] += 1
    mech.release(device.Graph())
    assert emptied == [graph_device.TRIM_IDLE_BYTES + 1]
    assert held["reserved"] == 40 << 30  # the live tensors stay


def test_a_placement_on_fresh_memory_runs_its_slow_calls_untimed():
    # A 2^30-element memory-bound kernel (1.7 ms a call, one call a replay)
    # whose placements 1 and 3 landed on memory the device had just handed
    # out: their first 4 calls run 10 % slow. Timed after one discarded
    # replay, as any later placement is, they read slow, and the probe on
    # the last one, whose replays after the rest are past the slow calls,
    # takes the difference for a power limit. With fresh_calls 4 (the
    # default), those calls run untimed and the side reads its own pace.
    def pace(placement, load, rest):
        return 1.7

    slow = dict(fresh={1, 3}, fresh_slow=(4, 1.1))
    blind, mech, _ = run(pace, settings=replace(SETTINGS, fresh_calls=0), **slow)
    assert blind.calls == 1
    assert [w.samples[0] for w in blind.windows[2:5]] == [pytest.approx(1.87), pytest.approx(1.7),
                                                          pytest.approx(1.87)]
    assert blind.sustained == "ran 9.1 % faster after a 100 ms rest"
    assert blind.fresh_placements == 2  # asked and answered; 0 calls is still one discarded replay
    reading, mech, _ = run(pace, **slow)
    assert reading.sustained is None
    assert reading.placements_ms == [pytest.approx(1.7)] * 4
    assert reading.fresh_placements == 2
    # Each placement is asked once, after its capture: the answer is about
    # its own clones and pool.
    assert mech.asked_fresh == [0, 1, 2, 3]
    # The untimed replays are fresh_calls calls (4 replays of one call), on
    # the fresh placements only; the last one's probe adds its 4.
    assert [g.replays for g in mech.captures[1:]] == [4 + 3, 1 + 3, 4 + 3 + 4]
    # A kernel short enough that one replay holds fresh_calls calls needs
    # nothing more than the discarded replay.
    short, mech, _ = run(lambda p, load, rest: 0.01, fresh={1, 3}, fresh_slow=(4, 1.1))
    assert short.placements_ms == [pytest.approx(0.01)] * 4 and short.fresh_placements == 2
    assert [g.replays for g in mech.captures[1:]] == [1 + 3, 1 + 3, 1 + 3 + 4]


def test_fresh_memory_is_growth_of_the_caches_since_the_last_ask_or_trim():
    device = FakeDeviceModule()
    held = {"reserved": 4 << 30, "allocated": 4 << 30}
    device.memory_reserved = lambda: held["reserved"]
    device.memory_allocated = lambda: held["allocated"]
    device.empty_cache = lambda: held.update(reserved=held["allocated"])
    mech = GraphDevice(device, device.Graph)
    assert mech.took_fresh_memory() is False  # nothing since it was made
    held["reserved"] += 4 << 30  # a placement's clones, from the device
    assert mech.took_fresh_memory() is True
    assert mech.took_fresh_memory() is False  # asked again: nothing new
    # Clones that reuse what the caches hold take nothing from the device.
    held["allocated"] += 4 << 30
    assert mech.took_fresh_memory() is False
    # Emptied, the caches start again from what is live: growth back to the
    # old size is fresh memory again.
    held.update(reserved=held["allocated"] + graph_device.TRIM_IDLE_BYTES + 1)
    assert mech.took_fresh_memory() is True
    assert mech.trim_caches() is True
    held["reserved"] += 2 << 30
    assert mech.took_fresh_memory() is True
    # A device that does not say never reads as fresh.
    bare = FakeDeviceModule()
    assert GraphDevice(bare, bare.Graph).took_fresh_memory() is False


def test_fresh_memory_counts_what_the_caches_took_where_the_device_keeps_that_count():
    # Near the device's capacity an allocation that fails empties the caches
    # and takes memory again: the reserved total can stay flat while the
    # clones lie on fresh memory. torch's cumulative count still grows.
    device = FakeDeviceModule()
    stats = {"reserved_bytes.all.allocated": 10 << 30}
    device.memory_stats = lambda: dict(stats)
    device.memory_reserved = lambda: 10 << 30  # flat throughout
    mech = GraphDevice(device, device.Graph)
    assert mech.took_fresh_memory() is False
    stats["reserved_bytes.all.allocated"] += 4 << 30
    assert mech.took_fresh_memory() is True
    assert mech.took_fresh_memory() is False


def test_a_device_without_memory_queries_is_never_trimmed():
    device = FakeDeviceModule()
    assert GraphDevice(device, device.Graph).trim_caches() is False


def capture_that_fails_midway(device, random_draw=lambda: None):
    mech = GraphDevice(device, device.Graph, random_draw=random_draw)
    calls = []

    def fn():
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("CUDA error: operation not permitted when stream is capturing\nmore")

    class Placed:
        index = 0
        grad_to_none = None

    Placed.fn = staticmethod(fn)
    with mech.side_stream() as stream:
        with pytest.raises(CaptureFailed) as failed:
            mech.capture(Placed, 10)
        still = mech.is_capturing()
    return failed.value, stream, still, mech


def test_a_capture_that_fails_midway_is_ended_where_it_failed():
    device = FakeDeviceModule()
    failed, stream, still, _ = capture_that_fails_midway(device)
    assert failed.reason == ("graph capture of 10 calls failed: RuntimeError: CUDA error: operation not "
                             "permitted when stream is capturing")
    assert failed.left_open is False
    assert device.capturing is None and still is False
    assert stream.synced >= 1 and device.syncs >= 2  # before the capture, and after the failure


def test_a_capture_that_cannot_be_ended_is_reported_open():
    device = FakeDeviceModule(end_ends_capture=False)
    failed, _, still, _ = capture_that_fails_midway(device)
    assert failed.left_open is True and still is True
    assert failed.reason.endswith("(the stream still reads as capturing)")


class FakePools:
    """PrivatePools' calls, recorded: the handles handed out and the pools let go."""

    def __init__(self):
        self.handed = []
        self.ended = []
        self.released = []

    def pools(self):
        def handle():
            self.handed.append(("pool", len(self.handed) + 1))
            return self.handed[-1]

        return PrivatePools(handle, lambda dev, pool: self.released.append((dev, pool)),
                            lambda dev, pool: self.ended.append((dev, pool)), device_index=lambda: 3)


def capture_on_pools(device, fake):
    """A capture of two empty calls on `device` with `fake`'s pools, which the device fails."""
    mech = GraphDevice(device, device.Graph, random_draw=lambda: None, pools=fake.pools())

    class Placed:
        index = 0
        grad_to_none = None
        fn = staticmethod(lambda: None)

    with mech.side_stream():
        with pytest.raises(CaptureFailed) as failed:
            mech.capture(Placed, 2)
    return failed.value


def test_a_failed_capture_lets_its_private_pool_go():
    # torch releases a graph's pool only when its capture ended: a capture
    # that failed would keep every block it allocated for the process's life.
    device, fake = FakeDeviceModule(), FakePools()
    begun = []
    plain_begin = device.Graph.capture_begin

    def capture_begin(graph, pool=None):
        begun.append(pool)
        plain_begin(graph)

    device.Graph.capture_begin = capture_begin
    device.Graph.pool = lambda graph: (_ for _ in ()).throw(RuntimeError("without a preceding successful capture"))
    capture_on_pools(device, fake)
    # The capture began on the handle it was given; the generator's repair
    # (an empty capture, which ends well) on a pool of its graph's own.
    assert begun == [("pool", 1), None]
    assert fake.ended == fake.released == [(3, ("pool", 1))]


def test_a_pool_is_let_go_only_by_whoever_owns_it():
    # A capture that ended and then failed (torch's capture_end can fail in
    # instantiate, after the capture ended): the graph owns the pool, and its
    # reset() releases it, after which pool() raises as it would for a
    # capture that never ended. Asked after the reset, the timer would
    # release the pool a second time.
    device, fake = FakeDeviceModule(), FakePools()
    failing_end = device.Graph.capture_end

    def capture_end(graph):
        graph.ended = True
        failing_end(graph)

    def pool(graph):
        if not getattr(graph, "ended", False):
            raise RuntimeError("without a preceding successful capture")
        return ("pool", 1)

    def reset(graph):
        graph.ended = False

    device.Graph.capture_begin = lambda graph, pool=None: setattr(device, "capturing", device.current_stream())
    device.Graph.capture_end, device.Graph.pool, device.Graph.reset = capture_end, pool, reset
    failed = capture_on_pools(device, fake)
    assert not failed.left_open and fake.released == []
    # A capture still open is not let go: its stream is capturing into the pool.
    device, fake = FakeDeviceModule(end_ends_capture=False), FakePools()
    device.Graph.capture_begin = lambda graph, pool=None: setattr(device, "capturing", device.current_stream())
    failed = capture_on_pools(device, fake)
    assert failed.left_open and fake.released == []
    # Without the device module's calls there are no pools to manage.
    assert PrivatePools.for_device(FakeDeviceModule()) is None


class FakeGenerator:
    """A device random generator that a failed capture leaves in capture mode and
    only a capture that begins and ends cleanly takes out of it (as torch's
    per-generator flag behaves)."""

    def __init__(self, repairable=True, draw_reads_flag=True):
        self.capturing = False
        self.repairable = repairable
        # False: draws go through an override that never reads the flag
        # (FlagGems' rand under use_gems), so they pass while it is set.
        self.draw_reads_flag = draw_reads_flag
        self.draws = 0

    def draw(self):
        self.draws += 1
        if self.capturing and self.draw_reads_flag:
            raise RuntimeError("Offset increment outside graph capture encountered unexpectedly.")


def device_with_generator(generator):
    device = FakeDeviceModule()
    failing = device.Graph

    class Graph(failing):
        first = True

        def capture_begin(self):
            super().capture_begin()
            generator.capturing = True

        def capture_end(self):
            if Graph.first:  # the op's capture fails; the repair's empty one works
                Graph.first = False
                super().capture_end()
            device.capturing = None
            if generator.repairable:
                generator.capturing = False

    device.Graph = Graph
    return device


def test_a_failed_capture_puts_the_random_generator_back():
    generator = FakeGenerator()
    failed, _, _, mech = capture_that_fails_midway(device_with_generator(generator), generator.draw)
    assert "random generator" not in failed.reason
    assert generator.capturing is False and generator.draws == 1  # repaired, then tried
    assert mech.generator_works()


def test_the_generator_is_put_back_even_when_a_draw_cannot_tell():
    # The FlagGems side's failed capture: a draw under use_gems passes on a
    # generator torch's own next draw fails on, so the repair must not wait
    # for a draw to fail.
    generator = FakeGenerator(draw_reads_flag=False)
    failed, _, _, _ = capture_that_fails_midway(device_with_generator(generator), generator.draw)
    assert "random generator" not in failed.reason
    assert generator.capturing is False


def test_a_generator_that_stays_broken_is_named():
    generator = FakeGenerator(repairable=False)
    failed, _, _, _ = capture_that_fails_midway(device_with_generator(generator), generator.draw)
    assert failed.reason.endswith("(the random generator stays in capture mode: later random draws in this "
                                  "process fail)")


def test_a_repair_whose_empty_capture_cannot_end_reports_the_stream_open():
    # The repair opens a capture of its own; should that one not end either,
    # the stream is named as still capturing, not the generator.
    generator = FakeGenerator()
    device = device_with_generator(generator)
    graph_class = device.Graph
    op_capture_end = graph_class.capture_end

    def capture_end(graph):
        if graph_class.first:
            return op_capture_end(graph)  # the op's: ends, and raises
        raise RuntimeError("capture_end failed")  # the repair's: raises, and stays open

    graph_class.capture_end = capture_end
    failed, _, _, _ = capture_that_fails_midway(device, generator.draw)
    assert failed.left_open and failed.reason.endswith("(the stream still reads as capturing)")


def test_no_cache_is_emptied_while_a_failed_capture_stays_open():
    device = FakeDeviceModule(end_ends_capture=False)
    emptied = []
    device.memory_reserved = lambda: 64 << 30
    device.memory_allocated = lambda: 0
    device.empty_cache = lambda: emptied.append(device.capturing is not None)
    failed, _, _, _ = capture_that_fails_midway(device)
    assert failed.left_open and emptied == []


def test_a_pace_that_moved_reports_its_readings_only():
    def drifting(placement, load, rest):
        return 0.050 * (1 + 0.002 * min(load, 100.0))

    reading, _, places = run(drifting, settings=GraphSettings(api="fake.Graph"))
    assert places.entered == [0, 6, 7]  # the first placement, then two readings on fresh ones
    assert reading.placements_ms == reading.readings and len(reading.readings) == 2


def test_a_noisy_side_takes_extra_placements_only_while_noisy():
    # A launch-bound graph on the H200: placements 10 % apart in two clusters.
    def bimodal(placement, load, rest):
        return 0.0011 if placement % 3 == 0 else 0.0010

    reading, mech, places = run(bimodal)
    assert len(reading.placements_ms) == 4  # noisy_placements 0: none extra

    noisy = replace(SETTINGS, noisy_placements=10)
    reading, mech, places = run(bimodal, settings=noisy)
    assert len(reading.placements_ms) == 10 and len(mech.captures) == 10 and not reading.extras_stopped
    assert places.entered == places.exited == list(range(10))
    assert all(g.released for g in mech.captures)
    # Each extra placement is read like the steady pass's later ones.
    assert [len(w.samples) for w in reading.windows[-6:]] == [4] * 6
    assert reading.latency_ms == pytest.approx(sum(reading.placements_ms) / 10)

    # Steady placements, or a range under the bar: nothing extra.
    reading, mech, _ = run(lambda p, load, rest: 0.010, settings=noisy)
    assert len(reading.placements_ms) == 4
    reading, mech, _ = run(bimodal, settings=replace(noisy, noisy_spread_pct=12.0))
    assert len(reading.placements_ms) == 4
    # A cap not above `placements` takes none, and is no error.
    reading, mech, _ = run(bimodal, settings=replace(noisy, noisy_placements=3))
    assert len(reading.placements_ms) == 4


def test_only_the_tested_side_and_only_one_doing_work_takes_extra_placements():
    noisy = replace(SETTINGS, noisy_placements=10)

    def bimodal(placement, load, rest):
        return 0.0011 if placement % 3 == 0 else 0.0010

    # The torch side (the row's control): its six placements are enough.
    reading, mech, _ = run(bimodal, settings=noisy, extra=False)
    assert len(reading.placements_ms) == 4 and len(mech.captures) == 4
    # A view op: 1-2 ns per call ranges widely and means nothing (NO_WORK).
    reading, mech, _ = run(lambda p, load, rest: 2e-6 if p % 2 else 1e-6, settings=noisy)
    assert len(reading.placements_ms) == 4

    assert graph.tested_side({"side": "gems"}) and not graph.tested_side({"side": "base"})


def test_a_capture_that_fails_during_the_extras_ends_them_not_the_side():
    def bimodal(placement, load, rest):
        return 0.0011 if placement % 3 == 0 else 0.0010

    noisy = replace(SETTINGS, noisy_placements=10)
    reading, mech, places = run(bimodal, settings=noisy, fail_capture=lambda index, n: index >= 7)
    assert len(reading.placements_ms) == 7 and reading.extras_stopped  # four steady, three extra, then the failure
    assert places.entered == places.exited == list(range(8))
    assert all(g.released for g in mech.captures)
    assert reading.latency_ms == pytest.approx(sum(reading.placements_ms) / 7)


def test_extra_placements_wait_for_a_power_limited_side_to_be_read_sustained():
    reading, mech, _ = run(power_limited, settings=replace(SETTINGS, noisy_placements=10))
    assert reading.sustained is not None
    assert len(reading.placements_ms) == 4  # sustained levels, not a noisy steady pass


def test_noisy_placements_default_and_settings():
    assert GraphSettings.from_env({}).noisy_placements == 32
    assert GraphSettings.from_env({"ZL_PLACEMENTS_NOISY": "0"}).noisy_placements == 0
    assert GraphSettings.from_env({"ZL_PLACEMENTS": "40"}).placements == 40  # above the cap: no error
    with pytest.raises(SettingsError, match="ZL_PLACEMENTS_NOISY_PCT='0' must be above 0"):
        GraphSettings.from_env({"ZL_PLACEMENTS_NOISY_PCT": "0"})


def test_a_flat_pace_settles_in_two_chunks_and_a_ramp_settles_until_it_is_flat():
    # ZL_GRAPH_SETTLE_FLAT_MS: a memory-bound op's pace holds from the first
    # replay, so two chunks agree at once and the first window starts after
    # ~2 chunks of load, not 70 ms; a pace still falling keeps settling until
    # two chunks agree; one that never settles stops at settle_ms.
    settings = replace(SETTINGS, settle_flat_ms=5.0)
    flat, _, _ = run(lambda p, load, rest: 0.010, settings=settings)
    assert flat.settled_ms is not None and flat.settled_ms < 20.0
    assert flat.windows[0].load_ms < 20.0
    assert flat.placements_ms == [pytest.approx(0.010)] * 4

    def ramp(placement, load, rest):  # 10 % slow at first, flat after 40 ms
        return 0.010 * (1.0 + 0.10 * max(0.0, 40.0 - load) / 40.0)

    ramped, _, _ = run(ramp, settings=settings)
    assert 40.0 <= ramped.settled_ms < SETTINGS.settle_ms
    assert ramped.placements_ms == [pytest.approx(0.010, rel=1e-3)] * 4

    def never(placement, load, rest):  # keeps falling: the cap ends it
        return 0.010 * (1.0 + 1.0 / (1.0 + load))

    capped, _, _ = run(never, settings=replace(settings, stable_pct=1e-6))
    assert capped.settled_ms >= SETTINGS.settle_ms

    # A GEMM whose boost looks flat stops settling early, and is still caught.
    gemm, _, _ = run(power_limited, settings=settings)
    assert gemm.settled_ms < 30.0 and gemm.sustained is not None
    assert gemm.latency_ms == pytest.approx(0.100)

    fixed, _, _ = run(lambda p, load, rest: 0.010)  # ZL_GRAPH_SETTLE_FLAT_MS=0: the full settle, no settled_ms
    assert fixed.settled_ms is None and fixed.windows[0].load_ms >= SETTINGS.settle_ms


def test_the_flat_settle_setting_is_read_and_checked():
    assert TimerSettings.from_env({"ZL_GRAPH_SETTLE_FLAT_MS": "5"}).graph.settle_flat_ms == 5.0
    assert TimerSettings.from_env({}).graph.settle_flat_ms == 5.0
    assert TimerSettings.from_env({"ZL_GRAPH_SETTLE_FLAT_MS": "0"}).graph.settle_flat_ms == 0.0
    with pytest.raises(SettingsError, match="ZL_GRAPH_SETTLE_FLAT_MS"):
        TimerSettings.from_env({"ZL_GRAPH_SETTLE_FLAT_MS": "-1"})
