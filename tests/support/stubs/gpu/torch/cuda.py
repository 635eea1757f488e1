import os
import time

from . import _stub


def is_available():
    return True


def device_count():
    return int(os.environ.get("STUB_DEVICE_COUNT", "1"))


class _UUID:
    def __init__(self, text):
        self.text = text

    def __str__(self):  # like torch's _CUuuid: no GPU- prefix
        return self.text


class _Props:
    name = "NVIDIA Stub H200"
    total_memory = 150000000000
    major = 9
    minor = 0
    multi_processor_count = 132

    def __init__(self):
        self.uuid = _UUID(os.environ.get("STUB_DEVICE_UUID", "967ef875-e3f7-55c2-abf0-64b93b0c7e36"))


def get_device_properties(index):
    if index >= device_count():
        raise RuntimeError("stub: invalid device ordinal")
    return _Props()


def current_device():
    return 0


def synchronize():
    _stub.synced_since_replay = True


def empty_cache():
    pass


class OutOfMemoryError(RuntimeError):
    """torch.cuda.OutOfMemoryError (torch.OutOfMemoryError)."""


def is_initialized():
    return True


def memory_allocated(device=None):
    return _stub.memory["allocated"]


def max_memory_allocated(device=None):
    return _stub.memory["peak"]


def reset_peak_memory_stats(device=None):
    _stub.memory["peak"] = _stub.memory["allocated"]


def mem_get_info(device=None):
    total = _stub.memory_total()
    return max(0, total - _stub.memory["allocated"]), total


def is_current_stream_capturing():
    return _stub.capture is not None and _stub.capture[1] is current_stream()


class Stream:
    def wait_stream(self, other):
        pass

    def synchronize(self):
        pass


_default = Stream()
_stack = [_default]


def current_stream():
    return _stack[-1]


def default_stream():
    return _default


class stream:
    def __init__(self, s):
        self.s = s

    def __enter__(self):
        _stack.append(self.s)
        return self.s

    def __exit__(self, *exc):
        _stack.pop()
        return False


class Event:
    """An event on the fake timeline. An external one recorded inside a
    capture becomes a node of the graph (as cudaEventRecordExternal does):
    each replay sets it when the replay reaches it. STUB_NO_EXTERNAL_EVENTS=1:
    a torch that has no external events (the keyword is refused)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, **more):
        if "external" in more and os.environ.get("STUB_NO_EXTERNAL_EVENTS") == "1":
            raise TypeError("__init__() got an unexpected keyword argument 'external'")
        self.external = bool(more.pop("external", False))
        if more:
            raise TypeError(f"__init__() got unexpected keyword arguments {sorted(more)}")
        self.t = None

    def record(self, stream=None):
        if self.external and _stub.capture is not None:
            _stub.capture[0]._nodes.append((0.0, False, self))
            return
        self.t = _stub.now_ms

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return end.t - self.t


def _boost():
    """STUB_GRAPH_BOOST's factor for this replay."""
    spec = os.environ.get("STUB_GRAPH_BOOST")
    now = time.perf_counter()
    last, _stub.last_replay_wall = _stub.last_replay_wall, now
    synced, _stub.synced_since_replay = _stub.synced_since_replay, False
    if not spec:
        return 1.0
    factor, gap_ms, count = spec.split(":")
    # Only idle the caller asked for (a device-wide synchronize, then the
    # gap) arms it: a host stall between replays of one window does not.
    if synced and last is not None and (now - last) * 1000.0 >= float(gap_ms):
        _stub.boost_left = int(count)
    if _stub.boost_left > 0:
        _stub.boost_left -= 1
        return float(factor)
    return 1.0


class CUDAGraph:
    def __init__(self):
        self._nodes = []
        self._invalid = False
        self._replays = 0

    def capture_begin(self, *args, **kwargs):
        if current_stream() is _default:
            raise RuntimeError("stub: cannot capture on the default stream")
        if _stub.capture is not None:
            raise RuntimeError("stub: a capture is already open")
        _stub.counters["captures_begun"] += 1
        _stub.capture = (self, current_stream())

    def capture_end(self):
        if _stub.capture is None or _stub.capture[0] is not self:
            raise RuntimeError("stub: no capture open for this graph")
        if self._invalid and os.environ.get("STUB_CAPTURE_STAYS_OPEN") == "1":
            raise RuntimeError("stub: capture invalidated, and the stream is still capturing")
        _stub.capture = None
        if self._invalid:
            _stub.counters["captures_failed"] += 1
            raise RuntimeError("stub: capture invalidated")

    def replay(self):
        if self._invalid:
            raise RuntimeError("stub: replay of an invalid graph")
        _stub.counters["replays"] += 1
        first = 2.0 if self._replays == 0 else 1.0  # a fresh graph's first replay is slow
        self._replays += 1
        slowdown = float(os.environ.get("STUB_GRAPH_SLOWDOWN", "1"))
        # "N:F": after the process's N-th replay everything runs F times
        # slower, like clocks coming down under sustained load; "N:F:each":
        # after each graph's own N-th replay, so every side meets the step at
        # the same point of its procedure. Several steps, comma-separated,
        # multiply.
        for step in filter(None, os.environ.get("STUB_GRAPH_STEP", "").split(",")):
            at, factor, *scope = step.split(":")
            count = self._replays if scope == ["each"] else _stub.counters["replays"]
            if count > int(at):
                slowdown *= float(factor)
        slowdown *= _boost()
        cluster_only = os.environ.get("STUB_GRAPH_SLOWDOWN_CLUSTER_ONLY") == "1"
        total = 0.0
        for cost, cluster, *event in self._nodes:
            if event:  # an external event captured here: set where the replay reaches it
                event[0].t = _stub.now_ms + total * first
                continue
            factor = slowdown if (cluster or not cluster_only) else 1.0
            total += cost * factor
        _stub.now_ms += total * first

    def reset(self):
        self._nodes = []
