"""Warm workers end to end: `zlcore batch` (warm by default) against `--cold`.

Run by ctest (warm_e2e), which sets ZLCORE, ZL_VENDOR_DIR and ZL_SOURCE_DIR.
One fake device, so every op of a batch goes through the same worker and the
isolation claims are actually exercised.
"""

import json
import uuid
from pathlib import Path

import pytest

import zltest
from zltest import (EXAMPLE_SUITE, FAULT_SUITE, VENDOR, ZLCORE, batch_identity, clean_env, identity,
                    ops_status as rows, read_jsonl, run_pytest, tagged_pids)

EXAMPLE_OPS = "abs,add,mm,mul,exp,softmax,sum,layer_norm"

pytestmark = pytest.mark.skipif(not (ZLCORE and VENDOR), reason="run through ctest (needs ZLCORE, ZL_VENDOR_DIR)")


def run_batch(out, ops, suite=FAULT_SUITE, extra=(), devices=1, **env):
    """A batch on `devices` fake devices, none busy, no parallel warm-up, the worker's default pre-imports."""
    env = clean_env(strip_names=("ZL_FAKE_BUSY", "PARALLEL_WARMUP_GPUS", "ZL_WORKER_PREIMPORT", "ZL_WORKER_STANDBY",
                                 "ZL_WORKER_STANDBY_PREIMPORT"),
                    **{"ZL_FAKE_DEVICE_COUNT": devices, **env})
    return zltest.zl("batch", "--backend", "fakegpu", "--ops", ops, "--flaggems-dir", suite, "--python",
                     "/usr/bin/python3", "--level", "core", "--timer", "host", "--out", out, *extra, env=env,
                     backend_dir=VENDOR)


def shapes(out, op):
    """(dtype, shape) of every result row, in order, without the numbers."""
    return [(r.get("dtype"), json.dumps(r.get("shape"), sort_keys=True))
            for r in read_jsonl(Path(out) / "runs" / op / "results.jsonl")]


def test_warm_and_cold_give_the_same_shapes_and_statuses(tmp_path):
    warm = run_batch(tmp_path / "w", EXAMPLE_OPS, suite=EXAMPLE_SUITE, extra=["--dtypes", "float32"])
    cold = run_batch(tmp_path / "c", EXAMPLE_OPS, suite=EXAMPLE_SUITE, extra=["--dtypes", "float32", "--cold"])
    assert warm.returncode == 0, warm.stdout + warm.stderr
    assert cold.returncode == 0, cold.stdout + cold.stderr
    w, c = rows(tmp_path / "w"), rows(tmp_path / "c")
    assert sorted(w) == sorted(c) == sorted(EXAMPLE_OPS.split(","))
    for op in w:
        assert (w[op]["status"], w[op]["exit_code"], w[op]["test_node"]) == \
            (c[op]["status"], c[op]["exit_code"], c[op]["test_node"]), op
        assert shapes(tmp_path / "w", op) == shapes(tmp_path / "c", op) != [], op
        assert identity(tmp_path / "c", op)["worker"]["kind"] == "cold"
    warm_ids = [identity(tmp_path / "w", op)["worker"] for op in EXAMPLE_OPS.split(",")]
    assert all(x["kind"] == "warm" for x in warm_ids)
    # One device, one worker: it ran them all, counting up.
    assert len({x["pid"] for x in warm_ids}) == 1
    assert sorted(x["ops_before"] for x in warm_ids) == list(range(8))
    assert batch_identity(tmp_path / "w")["executor"] == "warm"
    assert batch_identity(tmp_path / "c")["executor"] == "cold"


