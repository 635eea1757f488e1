"""Helpers that run a suite in a pytest child process, as zlcore does."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "suite"
FAULT = REPO / "tests" / "fixtures" / "fault_suite"
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

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
        full_env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
        full_env.update(
            PYTHONDONTWRITEBYTECODE="1",
            FLAGGEMS_CACHE_DIR=str(tmp_path / "flaggems"),
            ZL_CHILD_DIR=str(child_dir),
        )
        full_env.update(env or {})
        cmd = [PYTHON, "-m", "pytest", "-p", "no:cacheprovider", *args]
        proc = subprocess.run(
            cmd,
            cwd=str(cwd or suite),
            env=full_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
        )
        return Child(proc, str(child_dir))

    return run
