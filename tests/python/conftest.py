"""Runs the plugins in real pytest children against a fake FlagGems suite on stub torch/triton."""

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))  # zltest: tests/support/README.md
from zltest import FAKEGEMS_SUITE as FAKEGEMS, STUBS as _STUB_TREES, clean_env, read_jsonl, run_pytest  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PLUGINS = REPO / "plugins" / "timers" / "python"
STUBS = _STUB_TREES / "gpu"  # torch, triton, flag_gems on a fake clock (tests/support/stubs/README.md)
UUID = "967ef875-e3f7-55c2-abf0-64b93b0c7e36"

ALL_PLUGINS = ["phases", "device_setup", "cluster_fix", "autotune", "timing", "results", "outcomes"]


class ChildRun:
    def __init__(self, proc, run_dir):
        self.proc = proc
        self.rc = proc.returncode
        self.output = proc.stdout + proc.stderr
        self.run_dir = run_dir

    def rows(self):
        path = self.run_dir / "results.jsonl"
        return read_jsonl(path, skip_blank=True) if path.exists() else []

    def child(self, name):
        path = self.run_dir / ".child" / (name + ".json")
        return json.loads(path.read_text()) if path.exists() else None

    def stub_state(self):
        path = self.run_dir / "stub_state.json"
        return json.loads(path.read_text()) if path.exists() else None

    def update_results(self):
        path = self.run_dir / "update_result.json"
        return json.loads(path.read_text()) if path.exists() else None


def child_env(run_dir, **overrides):
    """The child's environment: the caller's without ZL_/STUB_/GEMS_/FLAGGEMS_/CUDA_ variables, a CUDA
    device as zlcore would set it up, then overrides (None removes a variable)."""
    return clean_env(strip_prefixes=("ZL_", "STUB_", "GEMS_", "FLAGGEMS_", "CUDA_"), **{
        "PYTHONPATH": os.pathsep.join([str(PLUGINS), str(STUBS)]),
        "PYTHONDONTWRITEBYTECODE": "1",
        "ZL_RUN_DIR": str(run_dir),
        "ZL_RESULTS_FILE": str(run_dir / "results.jsonl"),
        "ZL_CHILD_DIR": str(run_dir / ".child"),
        "ZL_BACKEND": "cuda",
        "ZL_TORCH_DEVICE": "cuda",
        "GEMS_VENDOR": "nvidia",
        "ZL_VISIBILITY_ENV": "CUDA_VISIBLE_DEVICES",
        "CUDA_VISIBLE_DEVICES": "GPU-" + UUID,
        "ZL_EXPECT_DEVICE_ID": "GPU-" + UUID,
        "ZL_CAPABILITIES": "device_events=1;graph_capture=torch.cuda.CUDAGraph;cluster_fix=1",
        "ZL_TIMER": "graph",
        "ZL_TIMER_FALLBACK": "direct",
        "ZL_GRAPH_API": "torch.cuda.CUDAGraph",
        # The plugin tests count captures, clones and readings for four
        # placements, one sustained reading each, one direct repeat; the
        # defaults (6, 2, 5) are tested in test_graph_policy.py.
        "ZL_PLACEMENTS": "4",
        "ZL_GRAPH_READINGS": "0",
        "ZL_DIRECT_REPEAT": "1",
        "STUB_STATE_FILE": str(run_dir / "stub_state.json"),
        "FAKE_UPDATE_RESULT_FILE": str(run_dir / "update_result.json"),
        **overrides,
    })


@pytest.fixture
def run_child(tmp_path):
    counter = [0]

    def run(args, plugins=ALL_PLUGINS, cwd=FAKEGEMS, **env):
        counter[0] += 1
        run_dir = tmp_path / f"run{counter[0]}"
        run_dir.mkdir()
        proc = run_pytest(["-q", "-s", *args], cwd, child_env(run_dir, **env), python=sys.executable,
                          plugins=["zlcore_pytest." + name for name in plugins])
        return ChildRun(proc, run_dir)

    return run
