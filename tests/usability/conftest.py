"""Helpers for the usability tests: the built zlcore, run with a clean
environment (no knob of the caller's leaks in), its own caches under tmp."""
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))  # zltest: tests/support/README.md
import zltest  # noqa: E402
from zltest import (EXAMPLE_SUITE as SUITE, FAULT_SUITE as FAULTS, PY, SRC, VENDOR, ZLCORE,  # noqa: E402,F401
                    fake_tool, identity)

BUILD = Path(os.environ.get("ZL_BUILD_DIR", ""))
# Variables a FlagGems user may have exported, and zlcore's own: none may
# reach a test unless it sets them.
LEAKY_PREFIXES = ("ZL_", "SHAPE_", "FLAGGEMS_", "TRITON_")
LEAKY_NAMES = {"BENCH_LEVEL", "OP", "OP_FILE", "TEST_NODE", "REPLAY_FROM", "PARALLEL_WARMUP_GPUS",
               "FAKE_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"}


def clean_env(tmp_path, **more):
    """zltest.clean_env without the leaky variables, with zlcore's, FlagGems' and Triton's caches under tmp_path."""
    return zltest.clean_env(LEAKY_PREFIXES, LEAKY_NAMES, **{
        "ZL_CACHE_DIR": tmp_path / "zlcache", "FLAGGEMS_CACHE_DIR": tmp_path / "flaggems_cache",
        "TRITON_CACHE_DIR": tmp_path / "triton_cache", **more})


def zl(tmp_path, *args, env=None, timeout=180, exe=None):
    """zlcore ARGS in tmp_path, by default with clean_env(tmp_path)."""
    return zltest.zl(*args, env=env if env is not None else clean_env(tmp_path), timeout=timeout, cwd=tmp_path,
                     exe=exe)


@pytest.fixture(autouse=True)
def _needs_ctest():
    if not ZLCORE:
        pytest.skip("run through ctest (needs ZLCORE)")
