"""examples/suite behaves like FlagGems' benchmark where zlcore depends on it."""

import json
import os
import sqlite3
import textwrap

from conftest import EXAMPLE, PYTHON

CORE = ["--level", "core", "--dtypes", "float32"]


def _record(run_suite, tmp_path, args, name="r.json"):
    out = tmp_path / name
    child = run_suite([*args, "--record", "json", "--output", str(out)])
    assert child.returncode == 0, child
    with open(out) as f:
        return json.load(f)


def _shapes(report, op):
    return [row["shape_detail"] for d in report[op]["details"] for row in d["result"]]


def test_abs_core_passes_and_prints_the_table(run_suite):
    child = run_suite(["benchmark/test_abs.py", "-m", "abs", *CORE, "-s"])
    assert child.returncode == 0, child
    assert "Operator: abs  Performance Test (dtype=float32, mode=kernel,level=core)" in child.output
    assert "1 passed, 1 deselected" in child.output


def test_record_json_has_flaggems_layout(run_suite, tmp_path):
    report = _record(run_suite, tmp_path, ["benchmark/test_abs.py", "-m", "abs", "--level", "core"])
    entry = report["abs"]
    assert entry["result"] == "passed" and entry["reason"] is None
    assert entry["test_case"] == "benchmark/test_abs.py::test_abs"
    assert [d["dtype"] for d in entry["details"]] == ["float16", "float32"]
    detail = entry["details"][0]
    assert detail["op_name"] == "abs" and detail["mode"] == "kernel" and detail["level"] == "core"
    row = detail["result"][0]
    for field in ("shape_detail", "latency_base", "latency", "speedup", "tflops", "gbps", "error_msg"):
        assert field in row
    assert row["shape_detail"] == [[4096]]
    assert row["latency"] > 0 and row["latency_base"] > 0
    assert abs(row["speedup"] - row["latency_base"] / row["latency"]) < 1e-9
    # --record json merges into an existing file, as FlagGems does.
    report2 = _record(run_suite, tmp_path, ["benchmark/test_exp.py", *CORE])
    assert set(report2) == {"abs", "exp"}


def test_comprehensive_adds_shapes(run_suite, tmp_path):
    core = _shapes(_record(run_suite, tmp_path, ["benchmark/test_abs.py", "-m", "abs", *CORE], "c.json"), "abs")
    comp = _shapes(
        _record(run_suite, tmp_path, ["benchmark/test_abs.py", "-m", "abs", "--dtypes", "float32"], "x.json"), "abs"
    )
    assert len(core) == 4
    assert comp[: len(core)] == core and len(comp) > len(core)


