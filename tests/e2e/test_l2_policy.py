"""`--l2 cold|warm` (ZL_L2) on the command line: the device attribute it needs,
the refusals where cold cannot be honoured, and the policy in the identity and
in the child's timers."""
import json

import pytest

import zltest
from zltest import EXAMPLE_SUITE as SUITE, PY, VENDOR, identity

STRIP = ("ZL_", "BENCH_LEVEL", "OP", "SHAPE_", "TEST_NODE", "FAKE_")


def zl(*args, backend_dir=None, **env):
    return zltest.zl(*args, env=zltest.clean_env(STRIP, **env), backend_dir=backend_dir, timeout=120)


def host_run(out, *extra):
    return ["run", "--backend", "host", "--flaggems-dir", SUITE, "--op", "abs", "--python", PY,
            "--dtypes", "float32", "--out", out, *extra]


needs_vendor = pytest.mark.skipif(not VENDOR, reason="needs ZL_VENDOR_DIR (run through ctest)")


@needs_vendor
def test_devices_prints_the_l2_size_a_backend_reports():
    r = zl("devices", "--backend", "fakegpu", "--json", backend_dir=VENDOR, ZL_FAKE_L2_BYTES="52428800")
    assert r.returncode == 0, r.stderr
    devices = json.loads(r.stdout)["devices"]
    assert [d["attributes"]["l2_cache_bytes"] for d in devices] == [52428800, 52428800]
    text = zl("devices", "--backend", "fakegpu", backend_dir=VENDOR, ZL_FAKE_L2_BYTES="52428800")
    assert "l2_cache_bytes=52428800" in text.stdout, text.stdout


@pytest.mark.parametrize("args, env, line", [
    (["--l2", "tepid"], {}, "zlcore: --l2 'tepid' is not allowed; use cold (the L2 cleared before each timed "
                            "call) or warm (left as the calls before left it)\n"),
    ([], {"ZL_L2": "tepid"}, "zlcore: ZL_L2='tepid' is not allowed; use cold (the L2 cleared before each timed "
                             "call) or warm (left as the calls before left it)\n"),
    (["--l2", ""], {}, "zlcore: --l2 '' is not allowed; use cold (the L2 cleared before each timed "
                       "call) or warm (left as the calls before left it)\n"),
    (["--enable-cudagraph", ""], {}, "zlcore: --enable-cudagraph='' is not a boolean; use one of 1/0, true/false, "
                                     "yes/no, on/off (any case)\n"),
    (["--l2", "cold"], {}, "zlcore: --l2 cold cannot be honoured by the host timer (the plan's): it reads the "
                           "host's clock around loops of back-to-back calls, so a clear between two calls would be "
                           "timed with them, and without device events there is no clock that could time the "
                           "clears alone to subtract them; use --l2 warm\n"),
    ([], {"ZL_L2": "cold"}, "zlcore: ZL_L2=cold cannot be honoured by the host timer (the plan's): it reads the "
                            "host's clock around loops of back-to-back calls, so a clear between two calls would be "
                            "timed with them, and without device events there is no clock that could time the "
                            "clears alone to subtract them; use --l2 warm\n"),
])
def test_a_policy_that_cannot_be_honoured_is_one_line_exit_2_and_nothing_written(tmp_path, args, env, line):
    out = tmp_path / "r"
    r = zl(*host_run(out, *args), **env)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr == line
    assert not out.exists()


@needs_vendor
@pytest.mark.parametrize("command", ["run", "ab"])
def test_cold_with_a_host_overhead_mode_is_refused(tmp_path, command):
    args = {"run": ["run", "--op", "abs", "--python", PY],
            "ab": ["ab", "--a", SUITE, "--b", SUITE, "--a-python", PY, "--b-python", PY, "--ops", "abs"]}[command]
    r = zl(*args, "--backend", "fakegpu", "--out", tmp_path / "out", "--mode", "operator", "--l2", "cold",
           backend_dir=VENDOR, ZL_FAKE_L2_BYTES="52428800")
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr == ("zlcore: --l2 cold cannot be honoured with --mode operator: FlagGems times that mode "
                        "itself, on the host, and clears no cache; use --mode kernel or cudagraph, or --l2 warm\n")
    assert not (tmp_path / "out").exists()


@needs_vendor
@pytest.mark.parametrize("command", ["run", "batch", "ab"])
def test_cold_on_a_device_without_an_l2_size_is_refused_before_anything_is_written(tmp_path, command):
    out = tmp_path / "out"
    args = {"run": ["run", "--op", "abs", "--python", PY], "batch": ["batch", "--ops", "abs", "--python", PY],
            "ab": ["ab", "--a", SUITE, "--b", SUITE, "--a-python", PY, "--b-python", PY, "--ops", "abs"]}[command]
    r = zl(*args, "--backend", "fakegpu", "--out", out, "--l2", "cold", backend_dir=VENDOR)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.endswith(
        "--l2 cold cannot be honoured on fakegpu device 0 (Fake Accelerator): the backend does not report its L2 "
        "size (device attribute l2_cache_bytes), and cold clears that many bytes before each call; use --l2 warm\n")
    assert r.stderr.count("\n") == 1
    assert not out.exists()


@needs_vendor
def test_cold_on_a_device_with_an_l2_size_is_recorded_with_the_size(tmp_path):
    out = tmp_path / "r"
    # The fake backend's device has no torch behind it: the run fails in its
    # child, after the identity recorded the policy.
    zl("run", "--backend", "fakegpu", "--flaggems-dir", SUITE, "--op", "abs", "--python", PY, "--out", out,
       "--l2", "cold", backend_dir=VENDOR, ZL_FAKE_L2_BYTES="52428800")
    ident = identity(out)
    assert ident["timer"]["l2"] == "cold" and ident["timer"]["l2_bytes"] == 52428800
    assert "ZL_L2" not in ident["env"] and "ZL_L2_BYTES" not in ident["env"]


def test_the_flag_reaches_the_timers_and_the_identity_over_the_variable(tmp_path):
    r = zl(*host_run(tmp_path / "r", "--l2", "warm"), ZL_L2="cold")
    assert r.returncode == 0, r.stdout + r.stderr
    ident = identity(tmp_path / "r")
    assert ident["timer"]["l2"] == "warm" and "l2_bytes" not in ident["timer"]
    assert ident["plugins"]["timing"]["l2"] == "warm"  # what the child's timers read
    # Warm is what every run before the policy measured: no new env knob, no new row key.
    assert "ZL_L2" not in ident["env"]
    rows = [json.loads(line) for line in (tmp_path / "r" / "results.jsonl").read_text().splitlines()]
    assert rows and not any("l2" in row for row in rows)
