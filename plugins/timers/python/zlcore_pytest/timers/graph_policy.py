"""The graph timer's policy: what to replay, when to rest, what to keep.

Pure: it only talks to a mechanism (graph_device.GraphDevice, or a fake that
scripts per-call times in the tests) and to a `place(index)` context manager
that yields a placement's callable. The procedure per (shape, side), with the
reasons in docs/graph-timer.md:

  steady pass, on `placements` input placements:
    each placement: capture n calls (n sized on the first so a replay lasts
    about replay_ms), one discarded replay (a fresh graph's first runs slow;
    replays of fresh_calls calls where the placement took memory the device
    had just handed out, whose first calls run slow), then placement_ms of
    samples. The first placement is settled first
    (settle_ms of untimed load) and takes min_windows windows of up to
    `samples` samples (no more than ~WINDOW_MS of them), whose medians must
    agree within half of stable_pct; the last one ends
    with the probe: the device
    idles probe_rest_ms, then a few replays, and if the fastest beats that
    placement's median by more than boost_pct the side is power-limited.
    Where the backend reads the device's state, it is asked during the last
    window, and when its throttle reasons answer the question (decide_by_state)
    the probe is skipped: its rest and replays would decide nothing. When the
    first placement's windows disagree, it is asked during one more window:
    a device that reports no throttle reason at all held its clocks, and the
    disagreement is noise that the placements carry (noise_note).
  held: the latency is the mean of the placements' medians. On the side
    compare tests (extra=True), where the placements range over more than
    noisy_spread_pct of their mean, more placements follow, read the same
    way, up to noisy_placements in all; not for a side that does no work.
  power-limited (the first placement's windows moved, or the probe found a
    boost): the sustained procedure, `readings` readings on fresh placements:
    idle rest_ms, replay until sustained_ms of load, the median of the
    samples after sustained_from_ms. The level is the mean of the readings'
    medians. When the probe found the boost, the steady pass read every
    placement at a held pace, so each placement's value is the level times
    its factor against the steady pass's mean: the row keeps one value per
    placement for compare's rank test while a reading (~1.5 s) is paid only
    `readings` times. When the windows moved, the placements after the first
    were never read, and the values are the readings themselves.

The clock check (clock_check.py), where the backend reads the device's
state and ZL_GRAPH_CLOCK_CHECK is not off: every window asks for the state
as it replays, and one whose SM clock read below clock_min_pct of the side's
highest is dropped, the device idles clock_pause_ms, and the window is taken
again, at most clock_retries times; then the side ends without a number
(SideThrottled).

"Load" is device time spent replaying, counted from the side's first replay
and again from zero after each rest; a window records the load before its
samples. The first replay after the host synchronized is never timed: a
window leads with an extra replay unless untimed replays precede it. (The
sizing's warm replay is such a first replay: it only sizes the graph.)
"""

import math
from dataclasses import dataclass
from typing import List, Optional

from .. import _stats
from .._device_state import holds_clocks, power_limited
from .base import CaptureFailed, SideThrottled
from .clock_check import ClockCheck, clock_of

# The probe's replays span about this much load (at least one replay): a
# boost after a short rest may last only a few replays, and a long kernel's
# probe costs its replays.
PROBE_MS = 20.0
# The most load a window may take where the pace is judged (the first
# placement's windows, the sustained readings'), which otherwise hold
# `samples` samples: enough that two windows' medians 0.5 % apart are a moved
# pace rather than replay noise.
WINDOW_MS = 20.0
# Below this per call a side launches nothing worth timing: compare calls a
# row whose sides are both under it NO_WORK (core kNoWorkMs), so extra
# placements would time an empty graph more precisely at ~100 ms each.
NO_WORK_MS = 1e-4
# Near the n Triton's do_bench_cudagraph uses when the eager estimate reads
# 0 ms (1000), as a power of two like every other size.
CALLS_WHEN_ESTIMATE_IS_ZERO = 1024
# The most host time one capture may take, estimated as calls x the eager
# per-call time (the host's time per call where launches are host-bound): a
# kernel of a few microseconds behind a slow Python wrapper would otherwise be
# captured thousands of times on every placement.
CAPTURE_BUDGET_MS = 200.0
# Resizes of the first placement's graph: a replay of few calls carries the
# graph launch's own cost, so the size read from it can be one step short;
# the resized graph's own replay settles it.
SIZING_ROUNDS = 2


