"""`zlcore run` end to end on the example suite (host backend, NumPy)."""
import json
import signal
import subprocess
import time

import pytest

import zltest
from zltest import EXAMPLE_SUITE as SUITE, FAULT_SUITE as FAULTS, PY, identity

# What a run must not inherit from the caller: zlcore's knobs and FlagGems' selectors.
STRIP = ("ZL_", "BENCH_LEVEL", "OP", "SHAPE_", "TEST_NODE")


def zl(*args, env=None, timeout=120):
    return zltest.zl(*args, env=zltest.clean_env(STRIP, **(env or {})), timeout=timeout)


def run_args(out, *extra, suite=SUITE, op="abs"):
    return ["run", "--backend", "host", "--flaggems-dir", str(suite), "--op", op, "--python", PY,
            "--dtypes", "float32", "--out", str(out), *extra]


def test_run_writes_the_whole_run_directory(tmp_path):
    r = zl(*run_args(tmp_path / "r"))
    assert r.returncode == 0, r.stdout + r.stderr
    d = tmp_path / "r"
    for f in ("run_identity.json", "header.txt", "shapes.yaml", "pytest.log", "results.jsonl", "kernels.csv"):
        assert (d / f).is_file(), f
    assert not (d / ".child").exists()
    ident = identity(d)
    for key in ("run_id", "backend", "device", "timer", "autotune", "test_node", "bench_level", "mode", "shapes",
                "tuner_cache", "versions", "env", "started", "ended", "status", "exit_code", "worker"):
        assert key in ident, key
    assert ident["status"] == "passed" and ident["exit_code"] == 0
    assert ident["backend"]["name"] == "host" and ident["device"]["index"] == 0
    assert ident["timer"]["name"] == "host"
    assert ident["timer"]["sides_extended"] == ident["timer"]["sides_unsettled"] == 0
    # the graph timer's clock check did not run, and the identity says why
    assert ident["timer"]["clock_check"]["active"] is False
    assert ident["timer"]["clock_check"]["why_off"] == "the graph timer is not in this run's plan"
    # where the run's time went: the timer inside the session inside the run
    timer = ident["timer"]
    assert 0 < timer["seconds_measuring"] < timer["seconds_in_session"] < ident["seconds"], timer
    # what the timers measured with, defaults included, so compare sees a changed default;
    # and five direct placements by default: the five values a side that compare's test needs
    assert ident["timer"]["settings"]["host_repeat"] >= 1 and ident["timer"]["settings"]["direct_repeat"] == 5
    assert ident["bench_level"] == "core" and ident["test_node"] == "benchmark/test_abs.py"
    assert ident["shapes"]["mode"] == "upstream" and len(ident["shapes"]["sha256"]) == 64
    assert ident["tuner_cache"]["kind"] == "shared"
    assert ident["versions"]["python"].count(".") == 2
    assert ident["worker"] == {"kind": "cold", "ops_before": 0}
    assert (d / "shapes.yaml").read_text().startswith("bench_level: core\n")
    rows = [json.loads(line) for line in (d / "results.jsonl").read_text().splitlines()]
    assert rows and all(r["op"] == "abs" and r["timer"] == "host" for r in rows)
    header = (d / "header.txt").read_text()
    assert "bench level  core" in header and header in r.stdout


