"""use_gems(): reroute the reference namespace (numgems.ref) to numgems.ops.

flag_gems.use_gems() registers its kernels over torch's aten ops, so a
benchmark can call the *same* torch op for both sides and only the context
decides which implementation runs. numgems.ref plays torch's part here.
"""

import contextlib
import threading

_state = threading.local()


def _active():
    return getattr(_state, "stack", [])


def gems_enabled(op_name):
    """True when the innermost use_gems() context covers `op_name`."""
    stack = _active()
    if not stack:
        return False
    include, exclude = stack[-1]
    if include is not None and op_name not in include:
        return False
    return op_name not in exclude


@contextlib.contextmanager
def use_gems(include=None, exclude=()):
    """Within the block, numgems.ref.<op> runs numgems.ops.<op>."""
    stack = _active()
    if not hasattr(_state, "stack"):
        _state.stack = stack
    stack.append((set(include) if include is not None else None, set(exclude)))
    try:
        yield
    finally:
        stack.pop()