def test_blas_comprehensive_repeats_shapes_column_major(run_suite, tmp_path):
    args = ["benchmark/test_mm.py::test_mm", "--dtypes", "float32"]
    core = _shapes(_record(run_suite, tmp_path, [*args, "--level", "core"], "c.json"), "mm")
    comp = _shapes(_record(run_suite, tmp_path, args, "x.json"), "mm")
    assert len(core) == 3
    assert len(comp) % 2 == 0 and comp[: len(comp) // 2] == comp[len(comp) // 2 :]


def test_mm_marker_selects_two_tests(run_suite):
    child = run_suite(["benchmark/test_mm.py", "-m", "mm", "--collect-only", "-q"])
    assert child.returncode == 0, child
    assert "test_mm.py::test_mm\n" in child.output
    assert "test_mm.py::test_mm_self_transpose_benchmark" in child.output
    assert "2 tests collected" in child.output


def test_runs_from_another_cwd_by_file_path(run_suite, tmp_path):
    child = run_suite([str(EXAMPLE / "benchmark" / "test_sum.py"), *CORE], cwd=tmp_path)
    assert child.returncode == 0, child
    assert "configfile: pytest.ini" in child.output


def test_collect_marks_lists_every_op(run_suite, tmp_path):
    out = tmp_path / "marks.yaml"
    child = run_suite(["benchmark", f"--collect-marks={out}"])
    assert child.returncode == 5, child  # items cleared: nothing ran
    import yaml

    marks = {(m["file"], m["test_case"]): m["marks"] for m in yaml.safe_load(out.read_text())}
    assert marks[("benchmark/test_mm.py", "test_mm_self_transpose_benchmark")] == ["mm"]
    ops = {mark for names in marks.values() for mark in names}
    assert ops == {"abs", "abs_", "add", "add_", "mul", "exp", "softmax", "sum", "layer_norm", "mm"}


def test_bfloat16_alone_is_skipped(run_suite):
    child = run_suite(["benchmark/test_exp.py", "--level", "core", "--dtypes", "bfloat16", "-rs"])
    assert child.returncode == 0, child
    assert "no NumPy type" in child.output and "1 skipped" in child.output


def test_operator_mode_and_cudagraph_on_host(run_suite):
    assert run_suite(["benchmark/test_mul.py", *CORE, "--mode", "operator"]).returncode == 0
    child = run_suite(["benchmark/test_mul.py", *CORE, "--mode", "cudagraph"])
    assert child.returncode == 1 and "graph API" in child.output, child


def test_config_is_none_when_base_is_imported_early(tmp_path):
    # The hazard FlagGems has and zlcore's plugins must avoid: base copies
    # Config from conftest at import.
    code = "import benchmark.base as b, benchmark.conftest as c; print(b.Config, c.Config)"
    env = dict(os.environ, PYTHONPATH=f"{EXAMPLE}{os.pathsep}{EXAMPLE / 'src'}", PYTHONDONTWRITEBYTECODE="1")
    import subprocess

    out = subprocess.run([PYTHON, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert out.stdout.split() == ["None", "None"], out.stderr


def test_a_plugin_can_replace_get_latency_and_update_result(run_suite, tmp_path):
    plugin = tmp_path / "plug" / "zl_probe_plugin.py"
    plugin.parent.mkdir()
    log = tmp_path / "seen.jsonl"
    plugin.write_text(
        textwrap.dedent(
            f"""
            import json

            def pytest_sessionstart(session):
                import benchmark.base as base
                original_latency = base.Benchmark.get_latency
                original_update = base.update_result

                def get_latency(self, op, *args, **kwargs):
                    return 2.0 if base.numgems.gems_enabled(self.op_name) else 4.0

                def update_result(op, data):
                    with open({str(log)!r}, "a") as f:
                        f.write(json.dumps({{"op": op, "data": data, "config": base.Config is not None}}) + "\\n")
                    original_update(op, data)

                base.Benchmark.get_latency = get_latency
                base.update_result = update_result
            """
        )
    )
    child = run_suite(
        ["-p", "zl_probe_plugin", "benchmark/test_add.py", "-m", "add", "--level", "core"],
        env={"PYTHONPATH": str(plugin.parent)},
    )
    assert child.returncode == 0, child
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["data"]["dtype"] for r in rows] == ["float16", "float32"]
    assert all(r["op"] == "add" and r["config"] for r in rows)
    metrics = rows[0]["data"]["result"]
    assert len(metrics) == 4
    assert all(m["latency_base"] == 4.0 and m["latency"] == 2.0 and m["speedup"] == 2.0 for m in metrics)


# ---------------------------------------------------------------- tuner

MM = ["benchmark/test_mm.py", "-m", "mm", "--level", "core"]


def _db_path(tmp_path):
    return tmp_path / "flaggems" / "config_cache" / "TunedConfig_host_numgems_0_1.db"


def test_tuner_tunes_once_then_hits_the_cache(run_suite, tmp_path):
    first = run_suite(MM)
    assert first.returncode == 0, first
    c1 = first.counters()
    assert c1["tuning_benchmarks"] > 0 and c1["cache_hits"] == 0 and c1["mode"] == "tune"
    kernel = c1["kernels"]["mm_kernel"]
    assert kernel["db_winners_at_start"] == 0
    assert set(kernel["sources"].values()) == {"tuned"}
    assert c1["tuned"] == len(kernel["keys"]) > 1
    assert c1["db"] == str(_db_path(tmp_path))

    second = run_suite(MM)
    assert second.returncode == 0, second
    c2 = second.counters()
    assert c2["tuning_benchmarks"] == 0 and c2["tuned"] == 0
    assert c2["cache_hits"] == len(kernel["keys"])
    assert c2["kernels"]["mm_kernel"]["winners"] == kernel["winners"]
    assert c2["kernels"]["mm_kernel"]["db_winners_at_start"] == len(kernel["keys"])


def test_tuner_db_layout(run_suite, tmp_path):
    child = run_suite(MM)
    assert child.returncode == 0, child
    kernel = child.counters()["kernels"]["mm_kernel"]
    db = sqlite3.connect(_db_path(tmp_path))
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {kernel["table"], kernel["benchmark_table"]}
    assert kernel["table"].startswith("mm_kernel_") and "-" in kernel["table"]
    assert "_benchmark_v2-" in kernel["benchmark_table"]

    cols = [row[1] for row in db.execute(f'PRAGMA table_info("{kernel["table"]}")')]
    assert cols == ["key_0", "key_1", "key_2", "key_3", "BLOCK_M", "BLOCK_N", "BLOCK_K"]
    winners = {
        ",".join(str(v) for v in row[:4]): dict(zip(cols[4:], row[4:]))
        for row in db.execute(f'SELECT * FROM "{kernel["table"]}"')
    }
    assert winners == kernel["winners"]

    bcols = [row[1] for row in db.execute(f'PRAGMA table_info("{kernel["benchmark_table"]}")')]
    assert bcols[:7] == [f"key_{i}" for i in range(7)]
    assert bcols[7:] == ["BLOCK_M", "BLOCK_N", "BLOCK_K", "p50", "p20", "p80"]
    timed = db.execute(f'SELECT COUNT(*) FROM "{kernel["benchmark_table"]}"').fetchone()[0]
    assert timed == child.counters()["tuning_benchmarks"]


def test_pin_file_replays_winners_and_never_tunes(run_suite, tmp_path):
    record = run_suite(MM)
    assert record.returncode == 0, record
    pins = {name: k["winners"] for name, k in record.counters()["kernels"].items()}
    pin_file = tmp_path / "pins.json"
    pin_file.write_text(json.dumps(pins))

    fresh_cache = tmp_path / "other_cache"
    replay = run_suite(MM, env={"ZL_SUITE_TUNER_PIN": str(pin_file), "FLAGGEMS_CACHE_DIR": str(fresh_cache)})
    assert replay.returncode == 0, replay
    c = replay.counters()
    assert c["mode"] == "pin" and c["pin_file"] == str(pin_file)
    assert c["tuning_benchmarks"] == 0 and c["cache_hits"] == 0 and c["pinned"] == len(pins["mm_kernel"])
    assert c["kernels"]["mm_kernel"]["winners"] == pins["mm_kernel"]
    assert not fresh_cache.exists()  # a pinned run does not touch the cache


def test_pin_file_missing_a_key_is_a_replay_miss(run_suite, tmp_path):
    # One test only: both mm tests report under the op id "mm", and a later
    # passing test would overwrite the failed one's reason (as in FlagGems).
    mm_only = ["benchmark/test_mm.py::test_mm", "--level", "core"]
    record = run_suite(mm_only)
    winners = record.counters()["kernels"]["mm_kernel"]["winners"]
    dropped = sorted(winners)[-1]
    pin_file = tmp_path / "pins.json"
    pin_file.write_text(json.dumps({"mm_kernel": {k: v for k, v in winners.items() if k != dropped}}))
    out = tmp_path / "r.json"
    child = run_suite(
        [*mm_only, "--record", "json", "--output", str(out)], env={"ZL_SUITE_TUNER_PIN": str(pin_file)}
    )
    assert child.returncode == 1, child
    assert f"replay_miss: kernel=mm_kernel key={dropped}" in child.output
    assert json.loads(out.read_text())["mm"]["reason"].startswith("Failed: replay_miss: kernel=mm_kernel")
    assert child.counters()["tuning_benchmarks"] == 0


def test_no_child_dir_no_counters_file(run_suite, tmp_path):
    child = run_suite(["benchmark/test_mm.py::test_mm", "--level", "core"], env={"ZL_CHILD_DIR": ""})
    assert child.returncode == 0, child
    assert not os.path.exists(child.child_dir)
