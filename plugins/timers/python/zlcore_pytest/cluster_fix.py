"""Thread-block-cluster launches under the graph timer (FlagGems' Hopper cluster GEMM, FlagTree).

Loaded when the backend declares cluster_fix and graph_capture. Per (shape, side)
it records whether a cluster kernel ran, and keeps such shapes honest under the
graph timer:
  - probe: during one warm call (after the first, so autotuning is over and only
    the winners launch) the Triton launch entry points are wrapped:
    JITFunction.run (returns the CompiledKernel it launched) and
    CompiledKernel.__getitem__ (the path FlagGems' LibEntry takes on its cache
    hits). The wrappers exist only for that one call, so no timed launch pays for
    them. A kernel is a cluster kernel when its metadata says num_ctas > 1 or any
    cluster/CTA-per-cluster dimension product > 1.
  - check: a cluster shape whose graph replays disagree with the eager per-call
    estimate by more than ZL_CLUSTER_TOLERANCE_PCT (for kernels of at least
    ZL_CLUSTER_CHECK_MIN_MS, where launch overhead cannot explain the gap) falls
    back, because the replay did not run what the eager launch ran.
  - explain: a failed capture of a cluster shape is reported as such.
Row field: cluster_kernel (true/false; null where no probe ran).
"""

import importlib

from . import _child, _env, _state
from .timers.base import CaptureFailed

DEFAULT_TOLERANCE_PCT = 30.0
DEFAULT_CHECK_MIN_MS = 0.05

# (module, class, attribute, kind): where a Triton launch can be observed.
HOOK_POINTS = (
    ("triton.runtime.jit", "JITFunction", "run", "returns_kernel"),
    ("triton.compiler.compiler", "CompiledKernel", "__getitem__", "self_is_kernel"),
)


def _field(metadata, name):
    if isinstance(metadata, dict):
        return metadata.get(name)
    return getattr(metadata, name, None)


def _metadata_items(metadata):
    if metadata is None:
        return {}
    if isinstance(metadata, dict):
        return dict(metadata)
    as_dict = getattr(metadata, "_asdict", None)
    if as_dict is not None:
        return dict(as_dict())
    return {k: v for k, v in vars(metadata).items() if not k.startswith("_")} if hasattr(metadata, "__dict__") else {}


def _size(value):
    if isinstance(value, bool):
        return 1
    if isinstance(value, int):
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, int) for v in value):
        product = 1
        for v in value:
            product *= max(v, 1)
        return product
    return 1


def describe_kernel(kernel):
    """{name, cluster, fields} for a launched CompiledKernel."""
    metadata = getattr(kernel, "metadata", None)
    items = _metadata_items(metadata)
    fields = {k: v for k, v in items.items() if "cluster" in k.lower() or "cta" in k.lower()}
    cluster = any(_size(v) > 1 for v in fields.values())
    name = getattr(kernel, "name", None) or _field(metadata, "name")
    return {"name": name, "cluster": cluster, "fields": {k: _child.jsonable(v) for k, v in fields.items()}}


