"""The timers' settings, typed, parsed once from the environment.

Every knob is an environment variable (docs/cli.md). A value that does not
parse, or is out of range, is an error that names the variable and what it
accepts: zlcore's interpreter probe asks environment_error() before anything is
written (exit 2), and a child started otherwise stops before measuring
(pytest usage error, exit 4), rather than silently measuring with a default
the user did not ask for. An unset or
empty variable means the default; one of blanks alone is refused, since it is
neither. Numbers are ASCII digits (Python's int() and float() would also take
other scripts' digits and underscores), each within a range wide enough for
any measurement and narrow enough that a typo cannot make a run that never
ends or allocates without bound. `report()` gives what the timing report
records under `settings` (copied into run_identity.json `timer.settings`, a
caliber field of compare), defaults included.
"""

import os
import re
from dataclasses import asdict, dataclass, field
from typing import Mapping, Optional


class SettingsError(ValueError):
    """A variable that cannot be used as given; the message names it."""


# -- parsing ---------------------------------------------------------------------


_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?")

# Upper bounds (docs/cli.md): counts, durations in ms (ten minutes).
MAX_COUNT = 1_000_000
MAX_MS = 600_000.0


def _raw(env, name):
    value = env.get(name)
    if value is None or value == "":
        return None
    if not value.strip():
        raise SettingsError(f"{name}={value!r} is blank; unset it (or set it empty) for the default")
    return value.strip()


def _int(env, name, default, minimum, maximum=MAX_COUNT):
    raw = _raw(env, name)
    if raw is None:
        return default
    if not _INT.fullmatch(raw):
        raise SettingsError(f"{name}={raw!r} is not an integer")
    value = int(raw)
    if value < minimum:
        raise SettingsError(f"{name}={raw!r} must be at least {minimum}")
    if value > maximum:
        raise SettingsError(f"{name}={raw!r} must be at most {maximum}")
    return value


def _float(env, name, default, minimum, inclusive=True, maximum=MAX_MS):
    raw = _raw(env, name)
    if raw is None:
        return default
    if raw.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        raise SettingsError(f"{name}={raw!r} must be finite")
    if not _FLOAT.fullmatch(raw):
        raise SettingsError(f"{name}={raw!r} is not a number")
    value = float(raw)
    if value in (float("inf"), float("-inf")):  # digits past float's range
        raise SettingsError(f"{name}={raw!r} must be finite")
    if value < minimum or (not inclusive and value == minimum):
        raise SettingsError(f"{name}={raw!r} must be {'at least' if inclusive else 'above'} {minimum:g}")
    if value > maximum:
        raise SettingsError(f"{name}={raw!r} must be at most {maximum:g}")
    return value


def _pct(env, name, default):
    return _float(env, name, default, 0.0, inclusive=False, maximum=100.0)


def _choice(env, name, default, allowed):
    raw = _raw(env, name)
    if raw is None:
        return default
    if raw.lower() not in allowed:
        raise SettingsError(f"{name}={raw!r} is not one of {', '.join(allowed)}")
    return raw.lower()


# Placements, readings, repeats and loops: at most this many (as --direct-repeat).
MAX_PLACEMENTS = 1000
# The largest allocator shift, MiB: a shift moves where inputs land; past a few
# GiB it only asks for memory.
MAX_SHIFT_MB = 16384.0
MAX_SEED = 2**32 - 1
MAX_L2_BYTES = 2**40


# -- the settings ----------------------------------------------------------------


@dataclass(frozen=True)
class PlacementSettings:
    """Where each placement's inputs go (every timer)."""

    # Seeds the allocation shift drawn for each placement; a run with the same
    # seed draws the same shifts for the same (op, dtype, shape, side).
    seed: int = 0
    # The largest shift (MiB). Each placement holds one allocation below 1 MiB
    # (the caching allocators' small-block pool) and one of 1 MiB up to this;
    # 0 clones without shifting.
    max_shift_mb: float = 128.0
    # The most of the device's memory (percent of what the allocator may
    # use) one placement's copies of the inputs and its shift may take. A
    # placement that would need more, or more than is free, is not made: the
    # side is measured on the suite's own inputs, once, and the row says so
    # (placement.py). A quarter leaves room for the suite's inputs, the
    # graphs' pools and the outputs of the timed calls on a device of 32 GB.
    memory_pct: float = 25.0

    @classmethod
    def from_env(cls, env):
        return cls(
            seed=_int(env, "ZL_PLACEMENT_SEED", cls.seed, 0, MAX_SEED),
            max_shift_mb=_float(env, "ZL_PLACEMENT_MAX_SHIFT_MB", cls.max_shift_mb, 0.0, maximum=MAX_SHIFT_MB),
            memory_pct=_pct(env, "ZL_PLACEMENT_MEMORY_PCT", cls.memory_pct),
        )


