"""`--profile` (ZL_PROFILE): each (shape, side) once more, under the backend's
profiler, after its measurement.

The planner picks the profiler from the backend's capabilities (rules.yaml,
`profilers:`) and hands the child its name as ZL_PROFILER and its module as
ZL_PROFILER_MODULE; rules.yaml loads this plugin only when the run asks for a
profile. The timing plugin calls `after_side` once a side's measurement has
returned, so the pass is never inside a timing window; its seconds are the
phase `profiling`, not `measuring` (_phases.py).

A profiler module provides NAME and
    profile(fn, calls, trace_path, grad_to_none) -> [(kernel name, device us), ...]
which calls fn `calls` times under the profiler, clearing grad_to_none's grads
before each call, writes the trace (Chrome trace JSON) to trace_path, and
returns one pair per kernel launch; and may provide check(), which raises
when the profiler cannot run here (called once, before anything is measured).
This plugin writes the trace under a
temporary name and renames it into place (a crash leaves no half trace), and
puts the kernels with the most time into the side's row (docs/profile.md).
"""

import importlib
import os
import re

import pytest

from . import _bench, _env, _state
from ._phases import CLOCK
from ._text import describe

# The op is called this many times in the pass: one call's kernels, a few
# times over, so that a launch the first call alone makes (a lazy init) shows
# by its count rather than dominating the share.
CALLS = 5
# Kernels kept per side in the row, the most time first.
TOP = 10
TRACE_DIR = "profile"


def top_kernels(launches, calls, top=TOP):
    """[{name, share, us}] of the `top` kernels with the most device time: `us`
    per call of the op (all its launches in one call), `share` of the pass's
    device time. `launches` is [(name, us)], one pair per launch."""
    totals = {}
    for name, us in launches:
        totals[str(name)] = totals.get(str(name), 0.0) + float(us)
    whole = sum(totals.values())
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return [{"name": name, "share": round(us / whole, 4) if whole > 0 else None,
             "us": round(us / max(calls, 1), 3)} for name, us in ranked]


def trace_name(row, side):
    """profile/<op>-<dtype>-<shape>-<side>.json, in characters any file system takes."""
    op = getattr(row.bench, "op_name", None) or row.op_name or "op"
    shape = _bench.shape_key(row.shape_detail) if row.shape_detail is not None else "noshape"
    stem = "-".join(str(p) for p in (op, row.dtype or "nodtype", shape, side))
    return re.sub(r"[^A-Za-z0-9._=+-]+", "_", stem).strip("_")


class Profiler:
    """One session's profile passes: the profiler module and the traces written."""

    def __init__(self, name, module, run_dir):
        self.name = name
        self.module = module
        self.run_dir = run_dir
        self.taken = set()  # trace names already used in this run

    def _trace_path(self, row, side):
        stem = trace_name(row, side)
        name, n = stem, 1
        while name in self.taken:
            n += 1
            name = f"{stem}-{n}"
        self.taken.add(name)
        return os.path.join(TRACE_DIR, name + ".json")

    def after_side(self, row, side, build):
        """Profile one measured side: `build()` gives (fn, grad_to_none)."""
        relative = self._trace_path(row, side)
        path = os.path.join(self.run_dir, relative)
        tmp = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".tmp")
        fields = {}
        with CLOCK.phase("profiling"):
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                fn, grad_to_none = build()
                launches = self.module.profile(fn, CALLS, tmp, grad_to_none)
                if os.path.exists(tmp):
                    os.replace(tmp, path)
                    fields["trace"] = relative
                fields["kernels"] = top_kernels(launches, CALLS)
            except Exception as exc:
                # The side is measured; a profile that failed is the row's
                # note, never the side's error.
                fields["error"] = describe(exc)
                if os.path.exists(tmp):
                    os.unlink(tmp)
        row.profiles[side] = fields


def row_fields(row):
    """The row's profile keys: none for an unprofiled run, so its rows are as before."""
    out = {}
    for side, suffix in (("gems", ""), ("base", "_base")):
        got = row.profiles.get(side)
        if got is None:
            continue
        out["kernels" + suffix] = got.get("kernels")
        out["profile_trace" + suffix] = got.get("trace")
        if got.get("error"):
            out["profile_error" + suffix] = got["error"]
    return out


def pytest_configure(config):
    module_name = _env.text("ZL_PROFILER_MODULE")
    if not module_name:
        return  # loaded without a profiler named (outside zlcore): no pass
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise pytest.UsageError(f"zlcore profile: profiler {_env.text('ZL_PROFILER')!r}: "
                                f"cannot import {module_name}: {exc}") from None
    try:
        getattr(module, "check", lambda: None)()
    except Exception as exc:
        # Said once, before the first measurement, not as an error in every row.
        raise pytest.UsageError(f"zlcore profile: profiler {_env.text('ZL_PROFILER')!r} cannot run here: "
                                f"{describe(exc)}") from None
    run_dir = _env.text("ZL_RUN_DIR") or os.getcwd()
    config.stash[_state.PROFILE] = Profiler(_env.text("ZL_PROFILER") or getattr(module, "NAME", module_name),
                                            module, run_dir)
