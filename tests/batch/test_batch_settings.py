"""The batch's settings, end to end: settings a batch must check once and
keep (the resume caliber, values checked once, REPLAY_FROM), and a preflight
failure inside the child.

Run by ctest (batch_e2e.test_batch_settings) with the same environment as the other files here.
"""

import json
import subprocess
from pathlib import Path

import pytest

from test_batch_e2e import batch_argv, env_for, run_batch
from zltest import (EXAMPLE_SUITE, SRC as SOURCE, VENDOR, ZLCORE, batch_identity, by_op, clean_env, fake_tool,
                    identity, ops_status_rows, suite_without_harness, zl)

pytestmark = pytest.mark.skipif(not (ZLCORE and VENDOR), reason="run through ctest (needs ZLCORE, ZL_VENDOR_DIR)")

PLUGINS = Path(ZLCORE).parent.parent / "lib" / "zlcore" / "plugins"


def batch(out, ops, extra=(), **env):
    """batch_argv's batch, with its `--level core` left out: a test gives its own level or none."""
    argv = batch_argv(out, ops, extra=extra)
    at = argv.index("--level")
    del argv[at:at + 2]
    return subprocess.run(argv, env=env_for(2, **env), capture_output=True, text=True, timeout=120)


# -- 22.3: --resume compares the settings that change numbers -------------------------


