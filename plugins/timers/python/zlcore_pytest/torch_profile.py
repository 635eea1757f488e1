"""The `torch.profiler` profiler of `--profile` (profile.py says what a profiler module provides).

The backend's capability `torch_profiler` names the activity its kernels are
recorded under (rules.yaml passes it as ZL_PROFILE_ACTIVITY): `cuda` where
torch reports device kernels through ProfilerActivity.CUDA, `cpu` where the
operators run on the host. A device activity reports each kernel launch with
its device time; the CPU activity reports each operator's own (self) time.
torch is imported at the pass, not here: the plugins import without it.
"""

from . import _env

NAME = "torch.profiler"


def _activity():
    return (_env.text("ZL_PROFILE_ACTIVITY") or "cuda").lower()


def launches(events, activity):
    """[(name, us)] of the kernels among a profile's events: the device's for a
    device activity, the operators' self time on the host for `cpu`."""
    out = []
    for e in events:
        kind = str(getattr(e, "device_type", "")).rsplit(".", 1)[-1].lower()
        if activity == "cpu":
            if kind == "cpu":
                out.append((e.name, float(getattr(e, "self_cpu_time_total", 0.0))))
        elif kind and kind != "cpu":
            out.append((e.name, float(e.time_range.elapsed_us())))
    return out


def check():
    import torch.profiler  # noqa: F401 - raises where torch (or its profiler) is absent


def _synchronize(activity):
    import torch

    if activity != "cpu":
        module = getattr(torch, _env.torch_device() or "cuda", None)
        if module is not None and hasattr(module, "synchronize"):
            module.synchronize()


def profile(fn, calls, trace_path, grad_to_none):
    import torch.profiler as tp

    activity = _activity()
    kinds = [tp.ProfilerActivity.CPU]
    if activity != "cpu":
        kinds.append(getattr(tp.ProfilerActivity, activity.upper()))
    _synchronize(activity)  # the measurement's last calls end outside the trace
    with tp.profile(activities=kinds) as prof:
        for _ in range(calls):
            for x in grad_to_none or ():
                x.grad = None
            fn()
        _synchronize(activity)
    prof.export_chrome_trace(trace_path)
    return launches(prof.events(), activity)
