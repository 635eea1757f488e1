"""What every timer takes and gives: the call to measure, the side's timing."""

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from .. import _stats
from .._text import describe as one_line  # noqa: F401 - the timers' name for it


class CaptureFailed(Exception):
    """The graph timer could not measure this shape; the caller falls back for it.

    Only raised for capture/replay problems: an exception from the operator itself
    during warm-up propagates unchanged, because it is the shape's error.
    """

    def __init__(self, reason, cluster=None, left_open=False):
        super().__init__(reason)
        self.reason = reason
        self.cluster = cluster
        # The stream still read as capturing after the clean-up: the process is suspect.
        self.left_open = left_open
        # The failed timer's per-call estimate of the warm callable (ms), when it
        # took one: the fallback need not spend calls finding it again.
        self.eager_ms = None


class SideThrottled(Exception):
    """The graph timer's clock check got no clean window for this side
    (clock_check.py): the side has no number, and no other timer may give it
    one, since it would run on the same throttled device.
    """

    def __init__(self, reason, dropped=0, clocks=None):
        super().__init__(reason)
        self.reason = reason
        self.dropped = dropped  # windows the side dropped, the last try's included
        self.clocks = clocks  # {"min", "median"} MHz of every window it read, or None


@dataclass
class SideCall:
    """One get_latency call: op(*args, **kwargs) of one side of one shape.

    `build(args, kwargs)` gives the callable to time on those arguments (the
    originals or a placement's clones) and the tensors whose grads each call
    resets: for a backward bench it runs the forward once on them.
    """

    args: tuple
    kwargs: dict
    build: Callable
    # op, dtype, shape, side: names the side in reports and seeds its placements
    context: Dict[str, Any] = field(default_factory=dict)
    # cluster_fix's probe(fn) -> bool | None, run on one warm call; None without cluster_fix
    probe: Optional[Callable] = None
    # Per-call ms of the callable, already warm (compiled, tuned), when a timer
    # that failed before this one measured it; None when nothing ran yet.
    warm_call_ms: Optional[float] = None


@dataclass
class SideTiming:
    """How one side (torch base or the measured op) of one shape was timed.

    `placements_ms` holds each input placement's median per-call time; the
    latency is their mean and `spread_pct` their range over it.
    """

    timer: str
    latency_ms: float
    samples_ms: List[float]
    placements_ms: List[float]
    spread_pct: float
    fallback_reason: Optional[str] = None
    cluster: Optional[bool] = None
    # Per-call time of a few eager calls taken during graph warm-up; cluster_fix
    # cross-checks graph replays against it.
    eager_ms: Optional[float] = None
    calls_per_replay: Optional[int] = None
    # Wall time this side cost: the warm-up calls (compilation and tuning
    # included) and the measurement after them. A timer that cannot tell the
    # two apart leaves warmup_ms None and reports its whole time as measure_ms.
    warmup_ms: Optional[float] = None
    measure_ms: Optional[float] = None
    extra: dict = field(default_factory=dict)

    @property
    def repeats(self):
        return len(self.placements_ms)

    @classmethod
    def over_placements(cls, timer, placements_ms, samples_ms=None, **kw):
        """The latency and spread as docs/run-directory.md defines them."""
        placements_ms = [float(x) for x in placements_ms]
        return cls(timer=timer, latency_ms=_stats.mean(placements_ms),
                   samples_ms=list(samples_ms if samples_ms is not None else placements_ms),
                   placements_ms=placements_ms, spread_pct=_stats.range_over_mean_pct(placements_ms), **kw)


def clear_grads(grad_to_none):
    # Same per-call reset as do_bench and do_bench_cudagraph.
    if grad_to_none:
        for x in grad_to_none:
            x.grad = None
