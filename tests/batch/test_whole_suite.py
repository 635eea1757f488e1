"""The whole suite as a user runs it: ops are marks, statuses say what happened,
and a warm worker that an op poisoned is replaced without costing the ops after it.

Run by ctest (batch_e2e.test_whole_suite), which sets ZLCORE, ZL_VENDOR_DIR and ZL_SOURCE_DIR.
"""

import json
from pathlib import Path

import pytest

import zltest
from zltest import EXAMPLE_SUITE, FAULT_SUITE, VENDOR, ZLCORE, identity, ops_status as rows, read_jsonl

pytestmark = pytest.mark.skipif(not (ZLCORE and VENDOR), reason="run through ctest (needs ZLCORE, ZL_VENDOR_DIR)")
# Selectors a caller may have exported, and the fake backend's busy list: none may reach these batches.
STRIP_NAMES = ("ZL_FAKE_BUSY", "PARALLEL_WARMUP_GPUS", "OP", "OP_FILE", "TEST_NODE")


def zl(tmp_path, *args, timeout=120):
    """zlcore --backend-dir VENDOR ARGS: one fake device, the suite index cached under tmp_path."""
    env = zltest.clean_env(strip_names=STRIP_NAMES, ZL_FAKE_DEVICE_COUNT="1", ZL_CACHE_DIR=tmp_path / "cache")
    return zltest.zl(*args, env=env, timeout=timeout, backend_dir=VENDOR)


def batch(tmp_path, out, ops, suite=FAULT_SUITE, extra=()):
    return zl(tmp_path, "batch", "--backend", "fakegpu", "--ops", ops, "--flaggems-dir", str(suite), "--python",
              "/usr/bin/python3", "--level", "core", "--dtypes", "float32", "--timer", "host", "--out", str(out),
              *extra)


def run(tmp_path, out, *args, suite=FAULT_SUITE):
    return zl(tmp_path, "run", "--backend", "fakegpu", "--flaggems-dir", str(suite), "--python", "/usr/bin/python3",
              "--level", "core", "--dtypes", "float32", "--timer", "host", "--out", str(out), *args)


def result_ops(run_dir):
    return sorted({row["op"] for row in read_jsonl(Path(run_dir) / "results.jsonl")})


