"""The plugins in real pytest children: fake FlagGems suite, stub torch/triton/flag_gems."""

import subprocess
import sys

import pytest

from conftest import ALL_PLUGINS, PLUGINS, child_env

ROW_KEYS = ["op", "test_node", "dtype", "shape", "shape_detail", "mode", "bench_level", "latency_base_ms",
            "latency_ms", "speedup", "timer", "timer_base", "fallback_reason", "repeats", "samples_ms",
            "samples_base_ms", "spread_pct", "spread_base_pct", "warmup_ms", "warmup_base_ms", "measure_ms",
            "measure_base_ms", "capture_ms", "capture_base_ms", "windows", "windows_base", "pace",
            "pace_base", "sustained", "sustained_base",
            "after_rest_pct", "after_rest_base_pct", "readings", "readings_base", "gbps", "tflops",
            "cluster_kernel", "error"]
FAST = ["--level", "core", "--warmup", "1", "--iter", "5"]
COST = 1e-5  # stub ms per element; "gems" (under use_gems) runs at half of it
SHAPES = {"[[64, 64]]": 4096, "[[1024]]": 1024, "[[64, 512, 8]]": 262144}


def approx(value):
    return pytest.approx(value, rel=1e-6)


def by_shape(rows, dtype=None):
    return {r["shape"]: r for r in rows if dtype is None or r["dtype"] == dtype}