# The graph timer's clock check (ZL_GRAPH_CLOCK_CHECK).
CLOCK_CHECKS = ("off", "auto", "on")


@dataclass(frozen=True)
class GraphSettings:
    """The graph timer (docs/graph-timer.md has the procedure and the reasons)."""

    # Input placements per (shape, side); the latency is the mean of their
    # medians. Six: compare's rank test at 1 % needs five a side to reject at
    # all, and six leave it room for an inversion or two (docs/graph-timer.md).
    placements: int = 6
    # Extra placements for the measured op's steady side (never the torch
    # side: compare tests the op's placements, torch's latency is only its
    # control) whose first `placements` range over more than
    # noisy_spread_pct of their mean: up to this many in all; a value not
    # above `placements` (0) takes none. A launch-bound graph's time varies
    # by several percent from placement to placement, and six cannot show
    # "within 2 %" at that spread (docs/graph-timer.md, "Extra placements
    # for a noisy side", has the measurements behind 32).
    noisy_placements: int = 32
    noisy_spread_pct: float = 3.0
    # Timed replays per placement on a steady side, in ms of device time.
    placement_ms: float = 4.0
    # Target length of one replay: n calls are captured so one replay lasts this.
    replay_ms: float = 1.0
    # Untimed load on the first placement before anything is timed.
    settle_ms: float = 70.0
    # Where above 0: settle no longer than the pace needs, at most settle_ms:
    # replay in chunks of about this much load until two chunks in a row
    # agree within half of stable_pct (graph_policy._settle_until_flat).
    # 0: always the full settle_ms. 5 by default: on an H100 it read the same
    # numbers as the full settle, op for op, for a third less measuring
    # (docs/graph-timer.md, "Settling no longer than needed").
    settle_flat_ms: float = 5.0
    # Calls a later placement runs untimed before its samples when its
    # inputs or its graph's pool took memory the device had just handed out
    # (slow for its first calls); at least one replay either way.
    fresh_calls: int = 4
    # Windows on the first placement; their medians must agree within half of stable_pct.
    min_windows: int = 2
    stable_pct: float = 1.0
    # Samples per window: at least min_samples, at most samples.
    samples: int = 10
    min_samples: int = 3
    max_calls: int = 10000
    estimate_calls: int = 5
    # The probe: idle this long, then up to four replays; a side that runs
    # more than boost_pct faster than its pace under load is power-limited.
    probe_rest_ms: float = 100.0
    boost_pct: float = 2.0
    # A power-limited side: sustained readings, each on its own placement:
    # idle rest_ms, replay until sustained_ms of load, the median of the
    # samples after sustained_from_ms. Two (~1.5 s each; why two:
    # docs/graph-timer.md); 0 means one per placement.
    readings: int = 2
    rest_ms: float = 300.0
    sustained_ms: float = 1200.0
    sustained_from_ms: float = 200.0
    max_windows: int = 1000
    # A file of sides that keep the sustained procedure once one run took it
    # (sticky.py); None: every run decides for itself.
    sustained_rows: Optional[str] = None
    # The clock check (clock_check.py; docs/graph-timer.md, "Clock-checked
    # windows"): "auto" checks where the backend reads the device's state,
    # "on" refuses to measure without that, "off" never asks. A window whose
    # SM clock reads below clock_min_pct of the side's highest is dropped
    # and taken again after clock_pause_ms of idle, at most clock_retries
    # times; then the side reports no number. 75 %: nvbench's threshold.
    # "off" by default until a device's A/A with it on is in: it asks the
    # state server once per window, which no device has timed yet.
    clock_check: str = "off"
    clock_min_pct: float = 75.0
    clock_retries: int = 3
    clock_pause_ms: float = 100.0
    # The graph class, e.g. torch.cuda.CUDAGraph (from the backend's capability).
    api: Optional[str] = None

    @property
    def sustained_readings(self):
        return self.readings or self.placements

    @classmethod
    def from_env(cls, env):
        s = cls(
            placements=_int(env, "ZL_PLACEMENTS", cls.placements, 1, MAX_PLACEMENTS),
            noisy_placements=_int(env, "ZL_PLACEMENTS_NOISY", cls.noisy_placements, 0, MAX_PLACEMENTS),
            noisy_spread_pct=_pct(env, "ZL_PLACEMENTS_NOISY_PCT", cls.noisy_spread_pct),
            placement_ms=_float(env, "ZL_PLACEMENT_MS", cls.placement_ms, 0.0, inclusive=False),
            replay_ms=_float(env, "ZL_GRAPH_REPLAY_MS", cls.replay_ms, 0.0, inclusive=False),
            settle_ms=_float(env, "ZL_GRAPH_SETTLE_MS", cls.settle_ms, 0.0),
            settle_flat_ms=_float(env, "ZL_GRAPH_SETTLE_FLAT_MS", cls.settle_flat_ms, 0.0),
            fresh_calls=_int(env, "ZL_GRAPH_FRESH_CALLS", cls.fresh_calls, 0),
            min_windows=_int(env, "ZL_GRAPH_MIN_WINDOWS", cls.min_windows, 1),
            stable_pct=_pct(env, "ZL_GRAPH_STABLE_PCT", cls.stable_pct),
            samples=_int(env, "ZL_GRAPH_SAMPLES", cls.samples, 1),
            min_samples=_int(env, "ZL_GRAPH_MIN_SAMPLES", cls.min_samples, 1),
            max_calls=_int(env, "ZL_GRAPH_MAX_CALLS", cls.max_calls, 1),
            probe_rest_ms=_float(env, "ZL_GRAPH_PROBE_REST_MS", cls.probe_rest_ms, 0.0),
            boost_pct=_pct(env, "ZL_GRAPH_BOOST_PCT", cls.boost_pct),
            readings=_int(env, "ZL_GRAPH_READINGS", cls.readings, 0, MAX_PLACEMENTS),
            rest_ms=_float(env, "ZL_GRAPH_REST_MS", cls.rest_ms, 0.0),
            sustained_ms=_float(env, "ZL_GRAPH_SUSTAINED_MS", cls.sustained_ms, 0.0, inclusive=False),
            sustained_from_ms=_float(env, "ZL_GRAPH_SUSTAINED_FROM_MS", cls.sustained_from_ms, 0.0),
            max_windows=_int(env, "ZL_GRAPH_MAX_WINDOWS", cls.max_windows, 1),
            sustained_rows=_raw(env, "ZL_GRAPH_SUSTAINED_ROWS"),
            clock_check=_choice(env, "ZL_GRAPH_CLOCK_CHECK", cls.clock_check, CLOCK_CHECKS),
            clock_min_pct=_pct(env, "ZL_GRAPH_CLOCK_MIN_PCT", cls.clock_min_pct),
            clock_retries=_int(env, "ZL_GRAPH_CLOCK_RETRIES", cls.clock_retries, 0),
            clock_pause_ms=_float(env, "ZL_GRAPH_CLOCK_PAUSE_MS", cls.clock_pause_ms, 0.0),
            api=_raw(env, "ZL_GRAPH_API"),
        )
        s.check()
        return s

    def check(self):
        """The relations between settings that a reading needs."""
        if self.min_samples > self.samples:
            raise SettingsError(f"ZL_GRAPH_MIN_SAMPLES ({self.min_samples}) must not exceed "
                                f"ZL_GRAPH_SAMPLES ({self.samples})")
        if self.sustained_ms <= self.sustained_from_ms:
            raise SettingsError(f"ZL_GRAPH_SUSTAINED_MS ({self.sustained_ms:g}) must exceed "
                                f"ZL_GRAPH_SUSTAINED_FROM_MS ({self.sustained_from_ms:g}): no sample would count")

    def report(self):
        out = asdict(self)
        out["readings"] = self.sustained_readings
        return out


