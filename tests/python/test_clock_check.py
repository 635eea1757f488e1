"""The graph timer's clock check: windows read below a share of the side's
highest SM clock are dropped and taken again; a side that never gets a clean
window has no number; without a device-state reader the check is off and the
timing report (the identity's timer.clock_check) says why.

The policy runs on test_graph_policy's synthetic replayer, whose pace here
follows the clock the scripted state reader reports; the rows and the report
come from real pytest children on the stub suite, with a fake state server.
"""

import json
import sys
from dataclasses import replace

import pytest

from conftest import PLUGINS
from zltest import executable

sys.path[:0] = [str(PLUGINS)]

from test_graph_policy import SETTINGS, FakeReplayer, Placements  # noqa: E402
from zlcore_pytest.timers import clock_check, graph_policy  # noqa: E402
from zlcore_pytest.timers.base import SideThrottled  # noqa: E402
from zlcore_pytest.timers.settings import SettingsError, TimerSettings  # noqa: E402

# A pause the probe's 100 ms rest cannot be taken for.
CHECKED = replace(SETTINGS, clock_check="auto", clock_pause_ms=40.0)
FAST = ["--level", "core", "--warmup", "1", "--iter", "5"]


class ScriptedDevice:
    """A state reader whose n-th answer is states[n] (the last one from then
    on), and a pace that runs slower as that clock is lower: a window's
    replays run at the clock read for it."""

    def __init__(self, states):
        self.states = list(states)
        self.asked = 0
        self.mhz = 1980.0

    def reader(self):
        state = self.states[min(self.asked, len(self.states) - 1)]
        self.asked += 1
        if isinstance(state, dict) and state.get("clock_sm_mhz"):
            self.mhz = float(state["clock_sm_mhz"])
        return lambda: state

    def pace(self, placement, load, rest):
        return 0.010 * 1980.0 / self.mhz


def held(mhz=1980, reasons="none"):
    return {"clock_sm_mhz": mhz, "throttle_reasons": reasons}


def measure(states, settings=CHECKED):
    device = ScriptedDevice(states)
    mech = FakeReplayer(device.pace)
    places = Placements()
    reading = graph_policy.measure(mech, places, 0.010, settings, state_reader=device.reader)
    return reading, mech, device, places


def test_a_window_below_the_threshold_is_dropped_and_taken_again_after_a_pause():
    # The first placement's two windows at 1980 MHz, then the second
    # placement's window at 1300 (66 %): dropped, and its retry at 1980 kept.
    reading, mech, device, _ = measure([held(), held(), held(1300, "hw_slowdown"), held()])
    assert reading.clock_dropped_windows == 1
    assert device.asked == len(reading.windows) + 1  # every window asked once, the dropped one too
    assert [w.placement for w in reading.windows] == [0, 0, 1, 2, 3]  # the pace keeps only what stands
    # The pause before the retry; no probe (the state answered the power question).
    assert mech.rests == [CHECKED.clock_pause_ms]
    # The slow window's samples are nowhere: every placement reads the held pace.
    assert reading.placements_ms == [pytest.approx(0.010)] * 4
    assert max(reading.samples) == pytest.approx(0.010)
    assert reading.sm_clock_mhz == {"min": 1980.0, "median": 1980.0}


def test_the_threshold_is_a_share_of_the_sides_highest_clock():
    # 80 % of 1980 stands at 75 %; at ZL_GRAPH_CLOCK_MIN_PCT=85 it does not.
    states = [held(), held(), held(1584)]
    reading, _, _, _ = measure(states)
    assert reading.clock_dropped_windows == 0
    assert reading.sm_clock_mhz == {"min": 1584.0, "median": 1584.0}  # four of the five windows read 1584
    reading, _, _, _ = measure(states + [held()], replace(CHECKED, clock_min_pct=85.0))
    assert reading.clock_dropped_windows == 1


def test_a_side_that_never_gets_a_clean_window_ends_without_a_number():
    states = [held(), held(), held(900, "hw_slowdown")]
    with pytest.raises(SideThrottled) as err:
        measure(states)
    throttled = err.value
    retries = CHECKED.clock_retries
    assert throttled.dropped == retries + 1
    assert throttled.reason == (f"SM clock below 75 % of the side's 1980 MHz in all {retries + 1} tries of a window "
                                f"({', '.join(['900'] * (retries + 1))} MHz; 40 ms pause before each retry)")
    # Every window it read: the two kept at 1980 and the tries at 900.
    assert throttled.clocks == {"min": 900.0, "median": 900.0}