def test_crash_costs_only_its_op_and_the_worker_is_replaced(tmp_path):
    r = run_batch(tmp_path / "b", "ok1,crash,ok2,ok3")
    assert r.returncode == 1, r.stdout + r.stderr
    x = rows(tmp_path / "b")
    assert x["crash"]["status"] == "crashed" and x["crash"]["signal"] == "11", x["crash"]
    assert all(x[o]["status"] == "passed" for o in ("ok1", "ok2", "ok3"))
    before, after = identity(tmp_path / "b", "ok1")["worker"], identity(tmp_path / "b", "ok2")["worker"]
    # The worker died under it, so it ran once more in a fresh process (where
    # it crashes again); the warm attempt is kept beside the rerun.
    assert x["crash"]["attempt"] == "2" and "rerun in a fresh process" in x["crash"]["reason"], x["crash"]
    crashed = identity(tmp_path / "b", "crash.warm")
    assert crashed["worker"]["kind"] == "warm" and crashed["worker"]["pid"] == before["pid"]
    assert crashed["child_signal"] == 11
    assert identity(tmp_path / "b", "crash")["worker"]["kind"] == "cold"
    assert after["kind"] == "warm" and after["pid"] != before["pid"] and after["ops_before"] == 0
    assert "Segmentation fault" in (tmp_path / "b" / "runs" / "crash.warm" / "pytest.log").read_text()


def test_a_worker_that_exits_under_an_op_is_replaced_and_the_op_rerun_fresh(tmp_path):
    # os._exit(3) under pytest: the worker sends no reply, and its exit
    # status is not pytest's answer about the op.
    r = run_batch(tmp_path / "b", "ok1,crash,ok2", ZL_CRASH_EXIT="3")
    assert r.returncode == 1, r.stdout + r.stderr
    x = rows(tmp_path / "b")
    assert x["crash"]["attempt"] == "2" and "rerun in a fresh process" in x["crash"]["reason"], x["crash"]
    assert "exited (status 3) with the op in flight" in x["crash"]["reason"], x["crash"]
    assert (x["crash"]["status"], x["crash"]["exit_code"]) == ("failed", "3"), x["crash"]
    warm = identity(tmp_path / "b", "crash.warm")
    assert warm["worker"]["kind"] == "warm" and warm["worker"]["healthy"] is False, warm["worker"]
    assert x["ok2"]["status"] == "passed"
    assert identity(tmp_path / "b", "ok2")["worker"]["pid"] != identity(tmp_path / "b", "ok1")["worker"]["pid"]


def test_hang_is_killed_by_the_timeout_and_the_worker_replaced(tmp_path):
    tag = uuid.uuid4().hex
    r = run_batch(tmp_path / "b", "ok1,hang,ok2", extra=["--timeout", "3"], ZL_BATCH_TEST_TAG=tag)
    assert r.returncode == 1, r.stdout + r.stderr
    x = rows(tmp_path / "b")
    assert x["hang"]["status"] == "timeout" and 2.5 < float(x["hang"]["seconds"]) < 20
    assert x["ok1"]["status"] == x["ok2"]["status"] == "passed"
    hung, after = identity(tmp_path / "b", "hang")["worker"], identity(tmp_path / "b", "ok2")["worker"]
    assert hung["kind"] == after["kind"] == "warm" and hung["pid"] != after["pid"]
    assert tagged_pids(tag) == []  # no worker, no run outlives the batch


@pytest.mark.parametrize("preimport", ["", "numgems"])
def test_state_planted_by_one_op_is_not_seen_by_the_next(tmp_path, preimport):
    # "": numgems is imported by the op and purged after it; "numgems": it is
    # shared (pre-imported, like flag_gems) and its module globals are restored.
    r = run_batch(tmp_path / "b", "plant,probe,ok1", ZL_WORKER_PREIMPORT=preimport)
    assert r.returncode == 0, r.stdout + r.stderr + (tmp_path / "b" / "runs" / "probe" / "pytest.log").read_text()
    x = rows(tmp_path / "b")
    assert all(x[o]["status"] == "passed" for o in ("plant", "probe", "ok1"))
    plant, probe = identity(tmp_path / "b", "plant")["worker"], identity(tmp_path / "b", "probe")["worker"]
    assert plant["kind"] == probe["kind"] == "warm" and plant["pid"] == probe["pid"]
    assert probe["ops_before"] == plant["ops_before"] + 1


def test_probe_does_see_planted_state_without_the_reset(tmp_path):
    # The fixture works: in one plain pytest process, probe after plant fails.
    r = run_pytest(["-q", "benchmark/test_plant.py", "benchmark/test_probe.py", "--level", "core"], FAULT_SUITE,
                   None, timeout=60)
    assert r.returncode == 1 and "carries state an earlier op planted" in r.stdout, r.stdout + r.stderr


