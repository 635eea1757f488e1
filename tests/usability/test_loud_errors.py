"""Loud where it should be. Backend directories (a list, checked,
ZL_BACKEND_PATH), devices when a tool answers in a form not understood,
one-line loader reasons, a batch heartbeat off a terminal, help that shows
positional arguments and variables, the run switches a batch accepts, one
boolean spelling, stray words refused."""
import json
import shutil

from conftest import BUILD, FAULTS, PY, SRC, SUITE, VENDOR, clean_env, fake_tool, identity, zl

SHIPPED = BUILD / "lib" / "zlcore" / "plugins"


def test_backend_directories_are_checked_and_may_be_a_list(tmp_path):
    a_file = tmp_path / "plain.txt"
    a_file.write_text("x")
    for args, line in (
        (["--backend-dir", tmp_path / "nope"], f"zlcore: --backend-dir: {tmp_path / 'nope'} does not exist\n"),
        (["--backend-dir", a_file], f"zlcore: --backend-dir: {a_file} is not a directory\n"),
        (["--backend-dir", VENDOR, "--backend-dir", SHIPPED],
         f"zlcore: --backend-dir is given 2 times ({VENDOR}, {SHIPPED}); give one list: --backend-dir "
         f"{VENDOR}:{SHIPPED}\n"),
    ):
        r = zl(tmp_path, *args, "backends")
        assert (r.returncode, r.stderr) == (2, line)
    r = zl(tmp_path, "--backend-dir", f"{VENDOR}:{SHIPPED}", "backends", "--json")
    names = [b["name"] for b in json.loads(r.stdout)["backends"]]
    assert "fakegpu" in names and "host" in names and json.loads(r.stdout)["backend_dirs"] == [VENDOR, str(SHIPPED)]
    # ZL_BACKEND_PATH adds to the default directory, first in the search.
    r = zl(tmp_path, "backends", "--json", env=clean_env(tmp_path, ZL_BACKEND_PATH=VENDOR))
    doc = json.loads(r.stdout)
    assert doc["backend_dirs"][0] == VENDOR and {"fakegpu", "host"} <= {b["name"] for b in doc["backends"]}
    r = zl(tmp_path, "backends", env=clean_env(tmp_path, ZL_BACKEND_PATH=str(tmp_path / "nope")))
    assert (r.returncode, r.stderr) == (2, f"zlcore: ZL_BACKEND_PATH: {tmp_path / 'nope'} does not exist\n")