def test_graph_timer_rows_have_exact_keys_and_values(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs"] + FAST)
    assert run.rc == 0, run.output
    rows = run.rows()
    assert [(r["dtype"], r["shape"]) for r in rows] == [
        (d, s) for d in ("float16", "float32") for s in SHAPES]
    for row in rows:
        assert list(row) == ROW_KEYS
        numel = SHAPES[row["shape"]]
        assert row["op"] == "abs"
        assert row["test_node"] == "benchmark/test_ops.py::test_abs"
        assert row["mode"] == "kernel" and row["bench_level"] == "core"
        assert row["shape_detail"] == [list(eval(row["shape"])[0])]
        assert row["latency_base_ms"] == approx(numel * COST)
        assert row["latency_ms"] == approx(numel * COST / 2)
        assert row["speedup"] == approx(2.0)
        assert row["timer"] == row["timer_base"] == "graph"
        assert row["fallback_reason"] is None and row["error"] is None
        assert 9 <= row["repeats"] <= 30 and row["repeats"] % 3 == 0  # three windows of 3-10
        assert len(row["samples_ms"]) == row["repeats"] and len(row["samples_base_ms"]) % 3 == 0
        assert row["windows"] == row["windows_base"] == 3  # the stub's pace holds
        for pace in (row["pace"], row["pace_base"]):  # [load before the window, its median]
            assert len(pace) == 3 and pace[0][0] < pace[1][0] < pace[2][0]
            assert all(m == pytest.approx(pace[0][1], rel=1e-5) for _, m in pace)
        assert row["pace"][0][1] == pytest.approx(row["latency_ms"], rel=1e-5)
        assert row["capture_ms"] >= 0 and row["capture_base_ms"] >= 0
        assert row["spread_pct"] == pytest.approx(0, abs=1e-6)
        assert row["tflops"] == approx(numel * 2 / row["latency_ms"] / 1e12 * 1e3)
        assert row["gbps"] is None
        assert row["cluster_kernel"] is False
        # Wall time per side, warm-up (compile, tuning) apart from measurement.
        for key in ("warmup_ms", "warmup_base_ms", "measure_ms", "measure_base_ms"):
            assert isinstance(row[key], float) and 0 < row[key] < 60_000, (key, row[key])
    state = run.stub_state()
    assert state["do_bench_calls"] == 0  # the suite's own timer never ran
    assert state["captures_open"] == 0 and state["captures_begun"] >= 12
    timing = run.child("timing")
    assert timing["patched"] == "benchmark.base.Benchmark.get_latency"
    assert timing["timer_effective"] == "graph" and timing["fallback_shapes"] == []
    assert timing["sides_by_timer"] == {"graph": 12}
    results = run.child("results")
    assert results["rows"] == 6 and results["rows_with_error"] == 0
    assert results["ops"] == {"abs": 6} and results["dtypes"] == {"float16": 3, "float32": 3}
    # the suite's own update_result still receives every dtype
    assert [d["dtype"] for d in run.update_results()["abs"]] == ["torch.float16", "torch.float32"]


def test_graph_timer_sizes_replays_within_budget(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    ZL_GRAPH_BUDGET_MS="100", ZL_GRAPH_SAMPLES="6")
    assert run.rc == 0, run.output
    rows = by_shape(run.rows())
    # (100 - 70 ms settling) / 3 windows = 10 ms a window; 64x64 fills 6 samples in each
    assert rows["[[64, 64]]"]["repeats"] == 18
    # torch's 2.6 ms per call: one call per replay, 10 ms hold 3 of them a window
    assert len(rows["[[64, 512, 8]]"]["samples_base_ms"]) == 9
    assert run.child("timing")["settings"]["graph"]["budget_ms"] == 100.0


def test_direct_timer_repeats_with_median_and_spread(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    ZL_TIMER="direct", ZL_TIMER_FALLBACK="", ZL_DIRECT_REPEAT="3",
                    STUB_DO_BENCH_FACTORS="1.0,1.2,0.9")
    assert run.rc == 0, run.output
    for row in run.rows():
        numel = SHAPES[row["shape"]]
        assert row["timer"] == row["timer_base"] == "direct"
        assert row["repeats"] == 3
        assert row["samples_base_ms"] == [approx(numel * COST * f) for f in (1.0, 1.2, 0.9)]
        assert row["latency_base_ms"] == approx(numel * COST)
        assert row["latency_ms"] == approx(numel * COST / 2)
        assert row["spread_pct"] == approx(30.0) and row["spread_base_pct"] == approx(30.0)
        # do_bench warms up inside: its whole time is the measurement.
        assert row["warmup_ms"] is None and row["warmup_base_ms"] is None
        assert row["measure_ms"] > 0 and row["measure_base_ms"] > 0
    state = run.stub_state()
    assert state["do_bench_calls"] == 3 * 3 * 2
    assert state["captures_begun"] == 0
    assert all(a == {"warmup": 1, "rep": 5, "return_mode": "median", "grad_to_none": False}
               for a in state["do_bench_args"])


def test_direct_repeat_defaults_to_one(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST, ZL_TIMER="direct")
    assert run.rc == 0, run.output
    assert {r["repeats"] for r in run.rows()} == {1}
    assert {r["spread_pct"] for r in run.rows()} == {0.0}


@pytest.mark.parametrize("timer", ["graph", "direct"])
def test_cudagraph_mode_is_governed_by_the_timer(run_child, timer):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16", "--mode", "cudagraph"] + FAST,
                    ZL_TIMER=timer)
    assert run.rc == 0, run.output
    rows = run.rows()
    assert {(r["mode"], r["timer"], r["timer_base"]) for r in rows} == {("cudagraph", timer, timer)}
    assert run.child("timing")["governed"] is True


@pytest.mark.parametrize("mode", ["operator", "wrapper"])
def test_operator_and_wrapper_modes_stay_with_the_suite(run_child, mode):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16", "--mode", mode] + FAST)
    assert run.rc == 0, run.output
    rows = run.rows()
    assert len(rows) == 3
    for row in rows:
        assert row["timer"] == row["timer_base"] == mode
        assert row["repeats"] == 1 and row["samples_ms"] == [row["latency_ms"]]
        assert row["fallback_reason"] is None
    assert run.stub_state()["captures_begun"] == 0
    timing = run.child("timing")
    assert timing["governed"] is False and timing["sides_by_timer"] == {mode: 6}