def test_memory_our_own_worker_holds_does_not_make_the_device_busy(tmp_path):
    # On the H200 a warm worker keeps ~3 GiB resident between ops; counted as
    # somebody else's, it stalled the batch until the busy give-up.
    hold = tmp_path / "held"
    fast = ["--busy-recheck", "0.2", "--busy-give-up", "2"]
    r = run_batch(tmp_path / "b", "ok1,ok2,ok3", extra=fast, ZL_WORKER_PREIMPORT="devicehold",
                  ZL_FAKE_HOLD_FILE=hold)
    assert r.returncode == 0, r.stdout + r.stderr
    assert hold.exists(), "the worker never imported devicehold"
    assert all(x["status"] == "passed" for x in rows(tmp_path / "b").values())
    assert "busy" not in (tmp_path / "b" / "batch.log").read_text()

    # The same memory with no worker of ours behind it still means busy.
    r = run_batch(tmp_path / "c", "ok1", extra=fast + ["--cold"], ZL_FAKE_HOLD_FILE=hold)
    assert r.returncode == 1
    assert rows(tmp_path / "c")["ok1"]["status"] == "skipped"
    assert "memory in use 4096 MiB > 2048 MiB" in (tmp_path / "c" / "batch.log").read_text()


def test_the_worker_imports_with_what_triton_reads_at_import(tmp_path):
    # Triton decides at decoration (import) whether a @triton.autotune keeps
    # its winners on disk. Set only per op, the switch came after flag_gems'
    # import in the worker, and layer_norm re-tuned in every batch
    # on a cache that held its winners.
    seen = tmp_path / "seen"
    r = run_batch(tmp_path / "b", "ok1", ZL_WORKER_PREIMPORT="importenv", ZL_FAKE_IMPORT_ENV_FILE=seen,
                  TRITON_CACHE_AUTOTUNING=None)
    assert r.returncode == 0, r.stdout + r.stderr
    assert identity(tmp_path / "b", "ok1")["worker"]["kind"] == "warm"
    assert seen.read_text() == "1"
    # The user's own value, 0 included, is what the worker imports with.
    r = run_batch(tmp_path / "c", "ok1", ZL_WORKER_PREIMPORT="importenv", ZL_FAKE_IMPORT_ENV_FILE=seen,
                  TRITON_CACHE_AUTOTUNING="0")
    assert r.returncode == 0, r.stdout + r.stderr
    assert seen.read_text() == "0"


def test_isolated_tuner_cache_runs_cold_and_says_why(tmp_path):
    r = run_batch(tmp_path / "b", "ok1", extra=["--isolate-tuner-cache", "1"])
    assert r.returncode == 0, r.stdout + r.stderr
    w = identity(tmp_path / "b", "ok1")["worker"]
    assert w["kind"] == "cold" and "isolated tuner cache" in w["reason"]


def worker_log_lines(out, generation):
    return [json.loads(line) for line in (Path(out) / "workers" / f"device0-{generation}.log").read_text().splitlines()
            if line.startswith("{")]


STANDBY_ENV = dict(ZL_WORKER_STANDBY="1", ZL_WORKER_PREIMPORT="importlog_early,importlog_late",
                   ZL_WORKER_STANDBY_PREIMPORT="importlog_early")


