"""A stub of triton: testing.do_bench and the launch entry points cluster_fix hooks."""

from . import compiler, runtime, testing  # noqa: F401

__version__ = "3.99.0+stub"
