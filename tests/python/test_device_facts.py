"""ABI 1.2 in the child: the graph timer's power-limit decision from the
device's throttle reasons, and every row placed against the device's peaks.

No torch, no device: the policy runs on the synthetic replayer of
test_graph_policy; the roofline on plain numbers.
"""

import json
import sys

import pytest

from conftest import PLUGINS

sys.path[:0] = [str(PLUGINS)]

from test_graph_policy import SETTINGS, Placements, FakeReplayer, power_limited  # noqa: E402
from zlcore_pytest import _device_state, _roofline  # noqa: E402
from zlcore_pytest.timers import graph_policy  # noqa: E402


def measure(pace, state):
    mech = FakeReplayer(pace)
    reads = []

    def reader():
        reads.append(1)
        return state

    reading = graph_policy.measure(mech, Placements(), pace(0, 1e9, None), SETTINGS, state_reader=reader)
    return reading, reads


def steady(placement, load, rest):
    return 0.010


def test_a_reported_power_cap_sends_a_steady_looking_side_to_sustained_readings():
    reading, reads = measure(steady, {"throttle_reasons": "sw_power_cap", "clock_sm_mhz": 1500})
    assert reads == [1]  # once per side, under load
    assert reading.sustained == "device reports sw_power_cap under load"
    assert reading.device_state == {"throttle_reasons": "sw_power_cap", "clock_sm_mhz": 1500}


def test_without_a_power_reason_the_probe_boost_is_not_a_power_limit():
    reading, _ = measure(power_limited, {"throttle_reasons": "none", "clock_sm_mhz": 1980})
    assert reading.sustained is None
    assert reading.after_rest_pct == pytest.approx(12.0)  # the probe still ran and is on record


def test_without_state_the_probe_decides_as_before():
    reading, _ = measure(power_limited, None)
    assert reading.sustained == "ran 12.0 % faster after a 100 ms rest"
    assert reading.device_state is None
    reading, _ = measure(power_limited, {"clock_sm_mhz": 1980})  # state, but no throttle reading
    assert reading.sustained == "ran 12.0 % faster after a 100 ms rest"


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


def test_the_reader_runs_the_argv_and_picks_the_device(monkeypatch, tmp_path):
    listing = {"devices": [{"id": "GPU-0", "state": {"clock_sm_mhz": 1}},
                           {"id": "GPU-1", "state": {"clock_sm_mhz": 1980, "throttle_reasons": "none"}}]}
    script = tmp_path / "fake_zlcore"
    script.write_text("#!/bin/sh\ncat <<'J'\n" + json.dumps(listing) + "\nJ\n")
    script.chmod(0o755)
    monkeypatch.setenv("ZL_DEVICE_STATE_ARGV", json.dumps([str(script), "devices", "--json"]))
    monkeypatch.setenv("ZL_DEVICE_STATE_ID", "GPU-1")
    assert _device_state.reader()() == {"clock_sm_mhz": 1980, "throttle_reasons": "none"}


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