def test_failed_capture_falls_back_for_that_shape_only(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs"] + FAST, STUB_CAPTURE_FAIL_NUMEL="1024")
    assert run.rc == 0, run.output
    rows = run.rows()
    for row in rows:
        if row["shape"] == "[[1024]]":
            assert row["timer"] == row["timer_base"] == "direct"
            reason = row["fallback_reason"]
            # the sides' reasons differ (call counts), so each is named
            assert reason.startswith("base: graph capture of ") and "; gems: graph capture of " in reason
            assert "operation not permitted" in reason
            assert "\n" not in reason
            assert row["latency_ms"] == approx(1024 * COST / 2)
        else:
            assert row["timer"] == row["timer_base"] == "graph" and row["fallback_reason"] is None
    listed = run.child("timing")["fallback_shapes"]
    assert sorted((f["dtype"], f["side"]) for f in listed) == [
        ("float16", "base"), ("float16", "gems"), ("float32", "base"), ("float32", "gems")]
    for entry in listed:
        assert entry["op"] == "abs" and entry["shape"] == "[[1024]]" and entry["timer"] == "direct"
        assert entry["reason"].startswith("graph capture of ")
    state = run.stub_state()
    assert state["captures_open"] == 0 and state["captures_failed"] == 4
    assert run.child("results")["fallback_rows"] == 2


def test_failed_capture_without_fallback_is_a_shape_error(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    STUB_CAPTURE_FAIL_NUMEL="1024", ZL_TIMER_FALLBACK="")
    assert run.rc == 1
    rows = by_shape(run.rows())
    assert rows["[[64, 64]]"]["error"] is None
    assert "no fallback timer" in rows["[[1024]]"]["error"]
    assert run.stub_state()["captures_open"] == 0


def test_graph_timer_without_its_plugin_falls_back_with_reason(run_child):
    plugins = [p for p in ALL_PLUGINS if p not in ("graph_capture", "cluster_fix")]
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST, plugins=plugins)
    assert run.rc == 0, run.output
    for row in run.rows():
        assert row["timer"] == row["timer_base"] == "direct"
        assert "graph_capture is not loaded" in row["fallback_reason"]
        assert row["cluster_kernel"] is None
    timing = run.child("timing")
    assert timing["planned_timer"] == "graph" and timing["timer_effective"] == "direct"
    assert timing["graph_plugin_loaded"] is False and "not loaded" in timing["timer_reason"]
    assert run.stub_state()["captures_begun"] == 0


@pytest.mark.parametrize("timer", ["graph", "direct", "host"])
def test_backward_benches_time_autograd_grad(run_child, timer):
    run = run_child(["benchmark/test_ops.py", "-m", "abs_backward", "--dtypes", "float16"] + FAST,
                    ZL_TIMER=timer)
    assert run.rc == 0, run.output
    rows = run.rows()
    assert len(rows) == 3
    for row in rows:
        numel = SHAPES[row["shape"]]
        assert row["op"] == "abs_backward" and row["timer"] == timer and row["error"] is None
        if timer != "host":
            assert row["latency_base_ms"] == approx(2 * numel * COST)
            assert row["latency_ms"] == approx(numel * COST)
    state = run.stub_state()
    assert state["autograd_grad_calls"] > 0
    if timer == "graph":
        assert state["captured_autograd"] > 0
    if timer == "direct":
        assert all(a["grad_to_none"] for a in state["do_bench_args"])


def test_host_timer_repeats_wall_clock(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    ZL_TIMER="host", ZL_TIMER_FALLBACK="", ZL_HOST_REPEAT="4")
    assert run.rc == 0, run.output
    for row in run.rows():
        assert row["timer"] == row["timer_base"] == "host"
        assert row["repeats"] == 4 and len(row["samples_base_ms"]) == 4
        assert row["latency_ms"] > 0 and row["spread_pct"] >= 0
    assert run.stub_state()["do_bench_calls"] == 0


def test_cluster_kernels_are_detected_per_shape(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "clustermm"] + FAST)
    assert run.rc == 0, run.output
    rows = run.rows()
    assert len(rows) == 3
    assert all(r["cluster_kernel"] is True and r["timer"] == "graph" for r in rows)
    report = run.child("cluster_fix")
    assert report["hooks"] == ["triton.runtime.jit.JITFunction.run",
                               "triton.compiler.compiler.CompiledKernel.__getitem__"]
    assert report["cluster_sides"] == 3 and report["probed_sides"] == 6
    gems = [s for s in report["shapes"] if s["side"] == "gems"]
    assert gems[0]["kernels"] == [{"name": "cluster_gemm_kernel", "cluster": True,
                                   "fields": {"num_ctas": 1, "cluster_dims": [2, 1, 1]}}]
    assert all(s["kernels"] == [] for s in report["shapes"] if s["side"] == "base")
    assert run.child("results")["cluster_rows"] == 3


