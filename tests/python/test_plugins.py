"""The plugins in real pytest children: fake FlagGems suite, stub torch/triton/flag_gems."""

import json
import subprocess
import sys

import pytest

from conftest import PLUGINS, STUBS, child_env

ROW_KEYS = ["op", "test_node", "dtype", "shape", "shape_detail", "mode", "bench_level", "latency_base_ms",
            "latency_ms", "speedup", "timer", "timer_base", "fallback_reason", "repeats", "placements_ms",
            "placements_base_ms", "samples_ms",
            "samples_base_ms", "spread_pct", "spread_base_pct", "warmup_ms", "warmup_base_ms", "measure_ms",
            "measure_base_ms", "capture_ms", "capture_base_ms", "windows", "windows_base", "eager_ms", "eager_base_ms",
            "calls_per_replay", "calls_per_replay_base", "discarded_replay_ms", "discarded_replay_base_ms", "pace",
            "pace_base", "sustained", "sustained_base",
            "after_rest_pct", "after_rest_base_pct", "readings", "readings_base", "device_state",
            "device_state_base", "noise_note", "noise_note_base", "extras_stopped", "fresh_placements",
            "fresh_placements_base", "settled_ms", "settled_base_ms", "gbps", "tflops", "cluster_kernel",
            "memory_suite_peak_bytes", "memory_added_bytes", "memory_added_base_bytes",
            "placement_note", "placement_note_base",
            "error",
            # the graph timer's clock check (null where it did not run)
            "clock_dropped_windows", "clock_dropped_windows_base", "sm_clock_mhz", "sm_clock_base_mhz",
            "throttled", "throttled_base",
            # ABI 1.2: the row against the device's peaks (_roofline.py)
            "achieved_gbps", "achieved_gbps_source", "achieved_tflops", "peak_gbps", "pct_peak_bandwidth",
            "peak_tflops", "pct_peak_compute"]
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
        # Four placements, the latency the mean of their medians.
        assert row["repeats"] == 4
        for key, latency in (("placements_ms", "latency_ms"), ("placements_base_ms", "latency_base_ms")):
            assert len(row[key]) == 4 and sum(row[key]) / 4 == approx(row[latency])
        # Samples: two windows on the first placement, one on each other, 3-10 each.
        assert 15 <= len(row["samples_ms"]) <= 50 and 15 <= len(row["samples_base_ms"]) <= 50
        # 1.31 ms replays (a power of two calls): 4 ms of samples is 3 of them.
        assert len(row["samples_ms"]) == 2 * 10 + 3 * 3 or row["shape"] == "[[64, 512, 8]]"
        assert row["windows"] == row["windows_base"] == 5  # the stub's pace holds
        for pace in (row["pace"], row["pace_base"]):  # [load before the window, its median, placement]
            assert [p[2] for p in pace] == [0, 0, 1, 2, 3]
            assert all(a[0] < b[0] for a, b in zip(pace, pace[1:]))
            assert all(m == pytest.approx(pace[0][1], rel=1e-5) for _, m, _ in pace)
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
    assert state["captures_open"] == 0 and state["captures_begun"] == 12 * 4  # one per placement
    # Each placement clones the input and holds two shift allocations.
    assert state["clones"] == 12 * 4 and len(state["empty_bytes"]) == 12 * 4 * 2
    timing = run.child("timing")
    assert timing["patched"] == "benchmark.base.Benchmark.get_latency"
    assert timing["timer_effective"] == "graph" and timing["fallback_shapes"] == []
    assert timing["timer_modules"] == {"graph": "zlcore_pytest.timers.graph",
                                       "direct": "zlcore_pytest.timers.direct"}  # the fallback, loaded up front
    assert timing["captures_left_open"] == 0
    settings = timing["settings"]
    assert settings["graph"]["placements"] == 4 and settings["graph"]["placement_ms"] == 4.0
    assert settings["placement"] == {"seed": 0, "max_shift_mb": 128.0, "memory_pct": 25.0}
    assert timing["sides_by_timer"] == {"graph": 12}
    results = run.child("results")
    assert results["rows"] == 6 and results["rows_with_error"] == 0
    assert results["ops"] == {"abs": 6} and results["dtypes"] == {"float16": 3, "float32": 3}
    # the suite's own update_result still receives every dtype
    assert [d["dtype"] for d in run.update_results()["abs"]] == ["torch.float16", "torch.float32"]


