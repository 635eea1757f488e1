"""The device's state (clocks, power, throttle reasons) as zlcore's backend
reads it, for the timers.

zlcore sets ZL_DEVICE_STATE_ARGV (a JSON array: the argv of `zlcore devices
--backend B --serve-state ID`) and ZL_DEVICE_STATE_ID when the backend
answers ABI 1.2 state queries; without them there is no reader and the timers
fall back to what they did before. The server starts once per process, on
the first read, as an argv list (never through a shell), and answers each
line written to it with one JSON line: a read costs a pipe round trip, not a
process start and a library open (~100 ms), so it can be asked for every
side, and asked *before* the replays it is meant to watch: the server reads
the device while they run. A server that fails, answers late or answers
nonsense is stopped, and the process reads no state from then on.
"""

import json
import os
import select
import subprocess
import time

# Reasons that mean the board held the clocks down for power (names from
# zl/backend.h's state vocabulary).
POWER_REASONS = ("sw_power_cap", "hw_power_brake", "power_cap")
# How long an answer may take. A state query is a few library calls; past
# this the server is taken to be stuck, and the timers go on without state.
ANSWER_TIMEOUT_S = 10.0


class StateReader:
    """One `zlcore devices --serve-state` for this process.

    `reader()` asks now and returns a callable that waits for the answer: the
    state dict, or None when there is none (the server failed, or its answer
    had no state for this device). `reader()()` is a read start to end.
    """

    def __init__(self, argv, device_id, timeout_s=ANSWER_TIMEOUT_S):
        self._argv = [str(a) for a in argv]
        self._id = device_id
        self._timeout_s = timeout_s
        self._proc = None
        self._buffer = b""
        self._broken = False

    @property
    def answering(self):
        """False once the server failed or was closed: no state is read from then on."""
        return not self._broken

    def __call__(self):
        if self._broken:
            return lambda: None
        try:
            if self._proc is None:
                self._proc = subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                              stderr=subprocess.DEVNULL, bufsize=0)
            self._proc.stdin.write(b"\n")
        except OSError:
            self._stop()
            return lambda: None
        asked = time.monotonic()
        answered = []

        def answer():
            if not answered:
                answered.append(self._answer(asked))
            return answered[0]

        return answer

    def _answer(self, asked):
        try:
            line = self._line(asked + self._timeout_s)
            doc = json.loads(line.decode("utf-8", "replace"))
        except (OSError, ValueError, TimeoutError, EOFError):
            self._stop()
            return None
        if not isinstance(doc, dict) or doc.get("id") != self._id:
            self._stop()
            return None
        state = doc.get("state")
        return state if isinstance(state, dict) else None

    def _line(self, deadline):
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer in time")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                raise TimeoutError("no answer in time")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError("the server ended")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _stop(self):
        self._broken = True
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.kill()
            proc.wait(timeout=5)
        except (OSError, subprocess.SubprocessError):
            pass

    def close(self):
        """Ends the server (EOF on its stdin); the reader reads no more."""
        proc, self._proc = self._proc, None
        self._broken = True
        if proc is None:
            return
        try:
            proc.stdin.close()
            proc.wait(timeout=5)
        except (OSError, subprocess.SubprocessError):
            proc.kill()


def reader():
    """A StateReader for the device zlcore named, or None when the backend
    offers no state."""
    try:
        argv = json.loads(os.environ.get("ZL_DEVICE_STATE_ARGV") or "null")
    except ValueError:
        return None
    device_id = os.environ.get("ZL_DEVICE_STATE_ID", "")
    if not isinstance(argv, list) or not argv or not device_id:
        return None
    return StateReader(argv, device_id)


def holds_clocks(state):
    """True when the state's throttle reasons name nothing: the device runs at
    the clocks it chose, held by no power, thermal or other limit. False when
    they name something or the state does not say."""
    if not isinstance(state, dict) or not isinstance(state.get("throttle_reasons"), str):
        return False
    return all(r.strip() in ("", "none") for r in state["throttle_reasons"].split(","))


def power_limited(state):
    """The power reasons among the state's throttle reasons ("" for none), or
    None when the state does not say (no throttle_reasons reading)."""
    if not isinstance(state, dict) or not isinstance(state.get("throttle_reasons"), str):
        return None
    reasons = [r.strip() for r in state["throttle_reasons"].split(",")]
    return ",".join(r for r in reasons if r in POWER_REASONS)
