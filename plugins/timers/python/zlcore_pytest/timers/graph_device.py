"""The graph timer's mechanism: one device's streams, events, graph capture and replay.

Thin on purpose: every decision is the policy's (graph_policy.py); this only
does what it is told on the device and measures it. `device` is the torch
device module (torch.cuda, torch.musa, torch.npu, ...) and `graph_class` the
graph API the backend named (torch.cuda.CUDAGraph, ...). All work runs on one
side stream, entered by `side_stream()`: the caller passes the same stream
for every side, because caching allocators keep freed blocks per stream, and
each placement's clones and shift, allocated there, must be reusable by the
next side rather than pile up in the caches of ever new streams.

Each capture gets a private memory pool of its own (PrivatePools), and a capture
that fails lets its pool go: torch lets a graph's pool go only in the reset of a
graph whose capture ended well, so without this every block the failed capture
allocated stays for the life of the process.

A released graph's pool stays cached until the device caches are emptied,
which torch's out-of-memory retry does not do while a capture is underway;
so once a release leaves more than TRIM_IDLE_BYTES idle in the caches, they
are emptied there (trim_caches).

Memory the caches have just taken from the device is slow for its first
calls: on the H200 a memory-bound kernel on 2^30 fresh elements ran 9-12 %
slower for calls 2-4 and at the cached pace from the fifth on (or after
20 ms of idle), while memory recycled from the caches was not slow
(bench/gpu_fresh_memory_trace.py; docs/results.md, "Fresh device memory").
`took_fresh_memory` tells the policy when a placement's clones or its
graph's pool made the caches grow, so that it runs those calls untimed.

A capture that fails must leave nothing open: work later queued on a stream
still capturing is captured instead of run, and in the global capture mode
other streams' synchronizing calls fail, so a warm worker would lose every op
after this one. On every error path of `capture` the capture is
ended where it failed, the graph dropped, the side stream and the device
synchronized, and the stream's capture status checked.

The device's random generator too: a failed capture can leave it registered
as capturing, and then every later random draw in the process raises ("Offset
increment outside graph capture encountered unexpectedly"), so the op's next
shape fails at its randn although FlagGems alone passes (docs/warm-workers.md).
After a failed capture an empty capture is run (whose prologue and epilogue
reset a per-generator capture flag) and the generator is tried; if it fails,
the dead graphs are collected (dropping their capture states) and the empty
capture and the draw are tried again. A generator that stays broken is named
in the reason.
"""

import contextlib
import gc
import time
import warnings

from .base import CaptureFailed, clear_grads, one_line

# Idle bytes in the device caches past which a released graph's pools are
# given back (GraphDevice.trim_caches): a few of the largest shapes' tensors.
TRIM_IDLE_BYTES = 8 << 30
# torch's count of the bytes its caches have ever taken from the device.
TAKEN_STAT = "reserved_bytes.all.allocated"


class PrivatePools:
    """Private memory pools for captures, and letting go of a failed capture's.

    torch's CUDAGraph releases its pool in reset() only when its capture
    ended (`graph.pool()` raises otherwise). A capture that fails at the end
    (an op that synchronizes, "operation not permitted when stream is
    capturing") never gets there: its pool and the blocks allocated in it stay
    reserved, and while the allocator still counts the capture as underway it
    holds back frees. An op whose torch side cannot be captured fails it on
    every shape, and its 1G-element shapes then ran out of a 140 GiB device
    with 90 GiB in private pools (docs/graph-timer.md, "Captures that fail").
    So each capture begins on a pool handle taken here, and a failed one's
    pool is ended and released by that handle; its blocks go back to the
    device once the failed capture's tensors are gone.
    """

    def __init__(self, handle, release, end=None, device_index=lambda: 0):
        self._handle = handle
        self._release = release
        self._end = end
        self._device_index = device_index

    @classmethod
    def for_device(cls, device):
        """The device module's pools (torch.cuda's: graph_pool_handle and
        torch._C._cuda_releasePool); None where it offers no such calls."""
        handle = getattr(device, "graph_pool_handle", None)
        name = getattr(device, "__name__", "").rsplit(".", 1)[-1]
        try:
            import torch

            binding = torch._C
        except Exception:
            return None
        release = getattr(binding, f"_{name}_releasePool", None)
        end = (getattr(binding, f"_{name}_endAllocateToPool", None)
               or getattr(binding, f"_{name}_endAllocateCurrentStreamToPool", None))
        current = getattr(device, "current_device", None)
        if handle is None or release is None or current is None:
            return None
        return cls(handle, release, end, current)

    def new(self):
        return self._handle()

    @staticmethod
    def owned_by(graph):
        """Whether `graph` owns its pool: its capture ended, and its reset() lets the pool go."""
        try:
            graph.pool()
            return True
        except Exception:
            return False

    def let_go(self, pool):
        """After a failed capture on `pool`, whose graph does not own it: True once released."""
        device = self._device_index()
        if self._end is not None:
            # The allocator may still route to the pool (torch ends that after
            # the capture itself, which is what failed), or not: either is fine.
            try:
                self._end(device, pool)
            except TypeError:
                try:
                    self._end(device)  # an older binding that takes the device alone
                except Exception:
                    return False
            except Exception:
                pass
        try:
            self._release(device, pool)
            return True
        except Exception:
            return False