def test_graph_timer_sizes_placements_from_its_settings(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    ZL_PLACEMENTS="3", ZL_PLACEMENT_MS="6", ZL_GRAPH_SAMPLES="6")
    assert run.rc == 0, run.output
    rows = by_shape(run.rows())
    # 64x64: 64 calls of 20.48 us make a 1.31 ms replay; two windows of
    # ZL_GRAPH_SAMPLES (6) on the first placement, 6 ms (5 samples) on each other
    assert rows["[[64, 64]]"]["repeats"] == 3 and len(rows["[[64, 64]]"]["samples_ms"]) == 22
    assert rows["[[64, 64]]"]["calls_per_replay"] == 64 and rows["[[64, 64]]"]["calls_per_replay_base"] == 32
    # torch's 2.6 ms per call: one call per replay; 20 ms windows capped at 6
    # samples on the first placement, then at least ZL_GRAPH_MIN_SAMPLES (3)
    assert len(rows["[[64, 512, 8]]"]["samples_base_ms"]) == 2 * 6 + 2 * 3
    graph = run.child("timing")["settings"]["graph"]
    assert graph["placements"] == 3 and graph["placement_ms"] == 6.0 and graph["samples"] == 6


def test_graph_timer_times_the_clones_and_averages_placements(run_child):
    # The stub runs a kernel whose input starts in an odd MiB 10 % slower: the
    # placements fall in two clusters, the latency between them, the spread
    # across them.
    args = ["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST
    run = run_child(args, STUB_PLACEMENT_SLOW_PCT="10", ZL_PLACEMENTS="8")
    assert run.rc == 0, run.output
    for row in run.rows():
        numel = SHAPES[row["shape"]]
        for key, nominal in (("placements_ms", numel * COST / 2), ("placements_base_ms", numel * COST)):
            values = row[key]
            assert {round(v / nominal, 6) for v in values} == {1.0, 1.1}, (key, values)
        # 10 % apart: the op's side takes the noisy extra placements (32 in
        # all by default), torch's side, the control, keeps its eight.
        assert len(row["placements_ms"]) == 32 and len(row["placements_base_ms"]) == 8
        assert row["latency_ms"] == approx(sum(row["placements_ms"]) / 32)
        assert row["spread_pct"] == approx(0.1 * numel * COST / 2 / row["latency_ms"] * 100)
        assert row["sustained"] is None
    # The same seed draws the same placements; another seed others.
    again = run_child(args, STUB_PLACEMENT_SLOW_PCT="10", ZL_PLACEMENTS="8")
    other = run_child(args, STUB_PLACEMENT_SLOW_PCT="10", ZL_PLACEMENTS="8", ZL_PLACEMENT_SEED="5")
    assert [r["placements_ms"] for r in again.rows()] == [r["placements_ms"] for r in run.rows()]
    assert [r["placements_ms"] for r in other.rows()] != [r["placements_ms"] for r in run.rows()]
    assert other.child("timing")["settings"]["placement"]["seed"] == 5


def test_direct_timer_repeats_on_placements_with_mean_and_spread(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    ZL_TIMER="direct", ZL_TIMER_FALLBACK="", ZL_DIRECT_REPEAT="3",
                    STUB_DO_BENCH_FACTORS="1.0,1.2,0.9")
    assert run.rc == 0, run.output
    for row in run.rows():
        numel = SHAPES[row["shape"]]
        assert row["timer"] == row["timer_base"] == "direct"
        assert row["repeats"] == 3
        assert row["placements_base_ms"] == [approx(numel * COST * f) for f in (1.0, 1.2, 0.9)]
        assert row["samples_base_ms"] == row["placements_base_ms"]
        assert row["latency_base_ms"] == approx(numel * COST * 3.1 / 3)
        assert row["latency_ms"] == approx(numel * COST / 2 * 3.1 / 3)
        assert row["spread_pct"] == approx(30.0 / (3.1 / 3)) and row["spread_base_pct"] == approx(30.0 / (3.1 / 3))
        # do_bench warms up inside: its whole time is the measurement.
        assert row["warmup_ms"] is None and row["warmup_base_ms"] is None
        assert row["measure_ms"] > 0 and row["measure_base_ms"] > 0
    state = run.stub_state()
    assert state["do_bench_calls"] == 3 * 3 * 2
    assert state["captures_begun"] == 0
    assert state["clones"] == 3 * 3 * 2  # one placement per repeat
    assert all(a == {"warmup": 1, "rep": 5, "return_mode": "median", "grad_to_none": False}
               for a in state["do_bench_args"])


def test_a_side_too_slow_for_do_bench_is_timed_by_events_within_the_budget(run_child):
    # With --warmup 1 --iter 5, do_bench's five estimate calls outweigh the
    # suite's times once a call passes 1.2 ms: the 64x512x8 shape (2.6 ms torch,
    # 1.3 ms gems). A 12 ms budget holds two placements of each, not three.
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    ZL_TIMER="direct", ZL_TIMER_FALLBACK="", ZL_DIRECT_REPEAT="3", ZL_DIRECT_BUDGET_MS="12")
    assert run.rc == 0, run.output
    for row in run.rows():
        numel = SHAPES[row["shape"]]
        if numel < 100000:
            assert row["repeats"] == 3 and row["noise_note"] is None and row["noise_note_base"] is None
            continue
        assert row["placements_base_ms"] == [approx(numel * COST)] * 2
        assert row["placements_ms"] == [approx(numel * COST / 2)] * 2
        assert row["eager_base_ms"] == approx(numel * COST)
        assert row["noise_note_base"].startswith("one call 3 ms (a warm call): 2 placement(s) of 2 call(s) timed by")
        assert row["noise_note"].startswith("one call 1 ms (a warm call): 2 placement(s) of 4 call(s) timed by")
    state = run.stub_state()
    assert state["do_bench_calls"] == 2 * 3 * 2  # the two fast shapes only
    assert run.child("timing")["settings"]["direct_budget_ms"] == 12.0