@pytest.mark.parametrize(
    "args,check",
    [
        (["--flaggems-dir", "/nonexistent/gems"], "flaggems_dir"),
        (["--op", "no_such_op"], "benchmark_file"),
        (["--test-node", "benchmark/test_gone.py::test_gone"], "benchmark_file"),
        (["--shape-mode", "file", "--shape-file", "/nonexistent/shapes.yaml"], "shape_file"),
        (["--replay-from", "/nonexistent/run"], "replay_from"),
        (["--python", "/nonexistent/python3"], "python"),
    ],
)
def test_each_preflight_check_exits_3_with_its_name(tmp_path, args, check):
    base = ["run", "--backend", "host", "--flaggems-dir", str(SUITE), "--op", "abs", "--python", PY,
            "--out", str(tmp_path / "r")]
    # Later flags win in Boost.Program_options only once; build the argv by key.
    argv = list(base)
    for i in range(0, len(args), 2):
        if args[i] in argv:
            argv[argv.index(args[i]) + 1] = args[i + 1]
        else:
            argv += args[i:i + 2]
    if check == "benchmark_file" and "--test-node" in argv:
        j = argv.index("--op")
        del argv[j:j + 2]
    # How fast preflight fails is a benchmark's figure (make bench, "preflight"),
    # not a timed assertion a busy CI machine can trip.
    r = zl(*argv)
    assert r.returncode == 3, r.stdout + r.stderr
    assert r.stderr.startswith(f"PREFLIGHT_FAILED check={check} "), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists(), "a failed preflight must leave nothing behind"


def test_bench_level_is_validated_before_pytest(tmp_path):
    r = zl(*run_args(tmp_path / "r"), env={"BENCH_LEVEL": "exhaustive"})
    assert r.returncode == 2
    assert r.stderr.strip() == ("zlcore: BENCH_LEVEL (--level)='exhaustive' is not allowed; "
                                "use one of: core, comprehensive")
    assert not (tmp_path / "r").exists()
    # The flag wins over the variable.
    r = zl(*run_args(tmp_path / "r2", "--level", "core"), env={"BENCH_LEVEL": "exhaustive"})
    assert r.returncode == 0, r.stderr


def test_failing_benchmark_passes_pytests_exit_code_through(tmp_path):
    r = zl(*run_args(tmp_path / "r", suite=FAULTS, op="fail"))
    assert r.returncode == 1
    ident = identity(tmp_path / "r")
    assert ident["status"] == "failed" and ident["exit_code"] == 1
    # No test selected: pytest's 5 comes through too.
    r = zl(*run_args(tmp_path / "r5", "--test-node", "benchmark/test_abs.py::test_nothing_here"))
    assert r.returncode in (4, 5)
    assert identity(tmp_path / "r5")["exit_code"] == r.returncode


def test_crash_is_recorded_with_the_signal(tmp_path):
    r = zl(*run_args(tmp_path / "r", suite=FAULTS, op="crash"))
    assert r.returncode == 128 + signal.SIGSEGV
    ident = identity(tmp_path / "r")
    assert ident["status"] == "crashed" and ident["child_signal"] == signal.SIGSEGV
    assert "signal 11" in ident["error"]


def test_isolated_cache_is_dropped_and_the_identity_says_isolated(tmp_path):
    cache = tmp_path / "shared_cache"
    r = zl(*run_args(tmp_path / "r", "--isolate-tuner-cache", "1", op="mm"),
           env={"FLAGGEMS_CACHE_DIR": str(cache)})
    assert r.returncode == 0, r.stdout + r.stderr
    ident = identity(tmp_path / "r")
    assert ident["tuner_cache"]["kind"] == "isolated"
    assert ident["autotune"]["mode"] == "record"
    assert not (tmp_path / "r" / ".tuner_cache").exists()
    assert ident["tuner_cache"]["kept"] is False
    assert not cache.exists(), "an isolated run must not touch the shared cache"
    assert (tmp_path / "r" / "autotune_records").is_dir()


def test_kept_isolated_cache_holds_what_the_run_tuned(tmp_path):
    r = zl(*run_args(tmp_path / "r", "--isolate-tuner-cache", "1", "--keep-tuner-cache", op="mm"))
    assert r.returncode == 0, r.stdout + r.stderr
    ident = identity(tmp_path / "r")
    assert ident["tuner_cache"]["kept"] is True
    kept = tmp_path / "r" / ".tuner_cache"
    assert ident["tuner_cache"]["flaggems_dir"] == str(kept / "flaggems")
    assert any((kept / "flaggems").rglob("*.db"))  # the winners another tool can reuse


