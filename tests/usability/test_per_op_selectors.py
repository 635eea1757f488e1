"""An exported TEST_NODE or OP_FILE must not take over a batch; run
refuses --op and --test-node that disagree; the identity says which
variables decided a choice."""
from conftest import FAULTS, PY, SUITE, VENDOR, clean_env, identity, zl


def batch(tmp_path, *extra, **env):
    return zl(tmp_path, "--backend-dir", VENDOR, "batch", "--backend", "fakegpu", "--timer", "host", "--flaggems-dir",
              SUITE, "--python", PY, "--dtypes", "float32", "--out", tmp_path / "b", *extra,
              env=clean_env(tmp_path, **env))


def test_a_batch_refuses_per_op_selectors_before_writing_anything(tmp_path):
    for var, value in (("TEST_NODE", "benchmark/test_abs.py::test_abs"), ("OP_FILE", "benchmark/test_abs.py"),
                       ("OP", "abs")):
        r = batch(tmp_path, "--ops", "mm", **{var: value})
        assert r.returncode == 2, r.stdout + r.stderr
        assert r.stderr.startswith(f"zlcore: {var}='{value}' is set, but it selects the op of one `zlcore run`")
        assert len(r.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "b").exists()
    # Without them the same batch runs mm as mm.
    r = batch(tmp_path, "--ops", "mm", "--cold")
    assert r.returncode == 0, r.stdout + r.stderr
    assert identity(tmp_path / "b" / "runs" / "mm")["op"] == "mm"


def test_run_refuses_an_op_and_a_node_that_disagree(tmp_path):
    base = ["run", "--backend", "host", "--flaggems-dir", SUITE, "--python", PY, "--out", tmp_path / "r"]
    r = zl(tmp_path, *base, "--op", "abs", "--test-node", "benchmark/test_mm.py")
    assert r.returncode == 2
    assert r.stderr == ("zlcore: --op abs and --test-node benchmark/test_mm.py (or OP / TEST_NODE) disagree: "
                        "benchmark/test_mm.py marks mm, and abs is marked in benchmark/test_abs.py; give one of them\n")
    # The same through the variables.
    r = zl(tmp_path, *base, env=clean_env(tmp_path, OP="abs", TEST_NODE="benchmark/test_mm.py::test_mm"))
    assert r.returncode == 2 and "disagree" in r.stderr
    r = zl(tmp_path, *base, "--op-file", "benchmark/test_abs.py", "--test-node", "benchmark/test_mm.py::test_mm")
    assert r.returncode == 2 and "is not in --op-file benchmark/test_abs.py" in r.stderr
    assert not (tmp_path / "r").exists()
    # A node in the op's own file is fine.
    r = zl(tmp_path, *base, "--op", "abs", "--test-node", "benchmark/test_abs.py::test_abs", "--dtypes", "float32")
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_identity_records_every_variable_that_decided_a_choice(tmp_path):
    env = clean_env(tmp_path, OP="abs", BENCH_LEVEL="core", ZL_ISOLATE_TUNER_CACHE="no", FLAGGEMS_DIR=str(SUITE))
    r = zl(tmp_path, "run", "--backend", "host", "--python", PY, "--dtypes", "float32", "--out", tmp_path / "r",
           "--level", "core", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    choices = identity(tmp_path / "r")["env_choices"]
    # --level was given: BENCH_LEVEL decided nothing and is not listed.
    assert choices == {"OP": "abs", "ZL_ISOLATE_TUNER_CACHE": "no", "FLAGGEMS_DIR": str(SUITE)}
    assert "from env     FLAGGEMS_DIR=" in r.stdout and "OP=abs" in r.stdout


def test_fault_suite_node_of_another_op_is_still_refused_when_the_op_is_exported(tmp_path):
    # On the fault suite too: OP exported, a node of another op given.
    r = zl(tmp_path, "run", "--backend", "host", "--flaggems-dir", FAULTS, "--python", PY, "--test-node",
           "benchmark/test_ok1.py", "--out", tmp_path / "r", env=clean_env(tmp_path, OP="fail"))
    assert r.returncode == 2 and "disagree" in r.stderr, r.stderr