def test_a_fallback_reuses_the_failed_timers_estimate(run_child):
    # The graph timer measured the warm call before its capture failed: the
    # direct fallback decides from that, spending no call of its own on it.
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    STUB_CAPTURE_FAIL_NUMEL="262144", ZL_DIRECT_REPEAT="1", ZL_DIRECT_BUDGET_MS="1")
    assert run.rc == 0, run.output
    row = next(r for r in run.rows() if r["shape"] == "[[64, 512, 8]]")
    assert row["timer_base"] == "direct" and row["eager_base_ms"] == approx(262144 * COST)
    assert row["noise_note_base"].startswith("one call 3 ms (the failed timer's estimate): 1 placement(s) of 2 call(s)")
    assert run.stub_state()["do_bench_calls"] == 0


def test_one_direct_repeat_is_one_placement(run_child):
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
    assert run.child("timing")["captures_left_open"] == 0


def test_a_capture_that_stays_open_is_named_and_counted(run_child):
    # Ending the failed capture leaves the stream capturing: the process is
    # poisoned (the fallback's launches fail too), and the run says why.
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    STUB_CAPTURE_FAIL_NUMEL="1024", STUB_CAPTURE_STAYS_OPEN="1")
    assert run.rc == 1
    rows = by_shape(run.rows())
    assert rows["[[64, 64]]"]["error"] is None
    error = rows["[[1024]]"]["error"]
    assert error.startswith("direct timer failed (RuntimeError: stub: launch on another stream while a "
                            "capture is open) after: graph capture of ")
    assert error.endswith("(the stream still reads as capturing)")
    assert run.child("timing")["captures_left_open"] == 1


