"""Whose fault is a failed test: the op's, the device's, or zlcore's own plugins'.

A status of harness_error must never be blamed on an op, and an op's failure must
never be blamed on zlcore. Three facts decide it:

- the chain: FlagGems' run() catches whatever its measuring loop raised and calls
  pytest.fail(str(e)), so the exception pytest reports is `Failed` and the real
  one is its __context__. The deepest exception of the chain is the one examined;
- the frame: walking the deepest exception's traceback from where it was raised
  outwards, the first frame that belongs either to the suite (its root: the
  benchmark files and FlagGems' own src/) or to zlcore_pytest decides. Library
  frames (torch, triton, json) in between belong to whoever called them. The
  closures that hand control to the op (_bench.OP_CALLERS) count as the op's;
- the device: an accelerator error surfaces wherever the host next synchronizes,
  often in a timer's synchronize, so it is reported as a device error, never as
  zlcore's (the worker then proves the device healthy or replaces itself).
"""

import os
import re

from ._text import describe, first_line  # noqa: F401 - first_line is the outcomes plugin's too

PACKAGE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")

# Function names of the closures in _bench.build_fn that call the op.
OP_CALLERS = frozenset({"call_op", "call_op_backward"})

# torch >= 2.8 raises AcceleratorError for device runtime errors; older ones a
# RuntimeError whose text starts with the runtime's name ("<RT> error: ...").
_DEVICE_ERROR_TYPES = frozenset({"AcceleratorError"})
_DEVICE_ERROR_TEXT = re.compile(
    r"\b[A-Z]{2,8} error: |device-side assert|illegal memory access|stream is capturing|"
    r"unspecified launch failure|operation not permitted when stream|outside graph capture"
)


def chain(exc, limit=16):
    """exc, then its cause or (unsuppressed) context, and so on."""
    seen = []
    while exc is not None and len(seen) < limit and not any(e is exc for e in seen):
        seen.append(exc)
        exc = exc.__cause__ if exc.__cause__ is not None else (None if exc.__suppress_context__ else exc.__context__)
    return seen


def is_device_error(exc):
    return any(type(e).__name__ in _DEVICE_ERROR_TYPES or _DEVICE_ERROR_TEXT.search(str(e)) for e in chain(exc))


def _frames_innermost_first(tb):
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return reversed(frames)


def raised_by_harness(exc, suite_root):
    """True when zlcore_pytest's own code (not a call into the op) raised `exc`."""
    suite = os.path.join(os.path.realpath(suite_root), "") if suite_root else None
    for frame in _frames_innermost_first(exc.__traceback__):
        path = os.path.realpath(frame.f_code.co_filename)
        ours = os.path.join(path, "").startswith(PACKAGE_DIR) or path.startswith(PACKAGE_DIR)
        if ours:
            return frame.f_code.co_name not in OP_CALLERS
        if suite is not None and path.startswith(suite):
            return False
    return False


def judge(exc, suite_root):
    """{exc_type, message, harness, device_error} for a failed test's exception."""
    links = chain(exc)
    root = links[-1] if links else exc
    device = is_device_error(exc)
    return {
        "exc_type": type(root).__name__,
        "message": describe(root),
        "device_error": device,
        "harness": (not device) and raised_by_harness(root, suite_root),
    }
