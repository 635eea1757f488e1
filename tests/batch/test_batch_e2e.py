"""zlcore batch end to end: the built zlcore, the multi-device fake backend
(tests/loader, `fakegpu`) and the fault and example suites.

Run by ctest (batch_e2e.test_batch_e2e), which sets ZLCORE, ZL_VENDOR_DIR and ZL_SOURCE_DIR.
"""

import os
import random
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from zltest import EXAMPLE_SUITE, FAULT_SUITE, VENDOR, ZLCORE, by_op, clean_env, ops_status_rows, tagged_pids

pytestmark = pytest.mark.skipif(not (ZLCORE and VENDOR), reason="run through ctest (needs ZLCORE, ZL_VENDOR_DIR)")


def batch_argv(out, ops, suite=FAULT_SUITE, extra=()):
    # The fake backend has no triton behind it, so the host timer.
    return [ZLCORE, "--backend-dir", VENDOR, "batch", "--backend", "fakegpu", "--ops", ops,
            "--flaggems-dir", str(suite), "--python", "/usr/bin/python3", "--level", "core", "--timer", "host",
            "--out", str(out), *extra]


def env_for(devices=2, tag=None, **more):
    """The caller's environment with `devices` fake devices, none busy, no parallel warm-up; tag marks our children."""
    tagged = {"ZL_BATCH_TEST_TAG": tag} if tag else {}
    return clean_env(strip_names=("ZL_FAKE_BUSY", "PARALLEL_WARMUP_GPUS"),
                     **{"ZL_FAKE_DEVICE_COUNT": devices, **tagged, **more})


def run_batch(out, ops, devices=2, suite=FAULT_SUITE, extra=(), timeout=120, **env):
    return subprocess.run(batch_argv(out, ops, suite, extra), env=env_for(devices, **env), capture_output=True,
                          text=True, timeout=timeout)


def kill_tagged(tag):
    for pid in tagged_pids(tag):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def wait_for_rows(out, n, limit=60):
    deadline = time.time() + limit
    path = Path(out) / "ops_status.csv"
    while time.time() < deadline:
        if path.exists() and path.read_text().count("\n") >= n + 1:
            return
        time.sleep(0.05)
    raise AssertionError(f"no {n} rows in {path} after {limit}s")


def span(row):
    from datetime import datetime
    start = datetime.fromisoformat(row["started"].replace("Z", "+00:00")).timestamp()
    return start, start + float(row["seconds"])


def test_example_suite_spreads_over_devices_at_once(tmp_path):
    ops = "abs,add,mm,mul,exp,softmax,sum,layer_norm"
    r = run_batch(tmp_path / "b", ops, devices=4, suite=EXAMPLE_SUITE, extra=["--dtypes", "float32"])
    assert r.returncode == 0, r.stdout + r.stderr
    rows = ops_status_rows(tmp_path / "b")
    assert sorted(x["op"] for x in rows) == sorted(ops.split(","))
    assert all(x["status"] == "passed" and x["exit_code"] == "0" for x in rows)
    assert len({x["device_index"] for x in rows}) >= 3
    # Two ops on different devices ran at the same time.
    overlapping = [(a["op"], b["op"]) for a in rows for b in rows
                   if a["device_index"] < b["device_index"] and span(a)[0] < span(b)[1] and span(b)[0] < span(a)[1]]
    assert overlapping, rows
    # Never two ops at once on one device.
    for a in rows:
        for b in rows:
            if a is not b and a["device_index"] == b["device_index"]:
                assert span(a)[1] <= span(b)[0] + 0.05 or span(b)[1] <= span(a)[0] + 0.05, (a, b)
    for x in rows:
        assert x["backend"] == "fakegpu" and x["device_id"] == "FAKE-%04d" % int(x["device_index"])
        assert x["timer"] == "host" and x["bench_level"] == "core" and x["run_dir"] == "runs/" + x["op"]
        assert (tmp_path / "b" / x["run_dir"] / "run_identity.json").exists()
    ident = (tmp_path / "b" / "batch_identity.json").read_text()
    assert '"status": "finished"' in ident and '"passed": 8' in ident
    assert "8 ops: 8 passed" in r.stdout
    # Compiling ahead is asked for, never assumed (docs/batch.md, "Compiling ahead").
    assert '"off": "off by default (--compile-ahead N or auto turns it on)"' in ident
    assert not (tmp_path / "b" / "compile").exists()


