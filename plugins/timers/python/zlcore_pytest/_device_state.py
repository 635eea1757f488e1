"""The device's state (clocks, power, throttle reasons) as zlcore's backend
reads it, for the timers.

zlcore sets ZL_DEVICE_STATE_ARGV (a JSON array: the argv of `zlcore devices
--backend B --json`) and ZL_DEVICE_STATE_ID when the backend answers ABI 1.2
state queries; without them there is no reader and the timers fall back to
what they did before. The command runs as an argv list, never through a shell.
"""

import json
import os
import subprocess

# Reasons that mean the board held the clocks down for power (names from
# zl/backend.h's state vocabulary).
POWER_REASONS = ("sw_power_cap", "hw_power_brake", "power_cap")


def reader():
    """A callable returning the device's state dict (or None when a read
    fails), or None when the backend offers no state."""
    try:
        argv = json.loads(os.environ.get("ZL_DEVICE_STATE_ARGV") or "null")
    except ValueError:
        return None
    device_id = os.environ.get("ZL_DEVICE_STATE_ID", "")
    if not isinstance(argv, list) or not argv or not device_id:
        return None

    def read():
        try:
            done = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  timeout=30, check=False)
            listing = json.loads(done.stdout.decode("utf-8", "replace"))
        except (OSError, ValueError, subprocess.SubprocessError):
            return None
        for device in listing.get("devices") or []:
            if device.get("id") == device_id and isinstance(device.get("state"), dict):
                return device["state"]
        return None

    return read


def power_limited(state):
    """The power reasons among the state's throttle reasons ("" for none), or
    None when the state does not say (no throttle_reasons reading)."""
    if not isinstance(state, dict) or not isinstance(state.get("throttle_reasons"), str):
        return None
    reasons = [r.strip() for r in state["throttle_reasons"].split(",")]
    return ",".join(r for r in reasons if r in POWER_REASONS)
