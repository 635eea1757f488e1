"""A mistyped option, dtype or suite is refused in one line that says what was
meant, before anything is written or pytest starts."""

import pytest

import zltest
from zltest import EXAMPLE_SUITE as SUITE, PY, suite_without_harness

STRIP = ("ZL_", "BENCH_LEVEL", "OP", "SHAPE_", "TEST_NODE", "FLAGGEMS_DIR")


def zl(*args):
    return zltest.zl(*args, env=zltest.clean_env(STRIP), timeout=120)


def run_args(out, *extra, suite=SUITE):
    return ["run", "--backend", "host", "--flaggems-dir", str(suite), "--op", "abs", "--python", PY,
            "--out", str(out), *extra]


def one_line(r):
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


@pytest.mark.parametrize("command", ["backends", "devices", "plan", "run", "batch", "compare", "ops", "ab"])
def test_no_command_takes_a_prefix_of_an_option_for_the_option(command):
    r = zl(command, "--hel")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "did you mean --help?" in one_line(r)


@pytest.mark.parametrize(
    "given,meant",
    [
        (["--dtype", "float32"], "--dtypes"),  # a prefix: Boost would have guessed --dtypes
        (["--devices", "0"], "--device"),  # batch's flag given to run
        (["--levle", "core"], "--level"),  # a slip
    ],
)
def test_a_near_miss_of_a_run_option_names_the_option(tmp_path, given, meant):
    r = zl(*run_args(tmp_path / "r", *given))
    assert r.returncode == 2, r.stdout + r.stderr
    line = one_line(r)
    assert line.startswith(f"zlcore: run: unrecognised option '{given[0]}'"), line
    assert f"did you mean {meant}?" in line, line
    assert not (tmp_path / "r").exists()


def test_batch_time_without_slurm_names_timeout(tmp_path):
    r = zl("batch", "--backend", "host", "--ops", "abs", "--time", "60", "--out", tmp_path / "b")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "did you mean --timeout" in one_line(r)
    assert not (tmp_path / "b").exists()


def test_a_dtype_the_suite_does_not_take_is_refused_before_pytest(tmp_path):
    r = zl(*run_args(tmp_path / "r", "--dtypes", "float61"))
    assert r.returncode == 2, r.stdout + r.stderr
    line = one_line(r)
    assert "'float61' is not a dtype" in line and "did you mean float16 or float32?" in line, line
    assert "bfloat16, int16, int32, bool, complex64" in line, line
    assert not (tmp_path / "r").exists()


def test_a_device_name_instead_of_an_index_lists_the_indices(tmp_path):
    r = zl(*run_args(tmp_path / "r", "--device", "gpu0"))
    assert r.returncode == 2, r.stdout + r.stderr
    line = one_line(r)
    assert "--device 'gpu0' is not a device index" in line and "valid: 0" in line, line


def test_the_benchmark_directory_given_as_the_suite_names_its_parent(tmp_path):
    r = zl(*run_args(tmp_path / "r", suite=SUITE / "benchmark"))
    assert r.returncode == 3, r.stdout + r.stderr
    line = one_line(r)
    assert line.startswith("PREFLIGHT_FAILED check=flaggems_dir "), line
    assert f"did you mean --flaggems-dir {SUITE}?" in line, line


def test_a_directory_not_laid_out_like_flaggems_fails_preflight_not_pytest(tmp_path):
    r = zl(*run_args(tmp_path / "r", suite=suite_without_harness(tmp_path / "suite")))
    assert r.returncode == 3, r.stdout + r.stderr
    line = one_line(r)
    assert line.startswith("PREFLIGHT_FAILED check=flaggems_dir ") and "not a FlagGems-layout suite" in line, line
    assert "--level, --mode" in line, line
    assert not (tmp_path / "r").exists()


def test_several_ops_given_to_run_point_at_batch(tmp_path):
    argv = run_args(tmp_path / "r")
    argv[argv.index("--op") + 1] = "abs,add"
    r = zl(*argv)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "`zlcore batch --ops abs,add`" in one_line(r)
    assert not (tmp_path / "r").exists()


def test_replaying_a_run_without_records_says_how_to_record(tmp_path):
    (tmp_path / "plain").mkdir()
    r = zl(*run_args(tmp_path / "r", "--replay-from", tmp_path / "plain"))
    assert r.returncode == 3, r.stdout + r.stderr
    line = one_line(r)
    assert line.startswith("PREFLIGHT_FAILED check=replay_from ") and "--isolate-tuner-cache 1" in line, line


def test_a_run_without_out_is_named_after_its_run_id(tmp_path):
    r = zltest.zl("run", "--backend", "host", "--flaggems-dir", SUITE, "--op", "abs", "--python", PY,
                  "--dtypes", "float32", env=zltest.clean_env(STRIP), timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert zltest.identity(run_dir)["run_id"] == run_dir.name


@pytest.mark.parametrize("command", ["run", "batch", "ab"])
@pytest.mark.parametrize("var, value, line", [
    ("ZL_GRAPH_CLOCK_CHECK", "maybe", "zlcore: ZL_GRAPH_CLOCK_CHECK='maybe' is not one of off, auto, on"),
    ("ZL_HOST_LOOPS", "99999999999999999999", "zlcore: ZL_HOST_LOOPS='99999999999999999999' must be at most 1000"),
    ("ZL_COMPILE_AHEAD", "99", "zlcore: ZL_COMPILE_AHEAD='99' is not allowed; use a number of threads from 0 to "
                               "64, or off"),
])
def test_a_timer_setting_the_child_would_refuse_stops_the_command_before_anything_is_written(
        tmp_path, command, var, value, line):
    # Checked by the interpreter probe, once: not a run directory left
    # 'failed', nor a batch or an A/B whose every op fails with the same line.
    out = tmp_path / "out"
    args = {"run": run_args(out),
            "batch": ["batch", "--backend", "host", "--flaggems-dir", SUITE, "--ops", "abs,exp", "--python", PY,
                      "--out", out],
            # ab probes the interpreter it chooses; given both sides' (which
            # may live on a cluster's nodes only), each run checks its own.
            "ab": ["ab", "--backend", "host", "--a", SUITE, "--b", SUITE, "--ops", "abs", "--out", out]}[command]
    r = zltest.zl(*args, env=zltest.clean_env(STRIP, **{var: value}), timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert one_line(r) == line
    assert not out.exists()
