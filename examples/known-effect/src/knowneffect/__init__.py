"""knowneffect: loop kernels whose work is set by an iteration count, with a known slowdown on one side.

Each op takes its input and a base iteration count N. The reference side
(torch's role in FlagGems' benchmarks) runs N iterations; the measured side
(FlagGems' role) runs N * (1 + ZL_KNOWN_EFFECT_PCT / 100) iterations, rounded.
With the loop dominating the call, the measured side is that many percent
slower than it is with ZL_KNOWN_EFFECT_PCT=0, and at 0 both sides do the same
work: an A/A inside every row.

Two implementations, picked once at import (KNOWN_EFFECT_BACKEND overrides):
  gpu   Triton kernels looping on the device, when torch and triton import
        and ZL_TORCH_DEVICE (default cuda) names a device torch can use;
  host  NumPy loops, one ufunc pass over the array per iteration, otherwise
        (and always when zlcore names the host: ZL_TORCH_DEVICE cpu).
"""

import os

__version__ = "0.1.0"

EFFECT_ENV = "ZL_KNOWN_EFFECT_PCT"
OPS = ("fma_loop", "sin_loop", "copy_loop", "sum_loop", "norm_loop")


def effect_pct():
    """The measured side's slowdown in percent (default 0: the same work as the reference)."""
    raw = os.environ.get(EFFECT_ENV, "").strip()
    if not raw:
        return 0.0
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"{EFFECT_ENV}={raw!r} is not a number") from None


def scaled(iters):
    """The measured side's iteration count for a base count."""
    return max(1, int(round(iters * (1.0 + effect_pct() / 100.0))))


def _pick_backend():
    forced = os.environ.get("KNOWN_EFFECT_BACKEND", "").strip().lower()
    if forced in ("host", "gpu"):
        return forced
    device = os.environ.get("ZL_TORCH_DEVICE", "").strip().lower()
    if device in ("cpu", "host", "none"):
        return "host"
    try:
        import torch
        import triton  # noqa: F401
    except ImportError:
        return "host"
    module = getattr(torch, device or "cuda", None)
    try:
        return "gpu" if module is not None and module.is_available() else "host"
    except Exception:
        return "host"


BACKEND = _pick_backend()

if BACKEND == "gpu":
    from . import gpu as impl
else:
    from . import host as impl

device = impl.DEVICE
make_input = impl.make_input
dtype_by_name = impl.dtype_by_name


def reference(op):
    """The reference side of `op`: N iterations."""
    kernel = getattr(impl, op)
    return lambda x, iters: kernel(x, iters)


def measured(op):
    """The measured side of `op`: N scaled by ZL_KNOWN_EFFECT_PCT, read at each call."""
    kernel = getattr(impl, op)
    return lambda x, iters: kernel(x, scaled(iters))