def test_resume_with_another_level_is_refused_naming_it(tmp_path):
    out = tmp_path / "b"
    r = batch(out, "ok1,fail", extra=["--level", "comprehensive"])
    assert r.returncode == 1, r.stdout + r.stderr
    before_rows, before_identity = ops_status_rows(out), (out / "batch_identity.json").read_text()

    # The default level (core) and an exported timer knob: refused, each named, nothing written.
    r = batch(out, "ok1,fail", extra=["--resume"], ZL_PLACEMENTS="2")
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert "was started with other settings that change numbers" in r.stderr
    assert "level comprehensive (now core)" in r.stderr and "ZL_PLACEMENTS unset (now 2)" in r.stderr, r.stderr
    assert "--force-resume" in r.stderr
    assert ops_status_rows(out) == before_rows
    assert (out / "batch_identity.json").read_text() == before_identity

    # --force-resume mixes them, says so, and the identity keeps both invocations.
    r = batch(out, "ok1,fail", extra=["--force-resume"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "--force-resume: this batch's rows now mix settings: level comprehensive (now core)" in r.stdout
    ident = batch_identity(out)
    first, second = ident["invocations"]
    assert first["caliber"]["level"] == "comprehensive" and first["differs"] == []
    assert second["caliber"]["level"] == "core" and second["force_resume"] is True
    assert second["differs"] == ["level comprehensive (now core)"]
    # A third with the first one's settings is not refused: the batch's settings are its first invocation's.
    r = batch(out, "ok1,fail", extra=["--resume", "--level", "comprehensive"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert len(batch_identity(out)["invocations"]) == 3


@pytest.mark.parametrize("damage", ["missing", "torn", "no settings", "a directory"])
def test_resume_whose_identity_cannot_name_the_settings_is_refused_until_forced(tmp_path, damage):
    """A damaged identity is refused until --force-resume; a missing one is said."""
    out = tmp_path / "b"
    r = batch(out, "ok1,fail", extra=["--level", "comprehensive"])
    assert r.returncode == 1, r.stdout + r.stderr
    ident = out / "batch_identity.json"
    text = ident.read_text()
    if damage == "missing":
        ident.unlink()
    elif damage == "torn":
        ident.write_text(text[:len(text) // 2])
    elif damage == "no settings":
        ident.write_text(json.dumps({**json.loads(text), "invocations": []}))
    else:
        ident.unlink()
        ident.mkdir()
    before_rows = ops_status_rows(out)

    # Another level, which the identity can no longer show: refused, one line,
    # nothing written; without the file at all, said and not compared.
    r = batch(out, "ok1,fail", extra=["--resume"])
    if damage == "missing":
        assert r.returncode == 1, r.stdout + r.stderr
        assert "has no batch_identity.json; the settings of its rows are not known and not compared" in r.stdout
        return
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert ops_status_rows(out) == before_rows
    if damage == "a directory":
        assert "batch_identity.json is not a regular file" in r.stderr, r.stderr
        return
    assert "so the settings its rows were measured with cannot be compared" in r.stderr, r.stderr
    assert "--force-resume" in r.stderr

    r = batch(out, "ok1,fail", extra=["--force-resume"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "--force-resume: batch_identity.json" in r.stdout, r.stdout
    last = batch_identity(out)["invocations"][-1]
    assert last["force_resume"] is True and last["differs"][0].startswith("earlier settings unknown (")


def test_every_setting_that_changes_numbers_is_recorded(tmp_path):
    shapes = tmp_path / "shapes.yaml"
    shapes.write_text("ok1:\n  shapes:\n    - [64]\n")
    r = run_batch(tmp_path / "b", "ok1", extra=["--shape-mode", "file", "--shape-file", str(shapes), "--mode", "kernel",
                                                "--dtypes", "float32", "--direct-repeat", "2"],
                  ZL_GRAPH_SAMPLES="7")
    assert r.returncode == 0, r.stdout + r.stderr
    caliber = batch_identity(tmp_path / "b")["invocations"][0]["caliber"]
    for key in ("backend", "level", "mode", "dtypes", "shape_mode", "shape_file", "shape_file_sha256", "timer",
                "autotune", "isolate_tuner_cache", "enable_cudagraph", "direct_repeat"):
        assert key in caliber, (key, caliber)
    assert caliber["shape_mode"] == "file" and caliber["direct_repeat"] == "2"
    assert caliber["env:ZL_GRAPH_SAMPLES"] == "7"
    # The shape file's content is part of it: an edited file is another caliber.
    shapes.write_text("ok1:\n  shapes:\n    - [128]\n")
    r = run_batch(tmp_path / "b", "ok1", extra=["--resume", "--shape-mode", "file", "--shape-file", str(shapes),
                                                "--mode", "kernel", "--dtypes", "float32", "--direct-repeat", "2"],
                  ZL_GRAPH_SAMPLES="7")
    assert r.returncode == 2 and "shape_file_sha256" in r.stderr, r.stdout + r.stderr


# -- 22.4: a preflight failure inside the child -------------------------------------


def test_an_interpreter_without_torch_fails_preflight_once_before_anything_is_written(tmp_path):
    # The cuda backend over a recorded nvidia-smi: its runs need torch, which
    # this Python lacks. run and batch both say so before a child starts.
    smi = fake_tool(tmp_path / "nvidia-smi", SOURCE / "plugins" / "backend-cuda" / "testdata" / "smi_h200_1gpu.txt")
    env = clean_env(ZL_CUDA_SMI=smi, ZL_CUDA_NO_NVML="1", HOME=tmp_path / "home")
    suite = ["--backend", "cuda", "--flaggems-dir", EXAMPLE_SUITE, "--python", "/usr/bin/python3"]
    r = zl("run", *suite, "--op", "abs", "--out", tmp_path / "r", env=env, backend_dir=PLUGINS)
    assert r.returncode == 3, r.stdout + r.stderr
    assert r.stderr.startswith("PREFLIGHT_FAILED check=python --python /usr/bin/python3 "), r.stderr
    assert "cannot import torch" in r.stderr and "with --python PATH" in r.stderr, r.stderr
    assert not (tmp_path / "r").exists()

    r = zl("batch", *suite, "--ops", "abs,add", "--no-idle-check", "--out", tmp_path / "b", env=env,
           backend_dir=PLUGINS)
    assert r.returncode == 3, r.stdout + r.stderr
    assert r.stderr.startswith("PREFLIGHT_FAILED check=python --python /usr/bin/python3 "), r.stderr
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("case,check", [
    ("missing suite", "flaggems_dir"),
    ("not laid out like FlagGems", "flaggems_dir"),
    ("no such python", "python"),
    ("no devices", "device"),
])
def test_batch_checks_suite_python_and_devices_once_as_run_does(tmp_path, case, check):
    suite, python, devices = EXAMPLE_SUITE, "/usr/bin/python3", 2
    if case == "missing suite":
        suite = tmp_path / "gone"
    elif case == "not laid out like FlagGems":
        suite = suite_without_harness(tmp_path / "suite")
    elif case == "no such python":
        python = str(tmp_path / "no-python3")
    else:
        devices = 0
    argv = batch_argv(tmp_path / "b", "abs,add", suite=suite)
    argv[argv.index("--python") + 1] = python
    r = subprocess.run(argv, env=env_for(devices), capture_output=True, text=True, timeout=120)
    assert r.returncode == 3, r.stdout + r.stderr
    assert r.stderr.startswith(f"PREFLIGHT_FAILED check={check} "), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "b").exists(), "a failed preflight must leave nothing behind"
    # The same mistake given to run fails the same check.
    run = [ZLCORE, "--backend-dir", VENDOR, "run", "--backend", "fakegpu", "--op", "abs", "--flaggems-dir", suite,
           "--python", python, "--timer", "host", "--out", tmp_path / "r"]
    r = subprocess.run([str(a) for a in run], env=env_for(devices), capture_output=True, text=True, timeout=120)
    assert r.returncode == 3 and r.stderr.startswith(f"PREFLIGHT_FAILED check={check} "), r.stdout + r.stderr


# -- 22.5: a bad value is found once, before anything is written ---------------------


@pytest.mark.parametrize("extra,env,says", [
    (["--level", "full"], {}, "BENCH_LEVEL (--level)='full' is not allowed"),
    ([], {"BENCH_LEVEL": "full"}, "BENCH_LEVEL (--level)='full' is not allowed"),
    ([], {"SHAPE_MODE": "files"}, "SHAPE_MODE='files' is not allowed"),
    (["--mode", "fastest"], {}, "--mode='fastest' is not allowed"),
    (["--isolate-tuner-cache", "maybe"], {}, "--isolate-tuner-cache='maybe' is not a boolean"),
    (["--autotune", "replay"], {}, "--autotune replay needs --replay-from"),
])
def test_a_bad_value_is_refused_once_and_writes_nothing(tmp_path, extra, env, says):
    r = batch(tmp_path / "b", "ok1,ok2", extra=extra, **env)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1 and says in r.stderr, r.stderr
    assert not (tmp_path / "b").exists()


# -- 22.6: REPLAY_FROM takes a batch directory, as --replay-from does ----------------


def test_replay_from_variable_accepts_a_batch_directory(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    r = run_batch(a, "ok1,ok2", extra=["--autotune", "record"])
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_batch(b, "ok1,ok2", REPLAY_FROM=str(a))
    assert r.returncode == 0, r.stdout + r.stderr
    rows = by_op(ops_status_rows(b))
    for op in ("ok1", "ok2"):
        assert rows[op]["status"] == "passed", rows[op]
        run_id = identity(b / rows[op]["run_dir"])
        assert run_id["autotune"]["mode"] == "replay"
        assert run_id["autotune"]["source"] == str(a / "runs" / op / "autotune_records")
    assert batch_identity(b)["invocations"][0]["caliber"]["replay_from"] == str(a)
