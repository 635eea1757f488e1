"""ABI 1.2 in the child: the graph timer's power-limit decision from the
device's throttle reasons, and every row placed against the device's peaks.

No torch, no device: the policy runs on the synthetic replayer of
test_graph_policy; the roofline on plain numbers.
"""

import json
import sys
from dataclasses import replace

import pytest

from conftest import PLUGINS
from zltest import executable

sys.path[:0] = [str(PLUGINS)]

from test_graph_policy import SETTINGS, Placements, FakeReplayer, power_limited  # noqa: E402
from zlcore_pytest import _device_state, _roofline  # noqa: E402
from zlcore_pytest.timers import graph_policy  # noqa: E402


# The power decision's reads alone: the clock check, which reads every window,
# has tests of its own (test_clock_check.py).
UNCHECKED = replace(SETTINGS, clock_check="off")


def measure(pace, state, settings=UNCHECKED):
    mech = FakeReplayer(pace)
    reads = []

    def reader():
        reads.append((mech.replayed, len(mech.rests)))  # when it was asked
        return lambda: state

    reading = graph_policy.measure(mech, Placements(), pace(0, 1e9, None), settings, state_reader=reader)
    return reading, reads


def steady(placement, load, rest):
    return 0.010


def test_a_reported_power_cap_sends_a_steady_looking_side_to_sustained_readings():
    reading, reads = measure(steady, {"throttle_reasons": "sw_power_cap", "clock_sm_mhz": 1500})
    assert len(reads) == 1  # once per side
    assert reading.sustained == "device reports sw_power_cap under load"
    assert reading.device_state == {"throttle_reasons": "sw_power_cap", "clock_sm_mhz": 1500}


def test_the_state_is_asked_before_the_last_window_replays_and_no_rest_came_before():
    mech = FakeReplayer(steady)
    asked = []

    def reader():
        asked.append((mech.replayed, len(mech.rests)))
        return lambda: {"throttle_reasons": "none"}

    reading = graph_policy.measure(mech, Placements(), steady(0, 1e9, None), UNCHECKED, state_reader=reader)
    (replayed_before, rests_before), = asked
    last = reading.windows[-1]
    assert last.placement == SETTINGS.placements - 1
    # Every replay after the question is the last window's: its lead replay
    # (the graph's discarded first run) and its samples; no probe followed.
    assert mech.replayed - replayed_before == 1 + len(last.samples)
    assert rests_before == 0 and mech.rests == []


def test_a_state_that_answers_skips_the_probe_and_its_rest():
    reading, _ = measure(power_limited, {"throttle_reasons": "none", "clock_sm_mhz": 1980})
    assert reading.sustained is None  # the device says no power cap: the boost after a rest is not one
    assert reading.after_rest_pct is None  # and the probe did not run
    mech = FakeReplayer(steady)
    graph_policy.measure(mech, Placements(), steady(0, 1e9, None), SETTINGS,
                         state_reader=lambda: (lambda: {"throttle_reasons": "none"}))
    assert mech.rests == []


def jittery(placement, load, rest):
    # Windows of the first placement read 1 % apart without any change of
    # clocks: a launch-bound replay's noise. The pace is otherwise steady.
    # (128 calls a replay: the sizing replays and the settling end at 74.2 ms
    # of load, the first window's samples at 87.0.)
    return 0.010 * (1.01 if 40.0 < load < 87.0 else 1.0)


def test_windows_that_moved_while_the_device_held_its_clocks_are_noise_not_a_pace():
    reading, reads = measure(jittery, {"throttle_reasons": "none"})
    assert reading.sustained is None and reading.readings is None
    assert len(reading.placements_ms) == SETTINGS.placements  # every placement read, for compare's test
    assert reading.noise_note.startswith("window medians ") and "no throttle reason" in reading.noise_note
    assert len(reads) == 2  # the extra window's question, then the last window's
    assert reading.after_rest_pct is None  # the state answered the power question too


@pytest.mark.parametrize("reasons", ["sw_power_cap", "hw_thermal", "idle,sw_thermal"])
def test_windows_that_moved_under_a_throttle_reason_still_go_to_sustained_readings(reasons):
    reading, reads = measure(jittery, {"throttle_reasons": reasons})
    assert reading.sustained is not None and reading.sustained.startswith("window medians ")
    assert reading.noise_note is None
    assert len(reading.readings) == SETTINGS.sustained_readings


def test_windows_that_moved_without_state_go_to_sustained_readings_as_before():
    reading, reads = measure(jittery, None)
    assert reading.sustained.startswith("window medians ") and reading.noise_note is None
    reading, _ = run_without_reader(jittery)
    assert reading.sustained.startswith("window medians ") and reading.noise_note is None


def run_without_reader(pace):
    mech = FakeReplayer(pace)
    return graph_policy.measure(mech, Placements(), pace(0, 1e9, None), SETTINGS), mech


def test_holds_clocks_only_when_the_state_names_no_reason():
    assert _device_state.holds_clocks({"throttle_reasons": "none"}) is True
    assert _device_state.holds_clocks({"throttle_reasons": ""}) is True
    assert _device_state.holds_clocks({"throttle_reasons": "hw_thermal"}) is False
    assert _device_state.holds_clocks({"clock_sm_mhz": 1980}) is False
    assert _device_state.holds_clocks(None) is False


def test_without_state_the_probe_decides_as_before():
    reading, _ = measure(power_limited, None)
    assert reading.sustained == "ran 12.0 % faster after a 100 ms rest"
    assert reading.device_state is None
    reading, _ = measure(power_limited, {"clock_sm_mhz": 1980})  # state, but no throttle reading
    assert reading.sustained == "ran 12.0 % faster after a 100 ms rest"
    assert reading.after_rest_pct == pytest.approx(12.0)