def test_a_file_that_cannot_load_has_one_clean_line(tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    # Programs, not shared objects: dlopen refuses them (a PIE or not), and
    # Boost.DLL wraps its words in "(dlerror system message: ...): Bad file
    # descriptor" with the path again.
    shutil.copy(shutil.which("true"), plugins / "a_true.so")
    shutil.copy(PY, plugins / "b_python.so")
    r = zl(tmp_path, "--backend-dir", plugins, "backends", "--json")
    reasons = [x["reason"] for x in json.loads(r.stdout)["rejected"]]
    assert len(reasons) == 2
    for reason in reasons:
        assert reason.startswith("cannot load: cannot dynamically load ") and reason.endswith("executable"), reason
        assert "dlerror" not in reason and "):" not in reason and str(plugins) not in reason


def test_devices_exits_1_when_the_tool_answers_in_a_form_not_understood(tmp_path):
    data = SRC / "plugins" / "backend-cuda" / "testdata"
    smi = fake_tool(tmp_path / "nvidia-smi", data / "smi_malformed_short.txt")
    env = clean_env(tmp_path, ZL_CUDA_NO_NVML="yes", ZL_CUDA_SMI=str(smi))
    r = zl(tmp_path, "devices", "--backend", "cuda", env=env)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("zlcore: devices: cuda could not list its devices: ") and "not understood" in r.stderr
    r = zl(tmp_path, "devices", "--backend", "cuda", "--json", env=env)
    assert r.returncode == 1 and json.loads(r.stdout)["error"]
    # No driver is a reason, not an error: exit 0 as before.
    smi = fake_tool(tmp_path / "nvidia-smi", data / "smi_error_no_driver.txt", code=9)
    r = zl(tmp_path, "devices", "--backend", "cuda", env=env)
    assert r.returncode == 0 and "no devices:" in r.stdout, r.stdout + r.stderr


def test_a_batch_off_a_terminal_says_it_is_still_running(tmp_path):
    env = clean_env(tmp_path, ZL_BATCH_HEARTBEAT_S="1", ZL_SLEEP_OP_SECONDS="2.5", ZL_FAKE_DEVICE_COUNT="1")
    r = zl(tmp_path, "--backend-dir", VENDOR, "batch", "--backend", "fakegpu", "--timer", "host", "--flaggems-dir",
           FAULTS, "--python", PY, "--ops", "sleep", "--cold", "--out", tmp_path / "b", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    beats = [x for x in r.stdout.splitlines() if x.startswith("still running: 0:sleep ")]
    assert beats and all(" | 0/1 done | " in x for x in beats), r.stdout


def test_help_shows_positional_arguments_and_variables(tmp_path):
    r = zl(tmp_path, "compare", "--help")
    assert r.stdout.startswith("usage: zlcore [--backend-dir DIR[:DIR...]] compare A B [options]")
    r = zl(tmp_path, "run", "--help")
    assert r.returncode == 0
    for var in ("OP, OP_FILE, TEST_NODE", "FLAGGEMS_DIR", "SHAPE_MODE, SHAPE_FILE", "BENCH_LEVEL", "REPLAY_FROM",
                "ZL_ISOLATE_TUNER_CACHE", "ZL_ENABLE_CUDAGRAPH", "ZL_DIRECT_REPEAT", "visibility variable"):
        assert var in r.stdout, var
    r = zl(tmp_path, "batch", "--help")
    for text in ("--force-replay", "--keep-tuner-cache", "PARALLEL_WARMUP_GPUS", "ZL_BATCH_HEARTBEAT_S",
                 "OP, OP_FILE, TEST_NODE  refused"):
        assert text in r.stdout, text
    r = zl(tmp_path, "--help")
    assert "ZL_BACKEND_PATH" in r.stdout and "1/0, true/false, yes/no, on/off" in r.stdout


def test_a_batch_accepts_and_forwards_the_run_switches(tmp_path):
    r = zl(tmp_path, "--backend-dir", VENDOR, "batch", "--backend", "fakegpu", "--timer", "host", "--flaggems-dir",
           SUITE, "--python", PY, "--dtypes", "float32", "--ops", "mm", "--isolate-tuner-cache", "True",
           "--keep-tuner-cache", "--force-replay", "--out", tmp_path / "b",
           env=clean_env(tmp_path, ZL_FAKE_DEVICE_COUNT="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    run = tmp_path / "b" / "runs" / "mm"
    assert identity(run)["tuner_cache"]["kept"] is True and (run / ".tuner_cache").is_dir()
    options = json.loads((tmp_path / "b" / "batch_identity.json").read_text())["options"]
    assert options["keep-tuner-cache"] == "1" and options["force-replay"] == "1"


def test_booleans_have_one_spelling_and_stray_words_are_refused(tmp_path):
    base = ["run", "--backend", "host", "--flaggems-dir", SUITE, "--op", "abs", "--python", PY, "--dtypes", "float32"]
    r = zl(tmp_path, *base, "--out", tmp_path / "r", env=clean_env(tmp_path, ZL_ISOLATE_TUNER_CACHE="Yes"))
    assert r.returncode == 0, r.stderr
    assert identity(tmp_path / "r")["tuner_cache"]["kind"] == "isolated"
    r = zl(tmp_path, *base, "--out", tmp_path / "r2", env=clean_env(tmp_path, ZL_ISOLATE_TUNER_CACHE="maybe"))
    assert (r.returncode, r.stderr) == (2, "zlcore: ZL_ISOLATE_TUNER_CACHE='maybe' is not a boolean; use one of "
                                           "1/0, true/false, yes/no, on/off (any case)\n")
    r = zl(tmp_path, "plan", "--backend", "cuda", "--json", env=clean_env(tmp_path, ZL_ENABLE_CUDAGRAPH="OFF"))
    assert json.loads(r.stdout)["timer"] != "graph", r.stdout + r.stderr
    r = zl(tmp_path, "plan", "--backend", "cuda", "--enable-cudagraph", "sometimes")
    assert r.returncode == 2 and r.stderr.startswith("zlcore: --enable-cudagraph='sometimes' is not a boolean")
    r = zl(tmp_path, "devices", "--backend", "host", "extra")
    assert (r.returncode, r.stderr) == (2, "zlcore: devices: unexpected argument 'extra': this command takes no "
                                           "positional arguments (see 'zlcore devices --help')\n")
    r = zl(tmp_path, *base, "float16", "--out", tmp_path / "r3")
    assert r.returncode == 2 and "unexpected argument 'float16'; pytest's own arguments go after --" in r.stderr