def test_each_run_says_where_its_seconds_went_and_the_batch_sums_them(tmp_path):
    import json

    ops = "abs,mm"
    r = run_batch(tmp_path / "b", ops, devices=1, suite=EXAMPLE_SUITE, extra=["--dtypes", "float32"])
    assert r.returncode == 0, r.stdout + r.stderr
    parts = ["zlcore", "start", "imports", "collection", "compiling", "autotuning", "suite", "measuring_base",
             "measuring_gems", "teardown"]
    for row in ops_status_rows(tmp_path / "b"):
        ident = json.loads((tmp_path / "b" / row["run_dir"] / "run_identity.json").read_text())
        time_s = ident["time"]
        assert sorted(time_s) == sorted(p + "_s" for p in parts)
        # The parts are the run's seconds, split: they add up to them.
        assert sum(time_s.values()) == pytest.approx(ident["seconds"], abs=0.05)
        assert time_s["measuring_gems_s"] > 0 and time_s["imports_s"] > 0 and time_s["zlcore_s"] > 0
        # ops_status.csv carries the same parts.
        for p in parts:
            assert float(row["t_" + p]) == pytest.approx(time_s[p + "_s"], abs=0.001), p
    summary = r.stdout[r.stdout.index("where the time went (2 runs"):]
    for p in parts + ["total"]:
        assert f"\n  {p} " in summary, summary


def test_a_device_run_records_its_memory_and_its_compiling(tmp_path):
    import json

    from zltest import FAKEGEMS_SUITE, STUBS

    # The fake backend names the stub torch's "cuda": its allocator counts device memory.
    r = run_batch(tmp_path / "b", "clustermm", devices=1, suite=FAKEGEMS_SUITE,
                  PYTHONPATH=str(STUBS / "gpu"), ZL_FAKE_TORCH_DEVICE="cuda", STUB_MEMORY_TOTAL=str(8 << 30))
    assert r.returncode == 0, r.stdout + r.stderr
    row = ops_status_rows(tmp_path / "b")[0]
    ident = json.loads((tmp_path / "b" / row["run_dir"] / "run_identity.json").read_text())
    memory = ident["memory"]
    assert memory["start"]["device_total_bytes"] == 8 << 30
    assert memory["start"]["device_free_bytes"] <= 8 << 30 and "allocated_bytes" in memory["end"]
    rows = [json.loads(line) for line in (tmp_path / "b" / row["run_dir"] / "results.jsonl").read_text().splitlines()]
    assert memory["suite_peak_bytes"] == max(x["memory_suite_peak_bytes"] for x in rows) > 0
    assert memory["added_peak_bytes"] == max(x["memory_added_bytes"] for x in rows) > 0
    # clustermm's kernel compiles through Triton's JIT: its time is the run's compiling.
    assert ident["plugins"]["phases"]["counts"]["compiling"] == 1
    assert float(row["t_compiling"]) == ident["time"]["compiling_s"] >= 0


def test_gpus_is_devices(tmp_path):
    a = run_batch(tmp_path / "a", "ok1", devices=3, extra=["--gpus", "2"])
    b = run_batch(tmp_path / "b", "ok1", devices=3, extra=["--devices", "2"])
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    first_a, first_b = ops_status_rows(tmp_path / "a")[0], ops_status_rows(tmp_path / "b")[0]
    assert first_a["device_index"] == first_b["device_index"] == "2"
    for flag, value, expect in [("--gpus", "0,0", "listed twice"), ("--devices", "7", "device 7 does not exist"),
                                ("--gpus", "1-9", "does not exist"), ("--devices", "x", "not an index")]:
        r = run_batch(tmp_path / "bad", "ok1", devices=3, extra=[flag, value])
        assert r.returncode == 2, r.stderr
        assert expect in r.stderr and "valid: 0-2" in r.stderr and flag in r.stderr, r.stderr
    r = run_batch(tmp_path / "bad", "ok1", devices=3, extra=["--gpus", "0", "--devices", "1"])
    assert r.returncode == 2 and "disagree" in r.stderr


