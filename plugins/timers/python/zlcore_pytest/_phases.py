"""Where a run's seconds go: one exclusive clock for the whole pytest child.

Every moment of the session belongs to exactly one phase. The session moves
through base phases (imports, collection, suite, teardown); work that nests
inside them (compiling a kernel, autotuning, the timer measuring a side) is a
phase pushed on top, and while it runs the base phase does not count. A
compilation inside a tuning run inside a measurement therefore counts as
compiling once, not three times, and the phases add up to the session's wall
time. What the clock cannot see (the interpreter's start before this module
is imported, its exit after the last hook) the core measures from outside: the
child's lifetime less the session's span (docs/run-directory.md, "time").

Phases:
  imports      this module's import to pytest_configure: the suite's conftest
               and what it imports (torch, triton, the library under test)
  collection   pytest_configure to the end of collection: test modules
  compiling    kernel compilation: Triton's JIT (`JITFunction._do_compile`,
               which also loads a kernel from Triton's cache) and the
               library's own code generation where it has some
  autotuning   configurations benchmarked by an autotuner (compiling them
               excluded)
  measuring    the planned timer, per side (base: the reference, gems: the
               measured op), compiling and autotuning excluded
  suite        everything else between collection and the session's end: the
               suite's own per-shape work (inputs, reference calls, metrics)
  teardown     pytest_sessionfinish: the plugins' reports
"""

import contextlib
import time

BASE_PHASES = ("imports", "collection", "suite", "teardown")
# Every part a report names, zero where the session spent nothing on it.
PARTS = BASE_PHASES + ("compiling", "autotuning", "measuring")


class PhaseClock:
    """Exclusive time per phase: the top of the stack, else the base phase, owns now."""

    def __init__(self, clock=time.perf_counter):
        self._now = clock
        self.began = clock()
        self._mark = self.began
        self.base = "imports"
        self._stack = []
        self.totals = {}
        self.counts = {}

    def _settle(self):
        now = self._now()
        owner = self._stack[-1] if self._stack else self.base
        self.totals[owner] = self.totals.get(owner, 0.0) + (now - self._mark)
        self._mark = now

    def switch(self, base):
        """The session moved on: from now the base phase is `base`."""
        self._settle()
        self.base = base

    @contextlib.contextmanager
    def phase(self, name):
        """`name` owns the time until the block ends, less the phases nested in it."""
        self._settle()
        self._stack.append(name)
        self.counts[name] = self.counts.get(name, 0) + 1
        try:
            yield
        finally:
            self._settle()
            self._stack.pop()

    def span(self):
        return self._now() - self.began

    def seconds(self):
        """Totals so far, the phase running now included (seconds, rounded)."""
        self._settle()
        return {name: round(value, 4) for name, value in sorted(self.totals.items())}

    def as_json(self):
        seconds = self.seconds()
        measuring = {name.split(":", 1)[1]: value for name, value in seconds.items() if name.startswith("measuring:")}
        flat = dict.fromkeys(PARTS, 0.0)
        flat.update({name: value for name, value in seconds.items() if not name.startswith("measuring:")})
        flat["measuring"] = round(sum(measuring.values()), 4)
        return {
            "schema": 1,
            "span_s": round(self.span(), 4),
            "seconds": flat,
            "measuring_by_side": measuring,
            "counts": dict(sorted(self.counts.items())),
        }


CLOCK = PhaseClock()


def measuring(side):
    """The phase of the timer measuring `side` (base or gems)."""
    return CLOCK.phase("measuring:" + str(side or "unknown"))