def test_a_retired_worker_is_replaced_by_the_standby_that_waited_imported(tmp_path):
    log, tag = tmp_path / "imports.log", uuid.uuid4().hex
    r = run_batch(tmp_path / "b", "ok1,ok2,crash,ok3,ok4", ZL_FAKE_IMPORT_LOG=log, ZL_BATCH_TEST_TAG=tag,
                  **STANDBY_ENV)
    assert r.returncode == 1, r.stdout + r.stderr
    x = rows(tmp_path / "b")
    assert [x[o]["status"] for o in ("ok1", "ok2", "ok3", "ok4")] == ["passed"] * 4
    assert x["crash"]["status"] == "crashed"
    first = identity(tmp_path / "b", "ok1")["worker"]
    taken = identity(tmp_path / "b", "ok3")["worker"]
    assert first["standby"] is False and taken["standby"] is True and taken["ops_before"] == 0
    assert taken["pid"] != first["pid"] == identity(tmp_path / "b", "crash.warm")["worker"]["pid"]
    # ok1 started the standby (generation 2); it imported the device-free
    # module while it waited and the rest only once ok3 connected.
    standby = worker_log_lines(tmp_path / "b", 2)
    assert standby[0]["worker"] == taken["pid"] and standby[0]["standby"] is True
    assert standby[0]["imported"] == ["importlog_early"]
    assert "took_over_after_s" in standby[1] and standby[1]["imported"] == ["importlog_late"]
    imports = log.read_text().split("\n")
    assert f"importlog_late {taken['pid']}" in imports and imports.count(f"importlog_early {taken['pid']}") == 1
    # ok4 ran on the standby turned worker, and no worker outlives the batch.
    assert identity(tmp_path / "b", "ok4")["worker"]["pid"] == taken["pid"]
    assert batch_identity(tmp_path / "b")["standby_worker"] is True
    assert tagged_pids(tag) == []


def test_the_standby_starts_with_the_first_op_so_the_second_finds_it(tmp_path):
    # The first op crashes and retires the device's first worker; the op
    # after it is served by a standby begun beside that worker, not by a
    # fresh worker that pays the whole start.
    r = run_batch(tmp_path / "b", "crash,ok1", ZL_FAKE_IMPORT_LOG=tmp_path / "imports.log", **STANDBY_ENV)
    assert r.returncode == 1, r.stdout + r.stderr
    assert rows(tmp_path / "b")["ok1"]["status"] == "passed"
    ok1 = identity(tmp_path / "b", "ok1")["worker"]
    assert ok1["standby"] is True and ok1["ops_before"] == 0
    assert worker_log_lines(tmp_path / "b", 2)[0]["standby"] is True


def test_two_retirements_in_a_row_both_find_a_standby(tmp_path):
    # crash retires ok2's worker; poison runs on the standby, which leaves
    # with it; ok3 still finds a standby, started when poison took over.
    r = run_batch(tmp_path / "b", "ok1,ok2,crash,poison,ok3", ZL_FAKE_IMPORT_LOG=tmp_path / "imports.log",
                  **STANDBY_ENV)
    assert r.returncode == 1, r.stdout + r.stderr
    x = rows(tmp_path / "b")
    assert x["ok3"]["status"] == "passed", x["ok3"]
    poison, ok3 = identity(tmp_path / "b", "poison")["worker"], identity(tmp_path / "b", "ok3")["worker"]
    assert poison["standby"] is True and ok3["standby"] is True and ok3["pid"] != poison["pid"]
    assert ok3["ops_before"] == 0


def test_a_host_timed_batch_starts_no_standby_unless_asked(tmp_path):
    # The host timer's clock is the CPU, which a standby's imports would share.
    r = run_batch(tmp_path / "b", "ok1,ok2,ok3")
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(p.name for p in (tmp_path / "b" / "workers").iterdir()) == ["device0-1.log"]
    assert batch_identity(tmp_path / "b")["standby_worker"] is False
    r = run_batch(tmp_path / "c", "ok1", ZL_WORKER_STANDBY="sometimes")
    assert r.returncode == 2
    assert "ZL_WORKER_STANDBY='sometimes' is not allowed; use auto, 1 (on) or 0 (off)" in r.stderr
    assert not (tmp_path / "c").exists()


def test_zlcore_run_stays_cold(tmp_path):
    r = zltest.zl("run", "--backend", "fakegpu", "--op", "ok1", "--flaggems-dir", FAULT_SUITE, "--python",
                  "/usr/bin/python3", "--level", "core", "--timer", "host", "--out", tmp_path / "r", "--quiet",
                  env=clean_env(ZL_FAKE_DEVICE_COUNT="1"), timeout=60, backend_dir=VENDOR)
    assert r.returncode == 0, r.stdout + r.stderr
    ident = identity(tmp_path / "r")
    assert ident["worker"] == {"kind": "cold", "ops_before": 0}