@dataclass
class Window:
    placement: int
    load_ms: float  # device load before its samples
    samples: List[float]  # ms per call

    @property
    def median(self):
        return _stats.median(self.samples)


@dataclass
class Reading:
    """What the procedure read for one side."""

    latency_ms: float
    # Each placement's median, ms per call; for a power-limited side, each
    # placement's factor at the sustained level (scaled_to_level).
    placements_ms: List[float]
    readings_ms: Optional[List[float]]  # the sustained readings' medians; None: the pace held
    samples: List[float]  # the samples the values come from
    windows: List[Window]
    sustained: Optional[str]  # why the sustained procedure ran; None: the pace held
    settled: bool  # False: the window cap cut a sustained reading short
    after_rest_pct: Optional[float]  # the probe's finding; None: no probe ran
    calls: int  # calls per replay
    discarded_ms: float  # the first placement's discarded replay
    # The device's state read under load, before the probe's rest (ABI 1.2
    # backends); None where the backend offers none.
    device_state: Optional[dict] = None
    # The first placement's windows moved while the device reported no
    # throttle reason: the steady pass went on (None: they agreed).
    noise_note: Optional[str] = None
    # A capture failed during the noisy extra placements, or the clock check
    # got no clean window on one, which ended them.
    extras_stopped: bool = False
    # Placements after the first whose memory the device had just handed
    # out, so that fresh_calls calls ran untimed before their samples.
    fresh_placements: int = 0
    # Load the first placement's settling took where it stopped once the pace
    # was flat (settle_flat_ms); None: the fixed settle_ms.
    settled_ms: Optional[float] = None
    # The clock check (clock_check.py): windows dropped for a low SM clock,
    # and the clocks the kept windows read ({"min", "median"} MHz). None
    # where the check was off; sm_clock_mhz None where no reading had a clock.
    clock_dropped_windows: Optional[int] = None
    sm_clock_mhz: Optional[dict] = None

    @property
    def readings(self):
        return list(self.readings_ms) if self.readings_ms is not None else None

    @property
    def pace(self):
        """Per window: load before its samples, its median, its placement."""
        return [[round(w.load_ms, 1), float(f"{w.median:.6g}"), w.placement] for w in self.windows]


def _nearest_power_of_two(x):
    """The power of two nearest x on a log scale: within a factor of sqrt(2)."""
    calls = 1
    while calls * math.sqrt(2.0) < x:
        calls *= 2
    return calls


def _power_of_two_at_most(x):
    calls = 1
    while calls * 2 <= x:
        calls *= 2
    return calls


def calls_for(per_call_ms, eager_ms, s):
    """Calls per replay: the power of two whose replay lasts nearest replay_ms
    at per_call_ms (between 0.71 and 1.41 times it), within CAPTURE_BUDGET_MS
    of host time at eager_ms a call and within max_calls.

    A power of two, so that processes whose readings of the same kernel differ
    by a few percent build the same graph and spread the graph launch's own
    cost alike; an eager estimate alone reads the host where the op's wrapper
    is slower than its kernel, and varies from process to process
    (docs/graph-timer.md, step 1).
    """
    if per_call_ms <= 0:
        calls = CALLS_WHEN_ESTIMATE_IS_ZERO
    else:
        calls = _nearest_power_of_two(s.replay_ms / per_call_ms)
    if eager_ms > 0:
        calls = min(calls, _power_of_two_at_most(CAPTURE_BUDGET_MS / eager_ms))
    return int(min(max(calls, 1), s.max_calls))


def _count(window_ms, replay_ms, s):
    if replay_ms <= 0:
        return s.samples
    return int(min(max(round(window_ms / replay_ms), s.min_samples), s.samples))


