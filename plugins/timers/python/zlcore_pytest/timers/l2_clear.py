"""`--l2 cold` in the timers: the device's L2 cleared before each timed call, the clears' time kept out.

A clear is a write over a buffer of twice the L2 (ZL_L2_BYTES, the backend's
l2_cache_bytes): whatever a call left in the cache is evicted by lines of the
buffer, and the next call's inputs come from device memory. Twice, not once:
a replacement policy (hashed sets, adaptive insertion) may keep some old
lines through one pass of exactly the cache's size, far fewer through two. The buffer is placed on the device
once per side, inside the side's memory bracket, so the row's zlcore-added
memory counts it (_memory.py, SideMemory).

The graph timer captures a clear before every call of its graph and keeps the
clears out of the time in one of two ways:

- bracketed (BracketedColdGraphDevice), where the device can capture timing
  events into a graph (torch's `Event(external=True)`): each call sits between
  two events of its own, captured after its clear, and a replay's time is the
  sum of its calls' brackets. The clears are never timed, so their jitter
  never reaches the number: a 1 us kernel under a 60 us clear reads as
  steadily as warm. This is what do_bench does per call, inside a graph.
- subtracted (ColdGraphDevice), elsewhere: a second graph of the clears
  alone, as many; each time the policy times replays of the first, as many
  replays of the second are timed right after, the same way, and their
  median is subtracted from each replay. On average right, but each replay
  carries the clears' jitter, which swamps a kernel much shorter than a clear.

The row keeps what one clear took (`l2_clear_ms`) and how the clears were
kept out (`l2_timing`). The direct timer's events path clears before each
call outside its events; do_bench clears its own 256 MB before every call
whatever the policy. docs/graph-timer.md, "The L2 policy".
"""

import statistics

# The buffer is this many times the L2.
BUFFER_L2_MULTIPLE = 2
# A bracketed graph holds no more calls than fit, clears included, in a
# replay of the timer's length, and never fewer than this many.
MIN_BRACKETED_CALLS = 16


class L2Clear:
    """A buffer of BUFFER_L2_MULTIPLE x the L2 on the device; calling it writes all of it."""

    def __init__(self, l2_bytes, torch_device):
        import torch

        self.bytes = BUFFER_L2_MULTIPLE * l2_bytes
        self.buffer = torch.empty(self.bytes, dtype=torch.uint8, device=torch_device)

    def __call__(self):
        self.buffer.zero_()


def for_side(l2, torch_device):
    """A clear for one side when the policy is cold; None when warm."""
    return L2Clear(l2.bytes, torch_device) if l2.cold else None


class _Cleared:
    """A placement whose every call is preceded by a clear (what the first graph captures)."""

    def __init__(self, placed, clear):
        self.index = placed.index
        self.grad_to_none = placed.grad_to_none
        self._fn = placed.fn
        self._clear = clear

    def fn(self):
        self._clear()
        self._fn()

    @staticmethod
    def calling(fn, clear):
        def cleared():
            clear()
            fn()
        return cleared


class _ClearsOnly:
    """The clears alone (what the second graph captures)."""

    grad_to_none = None

    def __init__(self, clear):
        self.fn = clear


class ColdGraph:
    def __init__(self, op, clears, calls):
        self.op = op
        self.clears = clears
        self.calls = calls


class ColdGraphDevice:
    """A GraphDevice whose graphs clear the L2 before each call and whose
    timings leave the clears out. Everything the policy does not time is
    the wrapped mechanism's own."""

    def __init__(self, inner, clear):
        self._inner = inner
        self._clear = clear
        self.clear_ms = []  # one clear's time, each time replays were timed

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def eager_ms(self, fn, calls, enough_ms=None):
        """The eager estimate cold too, the clears' share taken out: it sizes
        the first capture, and cluster_fix holds the graph's time against it."""
        with_clears = self._inner.eager_ms(_Cleared.calling(fn, self._clear), calls, enough_ms=enough_ms)
        return with_clears - self._inner.eager_ms(self._clear, calls)

    def capture(self, placed, calls):
        op = self._inner.capture(_Cleared(placed, self._clear), calls)
        try:
            clears = self._inner.capture(_ClearsOnly(self._clear), calls)
        except BaseException:
            self._inner.release(op)
            raise
        return ColdGraph(op, clears, calls)

    def replay_ms(self, graph):
        op = self._inner.replay_ms(graph.op)
        clears = self._inner.replay_ms(graph.clears)
        self.clear_ms.append(clears / graph.calls)
        return op - clears

    def replays(self, graph, count, untimed=0):
        op = self._inner.replays(graph.op, count, untimed)
        clears = statistics.median(self._inner.replays(graph.clears, count, untimed))
        self.clear_ms.append(clears / graph.calls)
        return [t - clears for t in op]

    def release(self, graph, trim=True):
        self._inner.release(graph.op, trim=False)
        self._inner.release(graph.clears, trim=trim)

    def row_data(self):
        """What the row records of the clears."""
        clear_ms = statistics.median(self.clear_ms) if self.clear_ms else None
        return {"l2": "cold", "l2_clear_ms": clear_ms, "l2_clear_bytes": self._clear.bytes, "l2_timing": "subtracted"}


