from .autotuner import Autotuner, Config  # noqa: F401
from .jit import JITFunction, KernelInterface  # noqa: F401
