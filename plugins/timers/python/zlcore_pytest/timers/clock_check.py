"""The graph timer's clock check: a window read while the SM clock sat far
below the side's own is dropped and taken again after a pause.

Where the backend reads the device's state (ABI 1.2; _device_state.py), every
measurement window asks for it as its replays are queued, so the state server
reads the clock from its own process while they run (an NVML query: no work
on the device). A reading is judged when it has a clock_sm_mhz and does not
name "idle" (NVML's clock lags the load by tens of ms, so a window that
follows a rest can still read the idle clock: that is the rest, not the
window). Its reference is the highest clock the side has read so far: a
window below min_pct of it ran while something held the clock down (a thermal
or hardware slowdown, another process's clock setting), and its samples would
be slower for a reason that has nothing to do with the op.

The board's own power limit is not such a reason: under it a GEMM runs at
1290-1560 MHz of 1980 (docs/results.md), below 75 %, and that is the pace the
sustained procedure sets out to measure. A window whose reading names the
power cap is kept whatever its clock.

The side's highest clock, not a default clock the backend reports: the child
knows no default clock (the attributes carry the application clock, which
clocks locked with `nvidia-smi -lgc` leave where it was, so that every window
of a locked device would read as throttled), and what changes a side's number
is its clock moving between its own windows. docs/graph-timer.md, "Clock-checked
windows", has the settings and what a row says.
"""

from .. import _stats
from .base import SideThrottled

# The reason NVML names while nothing runs on the device.
IDLE = "idle"
# The board's own power limit (the sustained procedure's subject). Not
# hw_power_brake: that is a brake the system asserts from outside.
POWER_CAP = ("sw_power_cap", "power_cap")


def _reasons(state):
    named = state.get("throttle_reasons") if isinstance(state, dict) else None
    if not isinstance(named, str):
        return ()
    return tuple(r.strip() for r in named.split(",") if r.strip())


def clock_of(state):
    """The SM clock (MHz) a reading can be judged on; None where it has none,
    or names the device idle."""
    if not isinstance(state, dict):
        return None
    mhz = state.get("clock_sm_mhz")
    if isinstance(mhz, bool) or not isinstance(mhz, (int, float)) or not mhz > 0:
        return None
    if IDLE in _reasons(state):
        return None
    return mhz


class ClockCheck:
    """One side's clock check: which windows stand, and what the side read."""

    def __init__(self, min_pct, retries, pause_ms):
        self.min_pct = min_pct
        self.retries = retries
        self.pause_ms = pause_ms
        self.highest = None  # the side's highest judged clock (MHz)
        self.kept = []  # the judged clocks of the windows that stand
        self.dropped = 0

    @property
    def judged(self):
        """Whether any reading of the side had a clock to judge."""
        return self.highest is not None

    def keep(self, state):
        """True: the window stands (its clock held, it ran under the power
        cap, or its reading cannot be judged); False: drop it."""
        mhz = clock_of(state)
        if mhz is None:
            return True
        self.highest = mhz if self.highest is None else max(self.highest, mhz)
        if mhz >= self.highest * self.min_pct / 100.0 or any(r in POWER_CAP for r in _reasons(state)):
            self.kept.append(mhz)
            return True
        self.dropped += 1
        return False

    def throttled(self, tried):
        """The side's end when every try of one window read below the threshold."""
        clocks = ", ".join(f"{mhz:g}" for mhz in tried)
        return SideThrottled(
            f"SM clock below {self.min_pct:g} % of the side's {self.highest:g} MHz in all {len(tried)} tries "
            f"of a window ({clocks} MHz; {self.pause_ms:g} ms pause before each retry)",
            dropped=self.dropped, clocks=self.summary(tried))

    def summary(self, extra=()):
        """The clocks the side's windows read (MHz): min and median; None when none was read."""
        clocks = list(self.kept) + [mhz for mhz in extra if mhz is not None]
        if not clocks:
            return None
        return {"min": min(clocks), "median": _stats.median(clocks)}


class ClockSides:
    """The clock check over a run's graph-timed sides, for the timing report
    (the identity's timer.clock_check): the setting, whether the check was
    active on every side and why not, the windows it dropped and the sides
    it left without a number."""

    def __init__(self, setting):
        self.setting = setting
        self.checked = 0  # sides with at least one judged reading
        self.unchecked = 0  # sides measured without one
        self.windows_dropped = 0
        self.throttled_sides = 0

    def measured(self, reading):
        if reading.clock_dropped_windows is None:
            self.unchecked += 1
            return
        self.windows_dropped += reading.clock_dropped_windows
        if reading.sm_clock_mhz is None:
            self.unchecked += 1
        else:
            self.checked += 1

    def throttled(self, exc):
        self.checked += 1
        self.throttled_sides += 1
        self.windows_dropped += exc.dropped

    def report(self, reader):
        active = self.setting != "off" and self.checked > 0 and self.unchecked == 0
        return {"setting": self.setting, "active": active, "why_off": None if active else self._why_off(reader),
                "sides_checked": self.checked, "sides_unchecked": self.unchecked,
                "windows_dropped": self.windows_dropped, "sides_throttled": self.throttled_sides}

    def _why_off(self, reader):
        if self.setting == "off":
            return "ZL_GRAPH_CLOCK_CHECK=off"
        if reader is None:
            return ("no device-state reader: the backend answers no ABI 1.2 state queries "
                    "(ZL_DEVICE_STATE_ARGV unset)")
        if self.checked + self.unchecked == 0:
            return "no side was measured by the graph timer"
        if not reader.answering:
            return (f"the device-state server stopped answering: {self.unchecked} of "
                    f"{self.checked + self.unchecked} sides unchecked")
        return (f"the device's state had no SM clock to judge (clock_sm_mhz, not idle): {self.unchecked} of "
                f"{self.checked + self.unchecked} sides unchecked")