def test_power_limited_names_only_power_reasons():
    assert _device_state.power_limited({"throttle_reasons": "idle,sw_power_cap,hw_thermal"}) == "sw_power_cap"
    assert _device_state.power_limited({"throttle_reasons": "none"}) == ""
    assert _device_state.power_limited({}) is None


def test_no_state_argv_means_no_reader(monkeypatch):
    monkeypatch.delenv("ZL_DEVICE_STATE_ARGV", raising=False)
    assert _device_state.reader() is None
    monkeypatch.setenv("ZL_DEVICE_STATE_ARGV", "not json")
    monkeypatch.setenv("ZL_DEVICE_STATE_ID", "GPU-1")
    assert _device_state.reader() is None


FAKE_SERVER = """#!/usr/bin/python3
import json, sys, time
mode, n = sys.argv[1], 0
for line in sys.stdin:
    n += 1
    if mode == "hang":
        time.sleep(60)
    if mode == "die" and n == 2:
        sys.exit(1)
    device = "GPU-other" if mode == "wrong_id" else "GPU-1"
    answer = {"id": device, "state": {"clock_sm_mhz": 1980 + n, "throttle_reasons": "none"}}
    print("garbage" if mode == "garbage" else json.dumps(answer), flush=True)
"""


def server(monkeypatch, tmp_path, mode):
    script = executable(tmp_path / "fake_zlcore", FAKE_SERVER)
    monkeypatch.setenv("ZL_DEVICE_STATE_ARGV", json.dumps([str(script), mode]))
    monkeypatch.setenv("ZL_DEVICE_STATE_ID", "GPU-1")
    return _device_state.reader()


def test_one_server_answers_every_read_in_order(monkeypatch, tmp_path):
    reader = server(monkeypatch, tmp_path, "ok")
    try:
        first = reader()
        assert first() == {"clock_sm_mhz": 1981, "throttle_reasons": "none"}
        assert first() == {"clock_sm_mhz": 1981, "throttle_reasons": "none"}  # an answer is kept, not read twice
        assert reader()() == {"clock_sm_mhz": 1982, "throttle_reasons": "none"}  # the same process: n counts on
    finally:
        reader.close()


def test_a_server_that_dies_or_answers_nonsense_means_no_state_from_then_on(monkeypatch, tmp_path):
    for mode in ("die", "garbage", "wrong_id"):
        reader = server(monkeypatch, tmp_path, mode)
        first = reader()()
        assert (first is None) == (mode != "die"), mode
        assert reader()() is None, mode
        assert reader()() is None, mode  # and it is not started again
        reader.close()


def test_a_server_that_does_not_answer_in_time_is_stopped(monkeypatch, tmp_path):
    reader = server(monkeypatch, tmp_path, "hang")
    reader._timeout_s = 0.3
    assert reader()() is None
    assert reader()() is None


def test_a_server_that_cannot_start_means_no_state(monkeypatch, tmp_path):
    monkeypatch.setenv("ZL_DEVICE_STATE_ARGV", json.dumps([str(tmp_path / "missing")]))
    monkeypatch.setenv("ZL_DEVICE_STATE_ID", "GPU-1")
    assert _device_state.reader()()() is None


class Tensor:
    def __init__(self, numel, size):
        self._n, self._s = numel, size

    def numel(self):
        return self._n

    def element_size(self):
        return self._s


def test_suite_figures_are_placed_against_the_peaks():
    row = {"dtype": "float16", "latency_ms": 1.0, "gbps": 4000.0, "tflops": 500.0}
    peak = {"memory_bandwidth_peak_gbps": 5000.0, "compute_peak_tflops.float16": 1000.0}
    _roofline.place(row, None, peak)
    assert row["achieved_gbps_source"] == "suite"
    assert row["pct_peak_bandwidth"] == pytest.approx(80.0)
    assert row["pct_peak_compute"] == pytest.approx(50.0)


def test_bandwidth_is_derived_from_the_inputs_where_the_suite_gives_none():
    # abs fp16 over 2^30 elements: 2 GiB in, 2 GiB out, in 1 ms.
    moved = _roofline.input_bytes((Tensor(2**30, 2),), {})
    assert moved == (2**31, 2**31)
    row = _roofline.place({"dtype": "float16", "latency_ms": 1.0, "gbps": None, "tflops": None}, moved,
                          {"memory_bandwidth_peak_gbps": 4294.967296})
    assert row["achieved_gbps"] == pytest.approx(4294.967296)
    assert row["achieved_gbps_source"].startswith("derived")
    assert row["pct_peak_bandwidth"] == pytest.approx(100.0)
    assert row["pct_peak_compute"] is None  # compute is never guessed


def test_no_peaks_no_percentages(monkeypatch):
    monkeypatch.delenv("ZL_DEVICE_PEAKS", raising=False)
    assert _roofline.peaks() == {}
    row = _roofline.place({"dtype": "float32", "latency_ms": 1.0, "gbps": 10.0, "tflops": 1.0}, None, _roofline.peaks())
    assert row["pct_peak_bandwidth"] is None and row["pct_peak_compute"] is None
    monkeypatch.setenv("ZL_DEVICE_PEAKS", '{"memory_bandwidth_peak_gbps": 100, "junk": "x"}')
    assert _roofline.peaks() == {"memory_bandwidth_peak_gbps": 100}