class _Side:
    def __init__(self, mech, place, eager_ms, s):
        self.mech = mech
        self.place = place
        self.s = s
        self.eager_ms = eager_ms
        self.calls = calls_for(eager_ms, eager_ms, s)
        self.replay_ms = 0.0  # per replay, once sized
        self.load = 0.0
        self.windows: List[Window] = []
        # Where the backend reads state: asks now, returns a callable that
        # waits for the answer (a state dict, or None): _device_state.StateReader.
        self.state_reader = None
        self.state_under_load = None
        self.noise_note = None  # windows that moved while the device held its clocks
        self.fresh_placements = 0  # later placements that ran fresh_calls untimed (_later_window)
        self.settled_ms = None  # load the flat settling took (_settle_until_flat); None: the fixed settle
        self.clock = None  # the clock check (clock_check.ClockCheck); None: off

    # -- pieces ------------------------------------------------------------------

    def _window(self, graph, placement, count, untimed, watch=False):
        """A window of `count` samples. With the clock check, one whose SM
        clock read low is dropped and taken again (untimed replays and all)
        after a pause; SideThrottled when every try read low."""
        tried = []
        while True:
            window, state = self._replayed_window(graph, placement, count, untimed, watch)
            if self.clock is None or self.clock.keep(state):
                self.windows.append(window)
                return window
            tried.append(clock_of(state))
            if len(tried) > self.clock.retries:
                raise self.clock.throttled(tried)
            self._rest(self.clock.pause_ms)

    def _replayed_window(self, graph, placement, count, untimed, watch):
        lead = 0 if untimed else 1
        # The state is asked for before the replays and read after them, so
        # the backend reads the device while they run (under load).
        ask = self.state_reader is not None and (watch or self.clock is not None)
        pending = self.state_reader() if ask else None
        times = self.mech.replays(graph, count + lead, untimed)
        state = pending() if pending is not None else None
        if watch and pending is not None:
            self.state_under_load = state
        self.load += untimed * self.replay_ms + sum(times[:lead])
        window = Window(placement, self.load, [t / self.calls for t in times[lead:]])
        self.load += sum(times[lead:])
        return window, state

    def _rest(self, ms):
        self.mech.rest(ms)
        self.load = 0.0

    def _sized_graph(self, placed):
        """The first placement's graph, sized from its own replays.

        The eager estimate gives the first size; a host-bound one (a slow
        wrapper around a small kernel) reads the host, not the device. So the
        graph's first replay is discarded (a fresh graph's runs slow), the
        second gives the device's time per call, and the graph is captured
        again at the size that time asks for (calls_for), up to SIZING_ROUNDS
        times, until a warm replay confirms the size."""
        graph = self.mech.capture(placed, self.calls)
        try:
            first = self.mech.replay_ms(graph)
            warm = self.mech.replay_ms(graph)
            self.load += first + warm
            for _ in range(SIZING_ROUNDS):
                wanted = calls_for(warm / self.calls, self.eager_ms, self.s)
                if wanted == self.calls:
                    break
                self.mech.release(graph)
                graph = None
                graph = self.mech.capture(placed, wanted)
                self.calls = wanted
                first = self.mech.replay_ms(graph)
                warm = self.mech.replay_ms(graph)
                self.load += first + warm
        except BaseException:
            if graph is not None:
                self.mech.release(graph)
            raise
        self.replay_ms = warm
        return graph, first

    # -- the steady pass -----------------------------------------------------------

    def steady(self):
        s = self.s
        placements, samples = [], []
        drift = after_rest = None
        discarded = 0.0
        for index in range(s.placements):
            with self.place(index) as placed:
                if index == 0:
                    graph, discarded = self._sized_graph(placed)
                else:
                    graph = self.mech.capture(placed, self.calls)
                # Asked for every placement, so that each answer is about its
                # own clones and pool; the first settles anyway.
                fresh = self.mech.took_fresh_memory()
                try:
                    last = index == s.placements - 1
                    if index == 0:
                        count = _count(WINDOW_MS, self.replay_ms, s)
                        settle = self._settle_until_flat(graph) if s.settle_flat_ms > 0 else (
                            int(math.ceil(s.settle_ms / self.replay_ms)) if self.replay_ms > 0 else 0)
                        mine = [self._window(graph, index, count, settle, watch=last and s.min_windows == 1)]
                        mine += [self._window(graph, index, count, 0, watch=last and k == s.min_windows - 2)
                                 for k in range(s.min_windows - 1)]
                        drift = _stats.range_pct([w.median for w in mine])
                        if drift > s.stable_pct / 2 and self.state_reader is not None:
                            # Windows that moved on a device that, asked under
                            # load, reports no throttle reason at all: its
                            # clocks held, so the move was the replays' own
                            # noise (a launch-bound graph of a few-us kernel, a
                            # view op that launches nothing). The placements
                            # then carry that noise to compare's test, rather
                            # than two sustained readings too few to test.
                            mine.append(self._window(graph, index, count, 0, watch=True))
                            if holds_clocks(self.state_under_load):
                                self.noise_note = (f"window medians {drift:.1f} % apart with no throttle reason "
                                                   "under load: read as noise")
                                drift = None
                    else:
                        mine = [self._later_window(graph, index, watch=last, fresh=fresh)]
                    taken = [x for w in mine for x in w.samples]
                    placements.append(_stats.median(taken))
                    samples += taken
                    if drift is not None and drift > s.stable_pct / 2:
                        # The pace moves with load: later placements would be
                        # read at other paces, so their factors would mean nothing.
                        return placements, samples, discarded, f"window medians {drift:.1f} % apart", None
                    if last and power_limited(self.state_under_load) is None:
                        # Only where the device does not say whether it holds
                        # the clocks down for power: its answer decides
                        # (decide_by_state), so the probe's rest would be paid
                        # for nothing.
                        after_rest = self._faster_after_rest_pct(graph, placements[-1])
                finally:
                    self.mech.release(graph)
        why = None
        if after_rest is not None and after_rest > s.boost_pct:
            why = f"ran {after_rest:.1f} % faster after a {s.probe_rest_ms:g} ms rest"
        return placements, samples, discarded, why, after_rest

    def _settle_until_flat(self, graph):
        """Settle no longer than the pace needs: timed chunks of about
        settle_flat_ms of load (the first replay of each, after the host
        synchronized, not counted) until two in a row have medians within half
        of stable_pct, and no more than settle_ms of load. Returns the untimed
        replays still owed to the first window: none, so it leads with an
        extra replay of its own."""
        s = self.s
        per_chunk = max(2, int(math.ceil(s.settle_flat_ms / self.replay_ms))) if self.replay_ms > 0 else 2
        medians = []
        while self.load < s.settle_ms:
            times = self.mech.replays(graph, per_chunk + 1, 0)
            self.load += sum(times)
            medians.append(_stats.median(times[1:]))
            if len(medians) >= 2 and _stats.range_pct(medians[-2:]) <= s.stable_pct / 2:
                break
        self.settled_ms = self.load
        return 0

    def _faster_after_rest_pct(self, graph, held_ms):
        """How much faster than `held_ms` a few replays run after a short rest:
        a power-limited kernel is back at its boost, a steady one is not."""
        s = self.s
        self._rest(s.probe_rest_ms)
        # The fastest replay, the first included; up to four, ~PROBE_MS of them.
        replays = 1
        if self.replay_ms > 0:
            replays = int(min(s.min_samples + 1, max(1, math.ceil(PROBE_MS / self.replay_ms))))
        probe = min(self.mech.replays(graph, replays, 0)) / self.calls
        return (held_ms - probe) / held_ms * 100.0 if held_ms > 0 else 0.0

    def _later_window(self, graph, index, watch=False, fresh=False):
        """A placement after the first: placement_ms of samples, after the
        fresh graph's discarded replay; on memory the device had just handed
        out (fresh), after replays of at least fresh_calls calls."""
        untimed = 1
        if fresh:
            untimed = max(1, math.ceil(self.s.fresh_calls / self.calls))
            self.fresh_placements += 1
        return self._window(graph, index, _count(self.s.placement_ms, self.replay_ms, self.s), untimed, watch=watch)

    def more_placements(self, placements, samples):
        """Placements after the steady pass, while the values range over more
        than noisy_spread_pct, up to noisy_placements in all; each read as the
        steady pass reads a placement after its first. Returns True when a
        failed capture, or a placement with no clean window, ended them early."""
        s = self.s
        index = len(placements)
        if _stats.mean(placements) < NO_WORK_MS:
            return False
        while index < s.noisy_placements and _stats.range_over_mean_pct(placements) > s.noisy_spread_pct:
            with self.place(index) as placed:
                try:
                    graph = self.mech.capture(placed, self.calls)
                except CaptureFailed:
                    # The steady pass stands on its own: a capture that fails
                    # now (memory, most likely) ends the extras, not the side.
                    return True
                try:
                    window = self._later_window(graph, index, fresh=self.mech.took_fresh_memory())
                except SideThrottled:
                    # Likewise a placement the clock check got no clean
                    # window on: the steady pass's windows were clean.
                    return True
                finally:
                    self.mech.release(graph)
            placements.append(_stats.median(window.samples))
            samples += window.samples
            index += 1
        return False

    # -- the sustained procedure ---------------------------------------------------

    def sustained(self):
        s = self.s
        count = _count(WINDOW_MS, self.replay_ms, s)
        readings, counted_all, complete = [], [], True
        for j in range(s.sustained_readings):
            index = s.placements + j
            with self.place(index) as placed:
                graph = self.mech.capture(placed, self.calls)
                try:
                    self.mech.replay_ms(graph)  # a fresh graph's slow replay, before the rest
                    self._rest(s.rest_ms)
                    mine = []
                    while not mine or not (self.load >= s.sustained_ms or len(mine) >= s.max_windows):
                        mine.append(self._window(graph, index, count, 0))
                finally:
                    self.mech.release(graph)
            counted = [x for w in mine if w.load_ms >= s.sustained_from_ms for x in w.samples]
            # Cut short by the window cap: the last window stands in, and the
            # side counts as unsettled.
            complete = complete and bool(counted) and self.load >= s.sustained_ms
            counted = counted or mine[-1].samples
            readings.append(_stats.median(counted))
            counted_all += counted
        return readings, counted_all, complete


