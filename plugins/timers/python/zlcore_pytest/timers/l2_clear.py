"""`--l2 cold` in the timers: the device's L2 cleared before each timed call, the clears' time taken out.

A clear is a write over a buffer of twice the L2 (ZL_L2_BYTES, the backend's
l2_cache_bytes): whatever a call left in the cache is evicted by lines of the
buffer, and the next call's inputs come from device memory. Twice, not once:
a replacement policy (hashed sets, adaptive insertion) may keep some old
lines through one pass of exactly the cache's size, far fewer through two. The buffer is placed on the device
once per side, inside the side's memory bracket, so the row's zlcore-added
memory counts it (_memory.py, SideMemory).

The graph timer captures a clear before every call of its graph, and a second
graph of the clears alone, as many. Each time the policy times replays of
the first, as many replays of the second are timed right after, the same
way; the median of those is the clears' share and is subtracted from each
replay (ColdGraphDevice). The row keeps what one clear took (`l2_clear_ms`).
The direct timer's events path clears before each call outside its events;
do_bench clears its own 256 MB before every call whatever the policy.
docs/graph-timer.md, "The L2 policy".
"""

import statistics

# The buffer is this many times the L2.
BUFFER_L2_MULTIPLE = 2


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
        return {"l2": "cold", "l2_clear_ms": clear_ms, "l2_clear_bytes": self._clear.bytes}
