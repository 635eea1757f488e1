"""numgems: a tiny NumPy "operator library" standing in for flag_gems.

It exists so that zlcore's example suite can run FlagGems' benchmark layout on
a machine with no accelerator, torch or triton. The pieces the benchmark uses
mirror flag_gems by name: ``device``, ``vendor_name``, ``use_gems()`` and an
autotuner whose SQLite cache is laid out like LibTuner's.
"""

import os

__version__ = "0.1.0"

# The host is the only device; FlagGems calls the torch device type `device`.
device = "cpu"


def _detect_vendor():
    # Same variables, same order as flag_gems' vendor detection, so that a
    # harness that sets GEMS_VENDOR for FlagGems names this library's cache too.
    for name in ("GEMS_VENDOR", "FLAGGEMS_VENDOR", "GEMS_BACKEND", "FLAGGEMS_BACKEND"):
        value = os.environ.get(name)
        if value:
            return value
    return "host"


vendor_name = _detect_vendor()

from . import ops, ref, tuner  # noqa: E402
from .dispatch import gems_enabled, use_gems  # noqa: E402

__all__ = ["device", "vendor_name", "use_gems", "gems_enabled", "ops", "ref", "tuner"]