class GraphDevice:
    def __init__(self, device, graph_class, stream=None, sleep=time.sleep, clock=time.perf_counter,
                 random_draw=None, pools=None):
        self.device = device
        self.graph_class = graph_class
        # Pools for the captures (PrivatePools); None: the graph class picks its own.
        self._pools = pools
        # One draw from the device's random generator; raises when a failed
        # capture left it believing it is capturing. None: torch.rand on the
        # device the plan named.
        self._random_draw = random_draw
        self._side = stream
        self.stream = None
        self.capture_ms = 0.0  # host time spent capturing since the last reset
        self._sleep = sleep
        self._clock = clock
        # What the caches had taken from the device when last asked
        # (took_fresh_memory) or trimmed; None where the device does not say.
        self._taken_seen = self._taken()

    @contextlib.contextmanager
    def side_stream(self):
        """The side stream (a new one if none was given), after the current one's work, and waited for after."""
        device = self.device
        stream = self._side if self._side is not None else device.Stream()
        stream.wait_stream(device.current_stream())
        self.stream = stream
        try:
            with device.stream(stream):
                yield stream
        finally:
            self.stream = None
            device.current_stream().wait_stream(stream)

    def synchronize(self):
        self.device.synchronize()

    def eager_ms(self, fn, calls, enough_ms=None):
        """Per-call time of `calls` eager calls, between events on the side stream;
        of the first call alone when its host part took `enough_ms` or more."""
        start = self.device.Event(enable_timing=True)
        end = self.device.Event(enable_timing=True)
        start.record()
        host_started = time.perf_counter()
        fn()
        done = 1
        if enough_ms is None or (time.perf_counter() - host_started) * 1000.0 < enough_ms:
            for _ in range(calls - 1):
                fn()
            done = calls
        end.record()
        self.device.synchronize()
        return start.elapsed_time(end) / done

    # -- capture -----------------------------------------------------------------

    def capture(self, placed, calls):
        """A graph of `calls` calls of placed.fn; CaptureFailed, with nothing left open, if not."""
        device = self.device
        device.synchronize()
        # No collector-driven frees mid-capture. torch.cuda.graph runs a full
        # gc.collect() for this, whose cost grows with the heap torch and
        # FlagGems leave; pausing the collector for the capture is enough.
        collecting = gc.isenabled()
        gc.disable()
        started = self._clock()
        graph = self.graph_class()
        pool = None
        try:
            with device.stream(self.stream):
                if self._pools is not None:
                    pool = self._pools.new()
                    graph.capture_begin(pool=pool)
                else:
                    graph.capture_begin()
                try:
                    for _ in range(calls):
                        clear_grads(placed.grad_to_none)
                        placed.fn()
                except BaseException:
                    self._end_capture(graph)
                    raise
                graph.capture_end()
        except BaseException as exc:
            left_open = self._clean_up_failed_capture(graph, pool)
            del graph
            if not isinstance(exc, Exception):
                raise
            reason = f"graph capture of {calls} calls failed: {one_line(exc)}"
            generator_works = left_open or self.repair_generator()
            # The repair's own empty capture, should it not end, leaves the stream capturing too.
            left_open = left_open or bool(self.is_capturing())
            if left_open:
                reason += " (the stream still reads as capturing)"
            elif not generator_works:
                reason += " (the random generator stays in capture mode: later random draws in this process fail)"
            raise CaptureFailed(reason, left_open=left_open) from exc
        finally:
            self.capture_ms += (self._clock() - started) * 1000.0
            if collecting:
                gc.enable()
        return graph  # noqa: F821 (deleted only on the path that raises)

    def is_capturing(self):
        """Whether the side stream is capturing; None where the device module cannot say."""
        query = getattr(self.device, "is_current_stream_capturing", None)
        if query is None or self.stream is None:
            return None
        try:
            with self.device.stream(self.stream):
                return bool(query())
        except Exception:
            return None

    def _end_capture(self, graph):
        """End a capture the op broke off; an invalidated capture reports its error here too."""
        try:
            with self.device.stream(self.stream):
                graph.capture_end()
        except Exception:
            pass  # the op's own error is the one to report

    def _clean_up_failed_capture(self, graph, pool=None):
        """After any failed capture: end it if still open, drop the graph, synchronize,
        and let go of its pool when the graph does not own it (PrivatePools).
        True when the stream still reads as capturing afterwards."""
        if self.is_capturing():
            self._end_capture(graph)
        # Asked before the reset: a graph whose capture ended owns its pool,
        # and its reset() lets the pool go; releasing it once more would
        # break torch's count of the pool's users.
        owned = pool is None or PrivatePools.owned_by(graph)
        self.release(graph, trim=False)  # trimmed below, once nothing is capturing
        for sync in (getattr(self.stream, "synchronize", None), self.device.synchronize):
            if sync is not None:
                try:
                    sync()
                except Exception:
                    pass
        left_open = bool(self.is_capturing())
        if not left_open:
            if not owned:
                self._pools.let_go(pool)
            self.trim_caches()
        return left_open

    def generator_works(self):
        draw = self._random_draw
        if draw is None:
            import torch

            from .. import _env

            def draw():
                torch.rand(1, device=_env.torch_device())

        try:
            draw()
            self.device.synchronize()
            return True
        except Exception:
            return False

    def repair_generator(self):
        """After a failed capture: an empty capture, then True once the random
        generator draws again.

        The empty capture runs whether or not a draw fails first: a draw made
        under FlagGems' use_gems() goes to FlagGems' own rand, which reads the
        generator's state on the host and never the flag a failed capture left
        set, so it passes while torch's own draws (the suite's next inputs,
        outside use_gems) fail. allclose lost every shape after its first so."""
        self._empty_capture()
        if self.generator_works():
            return True
        gc.collect()  # graphs only a dead traceback holds: their reset drops their capture state
        self._empty_capture()
        return self.generator_works()

    def _empty_capture(self):
        """A capture of nothing: its prologue and epilogue set the generator's
        capture flag back, whatever the failed capture left it at."""
        empty = None
        try:
            empty = self.graph_class()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "The CUDA Graph is empty": it is meant to be
                with self.device.stream(self.stream):
                    empty.capture_begin()
                    empty.capture_end()
        except Exception:
            # A capture this opened must not stay open: the next op's work
            # would be captured instead of run.
            if empty is not None and self.is_capturing():
                self._end_capture(empty)
        if empty is not None:
            self.release(empty, trim=False)

    # -- replay ------------------------------------------------------------------

    def replay_ms(self, graph):
        """One replay between events; waits for it."""
        try:
            with self.device.stream(self.stream):
                start = self.device.Event(enable_timing=True)
                end = self.device.Event(enable_timing=True)
                start.record()
                graph.replay()
                end.record()
            end.synchronize()
            return float(start.elapsed_time(end))
        except Exception as exc:
            self._sync_quietly()
            raise CaptureFailed(f"graph replay failed: {one_line(exc)}") from exc

    def replays(self, graph, count, untimed=0):
        """`untimed` replays, then `count` back to back with an event between each;
        no host gap, so the device stays under the same load for every sample."""
        try:
            with self.device.stream(self.stream):
                for _ in range(untimed):
                    graph.replay()
                events = [self.device.Event(enable_timing=True) for _ in range(count + 1)]
                events[0].record()
                for i in range(count):
                    graph.replay()
                    events[i + 1].record()
            events[-1].synchronize()
            return [float(events[i].elapsed_time(events[i + 1])) for i in range(count)]
        except Exception as exc:
            self._sync_quietly()
            raise CaptureFailed(f"graph replay failed: {one_line(exc)}") from exc

    def rest(self, ms):
        """Leave the device idle for `ms`: nothing queued, then a host sleep."""
        self.device.synchronize()
        self._sleep(ms / 1000.0)

    def release(self, graph, trim=True):
        """Reset `graph`; then, unless told not to (a capture that may still
        be open), give idle cache memory back (trim_caches)."""
        reset = getattr(graph, "reset", None)
        if reset is not None:
            try:
                reset()
            except Exception:
                pass
        if trim:
            self.trim_caches()

    def _taken(self):
        """The bytes the caches have taken from the device: torch's cumulative
        count where the device keeps one (an out-of-memory retry that empties
        the caches and takes memory again leaves the reserved total flat, but
        not this count), else the reserved total; None where neither is kept."""
        try:
            stats = getattr(self.device, "memory_stats", None)
            taken = stats().get(TAKEN_STAT) if stats is not None else None
            if taken is not None:
                return int(taken)
            reserved = getattr(self.device, "memory_reserved", None)
            return int(reserved()) if reserved is not None else None
        except Exception:
            return None

    def took_fresh_memory(self):
        """Whether the caches took memory from the device since the last ask
        (or since they were emptied): what was allocated since then may lie
        on it. False where the device does not say."""
        now = self._taken()
        grew = now is not None and self._taken_seen is not None and now > self._taken_seen
        self._taken_seen = now
        return grew

    def trim_caches(self):
        """Give the caches' idle memory back to the device once it passes
        TRIM_IDLE_BYTES. A released graph's pool keeps its blocks cached until
        the caches are emptied, and torch's out-of-memory retry empties them
        only while no capture is underway: so the graphs of a side whose calls
        take gigabytes (six placements, each its own pool) left a later
        capture without room, everything idle in old pools."""
        device = self.device
        reserved = getattr(device, "memory_reserved", None)
        allocated = getattr(device, "memory_allocated", None)
        empty = getattr(device, "empty_cache", None)
        if reserved is None or allocated is None or empty is None:
            return False
        try:
            if reserved() - allocated() <= TRIM_IDLE_BYTES:
                return False
            empty()
            # What is allocated next comes from the device again.
            self._taken_seen = self._taken()
            return True
        except Exception:
            return False

    def _sync_quietly(self):
        try:
            self.device.synchronize()
        except Exception:
            pass