@dataclass(frozen=True)
class DirectSettings:
    """The direct timer: one do_bench per placement."""

    # Five: the fewest with which compare's rank test can reject at 1 %.
    repeat: int = 5
    # A side whose do_bench placements would cost more than this, mostly in
    # do_bench's five estimate calls (a host-bound reference of seconds a
    # call), is timed by events on as many placements as this allows, at
    # least one (direct.py).
    budget_ms: float = 2000.0

    @classmethod
    def from_env(cls, env):
        return cls(repeat=_int(env, "ZL_DIRECT_REPEAT", cls.repeat, 1, MAX_PLACEMENTS),
                   budget_ms=_float(env, "ZL_DIRECT_BUDGET_MS", cls.budget_ms, 0.0, inclusive=False))


# What the host timer's loops read (ZL_HOST_CLOCK).
HOST_CLOCKS = ("wall", "thread")


@dataclass(frozen=True)
class HostSettings:
    """The host timer: ZL_HOST_REPEAT placements, each timed in `loops` loops."""

    repeat: int = 5
    loops: int = 3
    # "wall": elapsed time, the latency a caller sees. "thread": the calling
    # thread's CPU time, which leaves out the time it spent descheduled, so a
    # single-threaded host kernel reads the same on a shared, loaded machine
    # (docs/results.md, "The host timer's clock"); it cannot see work
    # done by other threads or on a device, so a torch device refuses it.
    clock: str = "wall"

    @classmethod
    def from_env(cls, env):
        return cls(repeat=_int(env, "ZL_HOST_REPEAT", cls.repeat, 1, MAX_PLACEMENTS),
                   loops=_int(env, "ZL_HOST_LOOPS", cls.loops, 1, MAX_PLACEMENTS),
                   clock=_choice(env, "ZL_HOST_CLOCK", cls.clock, HOST_CLOCKS))


