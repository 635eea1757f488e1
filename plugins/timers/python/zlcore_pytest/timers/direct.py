"""The `direct` timer: triton.testing.do_bench (device events), once per input placement.

For devices with events but no graph API. Each of ZL_DIRECT_REPEAT repeats
runs do_bench on a fresh placement (placement.py) with the suite's warm-up
and repetition times; a repeat's value is do_bench's median, the latency the
mean over placements. The first placement's warm-up also compiles and tunes,
so do_bench reports the whole time as measurement.
"""

from .. import _bench, _env
from .base import SideTiming

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
        self.placer = placer

    def settings_report(self):
        return None  # direct_repeat is reported with the shared settings

    def measure(self, call):
        cluster = None
        if call.probe is not None:
            fn, _ = call.build(call.args, call.kwargs)
            cluster = call.probe(fn)
            del fn
        bench = _do_bench()
        rng = self.placer.rng(call.context)
        placements = []
        for index in range(self.settings.repeat):
            with self.placer.place(index, call.args, call.kwargs, rng) as p:
                placements.append(_bench_one(bench, call, p, first=index == 0))
        return SideTiming.over_placements(NAME, placements, cluster=cluster)


def _bench_one(bench, call, placement, first):
    # A function of its own, so the callable and its clones go when it returns.
    fn, grad_to_none = call.build(placement.args, placement.kwargs)
    return float(bench(fn, grad_to_none, first))


def create(settings, placer):
    return DirectTimer(settings, placer)