def test_shared_cache_second_run_inherits_winners(tmp_path):
    env = {"FLAGGEMS_CACHE_DIR": str(tmp_path / "cache")}
    assert zl(*run_args(tmp_path / "a", op="mm"), env=env).returncode == 0
    assert zl(*run_args(tmp_path / "b", op="mm"), env=env).returncode == 0
    a, b = identity(tmp_path / "a"), identity(tmp_path / "b")
    assert a["tuner_cache"]["winners_present"] == 0 and a["tuner_cache"]["new_winners"] > 0
    assert b["tuner_cache"]["winners_present"] == a["tuner_cache"]["new_winners"]
    assert b["tuner_cache"]["new_winners"] == 0
    assert b["tuner_cache"]["inherited_winners"] > 0


def test_existing_run_directory_is_refused(tmp_path):
    d = tmp_path / "r"
    d.mkdir()
    (d / "keep.txt").write_text("earlier numbers")
    r = zl(*run_args(d))
    assert r.returncode == 2
    assert "already exists" in r.stderr
    assert sorted(p.name for p in d.iterdir()) == ["keep.txt"]


def test_sigint_mid_run_leaves_no_child_and_an_interrupted_identity(tmp_path):
    env = zltest.clean_env(("ZL_",))
    p = subprocess.Popen([zltest.ZLCORE or "zlcore", *run_args(tmp_path / "r", suite=FAULTS, op="hang")], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = tmp_path / "r" / "pytest.log"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (log.exists() and "test_hang" in log.read_text()):
        time.sleep(0.1)
    assert log.exists(), "the child started and logs"
    time.sleep(1.0)  # into the hang
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=30)
    assert p.returncode == 130, out
    ident = identity(tmp_path / "r")
    assert ident["status"] == "interrupted"
    # Nothing of the child's process group is left.
    left = subprocess.run(["pgrep", "-f", str(tmp_path / "r")], capture_output=True, text=True).stdout.split()
    assert left == []


def test_timeout_kills_the_child_and_records_timeout(tmp_path):
    r = zl(*run_args(tmp_path / "r", "--timeout", "3", suite=FAULTS, op="hang"))
    assert r.returncode == 124
    assert identity(tmp_path / "r")["status"] == "timeout"


def test_unknown_backend_is_one_line_and_exit_2(tmp_path):
    r = zl("run", "--backend", "tpu", "--flaggems-dir", str(SUITE), "--op", "abs")
    assert r.returncode == 2
    assert r.stderr.startswith("zlcore: unknown backend 'tpu'") and len(r.stderr.splitlines()) == 1


