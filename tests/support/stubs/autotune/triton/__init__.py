"""A stub of the parts of Triton that zlcore's autotune plugin touches, laid
out like triton 3.6 (triton.runtime.autotuner.Autotuner / Config,
triton.runtime.jit.JITFunction). Kernels are Python functions returning a
synthetic cost, which the stub benchmark reports as the config's time."""

import os

__version__ = os.environ.get("STUB_TRITON_VERSION", "3.6.0")

from . import runtime  # noqa: E402,F401
from .runtime.autotuner import Autotuner, Config, autotune  # noqa: E402,F401
from .runtime.jit import JITFunction, jit  # noqa: E402,F401
