"""Can this warm worker take another op? Checked after every op (docs/warm-workers.md).

The snapshot restore puts back what Python can put back. What it cannot: a device
left mid-capture or with a sticky error (an op whose graph capture failed left
every later op in the worker failing within a second), and a thread the op started
that is still running its code. Either poisons every op that follows, so the worker
reports it and leaves; the batch starts a fresh one and reruns a failed op once in a
fresh process.

Checks, each returning None when fine or one line saying what is wrong:
  - device: the torch device module the op ran on (ZL_TORCH_DEVICE: cuda, musa,
    npu, ...), when it was initialized: no stream capture open, a synchronize,
    a tiny kernel whose answer is checked, and a draw from the device's random
    generator (which a failed capture can leave believing it is capturing);
  - memory: after the collector, the BLAS workspaces and the device's
    empty_cache, the device memory this process still holds (memory_reserved) must stay under
    ZL_WARM_MEMORY_LIMIT_MB (2048), and what it still has allocated must be back
    to the worker's baseline (its allocation before its first op) within
    ZL_WARM_MEMORY_MARGIN_MB (64). Memory the op left reachable, or pools the
    allocator could not hand back, would be missing for every op after it, and
    every later op would fail out of memory (docs/warm-workers.md);
  - failures: the op's own failures (the outcomes plugin's facts) that were
    device errors; such an op is rerun in a fresh process even when the device
    answers again;
  - threads: threads started during the op that are still executing the
    suite's code after a short grace.
"""

import gc
import json
import os
import sys
import threading
import time

from . import _holders

THREAD_GRACE_S = 1.0
MEMORY_LIMIT_MB = 2048
MEMORY_MARGIN_MB = 64
MIB = 1 << 20


_DUMMY = getattr(threading, "_DummyThread", ())


def threads_now():
    return {t.ident: t for t in threading.enumerate() if t.ident is not None}


def _device_module(device):
    torch = sys.modules.get("torch")
    if torch is None or not device or device == "cpu":
        return None, None
    module = getattr(torch, device, None)
    if module is None:
        return torch, None
    try:
        initialized = module.is_initialized()
    except Exception:  # noqa: BLE001 - a module without the query: nothing was set up
        return torch, None
    return torch, (module if initialized else None)


def baseline_allocated(device):
    """The device memory this process has allocated now (bytes): 0 before its
    device module is initialized, None where the module does not say."""
    torch = sys.modules.get("torch")
    module = getattr(torch, device, None) if torch is not None and device and device != "cpu" else None
    if module is None:
        return None
    _, initialized = _device_module(device)
    if initialized is None:
        return 0
    allocated = getattr(initialized, "memory_allocated", None)
    try:
        return int(allocated()) if allocated is not None else None
    except Exception:  # noqa: BLE001 - no figure, no check
        return None


def check_device(device, memory=None, baseline=None):
    torch, module = _device_module(device)
    if module is None:
        return None
    try:
        capturing = getattr(module, "is_current_stream_capturing", None)
        if capturing is not None and capturing():
            return f"a {device} stream capture is still open after the op"
        module.synchronize()
        probe = torch.ones(8, device=device)
        value = float((probe + 1).sum().item())
        # The random generator too: a graph capture that failed can leave it
        # registered as capturing, and every later randn then raises ("Offset
        # increment outside graph capture") while plain kernels still run.
        noise = torch.rand(8, device=device)
        in_range = bool(((noise >= 0) & (noise < 1)).all().item())
        module.synchronize()
        if value != 16.0:
            return f"a tiny {device} kernel computed {value}, not 16"
        if not in_range:
            return f"the {device} random generator gave values outside [0, 1)"
        del probe, noise
        return check_memory(device, module, memory, baseline=baseline)
    except Exception as exc:  # noqa: BLE001 - whatever the device says is the answer
        text = " ".join(str(exc).split())[:300]
        return f"the {device} device fails after the op: {type(exc).__name__}: {text}"


def _mib_setting(env, name, default, allow_zero=False):
    raw = ((env if env is not None else os.environ).get(name) or "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (value >= 0 if allow_zero else value > 0) or value == float("inf"):
        kind = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name}={raw!r} is not a {kind} number of MiB")
    return value


def memory_limit_mb(env=None):
    """ZL_WARM_MEMORY_LIMIT_MB (the default when unset or empty); ValueError
    naming the variable for anything but a positive number."""
    return _mib_setting(env, "ZL_WARM_MEMORY_LIMIT_MB", MEMORY_LIMIT_MB)


def memory_margin_mb(env=None):
    """ZL_WARM_MEMORY_MARGIN_MB: how far over its baseline a worker's allocation may stay after an op."""
    return _mib_setting(env, "ZL_WARM_MEMORY_MARGIN_MB", MEMORY_MARGIN_MB, allow_zero=True)


def release_blas_workspaces(device):
    """Hands back the BLAS workspaces torch keeps per (handle, stream) pair.

    torch allocates one (32 MiB on the H200) the first time a stream runs a BLAS
    call and frees it only when asked. Every session's timer takes a new side
    stream from torch's pool, so a warm worker kept 32 MiB more after each BLAS
    op (addbmm, addmv_, addmm_ on the H200), up to one per pooled stream: memory
    no later op could use, counted against the worker's limit. The next BLAS
    call allocates its workspace again, in its warm-up, before anything is
    timed. Absent from torch builds without the binding: nothing to do.
    """
    torch = sys.modules.get("torch")
    release = getattr(getattr(torch, "_C", None), f"_{device}_clearCublasWorkspaces", None)
    if release is None:
        return
    try:
        release()
    except Exception:  # noqa: BLE001 - memory to hand back, not a check: the checks after it judge the device
        pass


