"""`--profile` (ZL_PROFILE) on the command line: the plan's refusal where the
backend offers no profiler, and, under a profiler a rules.d file offers the
host backend, the pass's kernels in the rows, its traces in the run directory
and the setting in the identity, in a run and in every run of a batch or an
A/B."""
import json

import pytest

import zltest
from zltest import EXAMPLE_SUITE as SUITE, PY, SRC, identity

STRIP = ("ZL_", "BENCH_LEVEL", "OP", "SHAPE_", "TEST_NODE", "FAKE_")

# Calls the op as told and reports two kernels per call, a trace per pass.
FAKE_PROFILER = """
import json
NAME = 'fake'
def profile(fn, calls, trace_path, grad_to_none):
    for _ in range(calls):
        fn()
    with open(trace_path, 'w') as f:
        json.dump({'traceEvents': []}, f)
    return [('main_kernel', 9.0), ('tail_kernel', 1.0)] * calls
"""


@pytest.fixture
def offered(tmp_path):
    """ZL_DATA_DIR and PYTHONPATH under which the host backend offers the fake profiler."""
    data = tmp_path / "share"
    (data / "rules.d").mkdir(parents=True)
    (data / "python").symlink_to(SRC / "plugins" / "timers" / "python")
    (data / "suite").symlink_to(SUITE)
    (data / "rules.yaml").symlink_to(SRC / "plugins" / "timers" / "rules.yaml")
    (data / "rules.d" / "fake.yaml").write_text(
        "profilers:\n  - {name: fake, module: fake_profiler, priority: 100, requires: []}\n")
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "fake_profiler.py").write_text(FAKE_PROFILER)
    return {"ZL_DATA_DIR": str(data), "PYTHONPATH": str(lib)}


def zl(*args, timeout=120, **env):
    return zltest.zl(*args, env=zltest.clean_env(STRIP, **env), timeout=timeout)


def host_run(out, *extra):
    return ["run", "--backend", "host", "--flaggems-dir", SUITE, "--op", "abs", "--python", PY,
            "--dtypes", "float32", "--out", out, *extra]


@pytest.mark.parametrize("args, env, given", [(["--profile"], {}, "--profile"),
                                              ([], {"ZL_PROFILE": "1"}, "ZL_PROFILE=1")])
def test_a_backend_that_offers_no_profiler_refuses_it_in_one_line_exit_2(tmp_path, args, env, given):
    out = tmp_path / "r"
    r = zl(*host_run(out, *args), **env)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr == (f"zlcore: {given} cannot be honoured with backend 'host': it offers no profiler "
                        "(torch.profiler needs torch_profiler among its capabilities); run without --profile\n")
    assert not out.exists()


def test_a_profile_variable_that_is_not_a_boolean_is_refused(tmp_path):
    r = zl(*host_run(tmp_path / "r"), ZL_PROFILE="sometimes")
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.startswith("zlcore: ZL_PROFILE='sometimes' is not a boolean; use one of ")


def test_a_profiled_run_keeps_traces_and_rows_name_the_kernels(tmp_path, offered):
    out = tmp_path / "r"
    r = zl(*host_run(out, "--profile"), **offered)
    assert r.returncode == 0, r.stdout + r.stderr
    ident = identity(out)
    assert ident["profile"] == "fake"
    assert "zlcore_pytest.profile" in ident["pytest_plugins"]
    assert not [k for k in ident["env"] if k.startswith("ZL_PROFILE")]  # the setting is `profile`, not env
    rows = zltest.read_jsonl(out / "results.jsonl")
    assert rows
    for row in rows:
        assert row["kernels"] == [{"name": "main_kernel", "share": 0.9, "us": 9.0},
                                  {"name": "tail_kernel", "share": 0.1, "us": 1.0}]
        assert (out / row["profile_trace"]).is_file() and (out / row["profile_trace_base"]).is_file()


def test_an_unprofiled_run_records_profile_off_and_rows_as_before(tmp_path, offered):
    out = tmp_path / "r"
    r = zl(*host_run(out), **offered)
    assert r.returncode == 0, r.stdout + r.stderr
    ident = identity(out)
    assert ident["profile"] == "off" and "zlcore_pytest.profile" not in ident["pytest_plugins"]
    rows = zltest.read_jsonl(out / "results.jsonl")
    assert rows and not any("kernels" in row for row in rows)
    assert not (out / "profile").exists()


def identities_under(directory):
    return [json.loads(p.read_text()) for p in sorted(directory.rglob("run_identity.json"))]


@pytest.mark.parametrize("command", ["batch", "ab"])
def test_batch_and_ab_refuse_it_once_where_the_backend_offers_no_profiler(tmp_path, command):
    out = tmp_path / "out"
    args = {"batch": ["batch", "--ops", "abs"],
            "ab": ["ab", "--a", SUITE, "--b", SUITE, "--a-python", PY, "--b-python", PY, "--ops", "abs"]}[command]
    r = zl(*args, "--backend", "host", "--python", PY, "--out", out, "--profile") if command == "batch" else \
        zl(*args, "--backend", "host", "--out", out, "--profile")
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.endswith("--profile cannot be honoured with backend 'host': it offers no profiler "
                             "(torch.profiler needs torch_profiler among its capabilities); run without --profile\n")
    assert r.stderr.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize("given", [["--profile"], []])
def test_the_setting_reaches_every_run_of_a_batch(tmp_path, offered, given):
    out = tmp_path / "b"
    env = dict(offered, **({} if given else {"ZL_PROFILE": "1"}))
    r = zl("batch", "--backend", "host", "--flaggems-dir", SUITE, "--ops", "abs,exp", "--python", PY,
           "--dtypes", "float32", "--out", out, *given, **env)
    assert r.returncode == 0, r.stdout + r.stderr
    runs = identities_under(out)
    assert sorted(i["op"] for i in runs) == ["abs", "exp"]
    assert all(i["profile"] == "fake" for i in runs)
    for rows in out.rglob("results.jsonl"):
        assert all(row["kernels"] for row in zltest.read_jsonl(rows))


def test_the_flag_reaches_every_run_of_both_sides_of_an_ab(tmp_path, offered):
    out = tmp_path / "ab"
    r = zl("ab", "--backend", "host", "--a", SUITE, "--b", SUITE, "--a-python", PY, "--b-python", PY, "--ops", "abs",
           "--dtypes", "float32", "--rounds", "2", "--out", out, "--profile", timeout=300, **offered)
    assert r.returncode == 0, r.stdout + r.stderr
    runs = identities_under(out)
    assert len(runs) >= 4  # two rounds, both sides
    assert all(i["profile"] == "fake" for i in runs)
