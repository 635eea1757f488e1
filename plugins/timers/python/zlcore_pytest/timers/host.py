"""The `host` timer: wall clock around calls, for devices without events, on several placements.

Warms up on the suite's own inputs for the suite's warm-up time (any
compilation and tuning happen there) and sizes a loop from a per-call
estimate. Then ZL_HOST_REPEAT placements share the suite's repetition time:
each places the inputs anew (placement.py), makes one untimed call on them
and times ZL_HOST_LOOPS loops; a placement's value is the median of its
loops' per-call times, the latency the mean over placements. On a torch
device each loop ends with a synchronize.

The loops read ZL_HOST_CLOCK: the wall clock, or the calling thread's CPU
time (settings.py says when each is right). Warm-up and the loop size go by
the wall clock either way: they are about how long the timer runs.
"""

import time

from .. import _bench, _env, _stats
from .base import SideTiming, clear_grads
from .settings import SettingsError

NAME = "host"
# A loop never runs more than this many calls, however fast the op.
MAX_CALLS_PER_LOOP = 1_000_000
CLOCKS = {"wall": time.perf_counter, "thread": time.thread_time}


def _sync():
    if not _env.uses_torch_device():
        return lambda: None
    return _bench.device_module().synchronize


class HostTimer:
    name = NAME

    def __init__(self, settings, placer):
        self.settings = settings.host
        self.placer = placer
        if self.settings.clock == "thread" and _env.uses_torch_device():
            raise SettingsError(f"ZL_HOST_CLOCK=thread reads this thread's CPU time, which leaves out the work on "
                                f"device {_env.torch_device()!r}: use wall there")
        self.clock = CLOCKS[self.settings.clock]  # what the loops read
        if settings.l2.cold:
            # zlcore's planner refuses this first (rules.yaml, l2_why); this is
            # the same refusal for a run outside zlcore.
            raise SettingsError("ZL_L2=cold: the host timer reads the host's clock around loops of back-to-back "
                                "calls, so a clear between calls would be timed with them; use ZL_L2=warm")

    def settings_report(self):
        return None  # host_repeat and host_loops are reported with the shared settings

    def measure(self, call):
        s = self.settings
        sync = _sync()
        clock = time.perf_counter
        cluster = None
        fn, grad_to_none = call.build(call.args, call.kwargs)
        if call.probe is not None:
            cluster = call.probe(fn)
        sync()
        deadline = clock() + _bench.warmup_ms() / 1000.0
        while True:
            clear_grads(grad_to_none)
            fn()
            if clock() >= deadline:
                break
        sync()
        # Per-call estimate after warm-up, so compilation does not shrink the loops.
        start = clock()
        for _ in range(3):
            fn()
        sync()
        estimate_s = max((clock() - start) / 3, 1e-9)
        del fn, grad_to_none
        loop_s = _bench.repetition_ms() / 1000.0 / (s.repeat * s.loops)
        calls = int(min(max(1, loop_s / estimate_s), MAX_CALLS_PER_LOOP))

        rng = self.placer.rng(call.context)
        placements, samples = [], []
        for index in range(s.repeat):
            with self.placer.place(index, call.args, call.kwargs, rng) as p:
                loops = self._loops(call, p, calls, sync)
            placements.append(_stats.median(loops))
            samples += loops
        return SideTiming.over_placements(NAME, placements, samples, cluster=cluster,
                                          extra={"calls_per_sample": calls})

    def _loops(self, call, placement, calls, sync):
        clock = self.clock
        fn, grad_to_none = call.build(placement.args, placement.kwargs)
        clear_grads(grad_to_none)
        fn()  # the new storage's first touch is not timed
        out = []
        for _ in range(self.settings.loops):
            clear_grads(grad_to_none)
            sync()
            start = clock()
            for _ in range(calls):
                fn()
            sync()
            out.append((clock() - start) / calls * 1000.0)
        return out


def create(settings, placer):
    return HostTimer(settings, placer)