# What the device's L2 holds when a timed call starts (ZL_L2; docs/graph-timer.md,
# "The L2 policy").
L2_POLICIES = ("warm", "cold")


@dataclass(frozen=True)
class L2Settings:
    """The L2 policy, set by zlcore (--l2) with the device's L2 size when cold.

    Not in the timing report's `settings`: zlcore records it in the identity
    (`timer.l2`), so that a warm run's settings read as they did before the
    policy existed."""

    policy: str = "warm"
    # The device's L2 in bytes (its l2_cache_bytes attribute); cold only.
    bytes: int = 0

    @property
    def cold(self):
        return self.policy == "cold"

    @classmethod
    def from_env(cls, env):
        policy = _choice(env, "ZL_L2", cls.policy, L2_POLICIES)
        if policy != "cold":
            return cls(policy=policy)
        size = _int(env, "ZL_L2_BYTES", 0, 0, MAX_L2_BYTES)
        if size <= 0:
            raise SettingsError("ZL_L2=cold needs ZL_L2_BYTES, the device's L2 size in bytes, above 0 "
                                "(zlcore sets it from the backend's l2_cache_bytes)")
        return cls(policy=policy, bytes=size)


@dataclass(frozen=True)
class TimerSettings:
    placement: PlacementSettings = field(default_factory=PlacementSettings)
    graph: GraphSettings = field(default_factory=GraphSettings)
    direct: DirectSettings = field(default_factory=DirectSettings)
    host: HostSettings = field(default_factory=HostSettings)
    l2: L2Settings = field(default_factory=L2Settings)

    @classmethod
    def from_env(cls, env: Optional[Mapping[str, str]] = None):
        env = os.environ if env is None else env
        return cls(
            placement=PlacementSettings.from_env(env),
            graph=GraphSettings.from_env(env),
            direct=DirectSettings.from_env(env),
            host=HostSettings.from_env(env),
            l2=L2Settings.from_env(env),
        )


# Set by zlcore itself for the child, and checked by zlcore before it sets them.
_SET_BY_ZLCORE = ("ZL_L2", "ZL_L2_BYTES")


def environment_error(env: Optional[Mapping[str, str]] = None):
    """The line the child would refuse this environment's timer settings with, or "" when none.

    zlcore's interpreter probe calls this before anything is written, so a
    mistyped variable stops `run`, `batch` or `ab` once, with that line,
    instead of every op's child stopping with it."""
    env = dict(os.environ if env is None else env)
    for name in _SET_BY_ZLCORE:
        env.pop(name, None)
    try:
        TimerSettings.from_env(env)
    except SettingsError as err:
        return str(err)
    if env.get("ZL_COMPILE_AHEAD"):
        from .._precompile import SettingError, threads_from_env

        try:
            threads_from_env(env)
        except SettingError as err:
            return str(err)
    return ""