def test_failed_cluster_capture_falls_back_with_reason(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "clustermm"] + FAST, STUB_CAPTURE_FAIL_CLUSTER="1")
    assert run.rc == 0, run.output
    for row in run.rows():
        assert row["timer_base"] == "graph" and row["timer"] == "direct"
        assert row["fallback_reason"].startswith("cluster launch: graph capture of ")
        assert row["cluster_kernel"] is True
    listed = run.child("timing")["fallback_shapes"]
    assert {(f["side"], f["op"]) for f in listed} == {("gems", "clustermm")} and len(listed) == 3
    assert run.child("cluster_fix")["graph_fallbacks"] == 3
    assert run.stub_state()["captures_open"] == 0


def test_cluster_replay_that_disagrees_with_eager_falls_back(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "clustermm"] + FAST, STUB_GRAPH_SLOWDOWN="2",
                    STUB_GRAPH_SLOWDOWN_CLUSTER_ONLY="1", ZL_CLUSTER_CHECK_MIN_MS="0.001")
    assert run.rc == 0, run.output
    for row in run.rows():
        numel = SHAPES[row["shape"]]
        assert row["timer"] == "direct" and row["timer_base"] == "graph"
        assert row["fallback_reason"].startswith("cluster launch: graph replay of a cluster kernel ran")
        assert row["latency_ms"] == approx(numel * COST / 2)


def test_failing_shape_gets_a_row_with_its_error(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "broken"] + FAST)
    assert run.rc == 1
    rows = run.rows()
    assert [r["shape"] for r in rows] == ["[[64, 64]]", "[[1024]]"]
    ok, broken = rows
    assert ok["error"] is None and ok["latency_ms"] == approx(4096 * COST)
    assert broken["error"] == "broken for 1024 elements"
    assert broken["latency_base_ms"] == approx(1024 * COST) and broken["latency_ms"] is None
    assert broken["timer_base"] == "graph" and broken["timer"] is None
    assert run.child("results")["rows_with_error"] == 1


def test_rows_written_before_a_crash_survive(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "crash"] + FAST)
    assert run.rc == 9
    assert [r["shape"] for r in run.rows()] == ["[[64, 64]]"]


def test_gbps_comes_from_the_suites_metric(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "gbps"] + FAST)
    assert run.rc == 0, run.output
    for row in run.rows():
        numel = SHAPES[row["shape"]]
        assert row["dtype"] == "float32"
        assert row["gbps"] == approx(numel * 4 * 1e-9 / (row["latency_ms"] * 1e-3))
        assert row["tflops"] is None


