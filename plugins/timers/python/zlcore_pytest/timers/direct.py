"""The `direct` timer: triton.testing.do_bench (device events), once per input placement.

For devices with events but no graph API. Each of ZL_DIRECT_REPEAT repeats
runs do_bench on a fresh placement (placement.py) with the suite's warm-up
and repetition times; a repeat's value is do_bench's median, the latency the
mean over placements. The first placement's warm-up also compiles and tunes,
so do_bench reports the whole time as measurement.

A slow side is not handed to do_bench: before its first repetition do_bench
runs five calls to estimate one, on every placement, so a host-bound reference
of seconds a call (FlagGems' hadamard_transform's NumPy one, up to 7.8 s) cost
minutes a shape. When the placements' do_bench would cost more than
ZL_DIRECT_BUDGET_MS and its estimate calls more than its repetition time,
each placement's calls (as many as the repetition time holds, at least one)
are timed by events, on as many placements as the budget holds (at least
one, at most ZL_DIRECT_REPEAT); the row's noise note says so, and where the
call's time came from (the failed graph timer's estimate, or a warm call of
this timer's own). No untimed call precedes a placement's: at these times a
call's first-touch cost on new storage is noise, and one more call would
double a seconds-long side.
"""

from .. import _bench, _env
from . import l2_clear
from .base import SideTiming, clear_grads

NAME = "direct"
# Warm-up (ms) of every placement after the first.
LATER_WARMUP_MS = 25


def _do_bench():
    """triton.testing.do_bench, or the vendor's own where FlagGems uses one in kernel mode."""
    import triton

    if _env.vendor() == "ascend":
        backend = getattr(getattr(triton, "backends", None), "ascend", None)
        npu_bench = getattr(getattr(backend, "testing", None), "do_bench_npu", None)
        if npu_bench is not None:
            return lambda fn, grad_to_none, first=True: npu_bench(fn)
    do_bench = triton.testing.do_bench
    warmup = _bench.warmup_ms()
    rep = _bench.repetition_ms()

    def bench(fn, grad_to_none, first=True):
        # Compilation and tuning happen in the first placement's warm-up; the
        # later placements only need their new inputs warm.
        w = warmup if first else min(warmup, LATER_WARMUP_MS)
        return do_bench(fn, warmup=int(w), rep=int(rep), return_mode="median", grad_to_none=grad_to_none)

    return bench


class DirectTimer:
    name = NAME

    def __init__(self, settings, placer):
        self.settings = settings.direct
        self.l2 = settings.l2
        self.placer = placer

    def settings_report(self):
        return None  # direct_repeat is reported with the shared settings

    def measure(self, call):
        cluster = None
        call_ms = call.warm_call_ms
        source = "the failed timer's estimate" if call_ms is not None else "a warm call"
        if call.probe is not None or call_ms is None:
            fn, grad_to_none = call.build(call.args, call.kwargs)
            if call.probe is not None:
                cluster = call.probe(fn)
            if call_ms is None:
                call_ms = _warm_call_ms(fn, grad_to_none)
            del fn, grad_to_none
        rng = self.placer.rng(call.context)
        slow = _too_slow_for_do_bench(call_ms, self.settings)
        # Cold, do_bench: its own 256 MB clear before every call is the
        # clear (it does that whatever the policy); the events path clears
        # the L2 itself, outside its events.
        cold = {"l2": "cold", "l2_clear_ms": None, "l2_timing": "bracketed"} if self.l2.cold else {}
        if slow:
            placements, calls = self._by_events(call, call_ms, rng)
            note = (f"one call {call_ms:.0f} ms ({source}): {len(placements)} placement(s) of {calls} call(s) "
                    f"timed by events within ZL_DIRECT_BUDGET_MS={self.settings.budget_ms:g}, not do_bench")
            return SideTiming.over_placements(NAME, placements, cluster=cluster, eager_ms=call_ms,
                                              extra={"noise_note": note, **cold})
        bench = _do_bench()
        placements = []
        for index in range(self.settings.repeat):
            with self.placer.place(index, call.args, call.kwargs, rng) as p:
                placements.append(_bench_one(bench, call, p, first=index == 0))
        return SideTiming.over_placements(NAME, placements, cluster=cluster, extra=cold)

    def _by_events(self, call, call_ms, rng):
        calls = max(1, int(round(_bench.repetition_ms() / call_ms)))
        device = _bench.device_module()
        clear = l2_clear.for_side(self.l2, _env.torch_device())
        placements = []
        spent_ms = 0.0
        for index in range(self.settings.repeat):
            with self.placer.place(index, call.args, call.kwargs, rng) as p:
                per_call = _timed_by_events(device, call, p, calls, clear)
            placements.append(per_call)
            spent_ms += per_call * calls
            if spent_ms + per_call * calls > self.settings.budget_ms:
                break
        return placements, calls


def _too_slow_for_do_bench(call_ms, settings):
    """do_bench spends five calls estimating one, then its warm-up and
    repetition, at least one call each, on every placement (the first with
    the suite's whole warm-up, the later ones LATER_WARMUP_MS). Too slow: all
    of that past the budget, and more of it estimating than measuring."""
    warmup, rep = _bench.warmup_ms(), _bench.repetition_ms()
    estimate = 5 * call_ms
    first = estimate + max(call_ms, warmup) + max(call_ms, rep)
    later = estimate + max(call_ms, min(warmup, LATER_WARMUP_MS)) + max(call_ms, rep)
    total = first + later * (settings.repeat - 1)
    return total > settings.budget_ms and estimate > rep


def _warm_call_ms(fn, grad_to_none):
    """Two calls, the second timed: the first compiles and tunes."""
    fn()
    return _per_call_ms(_bench.device_module(), fn, grad_to_none, 1)


def _timed_by_events(device, call, placement, calls, clear=None):
    # A function of its own, so the callable and its clones go when it returns.
    fn, grad_to_none = call.build(placement.args, placement.kwargs)
    return _per_call_ms(device, fn, grad_to_none, calls, clear)


def _per_call_ms(device, fn, grad_to_none, calls, clear=None):
    """The mean of `calls` calls, each between its own events, grads reset
    (and, cold, the L2 cleared) before each outside them, as do_bench does."""
    pairs = [(device.Event(enable_timing=True), device.Event(enable_timing=True)) for _ in range(calls)]
    device.synchronize()
    for start, end in pairs:
        clear_grads(grad_to_none)
        if clear is not None:
            clear()
        start.record()
        fn()
        end.record()
    device.synchronize()
    return sum(float(start.elapsed_time(end)) for start, end in pairs) / calls


def _bench_one(bench, call, placement, first):
    # A function of its own, so the callable and its clones go when it returns.
    fn, grad_to_none = call.build(placement.args, placement.kwargs)
    return float(bench(fn, grad_to_none, first))


def create(settings, placer):
    return DirectTimer(settings, placer)