def test_a_throttled_side_lets_its_placements_and_graphs_go():
    device = ScriptedDevice([held(), held(), held(900)])
    mech = FakeReplayer(device.pace)
    places = Placements()
    with pytest.raises(SideThrottled):
        graph_policy.measure(mech, places, 0.010, replace(CHECKED, clock_retries=0), state_reader=device.reader)
    assert places.entered == places.exited == [0, 1]
    assert all(g.released for g in mech.captures)
    assert mech.rests == []  # no retry, so no pause


def test_no_clean_window_on_an_extra_placement_ends_the_extras_not_the_side():
    # A noisy side (placements 10 % apart) takes extra placements; the
    # clock drops for good during the second one.
    device = ScriptedDevice([held()] * 6 + [held(900, "hw_thermal")])

    def noisy(placement, load, rest):
        return device.pace(placement, load, rest) * (1.1 if placement % 3 == 0 else 1.0)

    mech = FakeReplayer(noisy)
    reading = graph_policy.measure(mech, Placements(), 0.010, replace(CHECKED, noisy_placements=10),
                                   state_reader=device.reader)
    assert reading.extras_stopped is True
    assert len(reading.placements_ms) == 5  # the steady pass's four and the first extra
    assert reading.clock_dropped_windows == CHECKED.clock_retries + 1
    assert all(g.released for g in mech.captures)


def test_the_power_cap_and_an_idle_reading_drop_nothing():
    # Under the board's power limit a GEMM runs at 65-80 % of its boost: the
    # sustained procedure's pace, not a throttle. An idle reading is the rest
    # before the window (NVML lags), not the window.
    reading, mech, _, _ = measure([held(), held(), held(1290, "sw_power_cap"), held(400, "idle"), held()])
    assert reading.clock_dropped_windows == 0
    assert reading.sm_clock_mhz["min"] == 1290.0  # the idle reading is not a clock the side ran at
    assert not [r for r in mech.rests if r == CHECKED.clock_pause_ms]


def test_without_a_reader_or_when_off_the_check_does_not_run():
    device = ScriptedDevice([held(900)])
    reading = graph_policy.measure(FakeReplayer(device.pace), Placements(), 0.010, CHECKED)
    assert reading.clock_dropped_windows is None and reading.sm_clock_mhz is None
    reading, _, device, _ = measure([held(), held(), held(900)], replace(CHECKED, clock_check="off"))
    assert reading.clock_dropped_windows is None and reading.sm_clock_mhz is None
    assert device.asked == 1  # only the power question of the last window, as without the check


def test_the_report_says_why_the_check_was_off():
    sides = clock_check.ClockSides("auto")
    assert sides.report(None) == {
        "setting": "auto", "active": False,
        "why_off": "no device-state reader: the backend answers no ABI 1.2 state queries (ZL_DEVICE_STATE_ARGV unset)",
        "sides_checked": 0, "sides_unchecked": 0, "windows_dropped": 0, "sides_throttled": 0}
    off = clock_check.ClockSides("off")
    assert off.report(None)["why_off"] == "ZL_GRAPH_CLOCK_CHECK=off"


def test_clock_settings_are_validated_with_one_line_each():
    s = TimerSettings.from_env({}).graph
    assert (s.clock_check, s.clock_min_pct, s.clock_retries, s.clock_pause_ms) == ("off", 75.0, 3, 100.0)
    assert TimerSettings.from_env({"ZL_GRAPH_CLOCK_CHECK": " On "}).graph.clock_check == "on"
    report = s.report()
    assert {k: report[k] for k in report if k.startswith("clock_")} == {
        "clock_check": "off", "clock_min_pct": 75.0, "clock_retries": 3, "clock_pause_ms": 100.0}
    for env, message in [
        ({"ZL_GRAPH_CLOCK_CHECK": "maybe"}, "ZL_GRAPH_CLOCK_CHECK='maybe' is not one of off, auto, on"),
        ({"ZL_GRAPH_CLOCK_MIN_PCT": "0"}, "ZL_GRAPH_CLOCK_MIN_PCT='0' must be above 0"),
        ({"ZL_GRAPH_CLOCK_MIN_PCT": "0.75x"}, "ZL_GRAPH_CLOCK_MIN_PCT='0.75x' is not a number"),
        ({"ZL_GRAPH_CLOCK_MIN_PCT": "120"}, "ZL_GRAPH_CLOCK_MIN_PCT='120' must be at most 100"),
        ({"ZL_GRAPH_CLOCK_RETRIES": "-1"}, "ZL_GRAPH_CLOCK_RETRIES='-1' must be at least 0"),
        ({"ZL_GRAPH_CLOCK_PAUSE_MS": "soon"}, "ZL_GRAPH_CLOCK_PAUSE_MS='soon' is not a number"),
    ]:
        with pytest.raises(SettingsError) as err:
            TimerSettings.from_env(env)
        assert str(err.value) == message


