"""Writes results.jsonl: one JSON line per (op, dtype, shape), per docs/run-directory.md.

Each row is appended as soon as its shape is finished (one write on an O_APPEND
descriptor), so a crash mid-op keeps every finished shape. How calls become rows
is in _rows.py; this plugin feeds it the suite's events by wrapping, in
pytest_sessionstart (after the suite's Config exists), three names of the
suite's base module, all restored at session finish:
  - base.BenchmarkMetrics: a subclass whose constructor announces a new shape,
    so the row can take FlagGems' own speedup/gbps/tflops/error_msg;
  - base.update_result: the end of one dtype (its name: data["dtype"]);
  - Benchmark.run: wraps the instance's get_input_iter(dtype) to learn the dtype
    of the loop in progress.
"""

import json
import os

import pytest

from . import _bench, _child, _env, _state


class _Writer:
    def __init__(self, path):
        self.path = path
        self.rows = 0
        self.rows_with_error = 0
        self.write_errors = 0
        self.last_write_error = None
        self.ops = {}
        self.dtypes = {}
        self.timers = {}
        self.fallback_rows = 0
        self.cluster_rows = 0

    def __call__(self, row):
        # Per row on the measured path (1,000 shapes: docs/performance.md): the
        # C encoder directly, and jsonable's walk only for a row it refuses
        # (NaN/inf, a type JSON lacks), which gives the same line as before.
        try:
            line = json.dumps(row, allow_nan=False) + "\n"
        except (TypeError, ValueError):
            line = json.dumps(_child.jsonable(row)) + "\n"
        if self.path:
            try:
                # O_NOFOLLOW: a link planted in the run directory is refused
                # (a write error), never appended through.
                flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                try:
                    fd = os.open(self.path, flags, 0o644)
                except FileNotFoundError:
                    # The directory only when it is missing, not a makedirs per row.
                    os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
                    fd = os.open(self.path, flags, 0o644)
                try:
                    os.write(fd, line.encode("utf-8"))
                finally:
                    os.close(fd)
            except OSError as exc:
                self.write_errors += 1
                self.last_write_error = f"{type(exc).__name__}: {exc}"
                return
        self.rows += 1
        if row.get("error"):
            self.rows_with_error += 1
        if row.get("fallback_reason"):
            self.fallback_rows += 1
        if row.get("cluster_kernel"):
            self.cluster_rows += 1
        _count(self.ops, row.get("op"))
        _count(self.dtypes, row.get("dtype"))
        for key in ("timer", "timer_base"):
            if row.get(key):
                _count(self.timers, row[key])

    def as_json(self):
        return {
            "schema": 1,
            "results_file": self.path or None,
            "rows": self.rows,
            "rows_with_error": self.rows_with_error,
            "fallback_rows": self.fallback_rows,
            "cluster_rows": self.cluster_rows,
            "ops": dict(sorted(self.ops.items())),
            "dtypes": dict(sorted(self.dtypes.items())),
            "sides_by_timer": dict(sorted(self.timers.items())),
            "write_errors": self.write_errors,
            "last_write_error": self.last_write_error,
            "hooks": list(_hooked_history),
            "hook_error": _hook_error,
        }


def _count(table, key):
    if key is not None:
        table[str(key)] = table.get(str(key), 0) + 1


WRITER = None
_TRACKER = None  # the session's tracker (config.stash), for hooks that get no config
_restore = []
_hooked_names = []
_hooked_history = []  # what was hooked, kept for results.json after restoring
_hook_error = None


def _install(tracker):
    global _hook_error
    if _restore:
        return True
    try:
        base = _bench.base_module()
        bench_class = _bench.benchmark_class(base)
    except Exception as exc:
        _hook_error = f"{type(exc).__name__}: {exc}"
        return False
    _hook_error = None
    prefix = _bench.base_module_name()

    metrics_class = getattr(base, "BenchmarkMetrics", None)
    if isinstance(metrics_class, type):

        class TrackedMetrics(metrics_class):
            # Not a new dataclass: fields, asdict() and repr stay FlagGems' own.
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                tracker.metric_created(self)

        TrackedMetrics.__name__ = metrics_class.__name__
        TrackedMetrics.__qualname__ = metrics_class.__qualname__
        _replace(base, "BenchmarkMetrics", TrackedMetrics, f"{prefix}.BenchmarkMetrics")

    update_result = getattr(base, "update_result", None)
    if callable(update_result):

        def tracked_update_result(op, data, *args, **kwargs):
            try:
                tracker.update_result(op, data)
            except Exception as exc:  # a bookkeeping bug must not fail the benchmark
                _note_tracking_error(exc)
            return update_result(op, data, *args, **kwargs)

        _replace(base, "update_result", tracked_update_result, f"{prefix}.update_result")

    run = bench_class.__dict__.get("run")
    if run is not None:

        def tracked_run(self, *args, **kwargs):
            _track_dtype(self, tracker)
            return run(self, *args, **kwargs)

        _replace(bench_class, "run", tracked_run, f"{prefix}.Benchmark.run")
    return True


def _replace(owner, name, value, label):
    _restore.append((owner, name, getattr(owner, name)))
    setattr(owner, name, value)
    _hooked_names.append(label)
    if label not in _hooked_history:
        _hooked_history.append(label)


def _track_dtype(bench, tracker):
    """Shadow get_input_iter on the instance so each dtype loop announces its dtype."""
    if bench.__dict__.get("_zl_input_iter_tracked"):
        return
    get_input_iter = getattr(bench, "get_input_iter", None)
    if get_input_iter is None:
        return

    def tracked_get_input_iter(dtype, *args, **kwargs):
        tracker.set_dtype(bench, dtype)
        return get_input_iter(dtype, *args, **kwargs)

    bench.get_input_iter = tracked_get_input_iter
    bench._zl_input_iter_tracked = True


def _note_tracking_error(exc):
    global _hook_error
    _hook_error = f"tracking: {type(exc).__name__}: {exc}"


def _uninstall():
    while _restore:
        owner, name, value = _restore.pop()
        setattr(owner, name, value)
    _hooked_names.clear()


def _crash_message(report):
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return crash.message
    return getattr(report, "longreprtext", "") or "test failed"


# -- pytest hooks ----------------------------------------------------------------


def pytest_configure(config):
    global WRITER, _TRACKER
    WRITER = _Writer(_env.results_file())
    _TRACKER = _state.tracker(config)
    # A compile-only run measures nothing: whatever the suite reports is not a row.
    _TRACKER.sink = None if _env.compile_only() else WRITER


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    _install(_state.tracker(session.config))


def pytest_collection_finish(session):
    if not _restore:
        _install(_state.tracker(session.config))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    tracker = _state.tracker(item.config)
    tracker.begin_test(item.nodeid)
    try:
        yield
    finally:
        tracker.end_test()


def pytest_runtest_logreport(report):
    if report.when == "call" and report.failed and _TRACKER is not None:
        _TRACKER.note_failure(_crash_message(report))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    _state.tracker(session.config).flush()
    _uninstall()
    if WRITER is not None:
        _child.write_json("results", WRITER.as_json())


def pytest_unconfigure(config):
    global _TRACKER
    _state.tracker(config).sink = None
    _TRACKER = None
