from .jit import JITFunction  # noqa: F401
