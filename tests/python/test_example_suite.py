"""The plugins on examples/suite: FlagGems' layout on NumPy, no torch or triton."""

import pytest

from conftest import REPO

SUITE = REPO / "examples" / "suite"


@pytest.mark.skipif(not (SUITE / "benchmark" / "base.py").exists(), reason="examples/suite not present")
def test_host_timer_on_the_example_suite(run_child):
    pytest.importorskip("numpy")
    run = run_child(["benchmark/test_abs.py", "-m", "abs", "--level", "core", "--dtypes", "float16",
                     "--warmup", "2", "--iter", "10"],
                    plugins=["device_setup", "autotune", "timing", "results"], cwd=SUITE,
                    ZL_BACKEND="host", ZL_TORCH_DEVICE="cpu", ZL_TIMER="host", ZL_TIMER_FALLBACK="",
                    GEMS_VENDOR=None, ZL_EXPECT_DEVICE_ID=None, ZL_GRAPH_API=None, ZL_CAPABILITIES="",
                    ZL_VISIBILITY_ENV="", PYTHONPATH=str(REPO / "plugins" / "timers" / "python"))
    assert run.rc == 0, run.output
    rows = run.rows()
    assert rows and all(r["timer"] == r["timer_base"] == "host" and r["error"] is None for r in rows)
    assert all(r["op"] == "abs" and r["dtype"] == "float16" and r["latency_ms"] > 0 for r in rows)
    assert run.child("device_setup")["ok"] is True
    assert run.child("timing")["patched"] == "benchmark.base.Benchmark.get_latency"