def test_hanging_op_times_out_and_the_rest_finish(tmp_path):
    tag = uuid.uuid4().hex
    r = run_batch(tmp_path / "b", "hang,ok1,ok2,ok3", extra=["--timeout", "3"], tag=tag)
    assert r.returncode == 1, r.stdout + r.stderr
    rows = by_op(ops_status_rows(tmp_path / "b"))
    assert rows["hang"]["status"] == "timeout"
    assert 2.5 < float(rows["hang"]["seconds"]) < 20
    assert all(rows[o]["status"] == "passed" for o in ("ok1", "ok2", "ok3"))
    # Nothing of the hung op survives it.
    assert tagged_pids(tag) == []


def test_crashing_op_is_recorded_and_the_rest_finish(tmp_path):
    r = run_batch(tmp_path / "b", "crash,ok1,fail,ok2")
    assert r.returncode == 1
    rows = by_op(ops_status_rows(tmp_path / "b"))
    assert rows["crash"]["status"] == "crashed" and rows["crash"]["signal"] == "11"
    assert rows["fail"]["status"] == "failed" and rows["fail"]["exit_code"] == "1"
    assert rows["ok1"]["status"] == rows["ok2"]["status"] == "passed"
    assert "crashed" in r.stdout and "4 ops:" in r.stdout


def test_interrupt_then_resume_passes_every_op_exactly_once(tmp_path):
    out = tmp_path / "b"
    ops = "sleep,ok1,ok2,ok3,ok4,plant,probe"
    tag = uuid.uuid4().hex
    # `sleep` also starts a process in a session of its own: the Ctrl-Cs must take it too.
    p = subprocess.Popen(batch_argv(out, ops), env=env_for(2, tag, ZL_SLEEP_OP_SECONDS=3, ZL_SLEEP_OP_ESCAPE=60),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wait_for_rows(out, 1)  # one op done, `sleep` still in flight
    p.send_signal(signal.SIGINT)
    time.sleep(0.05)
    p.send_signal(signal.SIGINT)  # a second Ctrl-C must not corrupt anything
    output, _ = p.communicate(timeout=60)
    assert p.returncode == 130, output
    rows = ops_status_rows(out)
    assert any(x["status"] == "interrupted" for x in rows), output
    assert tagged_pids(tag) == []
    assert "not run" in output or len(rows) < 7

    r = run_batch(out, ops, extra=["--resume"])
    assert r.returncode == 0, r.stdout + r.stderr
    rows = ops_status_rows(out)
    passed = [x["op"] for x in rows if x["status"] == "passed"]
    assert sorted(passed) == sorted(ops.split(",")), rows
    for x in rows:
        if x["status"] != "passed":
            assert x["status"] == "interrupted"
    # The interrupted runs' directories were moved aside, not overwritten (an
    # op stopped before its run made a directory has nothing to move).
    interrupted = [x["op"] for x in rows if x["status"] == "interrupted"]
    moved = sorted(p.name for p in (out / "runs").glob("*.attempt*"))
    assert set(moved) <= {op + ".attempt1" for op in interrupted}, (moved, interrupted)
    for x in rows:
        if x["status"] == "passed":
            assert (out / x["run_dir"] / "run_identity.json").exists()
    # A third pass has nothing left to do.
    r = run_batch(out, ops, extra=["--resume"])
    assert r.returncode == 0 and "0 to run" in r.stdout
    assert len(ops_status_rows(out)) == len(rows)


def test_status_csv_parses_after_a_kill_at_a_random_moment(tmp_path):
    # A fresh moment each time; the seed is printed (shown on failure) and
    # ZL_BATCH_SEED replays it.
    seed = int(os.environ.get("ZL_BATCH_SEED", time.time_ns() % 1_000_000))
    print("ZL_BATCH_SEED =", seed)
    rng = random.Random(seed)
    ops = "ok1,ok2,ok3,ok4,sleep,fail"
    out = tmp_path / "b"
    for attempt in range(5):
        tag = uuid.uuid4().hex
        extra = ["--resume"] if attempt else []
        p = subprocess.Popen(batch_argv(out, ops, extra=extra), env=env_for(2, tag), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.1, 2.5))
        p.send_signal(signal.SIGKILL if attempt % 2 == 0 else signal.SIGINT)
        p.wait(timeout=60)
        kill_tagged(tag)  # a SIGKILLed batch cannot stop its children itself
        if (out / "ops_status.csv").exists():
            ops_status_rows(out)
    r = run_batch(out, ops, extra=["--resume"])
    assert r.returncode == 1, r.stdout + r.stderr  # `fail` fails
    rows = ops_status_rows(out)
    passed = sorted(x["op"] for x in rows if x["status"] == "passed")
    assert passed == ["ok1", "ok2", "ok3", "ok4", "sleep"]
    assert by_op(rows)["fail"]["status"] == "failed"


