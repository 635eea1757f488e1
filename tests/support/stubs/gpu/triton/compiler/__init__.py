from .compiler import CompiledKernel  # noqa: F401
