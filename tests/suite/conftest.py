"""Helpers that run a suite in a pytest child process, as zlcore does."""

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))  # zltest: tests/support/README.md
from zltest import EXAMPLE_SUITE as EXAMPLE, FAULT_SUITE as FAULT, PY, clean_env, run_pytest  # noqa: E402,F401

PYTHON = PY if os.path.exists(PY) else sys.executable

# Variables that would change what a child does; each test sets what it needs.
_SCRUBBED = (
    "ZL_SUITE_TUNER_PIN",
    "ZL_CHILD_DIR",
    "FLAGGEMS_CACHE_DIR",
    "FLAGGEMS_DB_URL",
    "GEMS_VENDOR",
    "FLAGGEMS_VENDOR",
    "GEMS_BACKEND",
    "FLAGGEMS_BACKEND",
    "ZL_SLEEP_OP_SECONDS",
    "ZL_CRASH_EXIT",
    "ZL_FAULT_PLANTED",
    "TRITON_PRINT_AUTOTUNING",
    "PYTEST_ADDOPTS",
    "PYTHONPATH",
)


class Child:
    def __init__(self, proc, child_dir):
        self.returncode = proc.returncode
        self.output = proc.stdout
        self.child_dir = child_dir

    def counters(self):
        with open(os.path.join(self.child_dir, "suite_tuner.json")) as f:
            return json.load(f)

    def __repr__(self):
        return f"<rc={self.returncode}>\n{self.output[-4000:]}"


@pytest.fixture
def run_suite(tmp_path):
    """run_suite(args, suite=EXAMPLE, cwd=suite, env={}, timeout=120) -> Child.

    The tuner cache is private to the test unless env names one.
    """
    counter = iter(range(1000))

    def run(args, suite=EXAMPLE, cwd=None, env=None, timeout=120):
        n = next(counter)
        child_dir = tmp_path / f"child{n}"
        full_env = clean_env(strip_names=_SCRUBBED, **{
            "PYTHONDONTWRITEBYTECODE": "1", "FLAGGEMS_CACHE_DIR": tmp_path / "flaggems", "ZL_CHILD_DIR": child_dir,
            **(env or {})})
        proc = run_pytest(args, cwd or suite, full_env, python=PYTHON, timeout=timeout, merge_stderr=True)
        return Child(proc, str(child_dir))

    return run