def test_busy_device_is_skipped_with_the_reason_logged(tmp_path):
    r = run_batch(tmp_path / "b", "ok1,ok2,ok3", devices=2, ZL_FAKE_BUSY="1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert {x["device_index"] for x in ops_status_rows(tmp_path / "b")} == {"0"}
    log = (tmp_path / "b" / "batch.log").read_text()
    assert "device 1 (FAKE-0001) busy: utilization 97% > 10%, memory in use 8192 MiB > 2048 MiB" in log

    r = run_batch(tmp_path / "c", "ok1,ok2", devices=2, ZL_FAKE_BUSY="01",
                  extra=["--busy-recheck", "0.2", "--busy-give-up", "1"])
    assert r.returncode == 1
    rows = ops_status_rows(tmp_path / "c")
    assert [x["status"] for x in rows] == ["skipped", "skipped"] and "no idle device" in rows[0]["reason"]

    r = run_batch(tmp_path / "d", "ok1", devices=2, ZL_FAKE_BUSY="01", extra=["--no-idle-check"])
    assert r.returncode == 0

    # Compile-ahead lanes would slow whatever somebody else times there: no pass.
    r = run_batch(tmp_path / "e", "ok1", devices=2, ZL_FAKE_BUSY="1", extra=["--compile-ahead", "2"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "compile-ahead: off: device 1 (FAKE-0001) busy: utilization 97% > 10%" in r.stdout
    assert not (tmp_path / "e" / "compile").exists()

    # One lane asked for compiles nothing beside another: said, not silent.
    r = run_batch(tmp_path / "f", "ok1", devices=1, extra=["--compile-ahead", "1"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "compile-ahead: off: 1 lane (--compile-ahead) compiles nothing beside another; 2 or more, or auto" \
        in r.stdout, r.stdout
    assert not (tmp_path / "f" / "compile").exists()


def test_parallel_warmup_runs_a_first_pass_and_says_where(tmp_path):
    r = run_batch(tmp_path / "b", "ok1,ok2,ok3", devices=2, PARALLEL_WARMUP_GPUS=1)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = ops_status_rows(tmp_path / "b")
    assert all(x["warmed_on"] == "FAKE-0000" for x in rows)
    for x in rows:
        assert (tmp_path / "b" / "warmup" / x["op"] / "run_identity.json").exists()
        ident = (tmp_path / "b" / x["run_dir"] / "run_identity.json").read_text()
        assert "FAKE-0000" in ident and '"warmed": true' in ident
    # A crash in the warm-up ends that op there; the others go on.
    r = run_batch(tmp_path / "c", "crash,ok1", devices=2, extra=["--parallel-warmup-gpus", "2"])
    rows = by_op(ops_status_rows(tmp_path / "c"))
    assert rows["crash"]["status"] == "crashed" and rows["crash"]["run_dir"] == "warmup/crash"
    assert rows["ok1"]["status"] == "passed" and rows["ok1"]["warmed_on"]


def test_ops_file_yaml_and_refusals(tmp_path):
    f = tmp_path / "ops.yaml"
    f.write_text("ops:\n  - ok1\n  - name: ok2\n    dtypes: [float32]\n")
    r = subprocess.run([*batch_argv(tmp_path / "b", "x")[:6], "--ops-file", str(f),
                        *batch_argv(tmp_path / "b", "x")[8:]], env=env_for(2), capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(x["op"] for x in ops_status_rows(tmp_path / "b")) == ["ok1", "ok2"]
    # An existing batch is never overwritten without --resume.
    r = run_batch(tmp_path / "b", "ok1")
    assert r.returncode == 2 and "--resume" in r.stderr
    r = run_batch(tmp_path / "e", "ok1,ok1")
    assert r.returncode == 2 and "listed twice" in r.stderr


def test_compile_ahead_runs_each_op_once_unmeasured_then_times_it_and_the_next_batch_skips_it(tmp_path):
    import json

    from zltest import FAKEGEMS_SUITE, STUBS

    env = dict(PYTHONPATH=str(STUBS / "gpu"), ZL_FAKE_TORCH_DEVICE="cuda", TRITON_CACHE_DIR=str(tmp_path / "triton"))
    ops = "abs,clustermm,crash"
    r = run_batch(tmp_path / "b", ops, devices=1, suite=FAKEGEMS_SUITE, extra=["--compile-ahead", "2"], **env)
    assert r.returncode == 1, r.stdout + r.stderr  # crash fails in both passes
    assert "compile-ahead pass: 3 ops, 2 at a time" in r.stdout
    ident = json.loads((tmp_path / "b" / "batch_identity.json").read_text())
    done = ident["compile_ahead"]
    assert (done["lanes"], done["ops"], done["compiled"], done["failed"], done["off"]) == (2, 3, 2, 1, None)
    assert done["triton_cache"] == str(tmp_path / "triton") and done["devices"] == ["FAKE-0000"]
    # Each op's compile-only run has its own directory and measured nothing;
    # its row is the timed run's.
    for op in ("abs", "clustermm"):
        run = json.loads((tmp_path / "b" / "compile" / op / "run_identity.json").read_text())
        assert run["status"] == "passed" and run["rows"] == 0 and run["env"]["ZL_COMPILE_ONLY"] == "1"
    rows = by_op(ops_status_rows(tmp_path / "b"))
    assert {op: row["status"] for op, row in rows.items()} == {"abs": "passed", "clustermm": "passed",
                                                               "crash": "failed"}
    assert all(row["run_dir"] == "runs/" + op for op, row in rows.items())
    timed = json.loads((tmp_path / "b" / "runs" / "clustermm" / "run_identity.json").read_text())
    assert timed["rows"] > 0 and "ZL_COMPILE_ONLY" not in timed["env"]
    assert len(list((tmp_path / "triton" / "zlcore-compiled").iterdir())) == 2

    # The next batch on that cache compiles only what did not go through.
    r = run_batch(tmp_path / "c", ops, devices=1, suite=FAKEGEMS_SUITE, extra=["--compile-ahead", "2"], **env)
    assert "compile-ahead pass: 1 ops, 1 at a time (2 compiled by an earlier batch)" in r.stdout, r.stdout
    # Off (compile_ahead_test.cpp: also where each run has a tuner cache of its own): the same rows.
    r = run_batch(tmp_path / "d", ops, devices=1, suite=FAKEGEMS_SUITE, extra=["--no-compile-ahead"], **env)
    assert r.returncode == 1 and not (tmp_path / "d" / "compile").exists()
    assert {op: row["status"] for op, row in by_op(ops_status_rows(tmp_path / "d")).items()} == {
        op: row["status"] for op, row in rows.items()}
    off = json.loads((tmp_path / "d" / "batch_identity.json").read_text())["compile_ahead"]
    assert off["lanes"] == 0 and off["off"] == "0 lanes (--no-compile-ahead)"