def scaled_to_level(placements, level):
    """Each placement's value at a sustained level: level times the placement's
    factor against the steady pass's mean (so the values' mean is the level)."""
    mean = _stats.mean(placements)
    if mean <= 0:
        return [level for _ in placements]
    return [level * p / mean for p in placements]


def decide_by_state(why, state):
    """Where the device reports its throttle reasons under load, they decide
    whether the side is power-limited, not the probe's timing: a power cap
    sends it to the sustained procedure, and a probe boost without one is
    not a power limit. A pace that moved (window drift) still counts.
    Without a reading, the probe's verdict stands."""
    power = power_limited(state)
    if power is None:
        return why
    if power:
        return why if why is not None and not why.startswith("ran ") else f"device reports {power} under load"
    return None if why is not None and why.startswith("ran ") else why


def measure(mech, place, eager_ms, settings, state_reader=None, extra=True, pinned=None):
    """Read one side; raises CaptureFailed where the mechanism cannot capture or replay,
    SideThrottled where the clock check got no clean window.
    extra: the side may take the noisy extra placements (the side compare tests).
    pinned: why the side takes the sustained procedure whatever this run
    decides (an earlier run took it: sticky.py), or None."""
    side = _Side(mech, place, eager_ms, settings)
    side.state_reader = state_reader
    if state_reader is not None and settings.clock_check != "off":
        side.clock = ClockCheck(settings.clock_min_pct, settings.clock_retries, settings.clock_pause_ms)
    placements, samples, discarded, why, after_rest = side.steady()
    why = decide_by_state(why, side.state_under_load) or pinned
    if not placements:
        raise CaptureFailed("no placement was measured")
    settled = True
    readings = None
    extras_stopped = False
    if extra and why is None and len(placements) == settings.placements:
        extras_stopped = side.more_placements(placements, samples)
    if why is not None:
        readings, samples, settled = side.sustained()
        if len(placements) == settings.placements:
            # The pace held through the steady pass (the probe found the boost):
            # its placements' factors are clean, carried to the sustained level.
            placements = scaled_to_level(placements, _stats.mean(readings))
        else:
            # The pace moved within the first placement: only the readings,
            # each on its own placement, say anything (compare may call the
            # row unconfirmed with so few).
            placements = list(readings)
    return Reading(
        latency_ms=_stats.mean(placements),
        placements_ms=placements,
        readings_ms=readings,
        samples=samples,
        windows=side.windows,
        sustained=why,
        settled=settled,
        after_rest_pct=None if after_rest is None else round(after_rest, 2),
        calls=side.calls,
        discarded_ms=discarded,
        device_state=side.state_under_load,
        noise_note=side.noise_note,
        extras_stopped=extras_stopped,
        fresh_placements=side.fresh_placements,
        settled_ms=None if side.settled_ms is None else round(side.settled_ms, 2),
        clock_dropped_windows=None if side.clock is None else side.clock.dropped,
        sm_clock_mhz=None if side.clock is None else side.clock.summary(),
    )