def test_failed_capture_without_fallback_is_a_shape_error(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    STUB_CAPTURE_FAIL_NUMEL="1024", ZL_TIMER_FALLBACK="")
    assert run.rc == 1
    rows = by_shape(run.rows())
    assert rows["[[64, 64]]"]["error"] is None
    assert "no fallback timer" in rows["[[1024]]"]["error"]
    assert run.stub_state()["captures_open"] == 0


def test_a_timer_module_that_cannot_be_imported_falls_back_with_reason(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    ZL_TIMER_MODULE="zlcore_pytest.timers.no_such_timer")
    assert run.rc == 0, run.output
    for row in run.rows():
        assert row["timer"] == row["timer_base"] == "direct"
        assert row["fallback_reason"].startswith("graph timer unavailable: timer 'graph': cannot import "
                                                 "zlcore_pytest.timers.no_such_timer")
    timing = run.child("timing")
    assert timing["planned_timer"] == "graph" and timing["timer_effective"] == "direct"
    assert timing["timer_modules"] == {"direct": "zlcore_pytest.timers.direct"}
    assert run.stub_state()["captures_begun"] == 0


def test_the_planner_names_the_timer_module(run_child, tmp_path):
    # A timer zlcore does not ship: a module, and (in rules.yaml) its name and module.
    module = tmp_path / "lib" / "stopwatch_timer.py"
    module.parent.mkdir()
    module.write_text(
        "from zlcore_pytest.timers.base import SideTiming\n"
        "NAME = 'stopwatch'\n"
        "class Stopwatch:\n"
        "    name = NAME\n"
        "    def settings_report(self):\n"
        "        return {'hands': 2}\n"
        "    def measure(self, call):\n"
        "        return SideTiming.over_placements(NAME, [1.0, 3.0])\n"
        "def create(settings, placer):\n"
        "    return Stopwatch()\n")
    import os

    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    ZL_TIMER="stopwatch", ZL_TIMER_MODULE="stopwatch_timer", ZL_TIMER_FALLBACK="",
                    PYTHONPATH=os.pathsep.join([str(PLUGINS), str(module.parent), str(STUBS)]))
    assert run.rc == 0, run.output
    assert {(r["timer"], r["latency_ms"], r["spread_pct"]) for r in run.rows()} == {("stopwatch", 2.0, 100.0)}
    assert run.child("timing")["settings"]["stopwatch"] == {"hands": 2}


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
    # One grad output per side, cloned into each placement: the suite's random
    # stream moves as it would without placements.
    assert state["randn_like"] == 3 * 2
    if timer == "graph":
        assert state["captured_autograd"] > 0
    if timer == "direct":
        assert all(a["grad_to_none"] for a in state["do_bench_args"])


@pytest.mark.parametrize("timer", ["graph", "direct", "host"])
def test_ops_whose_inputs_are_not_tensors_are_placed_too(run_child, timer):
    # zeros(*sizes): nothing to clone, but every placement still shifts the
    # allocator the op's output comes from.
    run = run_child(["benchmark/test_ops.py", "-m", "zeros"] + FAST, ZL_TIMER=timer)
    assert run.rc == 0, run.output
    rows = run.rows()
    assert [r["shape"] for r in rows] == ["[64, 64]", "[1024]", "[64, 512, 8]"]
    for row in rows:
        assert row["timer"] == timer and row["error"] is None and row["fallback_reason"] is None
        assert row["repeats"] == {"graph": 4, "direct": 1, "host": 5}[timer]
        if timer != "host":
            assert row["latency_base_ms"] == approx(SHAPES["[[" + row["shape"][1:-1] + "]]"] * COST)
    state = run.stub_state()
    assert state["clones"] == 0 and len(state["empty_bytes"]) == 2 * 3 * 2 * row["repeats"]