def marks(tmp_path, suite):
    p = zl(tmp_path, "ops", "--flaggems-dir", str(suite), "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["ops"]


# -- ops are the suite's marks --------------------------------------------------------------


def test_ops_lists_every_mark_with_the_files_that_hold_it(tmp_path):
    ops = marks(tmp_path, FAULT_SUITE)
    assert ops["bits_and"]["files"] == ["benchmark/test_bits.py"]
    assert ops["twin_b"]["files"] == ["benchmark/test_twins.py"]
    assert "bits" not in ops and "parametrize" not in ops
    assert {"crash", "ok1", "declines", "halfway", "poison"} <= set(ops)
    # The second listing comes from the cache and says the same.
    assert list((tmp_path / "cache" / "suite-index").glob("*.json"))
    assert marks(tmp_path, FAULT_SUITE) == ops
    text = zl(tmp_path, "ops", "--flaggems-dir", str(FAULT_SUITE))
    assert "twin_b" in text.stdout and "ops in" in text.stdout


def test_run_resolves_a_mark_wherever_it_lives(tmp_path):
    p = run(tmp_path, tmp_path / "r1", "--op", "twin_b")
    assert p.returncode == 0, p.stdout + p.stderr
    ident = identity(tmp_path / "r1")
    assert ident["test_node"] == "benchmark/test_twins.py" and ident["marker"] == "twin_b"
    assert result_ops(tmp_path / "r1") == ["twin_b"]


def test_an_unknown_op_fails_preflight_and_names_the_closest_marks(tmp_path):
    p = run(tmp_path, tmp_path / "r2", "--op", "bits")
    assert p.returncode == 3, p.stdout + p.stderr
    assert "PREFLIGHT_FAILED check=benchmark_file" in p.stderr
    assert "closest: bits_and, bits_or" in p.stderr
    assert not (tmp_path / "r2").exists()
    p = run(tmp_path, tmp_path / "r3", "--op", "../../x")
    assert p.returncode == 2 and "letters, digits and '_'" in p.stderr


def test_op_file_alone_runs_and_records_every_mark_it_holds(tmp_path):
    p = run(tmp_path, tmp_path / "r4", "--op-file", "benchmark/test_bits.py")
    assert p.returncode == 0, p.stdout + p.stderr
    assert identity(tmp_path / "r4")["marks"] == ["bits_and", "bits_or"]
    assert result_ops(tmp_path / "r4") == ["bits_and", "bits_or"]


def test_ops_all_and_file_lines_expand_to_marks(tmp_path):
    expected = sorted(marks(tmp_path, EXAMPLE_SUITE))
    p = batch(tmp_path, tmp_path / "all", "all", suite=EXAMPLE_SUITE)
    assert p.returncode == 0, p.stdout + p.stderr
    got = rows(tmp_path / "all")
    assert sorted(got) == expected
    assert all(r["status"] == "passed" for r in got.values()), got

    # `all` inside a list is the op of that name (FlagGems has one): no expansion.
    p = zl(tmp_path, "batch", "--backend", "fakegpu", "--ops", "ok1,all", "--flaggems-dir", str(FAULT_SUITE),
           "--python", "/usr/bin/python3", "--level", "core", "--timer", "host", "--out", str(tmp_path / "a"))
    assert sorted(rows(tmp_path / "a")) == ["all", "ok1"], p.stdout + p.stderr

    ops_file = tmp_path / "ops.txt"
    ops_file.write_text("# a file line expands to its marks\nbenchmark/test_bits.py\nok1\n")
    p = zl(tmp_path, "batch", "--backend", "fakegpu", "--ops-file", str(ops_file), "--flaggems-dir",
           str(FAULT_SUITE), "--python", "/usr/bin/python3", "--level", "core", "--timer", "host", "--out",
           str(tmp_path / "f"))
    assert p.returncode == 0, p.stdout + p.stderr
    got = rows(tmp_path / "f")
    assert sorted(got) == ["bits_and", "bits_or", "ok1"]
    assert got["bits_or"]["test_node"] == "benchmark/test_bits.py"
    p = zl(tmp_path, "batch", "--backend", "fakegpu", "--ops", "benchmark/test_nothing_here.py", "--flaggems-dir",
           str(FAULT_SUITE), "--out", str(tmp_path / "g"))
    assert p.returncode == 2 and "test_nothing_here.py" in p.stderr
    assert not (tmp_path / "g").exists()


# -- statuses ---------------------------------------------------------------------------------


def test_statuses_say_what_happened(tmp_path):
    p = batch(tmp_path, tmp_path / "s", "declines,halfway,partly,bits_and")
    assert p.returncode == 1, p.stdout + p.stderr  # partial fails the batch
    got = rows(tmp_path / "s")
    assert got["declines"]["status"] == "unsupported" and got["declines"]["exit_code"] == "6"
    assert "can't be supported by this op 'declines'" in got["declines"]["reason"]
    assert got["halfway"]["status"] == "partial"
    assert "test_halfway_breaks" in got["halfway"]["reason"] and "test_halfway_measures" not in got["halfway"]["reason"]
    assert got["partly"]["status"] == "passed" and "declined" in got["partly"]["reason"]
    assert got["bits_and"]["status"] == "passed"
    ident = identity(tmp_path / "s" / "runs" / "halfway")
    assert ident["status"] == "partial"
    assert ident["tests"]["declined"] == ["benchmark/test_halfway.py::test_halfway_declines"]
    summary = p.stdout[p.stdout.index("op "):]
    assert "1 partial" in summary and "2 passed" in summary and "1 unsupported" in summary

    # Passed and unsupported only: the batch exits 0, and --resume has nothing to do.
    p = batch(tmp_path, tmp_path / "s2", "declines,bits_and")
    assert p.returncode == 0, p.stdout + p.stderr
    p = batch(tmp_path, tmp_path / "s2", "declines,bits_and", extra=["--resume"])
    assert p.returncode == 0 and "0 to run" in p.stdout, p.stdout


def test_run_exit_codes_follow_the_status(tmp_path):
    assert run(tmp_path, tmp_path / "u", "--op", "declines").returncode == 6
    assert run(tmp_path, tmp_path / "h", "--op", "halfway").returncode == 1
    assert identity(tmp_path / "u")["status"] == "unsupported"


# -- a poisoned warm worker ------------------------------------------------------------------


def test_a_poisoned_worker_is_replaced_and_the_ops_after_it_pass(tmp_path):
    p = batch(tmp_path, tmp_path / "w", "ok1,poison,ok2,fragile,ok3")
    assert p.returncode == 0, p.stdout + p.stderr
    got = rows(tmp_path / "w")
    assert all(r["status"] == "passed" for r in got.values()), got
    # poison measured: its result stands, and the worker it left unhealthy went.
    assert "the worker was replaced after it" in got["poison"]["reason"]
    assert "thread(s) running its code" in got["poison"]["reason"]
    runs = tmp_path / "w" / "runs"
    first, poisoned, after = (identity(runs / op)["worker"] for op in ("ok1", "poison", "ok2"))
    assert poisoned["healthy"] is False and first["healthy"] is True
    assert after["pid"] != poisoned["pid"] and after["ops_before"] == 0
    # fragile failed in the worker it poisoned: rerun once in a fresh process, where it passes.
    assert got["fragile"]["attempt"] == "2"
    assert "rerun in a fresh process" in got["fragile"]["reason"]
    assert identity(runs / "fragile")["worker"]["kind"] == "cold"
    assert identity(runs / "fragile.warm")["status"] == "failed"
    assert identity(runs / "ok3")["worker"]["kind"] == "warm"
