"""`zlcore devices --serve-state ID`: the state server the graph timer asks
once per side (ABI 1.2), against the fake backend of tests/loader, and the
timers' own client (zlcore_pytest._device_state) talking to it."""
import json
import os
import subprocess
import sys

import pytest

import zltest
from zltest import SRC, VENDOR, ZLCORE

MINORS = os.environ.get("ZL_MINORS_DIR", "")  # tests/loader's 1.1 and wide backends
sys.path.insert(0, str(SRC / "plugins" / "timers" / "python"))

from zlcore_pytest import _device_state  # noqa: E402

pytestmark = pytest.mark.skipif(not VENDOR, reason="needs ZL_VENDOR_DIR (run through ctest)")


# The server gets none of the caller's ZL_ or FAKE_ variables: the fake backend reads them.
STRIP = ("ZL_", "FAKE_")


def server_argv(device_id):
    return [ZLCORE or "zlcore", "--backend-dir", VENDOR, "devices", "--backend", "fakegpu", "--serve-state", device_id]


def test_each_line_gets_one_answer_and_eof_ends_the_server():
    p = subprocess.run(server_argv("FAKE-0001"), input="\n\n\n", capture_output=True, text=True,
                       env=zltest.clean_env(STRIP, ZL_FAKE_THROTTLE="sw_power_cap"), timeout=30)
    assert p.returncode == 0, p.stderr
    answers = [json.loads(line) for line in p.stdout.splitlines()]
    assert len(answers) == 3
    for a in answers:
        assert a["id"] == "FAKE-0001"
        assert a["state"]["clock_sm_mhz"] == 1501  # the fake reports 1500 + its index
        assert a["state"]["throttle_reasons"] == "sw_power_cap"
    assert p.stderr == ""


def test_an_unknown_device_is_one_line_naming_the_ids_and_exit_2():
    p = subprocess.run(server_argv("FAKE-0009"), input="\n", capture_output=True, text=True,
                       env=zltest.clean_env(STRIP), timeout=30)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr == ("zlcore: devices --serve-state FAKE-0009: fakegpu reports no such device; "
                        "ids: FAKE-0000, FAKE-0001\n")


def test_the_timers_client_reads_through_the_real_server(monkeypatch):
    for key, value in zltest.clean_env(STRIP, ZL_FAKE_THROTTLE="none").items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("ZL_DEVICE_STATE_ARGV", json.dumps(server_argv("FAKE-0000")))
    monkeypatch.setenv("ZL_DEVICE_STATE_ID", "FAKE-0000")
    reader = _device_state.reader()
    try:
        pending = reader()
        state = pending()
        assert state["clock_sm_mhz"] == 1500 and state["throttle_reasons"] == "none"
        assert _device_state.power_limited(state) == ""
        assert reader()()["temperature_c"] == 40  # the same server, asked again
    finally:
        reader.close()


def test_a_backend_without_state_queries_is_refused_in_one_line():
    p = subprocess.run([ZLCORE or "zlcore", "--backend-dir", MINORS, "devices", "--backend", "vone", "--serve-state",
                        "FAKE-0000"], input="\n", capture_output=True, text=True, env=zltest.clean_env(STRIP),
                       timeout=30)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr == "zlcore: devices --serve-state: vone answers no state queries (ABI 1.1; state needs 1.2)\n"