def check_memory(device, module, memory=None, limit_mb=None, baseline=None, margin_mb=None):
    """Hands cached blocks back, then: None when what the process still holds
    is under the limit and its allocation back to `baseline` (bytes, the
    worker's before its first op) within the margin, else why not. `memory`
    (a dict) receives the figures."""
    reserved = getattr(module, "memory_reserved", None)
    if reserved is None:
        return None  # a device module that cannot say
    gc.collect()
    release_blas_workspaces(device)
    empty = getattr(module, "empty_cache", None)
    if empty is not None:
        empty()
    held = int(reserved())
    allocated = getattr(module, "memory_allocated", None)
    in_use = int(allocated()) if allocated is not None else None
    if memory is not None:
        memory["reserved_bytes"] = held
        memory["allocated_bytes"] = in_use
        if baseline is not None:
            memory["baseline_allocated_bytes"] = int(baseline)
    limit = limit_mb if limit_mb is not None else memory_limit_mb()
    if held > limit * MIB:
        of_it = f", {in_use / MIB:.0f} MiB of it allocated" if in_use is not None else ""
        return (f"the worker still holds {held / MIB:.0f} MiB of {device} memory after the op "
                f"(collected and emptied{of_it}; limit ZL_WARM_MEMORY_LIMIT_MB={limit:g})" + _holders_text(device))
    margin = margin_mb if margin_mb is not None else memory_margin_mb()
    if baseline is not None and in_use is not None and in_use - baseline > margin * MIB:
        return (f"the op left {(in_use - baseline) / MIB:.0f} MiB of {device} memory allocated over the "
                f"worker's baseline of {baseline / MIB:.0f} MiB (margin ZL_WARM_MEMORY_MARGIN_MB={margin:g})"
                + _holders_text(device))
    return None


def _holders_text(device):
    """'; still reachable: ...' naming who holds the largest leftovers, or ''."""
    describe = _holders.torch_describer(device)
    if describe is None:
        return ""
    try:
        lines = _holders.largest_holders(describe)
    except Exception:  # noqa: BLE001 - an explanation that fails must not change the verdict
        return ""
    return "; still reachable: " + "; ".join(lines) if lines else ""


def check_failures(child_dir):
    """The op's failures that the outcomes plugin judged device errors."""
    if not child_dir:
        return None
    try:
        with open(os.path.join(child_dir, "outcomes.json"), encoding="utf-8") as f:
            outcomes = json.load(f)
    except (OSError, ValueError):
        return None
    for test in outcomes.get("tests", []) if isinstance(outcomes, dict) else []:
        if isinstance(test, dict) and test.get("device_error"):
            return f"the op failed with a device error in {test.get('node')}: {test.get('message')}"[:400]
    return None


def _runs_suite_code(thread_id, roots):
    frame = sys._current_frames().get(thread_id)
    while frame is not None:
        path = os.path.realpath(frame.f_code.co_filename)
        if any(path.startswith(r) for r in roots):
            return f"{os.path.basename(path)}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def check_threads(before, suite_roots, grace_s=THREAD_GRACE_S):
    roots = [os.path.join(os.path.realpath(r), "") for r in suite_roots if r]
    new = [t for ident, t in threads_now().items() if ident not in before and t is not threading.current_thread()]
    deadline = time.monotonic() + grace_s
    for t in new:
        # A thread started outside threading (a library's native worker that
        # touched Python) is a dummy: always "alive", never joinable, and
        # join() raises. Its frames still say whether it runs the op's code.
        if not isinstance(t, _DUMMY):
            t.join(max(0.0, deadline - time.monotonic()))
    dummies = [t for t in new if isinstance(t, _DUMMY)]
    while dummies and time.monotonic() < deadline and any(_runs_suite_code(t.ident, roots) for t in dummies):
        time.sleep(0.01)
    stuck = []
    for t in new:
        if t.is_alive():
            where = _runs_suite_code(t.ident, roots)
            if where:
                stuck.append(f"{t.name} at {where}")
    if stuck:
        return f"the op left {len(stuck)} thread(s) running its code: " + ", ".join(stuck[:3])
    return None


def check(device, child_dir, threads_before, suite_roots, baseline=None):
    """{"ok": bool, "why": str or None, "seconds": float, "memory": {...}} after
    one op; "memory" (reserved and allocated bytes after emptying, and the
    worker's baseline allocation) where the device module reports them."""
    started = time.monotonic()
    why = None
    memory = {}
    for probe in (lambda: check_device(device, memory, baseline), lambda: check_failures(child_dir),
                  lambda: check_threads(threads_before, suite_roots)):
        try:
            why = probe()
        except Exception as exc:  # noqa: BLE001 - a check that cannot run proves nothing good
            why = f"health check raised {type(exc).__name__}: {exc}"
        if why:
            break
    out = {"ok": why is None, "why": why, "seconds": round(time.monotonic() - started, 4)}
    if memory:
        out["memory"] = memory
    return out