class _Bracketed:
    """A placement whose every call is preceded by a clear and bracketed by
    events of its own (what a bracketed graph captures): call i records
    starts[i] after its clear and ends[i] after itself."""

    def __init__(self, placed, clear, starts, ends):
        self.index = placed.index
        self.grad_to_none = placed.grad_to_none
        self._fn = placed.fn
        self._clear = clear
        self._starts = starts
        self._ends = ends
        self._next = 0

    def drop(self):
        self._fn = self.grad_to_none = None

    def fn(self):
        i = self._next % len(self._starts)  # a capture tried again starts over
        self._next += 1
        self._clear()
        self._starts[i].record()
        self._fn()
        self._ends[i].record()


class BracketedGraph:
    def __init__(self, graph, starts, ends, asked):
        self.graph = graph
        self.starts = starts
        self.ends = ends
        self.captured = len(starts)
        self.asked = asked  # the calls the policy asked for, and divides a replay's time by

    def brackets_ms(self):
        """The sum of the calls' brackets in the replay that ran last."""
        return float(sum(s.elapsed_time(e) for s, e in zip(self.starts, self.ends)))


class BracketedColdGraphDevice:
    """A GraphDevice whose graphs clear the L2 before each call and time each
    call between events captured with it, so the clears are never timed.
    Replays are timed one at a time (each replay's brackets are read before
    the next one records over them); everything the policy does not time is
    the wrapped mechanism's own."""

    def __init__(self, inner, clear, event, replay_ms=1.0):
        self._inner = inner
        self._clear = clear
        self._event = event  # a timing event that a capture records as a graph node
        self._replay_ms = replay_ms
        self._one_clear_ms = None  # from the eager estimate
        self.clear_ms = []  # one clear's time (a replay's rest, per call), each time replays were timed

    @classmethod
    def offered(cls, inner, clear, replay_ms=1.0):
        """The bracketed device where the device module captures timing events
        into graphs (torch's Event(external=True)); None where it does not."""
        make = getattr(inner.device, "Event", None)
        if make is None:
            return None

        def event():
            return make(enable_timing=True, external=True)

        try:
            event()
        except TypeError:  # a torch without external events
            return None
        return cls(inner, clear, event, replay_ms)

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def eager_ms(self, fn, calls, enough_ms=None):
        """The eager estimate as ColdGraphDevice takes it: eager calls have no
        graph to capture events into, and the estimate only sizes the capture."""
        with_clears = self._inner.eager_ms(_Cleared.calling(fn, self._clear), calls, enough_ms=enough_ms)
        self._one_clear_ms = self._inner.eager_ms(self._clear, calls)
        return with_clears - self._one_clear_ms

    def capture(self, placed, calls):
        """A graph of the calls that fit, clears included, in a replay of the
        timer's length (at least MIN_BRACKETED_CALLS, at most `calls`): the
        policy sizes its graphs by the op's time alone, and a 1 us kernel
        under a 60 us clear would otherwise make every replay 60 times as
        long as warm's. A replay then reads as `calls` calls at the mean of
        the brackets."""
        captured = calls
        if self._one_clear_ms:
            captured = min(calls, max(MIN_BRACKETED_CALLS, int(self._replay_ms / self._one_clear_ms)))
        starts = [self._event() for _ in range(captured)]
        ends = [self._event() for _ in range(captured)]
        bracketed = _Bracketed(placed, self._clear, starts, ends)
        try:
            graph = self._inner.capture(bracketed, captured)
        finally:
            # The placement's inputs are the placement's to let go (its
            # context ends with the side's use of them), not this capture's.
            bracketed.drop()
        return BracketedGraph(graph, starts, ends, calls)

    def _timed(self, graph):
        whole = self._inner.replay_ms(graph.graph)
        brackets = graph.brackets_ms()
        self.clear_ms.append(max(0.0, whole - brackets) / graph.captured)
        return brackets / graph.captured * graph.asked

    def replay_ms(self, graph):
        return self._timed(graph)

    def replays(self, graph, count, untimed=0):
        if untimed:
            self._inner.replays(graph.graph, 0, untimed)
        return [self._timed(graph) for _ in range(count)]

    def release(self, graph, trim=True):
        self._inner.release(graph.graph, trim=trim)

    def row_data(self):
        clear_ms = statistics.median(self.clear_ms) if self.clear_ms else None
        return {"l2": "cold", "l2_clear_ms": clear_ms, "l2_clear_bytes": self._clear.bytes, "l2_timing": "bracketed"}


def cold_device(inner, clear, replay_ms=1.0):
    """The cold mechanism for a side: bracketed where the device offers it, else subtracted."""
    return BracketedColdGraphDevice.offered(inner, clear, replay_ms) or ColdGraphDevice(inner, clear)