def test_an_in_place_op_runs_on_each_placements_own_storage(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs_"] + FAST)
    assert run.rc == 0, run.output
    assert len(run.rows()) == 3
    # Per shape: the suite's input (the warm-up of both sides) and one clone
    # for each of the 4 placements of each side.
    assert run.stub_state()["inplace_storages"] == 3 * (1 + 2 * 4)


def test_host_timer_repeats_wall_clock(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    ZL_TIMER="host", ZL_TIMER_FALLBACK="", ZL_HOST_REPEAT="4")
    assert run.rc == 0, run.output
    for row in run.rows():
        assert row["timer"] == row["timer_base"] == "host"
        assert row["repeats"] == 4 and len(row["placements_base_ms"]) == 4
        assert len(row["samples_base_ms"]) == 4 * 3  # ZL_HOST_LOOPS (3) per placement
        assert row["latency_ms"] == approx(sum(row["placements_ms"]) / 4) and row["spread_pct"] >= 0
    assert run.stub_state()["do_bench_calls"] == 0


def test_host_timer_reads_the_threads_cpu_time_only_off_a_torch_device(run_child):
    # On the host the loops read the thread's CPU time, and the identity says so.
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    ZL_TIMER="host", ZL_TIMER_FALLBACK="", ZL_HOST_CLOCK="thread", ZL_TORCH_DEVICE="cpu")
    assert run.rc == 0, run.output
    assert run.rows() and all(row["timer"] == "host" for row in run.rows())
    assert run.child("timing")["settings"]["host_clock"] == "thread"
    # On a torch device the kernel's time is not this thread's: refused before anything is measured.
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    ZL_TIMER="host", ZL_TIMER_FALLBACK="", ZL_HOST_CLOCK="thread")
    assert run.rc == 4, run.output
    assert "ZL_HOST_CLOCK=thread reads this thread's CPU time" in run.output and not run.rows()


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
            "import zlcore_pytest.device_setup, zlcore_pytest.timing, zlcore_pytest.timers.graph\n"
            "import zlcore_pytest.timers.direct, zlcore_pytest.timers.host\n"
            "import zlcore_pytest.cluster_fix, zlcore_pytest.results, zlcore_pytest.autotune\n"
            "bad = [m for m in ('torch', 'triton', 'flag_gems') if m in sys.modules]\n"
            "assert not bad, bad\n")
    env = child_env(PLUGINS)  # stubs on the path: an import would succeed, so absence proves laziness
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_unknown_timer_is_a_usage_error(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs"] + FAST, ZL_TIMER="stopwatch")
    assert run.rc == 4
    assert "ZL_TIMER='stopwatch': unknown timer 'stopwatch' (known: graph, direct, host" in run.output


# 64x64 under the default graph settings, on either side: 64 calls per
# 1.31 ms replay (the FlagGems side's 20.48 us a call, torch's 32 of 40.96).
# On the first placement's graph replay 1 is discarded, 2 sizes it, 3-56
# settle (70 ms), 57-66 are the first window's samples, 67 leads the second
# window (samples 68-77). Every later placement has a graph of its own.
STEP_SHAPE = "[[64, 64]]"
# Rests short enough for a test; the stub's boost needs no more.
# These tests place the stub's pace changes by replay count and wall-clock
# idle, so they keep the full 70 ms settle: the stub's step at a graph's 85th
# replay then falls between the first placement's two windows, and its boost
# arms only at the rests asked for. The flat settle (the default) syncs the
# host between chunks, where a host stall on a loaded machine would arm the
# boost mid-settle; it has its own tests on a fake pace in
# test_graph_policy.py.
QUICK_RESTS = {"ZL_GRAPH_REST_MS": "60", "ZL_GRAPH_PROBE_REST_MS": "60", "ZL_GRAPH_SETTLE_FLAT_MS": "0"}


def test_graph_timer_sustains_a_pace_that_moved(run_child):
    # From each graph's 85th replay on the stub runs 15 % slower, like H200
    # clocks coming down under a sustained GEMM: the first placement's two
    # windows read apart, and each sustained reading (a fresh placement, its
    # own graph) is past the step after its first 200 ms of load.
    nominal = SHAPES[STEP_SHAPE] * COST / 2
    args = ["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST
    run = run_child(args, STUB_GRAPH_STEP="67:1.15:each", **QUICK_RESTS)
    assert run.rc == 0, run.output
    row = by_shape(run.rows())[STEP_SHAPE]
    assert row["sustained"] == row["sustained_base"] == "window medians 15.0 % apart"
    assert row["after_rest_pct"] is None  # no probe: the windows moved
    # one reading per placement, on four new placements
    assert row["readings"] == row["placements_ms"] == [approx(nominal * 1.15)] * 4
    assert row["readings_base"] == [approx(nominal * 2 * 1.15)] * 4
    assert row["latency_ms"] == approx(nominal * 1.15) and row["repeats"] == 4
    assert row["spread_pct"] == pytest.approx(0, abs=1e-6)
    # The pace trace: the first placement's two windows, then the readings'
    # windows with their load counted from each rest.
    pace = row["pace"]
    assert [p[2] for p in pace[:2]] == [0, 0] and {p[2] for p in pace[2:]} == {4, 5, 6, 7}
    assert pace[0][1] == approx(nominal) and pace[1][1] == approx(nominal * 1.15)
    assert pace[2][0] < pace[1][0] and max(p[0] for p in pace[2:]) < 1200
    assert row["windows"] > 2 + 4 * 50
    timing = run.child("timing")
    assert timing["sides_extended"] >= 2 and timing["sides_unsettled"] == 0
    assert timing["settings"]["graph"]["sustained_ms"] == 1200.0
    assert timing["settings"]["graph"]["rest_ms"] == 60.0

    # One window on the first placement cannot see the step; the pace holds.
    one = run_child(args, STUB_GRAPH_STEP="67:1.15:each", ZL_GRAPH_MIN_WINDOWS="1", **QUICK_RESTS)
    row = by_shape(one.rows())[STEP_SHAPE]
    assert row["sustained"] is None and row["readings"] is None and row["windows"] == 4

    # Fewer, shorter sustained readings: only the samples after ZL_GRAPH_SUSTAINED_FROM_MS count.
    short = run_child(args, STUB_GRAPH_STEP="67:1.15:each", ZL_GRAPH_SUSTAINED_MS="70",
                      ZL_GRAPH_SUSTAINED_FROM_MS="30", ZL_GRAPH_READINGS="2", **QUICK_RESTS)
    row = by_shape(short.rows())[STEP_SHAPE]
    assert row["readings"] == [approx(nominal)] * 2  # the step comes after 67 replays, ~88 ms
    assert short.child("timing")["settings"]["graph"]["readings"] == 2


def test_graph_timer_probes_for_a_boost_after_a_rest(run_child):
    # A steady pace under load that runs 12 % faster for 20 replays after the
    # host left the device alone for 35 ms: a power-limited GEMM whose windows
    # fell on a plateau. The probe finds the boost; each sustained reading
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
    assert row["samples_ms"] == [approx(nominal)] * len(row["samples_ms"])
    first_sustained = [p for p in row["pace"] if p[2] == 4][0]
    assert first_sustained[1] == approx(nominal * 0.88)  # the first window after the rest
    assert row["windows"] > 50

    # A device without a boost: the probe finds nothing, the held pace stands.
    steady = run_child(args, **QUICK_RESTS)
    for row in steady.rows():
        assert row["sustained"] is None and row["sustained_base"] is None and row["windows"] == 5
        assert row["after_rest_pct"] == pytest.approx(0, abs=1e-6)
    # A boost under ZL_GRAPH_BOOST_PCT is not one.
    small = run_child(args, STUB_GRAPH_BOOST="0.985:35:20", **QUICK_RESTS)
    assert all(row["sustained"] is None for row in small.rows())


def test_a_side_that_once_took_the_sustained_procedure_keeps_it(run_child, tmp_path):
    # Two runs of one comparison share ZL_GRAPH_SUSTAINED_ROWS. The first
    # finds the boost on every side and records each; the second, on a
    # device that holds its pace, would read every side held, and instead
    # takes the sustained readings the first took, so the two read one way.
    nominal = SHAPES[STEP_SHAPE] * COST / 2
    args = ["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST
    shared = tmp_path / "sustained_rows.jsonl"
    first = run_child(args, STUB_GRAPH_BOOST="0.88:35:20", ZL_GRAPH_SUSTAINED_ROWS=str(shared), **QUICK_RESTS)
    assert first.rc == 0, first.output
    rows = first.rows()
    assert all(r["sustained"] == r["sustained_base"] == "ran 12.0 % faster after a 60 ms rest" for r in rows)
    keys = [json.loads(line) for line in shared.read_text().splitlines() if line]
    assert sorted(keys) == sorted([r["op"], "float16", r["shape"], side] for r in rows for side in ("base", "gems"))

    second = run_child(args, ZL_GRAPH_SUSTAINED_ROWS=str(shared), **QUICK_RESTS)
    assert second.rc == 0, second.output
    pinned = "took the sustained procedure in an earlier run (ZL_GRAPH_SUSTAINED_ROWS)"
    for row in second.rows():
        assert row["sustained"] == row["sustained_base"] == pinned, row
        assert row["readings"] is not None and row["readings_base"] is not None
    row = by_shape(second.rows())[STEP_SHAPE]
    assert row["readings"] == [approx(nominal)] * 4 and row["latency_ms"] == approx(nominal)
    assert len([line for line in shared.read_text().splitlines() if line]) == len(keys)  # a pinned side adds nothing

    # A run that does not share the file decides for itself, as before.
    alone = run_child(args, **QUICK_RESTS)
    assert all(r["sustained"] is None and r["sustained_base"] is None for r in alone.rows())
    # Only the named side is pinned. A line cut short (a full disk) is an
    # append that did not finish, wherever it stands, not a key; the next
    # append's leading newline ended it.
    one = tmp_path / "one.jsonl"
    one.write_text('["abs", "float16", "[[6\n' + json.dumps(["abs", "float16", STEP_SHAPE, "gems"]) + "\n"
                   + '["abs", "float16", "[[')
    partly = run_child(args, ZL_GRAPH_SUSTAINED_ROWS=str(one), **QUICK_RESTS)
    assert partly.rc == 0, partly.output
    for row in partly.rows():
        assert row["sustained"] == (pinned if row["shape"] == STEP_SHAPE else None), row
        assert row["sustained_base"] is None


def test_a_sustained_rows_file_zlcore_did_not_write_stops_the_run(run_child, tmp_path):
    args = ["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST
    bad = tmp_path / "bad.jsonl"
    bad.write_text('["abs", "float16", "[[64, 64]]", "gems"]\n{"op": "abs"}\n')
    run = run_child(args, ZL_GRAPH_SUSTAINED_ROWS=str(bad))
    assert run.rc == 4, run.output
    assert f"ZL_GRAPH_SUSTAINED_ROWS='{bad}' line 2 is not [op, dtype, shape, \"base\"|\"gems\"]" in run.output
    (tmp_path / "notes.txt").write_text("op,dtype\nabs,float16\n")
    run = run_child(args, ZL_GRAPH_SUSTAINED_ROWS=str(tmp_path / "notes.txt"))
    assert run.rc == 4 and "line 1 is not [op, dtype, shape" in run.output, run.output
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "elsewhere.jsonl")
    run = run_child(args, ZL_GRAPH_SUSTAINED_ROWS=str(link))
    assert run.rc == 4, run.output
    assert f"ZL_GRAPH_SUSTAINED_ROWS='{link}' cannot be appended to" in run.output
    assert not (tmp_path / "elsewhere.jsonl").exists()
    nowhere = tmp_path / "missing" / "rows.jsonl"
    run = run_child(args, ZL_GRAPH_SUSTAINED_ROWS=str(nowhere))
    assert run.rc == 4, run.output
    assert f"ZL_GRAPH_SUSTAINED_ROWS='{nowhere}': directory {nowhere.parent} does not exist" in run.output
    assert not run.rows()


def test_graph_timer_reports_a_sustained_reading_cut_short(run_child):
    # The pace moved, and the window cap lets each sustained reading have one
    # window, before 200 ms of load: that window stands in, and says so.
    nominal = SHAPES[STEP_SHAPE] * COST / 2
    run = run_child(["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST,
                    STUB_GRAPH_STEP="67:1.15:each", ZL_GRAPH_MAX_WINDOWS="1", **QUICK_RESTS)
    assert run.rc == 0, run.output
    row = by_shape(run.rows())[STEP_SHAPE]
    assert row["windows"] == 2 + 4 and row["sustained"] is not None  # one per reading
    assert row["latency_ms"] == approx(nominal) and row["readings"] == [approx(nominal)] * 4
    assert run.child("timing")["sides_unsettled"] >= 2


def test_graph_timer_refuses_settings_it_cannot_use(run_child):
    args = ["benchmark/test_ops.py", "-m", "abs", "--dtypes", "float16"] + FAST
    for env, message in [
        ({"ZL_PLACEMENTS": "0"}, "zlcore timing: ZL_PLACEMENTS='0' must be at least 1"),
        ({"ZL_GRAPH_SETTLE_MS": "soon"}, "zlcore timing: ZL_GRAPH_SETTLE_MS='soon' is not a number"),
        ({"ZL_DIRECT_REPEAT": "-2"}, "zlcore timing: ZL_DIRECT_REPEAT='-2' must be at least 1"),
        ({"ZL_GRAPH_SUSTAINED_MS": "150", "ZL_GRAPH_SUSTAINED_FROM_MS": "150"},
         "ZL_GRAPH_SUSTAINED_MS (150) must exceed ZL_GRAPH_SUSTAINED_FROM_MS (150)"),
    ]:
        run = run_child(args, **env)
        assert run.rc == 4, (env, run.output)
        assert message in run.output
    # 0 is a setting for the settling and the rests, not "unset".
    run = run_child(args, ZL_GRAPH_SETTLE_MS="0", ZL_GRAPH_SUSTAINED_FROM_MS="0", **QUICK_RESTS)
    assert run.rc == 0, run.output
    graph = run.child("timing")["settings"]["graph"]
    assert graph["settle_ms"] == 0.0 and graph["sustained_from_ms"] == 0.0


def test_a_cold_child_runs_the_suite_on_a_frozen_heap(tmp_path):
    (tmp_path / "test_heap.py").write_text(
        "import gc\n\n"
        "def test_the_heap_is_frozen():\n"
        "    assert gc.get_freeze_count() > 0\n")
    run_dir = tmp_path / "run"
    (run_dir / ".child").mkdir(parents=True)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "zlcore_pytest.timing",
                           str(tmp_path / "test_heap.py")], capture_output=True, text=True,
                          env=child_env(run_dir), cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