def test_plain_autotune_winners_are_kept_in_the_tuner_cache_unless_the_user_says_otherwise(tmp_path, monkeypatch):
    # Without it every process re-tunes @triton.autotune kernels and two runs on one cache
    # may time different kernels (on the H200, every false verdict of an A/A: docs/results.md).
    monkeypatch.delenv("TRITON_CACHE_AUTOTUNING", raising=False)
    r = zl(*run_args(tmp_path / "unset"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert identity(tmp_path / "unset")["env"]["TRITON_CACHE_AUTOTUNING"] == "1"
    r = zl(*run_args(tmp_path / "off"), env={"TRITON_CACHE_AUTOTUNING": "0"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert identity(tmp_path / "off")["env"]["TRITON_CACHE_AUTOTUNING"] == "0"


def test_the_library_version_and_git_state_reach_the_caliber_keys(tmp_path):
    # compare's caliber reads versions.flaggems.{version,git_sha,dirty}: the run must write
    # them, from the plugin's module version and git's view, or a changed library goes unseen.
    r = zl(*run_args(tmp_path / "r"))
    assert r.returncode == 0, r.stdout + r.stderr
    v = identity(tmp_path / "r")["versions"]
    assert v["flaggems"]["version"] == v["flag_gems"]
    assert v["flaggems"]["git_sha"] == v["flaggems_git"]["sha"]
    assert v["flaggems"]["dirty"] == v["flaggems_git"]["dirty"]


def test_the_identity_names_the_commit_zlcore_was_built_from(tmp_path):
    # A report made from this run names it (compare's provenance block).
    git = subprocess.run(["git", "-C", str(zltest.SRC), "rev-parse", "HEAD"], capture_output=True, text=True)
    if git.returncode != 0:
        pytest.skip("the source tree is not a git checkout: the commit is null")
    r = zl(*run_args(tmp_path / "r"))
    assert r.returncode == 0, r.stdout + r.stderr
    commit = identity(tmp_path / "r")["versions"]["zlcore_commit"]
    # The build's commit, "-dirty" when it had uncommitted changes; the tree may
    # have moved on since the build, so only its form and a full SHA are certain.
    sha = commit.removesuffix("-dirty")
    assert len(sha) == 40 and int(sha, 16) >= 0, commit
    report = zl("compare", tmp_path / "r", tmp_path / "r")
    assert f"  zlcore             0.1.0, commit {commit}\n" in report.stdout, report.stdout


def test_a_check_stopped_by_sigterm_is_interrupted_not_a_preflight_failure(tmp_path):
    # scancel and Ctrl-C signal the whole process group: a check's child (here
    # the Python probe, which signals zlcore and itself) dies of it, and the
    # run must say interrupted (130), which a batch reruns, not preflight_failed.
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\nkill -TERM $PPID\nkill -TERM $$\nsleep 5\n")
    fake.chmod(0o755)
    env = zltest.clean_env(STRIP)
    r = subprocess.run([zltest.ZLCORE, "run", "--backend", "host", "--flaggems-dir", str(SUITE), "--op", "abs",
                        "--python", str(fake), "--out", str(tmp_path / "r")],
                       capture_output=True, text=True, env=env, timeout=60, start_new_session=True)
    assert r.returncode == 130, r.stdout + r.stderr
    assert r.stderr.strip().endswith("zlcore: interrupted during the python check"), r.stderr
    assert "PREFLIGHT_FAILED" not in r.stderr


def test_a_probe_that_dies_of_sigterm_before_zlcore_gets_it_is_interrupted(tmp_path):
    # scancel signals the processes of a job one by one: the probe can die of
    # it before zlcore's own handler has run, and the run is stopped all the same.
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\nkill -TERM $$\nsleep 5\n")
    fake.chmod(0o755)
    r = subprocess.run([zltest.ZLCORE, "run", "--backend", "host", "--flaggems-dir", str(SUITE), "--op", "abs",
                        "--python", str(fake), "--out", str(tmp_path / "r")],
                       capture_output=True, text=True, env=zltest.clean_env(STRIP), timeout=60)
    assert r.returncode == 130, r.stdout + r.stderr
    assert r.stderr.strip().endswith("zlcore: interrupted during the python check"), r.stderr


def test_pytest_stopped_by_sigterm_from_outside_is_interrupted_not_crashed(tmp_path):
    # The probe answers as Python; pytest itself dies of a SIGTERM zlcore never sent.
    fake = tmp_path / "python3"
    fake.write_text(f'#!/bin/sh\nif [ "$1" = "-m" ]; then kill -TERM $$; sleep 5; fi\nexec {PY} "$@"\n')
    fake.chmod(0o755)
    r = subprocess.run([zltest.ZLCORE, "run", "--backend", "host", "--flaggems-dir", str(SUITE), "--op", "abs",
                        "--python", str(fake), "--out", str(tmp_path / "r")],
                       capture_output=True, text=True, env=zltest.clean_env(STRIP), timeout=60)
    assert r.returncode == 130, r.stdout + r.stderr
    ident = json.loads((tmp_path / "r" / "run_identity.json").read_text())
    assert ident["status"] == "interrupted", ident
    assert "stopped by signal 15 (Terminated) from outside" in ident["reason"], ident["reason"]
