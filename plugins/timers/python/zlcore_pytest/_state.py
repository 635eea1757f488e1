"""State shared between the plugins of one pytest child.

The plugins are separate modules loaded with separate `-p` flags; the optional
ones (graph_capture, cluster_fix) announce themselves here in pytest_configure,
so timing can tell "planned but not loaded" from "loaded".
"""

from dataclasses import dataclass, field
from typing import List, Optional

# Set by zlcore_pytest.graph_capture when loaded: an object with
# measure(fn, grad_to_none, probe=None) -> SideTiming, raising CaptureFailed.
GRAPH = None

# Set by zlcore_pytest.cluster_fix when loaded: an object with
# probe(fn, context) -> bool | None, check(SideTiming) (raises CaptureFailed)
# and explain(reason, cluster) -> str.
CLUSTER = None


class CaptureFailed(Exception):
    """The graph timer could not measure this shape; the caller falls back for it.

    Only raised for capture/replay problems: an exception from the operator itself
    during warm-up propagates unchanged, because it is the shape's error.
    """

    def __init__(self, reason, cluster=None):
        super().__init__(reason)
        self.reason = reason
        self.cluster = cluster


@dataclass
class SideTiming:
    """How one side (torch base or the measured op) of one shape was timed."""

    timer: str
    latency_ms: float
    samples_ms: List[float]
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
        return len(self.samples_ms)