# -- in a pytest child -------------------------------------------------------------

# Answers the graph timer's state questions in order: SM clock 1980 MHz for
# the first FIRST_HELD, then 990 MHz (hw_slowdown) from then on.
STATE_SERVER = """#!/usr/bin/python3
import json, sys
held, n = int(sys.argv[1]), 0
for line in sys.stdin:
    n += 1
    mhz, why = (1980, "none") if n <= held else (990, "hw_slowdown")
    print(json.dumps({"id": "GPU-1", "state": {"clock_sm_mhz": mhz, "throttle_reasons": why}}), flush=True)
"""
# abs on three shapes, torch's side first: five windows a side (two on the
# first placement, one on each of three more). The 7th answer is the FlagGems
# side's second window; its third and every later window read 990.
FIRST_HELD = 7


def with_state_server(tmp_path, held=FIRST_HELD):
    script = executable(tmp_path / "fake_state_server", STATE_SERVER)
    return {"ZL_DEVICE_STATE_ARGV": json.dumps([str(script), str(held)]), "ZL_DEVICE_STATE_ID": "GPU-1"}


def test_rows_count_dropped_windows_and_a_throttled_side_has_no_number(run_child, tmp_path):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    ZL_GRAPH_CLOCK_CHECK="auto", ZL_GRAPH_CLOCK_RETRIES="1", ZL_GRAPH_CLOCK_PAUSE_MS="0",
                    **with_state_server(tmp_path))
    assert run.rc == 0, run.output
    first, second, third = run.rows()
    # The first shape's torch side held 1980 MHz in all five windows.
    assert first["clock_dropped_windows_base"] == 0 and first["throttled_base"] is None
    assert first["sm_clock_base_mhz"] == {"min": 1980, "median": 1980}
    assert first["latency_base_ms"] is not None
    # Its FlagGems side: two windows at 1980, then its next window read 990
    # twice (a try and its one retry): no number, and the row says why.
    assert first["latency_ms"] is None and first["speedup"] is None and first["placements_ms"] is None
    assert first["clock_dropped_windows"] == 2
    assert first["throttled"] == ("SM clock below 75 % of the side's 1980 MHz in all 2 tries of a window "
                                  "(990, 990 MHz; 0 ms pause before each retry)")
    assert first["sm_clock_mhz"] == {"min": 990, "median": 1485}
    assert first["error"] == "gems: throttled: " + first["throttled"]
    # Later sides run at 990 from their first window on: that is their own
    # clock, nothing moved, and they keep their numbers.
    for row in (second, third):
        assert row["latency_ms"] is not None and row["throttled"] is None and row["error"] is None
        assert row["clock_dropped_windows"] == row["clock_dropped_windows_base"] == 0
        assert row["sm_clock_mhz"] == {"min": 990, "median": 990}
    timing = run.child("timing")
    assert timing["clock_check"] == {"setting": "auto", "active": True, "why_off": None, "sides_checked": 6,
                                     "sides_unchecked": 0, "windows_dropped": 2, "sides_throttled": 1}
    assert timing["settings"]["graph"]["clock_retries"] == 1


def test_without_a_state_reader_the_check_is_off_and_the_report_says_why(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST, ZL_GRAPH_CLOCK_CHECK="auto")
    assert run.rc == 0, run.output
    for row in run.rows():
        assert row["latency_ms"] is not None
        assert row["clock_dropped_windows"] is None and row["sm_clock_mhz"] is None and row["throttled"] is None
    check = run.child("timing")["clock_check"]
    assert check["setting"] == "auto" and check["active"] is False
    assert check["why_off"].startswith("no device-state reader")
    assert check["sides_unchecked"] == 6


@pytest.mark.parametrize("env, line", [
    ({"ZL_GRAPH_CLOCK_CHECK": "maybe"}, "zlcore timing: ZL_GRAPH_CLOCK_CHECK='maybe' is not one of off, auto, on"),
    ({"ZL_GRAPH_CLOCK_CHECK": "on"}, "zlcore timing: ZL_GRAPH_CLOCK_CHECK=on needs the device's SM clock, and this "
     "run has no device-state reader (the backend answers no ABI 1.2 state queries); auto or off measure without "
     "the check"),
])
def test_a_bad_clock_setting_stops_the_run_before_it_measures(run_child, env, line):
    run = run_child(["benchmark/test_ops.py", "-m", "abs"] + FAST, **env)
    assert run.rc == 4, run.output
    assert [text for text in run.output.splitlines() if "ZL_GRAPH_CLOCK_CHECK" in text] == ["ERROR: " + line]
    assert not run.rows()
