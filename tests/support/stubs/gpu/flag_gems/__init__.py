"""A stub of flag_gems: the vendor it saw at import, and use_gems() making kernels 2x faster."""

import contextlib
import os

from torch import _stub

__version__ = "9.9.9+stub"
vendor_name = os.environ.get("GEMS_VENDOR") or "autodetected"
device = "cuda"


@contextlib.contextmanager
def use_gems(exclude=None):
    previous = _stub.cost_factor
    _stub.cost_factor = 0.5
    try:
        yield
    finally:
        _stub.cost_factor = previous