def test_only_latency_metric_times_one_side(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16", "--metrics", "latency"] + FAST)
    assert run.rc == 0, run.output
    rows = run.rows()
    assert len(rows) == 3
    for row in rows:
        assert row["timer"] == "graph" and row["timer_base"] is None
        assert row["latency_base_ms"] is None and row["speedup"] is None
        assert row["latency_ms"] == approx(SHAPES[row["shape"]] * COST / 2)


def test_device_setup_records_device_and_versions(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST, GEMS_VENDOR=" nvidia ")
    assert run.rc == 0, run.output
    report = run.child("device_setup")
    assert report["ok"] is True and report["device_count"] == 1
    assert report["device"]["uuid"] == "967ef875-e3f7-55c2-abf0-64b93b0c7e36"
    assert report["device"]["name"] == "NVIDIA Stub H200"
    assert report["id_check"]["status"] == "match"
    assert report["visibility"] == {"CUDA_VISIBLE_DEVICES": "GPU-967ef875-e3f7-55c2-abf0-64b93b0c7e36"}
    assert report["framework"]["flag_gems_vendor_name"] == "nvidia"
    versions = report["versions"]
    assert versions["torch"] == "2.99.0+stub" and versions["triton"] == "3.99.0+stub"
    assert versions["flag_gems"] == "9.9.9+stub" and versions["suite"]["package"] == "benchmark"
    assert versions["python"] == "%d.%d.%d" % sys.version_info[:3]


def test_device_setup_fails_on_two_visible_devices(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs"] + FAST, STUB_DEVICE_COUNT="2")
    assert run.rc == 3
    assert "PREFLIGHT_FAILED check=device_setup" in run.output
    assert "sees 2 'cuda' devices" in run.output
    report = run.child("device_setup")
    assert report["ok"] is False and report["device_count"] == 2
    assert run.rows() == []


def test_device_setup_fails_on_wrong_uuid(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs"] + FAST,
                    ZL_EXPECT_DEVICE_ID="GPU-00000000-0000-0000-0000-000000000001")
    assert run.rc == 3
    assert "PREFLIGHT_FAILED check=device_setup" in run.output
    report = run.child("device_setup")
    assert report["ok"] is False and report["id_check"]["status"] == "mismatch"
    assert run.rows() == []


def test_device_setup_skips_checks_for_cpu(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    ZL_TORCH_DEVICE="cpu", ZL_TIMER="host", ZL_TIMER_FALLBACK="", STUB_DEVICE_COUNT="0")
    assert run.rc == 0, run.output
    report = run.child("device_setup")
    assert report["ok"] is True and report["device"] is None and report["device_count"] is None
    assert {r["timer"] for r in run.rows()} == {"host"}


def test_all_flaggems_options_parse_with_every_plugin(run_child):
    args = ["benchmark/test_ops.py", "--collect-only", "--mode", "kernel", "--level", "core", "--warmup", "1",
            "--iter", "5", "--dtypes", "float16", "--metrics", "latency", "--shape_file", "x.yaml",
            "--record", "none", "--output", "out.json", "--parallel", "0", "--query", "--collect-marks", ""]
    run = run_child(args)
    assert run.rc == 0, run.output
    for path in (PLUGINS / "zlcore_pytest").glob("*.py"):
        assert "addoption" not in path.read_text(), path.name


def test_plugins_import_without_torch_or_triton():
    code = ("import sys\n"
            "import zlcore_pytest.device_setup, zlcore_pytest.timing, zlcore_pytest.graph_capture\n"
            "import zlcore_pytest.cluster_fix, zlcore_pytest.results, zlcore_pytest.autotune\n"
            "bad = [m for m in ('torch', 'triton', 'flag_gems') if m in sys.modules]\n"
            "assert not bad, bad\n")
    env = child_env(PLUGINS)  # stubs on the path: an import would succeed, so absence proves laziness
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_unknown_timer_is_a_usage_error(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs"] + FAST, ZL_TIMER="stopwatch")
    assert run.rc == 4
    assert "unknown ZL_TIMER='stopwatch'" in run.output



# 64x64 under the default graph settings, on either side: 88 calls per 1.8 ms
# replay; replay 1 is discarded, 2-40 settle (70 ms), 41 leads window 1
# (samples 42-51), 52 leads window 2 (samples 53-62), and so on.
STEP_SHAPE = "[[64, 64]]"
# Rests short enough for a test; the stub's boost needs no more.
QUICK_RESTS = {"ZL_GRAPH_REST_MS": "60", "ZL_GRAPH_PROBE_REST_MS": "60"}


def test_graph_timer_sustains_a_pace_that_moved(run_child):
    # From each graph's 52nd replay on the stub runs 15 % slower, like H200
    # clocks coming down under a sustained GEMM: window 1 is tight at the pace
    # the device leaves, the rest at the new one.
    nominal = SHAPES[STEP_SHAPE] * COST / 2
    args = ["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST
    run = run_child(args, STUB_GRAPH_STEP="51:1.15:each", **QUICK_RESTS)
    assert run.rc == 0, run.output
    row = by_shape(run.rows())[STEP_SHAPE]
    assert row["sustained"] == "window medians 15.0 % apart"
    assert row["sustained_base"] == "window medians 15.0 % apart"
    assert row["after_rest_pct"] is None  # no probe: the windows moved
    # the rest, then 1200 ms of load at the new pace; the median after 200 ms
    assert row["latency_ms"] == approx(nominal * 1.15)
    assert row["latency_base_ms"] == approx(nominal * 2 * 1.15)
    # two readings of ~55 windows each
    assert 3 + 90 <= row["windows"] <= 3 + 140 and row["spread_pct"] == pytest.approx(0, abs=1e-6)
    assert row["repeats"] >= 800  # the samples after 200 ms, in both
    assert row["readings"] == [approx(nominal * 1.15)] * 2
    assert row["readings_base"] == [approx(nominal * 2 * 1.15)] * 2
    # The pace trace: the three windows that moved, then the sustained ones
    # with their load counted from the rest.
    pace = row["pace"]
    assert pace[0][1] == approx(nominal) and pace[1][1] == approx(nominal * 1.15)
    assert pace[3][0] < pace[2][0] and pace[-1][0] < 1200
    timing = run.child("timing")
    assert timing["sides_extended"] >= 2 and timing["sides_unsettled"] == 0
    assert timing["settings"]["graph"]["sustained_ms"] == 1200.0
    assert timing["settings"]["graph"]["rest_ms"] == 60.0

    # One window is tight too, and reads the pace the device was about to leave.
    one = run_child(args, STUB_GRAPH_STEP="51:1.15:each", ZL_GRAPH_MIN_WINDOWS="1", **QUICK_RESTS)
    row = by_shape(one.rows())[STEP_SHAPE]
    assert row["latency_ms"] == approx(nominal) and row["sustained"] is None and row["readings"] is None
    assert row["windows"] == 1 and row["spread_pct"] == pytest.approx(0, abs=1e-6)

    # A shorter sustained reading: only the samples after ZL_GRAPH_SUSTAINED_FROM_MS count.
    short = run_child(args, STUB_GRAPH_STEP="51:1.15:each", ZL_GRAPH_SUSTAINED_MS="120",
                      ZL_GRAPH_SUSTAINED_FROM_MS="60", ZL_GRAPH_READINGS="1", **QUICK_RESTS)
    row = by_shape(short.rows())[STEP_SHAPE]
    assert row["latency_ms"] == approx(nominal * 1.15) and 3 + 6 <= row["windows"] <= 3 + 8


def test_graph_timer_averages_its_sustained_readings(run_child):
    # The pace moves, and moves again 3 % early in the second sustained
    # reading (each reading ~580 replays after the ~73 before the first
    # rest): the latency is the mean of the two readings' medians.
    nominal = SHAPES[STEP_SHAPE] * COST / 2 * 1.15
    args = ["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST
    run = run_child(args, STUB_GRAPH_STEP="51:1.15:each,700:1.03:each", **QUICK_RESTS)
    assert run.rc == 0, run.output
    row = by_shape(run.rows())[STEP_SHAPE]
    assert row["readings"] == [approx(nominal), approx(nominal * 1.03)]
    assert row["latency_ms"] == approx(nominal * 1.015)
    # Three readings: the third is at the second's pace.
    three = run_child(args, STUB_GRAPH_STEP="51:1.15:each,700:1.03:each", ZL_GRAPH_READINGS="3", **QUICK_RESTS)
    row = by_shape(three.rows())[STEP_SHAPE]
    assert row["readings"] == [approx(nominal), approx(nominal * 1.03), approx(nominal * 1.03)]
    assert row["latency_ms"] == approx(nominal * (1 + 2 * 1.03) / 3)
    assert three.child("timing")["settings"]["graph"]["readings"] == 3


def test_graph_timer_probes_for_a_boost_after_a_rest(run_child):
    # A steady pace under load that runs 12 % faster for 20 replays after the
    # host left the device alone for 35 ms: a power-limited GEMM whose windows
    # fell on a plateau. The probe finds the boost; the sustained reading
    # starts with it and counts only what follows.
    nominal = SHAPES[STEP_SHAPE] * COST / 2
    args = ["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST
    run = run_child(args, STUB_GRAPH_BOOST="0.88:35:20", **QUICK_RESTS)
    assert run.rc == 0, run.output
    for row in run.rows():
        assert row["sustained"] == "ran 12.0 % faster after a 60 ms rest", row
        assert row["sustained_base"] == "ran 12.0 % faster after a 60 ms rest", row
        assert row["after_rest_pct"] == row["after_rest_base_pct"] == 12.0
    row = by_shape(run.rows())[STEP_SHAPE]
    assert row["latency_ms"] == approx(nominal)  # the boost's replays came before 200 ms
    assert row["samples_ms"] == [approx(nominal)] * row["repeats"]
    assert row["pace"][3][1] == approx(nominal * 0.88)  # the first window after the rest
    assert row["windows"] > 50

    # A device without a boost: the probe finds nothing, the held pace stands.
    steady = run_child(args, **QUICK_RESTS)
    for row in steady.rows():
        assert row["sustained"] is None and row["sustained_base"] is None and row["windows"] == 3
        assert row["after_rest_pct"] == pytest.approx(0, abs=1e-6)
    # A boost under ZL_GRAPH_BOOST_PCT is not one.
    small = run_child(args, STUB_GRAPH_BOOST="0.985:35:20", **QUICK_RESTS)
    assert all(row["sustained"] is None for row in small.rows())


def test_graph_timer_reports_a_sustained_reading_cut_short(run_child):
    # The pace moved, and the window cap lets each sustained reading have one
    # window, before 200 ms of load: that window stands in, and says so.
    nominal = SHAPES[STEP_SHAPE] * COST / 2
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    STUB_GRAPH_STEP="51:1.15:each", ZL_GRAPH_MAX_WINDOWS="1", **QUICK_RESTS)
    assert run.rc == 0, run.output
    row = by_shape(run.rows())[STEP_SHAPE]
    assert row["windows"] == 3 + 2 and row["sustained"] is not None  # one per reading
    assert row["latency_ms"] == approx(nominal * 1.15) and row["repeats"] == 20
    assert run.child("timing")["sides_unsettled"] >= 2


def test_graph_timer_sustained_spread_is_the_middle_half(run_child):
    # Inside the sustained reading the stub moves between two levels 2 % apart
    # and then takes an excursion of +47 %, like an H200 GEMM under its power
    # limit: the median is a level's, the spread the middle half's, not the
    # excursion's.
    nominal = SHAPES[STEP_SHAPE] * COST / 2 * 1.15
    args = ["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST
    run = run_child(args, STUB_GRAPH_STEP="51:1.15:each,330:1.02:each,560:1.47:each", ZL_GRAPH_READINGS="1",
                    **QUICK_RESTS)
    assert run.rc == 0, run.output
    row = by_shape(run.rows())[STEP_SHAPE]
    samples = row["samples_ms"]
    levels = {round(x / nominal, 4) for x in samples}
    assert levels == {1.0, 1.02, round(1.02 * 1.47, 4)}, levels
    assert max(samples) / min(samples) > 1.4
    assert row["spread_pct"] == approx(2.0 / 1.02)
    assert row["latency_ms"] in (approx(nominal), approx(nominal * 1.02))


def test_graph_timer_refuses_settings_that_leave_nothing_to_read(run_child):
    args = ["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST
    run = run_child(args, ZL_GRAPH_BUDGET_MS="70")
    assert run.rc == 4
    assert "ZL_GRAPH_BUDGET_MS (70) must exceed ZL_GRAPH_SETTLE_MS (70)" in run.output
    run = run_child(args, ZL_GRAPH_SUSTAINED_MS="150", ZL_GRAPH_SUSTAINED_FROM_MS="150")
    assert run.rc == 4
    assert "ZL_GRAPH_SUSTAINED_MS (150) must exceed ZL_GRAPH_SUSTAINED_FROM_MS (150)" in run.output
    # 0 is a setting for the settling and the rests, not "unset".
    run = run_child(args, ZL_GRAPH_SETTLE_MS="0", ZL_GRAPH_SUSTAINED_FROM_MS="0", **QUICK_RESTS)
    assert run.rc == 0, run.output
    graph = run.child("timing")["settings"]["graph"]
    assert graph["settle_ms"] == 0.0 and graph["sustained_from_ms"] == 0.0
