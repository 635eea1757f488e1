"""The host timer's clocks, told apart by what they count: an op that sleeps."""

import sys
import time

import pytest

from conftest import PLUGINS

sys.path[:0] = [str(PLUGINS)]

from zlcore_pytest.timers import host, placement  # noqa: E402
from zlcore_pytest.timers.base import SideCall  # noqa: E402
from zlcore_pytest.timers.settings import PlacementSettings, SettingsError, TimerSettings  # noqa: E402

SLEEP_S = 0.002


def sleeping_call():
    # A call that waits rather than works: descheduled time, as on a busy machine.
    return SideCall(args=(), kwargs={}, build=lambda args, kwargs: (lambda: time.sleep(SLEEP_S), None),
                    context={"op": "sleep", "dtype": "float32", "shape": "[1]", "side": "gems"})


def timer(monkeypatch, clock):
    monkeypatch.delenv("ZL_TORCH_DEVICE", raising=False)  # the host, not a torch device
    settings = TimerSettings.from_env({"ZL_HOST_CLOCK": clock, "ZL_HOST_REPEAT": "2", "ZL_HOST_LOOPS": "2"})
    placer = placement.Placer(PlacementSettings(max_shift_mb=0), placement.HostMemory())
    return host.create(settings, placer)


def test_the_wall_clock_counts_the_wait_and_the_thread_clock_does_not(monkeypatch):
    wall = timer(monkeypatch, "wall").measure(sleeping_call())
    thread = timer(monkeypatch, "thread").measure(sleeping_call())
    assert len(wall.placements_ms) == len(thread.placements_ms) == 2
    # A sleep lasts at least its time on the wall, and costs the thread a
    # system call's worth of CPU, well under a tenth of it however busy the machine.
    assert min(wall.placements_ms) >= SLEEP_S * 1000
    assert max(thread.placements_ms) < SLEEP_S * 1000 / 10


def test_the_thread_clock_is_refused_on_a_torch_device(monkeypatch):
    monkeypatch.setenv("ZL_TORCH_DEVICE", "cuda")
    settings = TimerSettings.from_env({"ZL_HOST_CLOCK": "thread"})
    with pytest.raises(SettingsError, match="ZL_HOST_CLOCK=thread reads this thread's CPU time"):
        host.create(settings, placement.Placer(PlacementSettings(), placement.HostMemory()))