class ClusterProbe:
    def __init__(self):
        self.hooks = []
        self.hook_error = None
        self.shapes = []
        self.graph_fallbacks = 0
        self._active = []  # (owner, attribute, original) while a probe runs
        self._points = None

    # -- hook install / restore -----------------------------------------------

    def _hook_points(self):
        if self._points is None:
            points = []
            errors = []
            for module_name, class_name, attribute, kind in HOOK_POINTS:
                try:
                    owner = getattr(importlib.import_module(module_name), class_name)
                    if attribute not in owner.__dict__:
                        raise AttributeError(f"{class_name}.{attribute} not defined")
                    points.append((owner, attribute, kind))
                except Exception as exc:
                    errors.append(f"{module_name}.{class_name}.{attribute}: {type(exc).__name__}: {exc}")
            self._points = points
            self.hooks = [f"{o.__module__}.{o.__name__}.{a}" for o, a, _ in points]
            self.hook_error = "; ".join(errors) or None
        return self._points

    def _install(self, seen):
        for owner, attribute, kind in self._hook_points():
            original = owner.__dict__[attribute]
            owner_wrapper = _wrap(original, kind, seen)
            setattr(owner, attribute, owner_wrapper)
            self._active.append((owner, attribute, original))

    def restore(self):
        while self._active:
            owner, attribute, original = self._active.pop()
            setattr(owner, attribute, original)

    # -- the timing plugin's interface -----------------------------------------

    def probe(self, fn, context):
        seen = []
        try:
            self._install(seen)
        except Exception as exc:
            self.restore()
            self.hook_error = f"{type(exc).__name__}: {exc}"
        if not self._active:
            fn()
            return None
        try:
            fn()
        finally:
            self.restore()
        kernels = []
        for kernel in seen:
            info = describe_kernel(kernel)
            if info not in kernels:
                kernels.append(info)
        cluster = any(k["cluster"] for k in kernels)
        self.shapes.append(dict(context, cluster_kernel=cluster, kernels=kernels))
        if cluster:
            _write_report()
        return cluster

    def check(self, timing):
        # A graph's replays against the eager calls; other timers time the
        # eager calls themselves (the direct timer's slow path keeps its
        # estimate in eager_ms too), so there is nothing to cross-check.
        eager = timing.eager_ms
        if timing.timer != "graph" or not timing.cluster or eager is None or eager < _check_min_ms():
            return
        gap_pct = abs(timing.latency_ms - eager) / eager * 100.0
        if gap_pct > _tolerance_pct():
            raise CaptureFailed(
                f"graph replay of a cluster kernel ran {timing.latency_ms:.6g} ms per call against "
                f"{eager:.6g} ms eager ({gap_pct:.1f} % apart, tolerance {_tolerance_pct():g} %)",
                cluster=True,
            )

    def explain(self, reason, cluster):
        if not cluster:
            return reason
        self.graph_fallbacks += 1
        return "cluster launch: " + reason

    def as_json(self):
        return {
            "schema": 1,
            "hooks": list(self.hooks),
            "hook_error": self.hook_error,
            "tolerance_pct": _tolerance_pct(),
            "check_min_ms": _check_min_ms(),
            "probed_sides": len(self.shapes),
            "cluster_sides": sum(1 for s in self.shapes if s["cluster_kernel"]),
            "graph_fallbacks": self.graph_fallbacks,
            "shapes": list(self.shapes),
        }


def _wrap(original, kind, seen):
    if kind == "returns_kernel":

        def run(self, *args, **kwargs):
            kernel = original(self, *args, **kwargs)
            if not kwargs.get("warmup", False):  # warmup=True compiles without launching
                seen.append(kernel)
            return kernel

        return run

    def getitem(self, grid):
        seen.append(self)
        return original(self, grid)

    return getitem


def _tolerance_pct():
    return _env.positive_float("ZL_CLUSTER_TOLERANCE_PCT", DEFAULT_TOLERANCE_PCT)


def _check_min_ms():
    return _env.positive_float("ZL_CLUSTER_CHECK_MIN_MS", DEFAULT_CHECK_MIN_MS)


PROBE = None


def _write_report():
    if PROBE is not None:
        try:
            _child.write_json("cluster_fix", PROBE.as_json())
        except OSError:
            pass


def pytest_configure(config):
    global PROBE
    PROBE = ClusterProbe()
    config.stash[_state.CLUSTER] = PROBE


def pytest_sessionfinish(session, exitstatus):
    if PROBE is not None:
        PROBE.restore()
        _child.write_json("cluster_fix", PROBE.as_json())


def pytest_unconfigure(config):
    global PROBE
    if PROBE is not None:
        PROBE.restore()
    PROBE = None
    config.stash[_state.CLUSTER] = None
