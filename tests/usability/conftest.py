"""Helpers for the issue-22 tests: the built zlcore, run with a clean
environment (no knob of the caller's leaks in), its own caches under tmp."""
import json
import os
import subprocess
from pathlib import Path

import pytest

ZLCORE = os.environ.get("ZLCORE", "")
VENDOR = os.environ.get("ZL_VENDOR_DIR", "")
BUILD = Path(os.environ.get("ZL_BUILD_DIR", ""))
SRC = Path(os.environ.get("ZL_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SUITE = SRC / "examples" / "suite"
FAULTS = SRC / "tests" / "fixtures" / "fault_suite"
PY = "/usr/bin/python3"
# Variables a FlagGems user may have exported, and zlcore's own: none may
# reach a test unless it sets them.
LEAKY_PREFIXES = ("ZL_", "SHAPE_", "FLAGGEMS_", "TRITON_")
LEAKY_NAMES = {"BENCH_LEVEL", "OP", "OP_FILE", "TEST_NODE", "REPLAY_FROM", "PARALLEL_WARMUP_GPUS",
               "FAKE_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"}


def clean_env(tmp_path, **more):
    env = {k: v for k, v in os.environ.items() if not k.startswith(LEAKY_PREFIXES) and k not in LEAKY_NAMES}
    env.update(ZL_CACHE_DIR=str(tmp_path / "zlcache"), FLAGGEMS_CACHE_DIR=str(tmp_path / "flaggems_cache"),
               TRITON_CACHE_DIR=str(tmp_path / "triton_cache"))
    env.update({k: str(v) for k, v in more.items()})
    return env


def zl(tmp_path, *args, env=None, timeout=180, exe=None):
    return subprocess.run([exe or ZLCORE, *map(str, args)], capture_output=True, text=True,
                          env=env if env is not None else clean_env(tmp_path), timeout=timeout, cwd=tmp_path)


def identity(run_dir):
    return json.loads((Path(run_dir) / "run_identity.json").read_text())


def fake_tool(path, recorded, code=0):
    """A vendor tool that prints a recorded output (as tests/backends does)."""
    path.write_text(f"#!/bin/sh\ncat '{recorded}'\nexit {code}\n")
    path.chmod(0o755)
    return path


@pytest.fixture(autouse=True)
def _needs_ctest():
    if not ZLCORE:
        pytest.skip("run through ctest (needs ZLCORE)")
