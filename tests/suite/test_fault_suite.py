"""tests/fixtures/fault_suite: each op misbehaves exactly as zlcore's tests expect."""

import json
import signal
import subprocess
import time

import pytest

from conftest import FAULT


def _bench(op):
    return [f"benchmark/test_{op}.py", "-m", op, "-s"]


@pytest.mark.parametrize("op", ["ok1", "ok2", "ok3", "ok4", "plant", "probe"])
def test_ok_ops_pass(run_suite, op):
    child = run_suite(_bench(op), suite=FAULT)
    assert child.returncode == 0, child
    assert f"Operator: {op}  Performance Test" in child.output


def test_fault_suite_uses_its_own_benchmark_package(run_suite, tmp_path):
    # The symlinked harness must load as this suite's benchmark.base, reading
    # this suite's core_shapes.yaml, with working --record json.
    out = tmp_path / "r.json"
    child = run_suite([*_bench("ok1"), "--record", "json", "--output", str(out)], suite=FAULT)
    assert child.returncode == 0, child
    rows = json.loads(out.read_text())["ok1"]["details"][0]["result"]
    assert [r["shape_detail"] for r in rows] == [[[64]], [[64, 64]]]


def test_crash_dies_of_sigsegv_after_one_shape(run_suite):
    child = run_suite(_bench("crash"), suite=FAULT)
    assert child.returncode == -signal.SIGSEGV, child
    assert "crash: measured one shape" in child.output


def test_hang_never_returns(run_suite):
    with pytest.raises(subprocess.TimeoutExpired) as info:
        run_suite(_bench("hang"), suite=FAULT, timeout=5)
    output = info.value.output or b""
    output = output.decode() if isinstance(output, bytes) else output
    assert "hang: measured one shape" in output


def test_fail_exits_1_with_the_shape_error(run_suite, tmp_path):
    out = tmp_path / "r.json"
    child = run_suite([*_bench("fail"), "--record", "json", "--output", str(out)], suite=FAULT)
    assert child.returncode == 1, child
    assert "fail: shape (128,) fails on purpose" in child.output
    assert json.loads(out.read_text())["fail"]["result"] == "failed"


def test_sleep_reports_its_sleep_as_latency(run_suite, tmp_path):
    out = tmp_path / "r.json"
    start = time.monotonic()
    child = run_suite(
        [*_bench("sleep"), "--record", "json", "--output", str(out)],
        suite=FAULT,
        env={"ZL_SLEEP_OP_SECONDS": "0.5"},
    )
    elapsed = time.monotonic() - start
    assert child.returncode == 0, child
    rows = json.loads(out.read_text())["sleep"]["details"][0]["result"]
    assert len(rows) == 1
    assert 500 <= rows[0]["latency"] < 700
    assert rows[0]["latency_base"] < 50
    assert elapsed >= 0.5


def test_probe_fails_after_plant_in_the_same_process(run_suite):
    child = run_suite(["benchmark/test_plant.py", "benchmark/test_probe.py"], suite=FAULT)
    assert child.returncode == 1, child
    assert "probe: this process carries state an earlier op planted" in child.output
    assert "1 failed, 1 passed" in child.output


def test_collect_marks_lists_the_fault_ops(run_suite, tmp_path):
    out = tmp_path / "marks.yaml"
    child = run_suite(["benchmark", f"--collect-marks={out}"], suite=FAULT)
    assert child.returncode == 5, child
    import yaml

    ops = {m for entry in yaml.safe_load(out.read_text()) for m in entry["marks"]}
    assert ops == {"crash", "hang", "fail", "sleep", "ok1", "ok2", "ok3", "ok4", "plant", "probe", "bits_and",
                   "bits_or", "twins", "twin_b", "declines", "halfway", "partly", "poison", "fragile"}
