"""`zlcore ab` on the host backend with examples/known-effect: usage errors,
crashes retried and reported, refusals, resume after a tampered file, a
SIGINT, a kill or a full disk, warm workers, and devices.

These check what ab does, not what it measures, so ctest runs them beside
other tests; test_ab_verdicts.py holds the ones whose verdicts need the
machine to themselves.
"""

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

import zltest
from ab_cli import CLOCK, COMMON, STRIP, ab
from zltest import EXAMPLE_SUITE, KNOWN_EFFECT_SUITE as SUITE, VENDOR, ZLCORE, clean_env
from zltest import ab_rounds as rounds, ab_rows as rows, suite_with_op


def test_usage_errors_are_one_line_and_write_nothing(tmp_path):
    cases = [
        ["--b", SUITE, "--ops", "fma_loop", "--out", tmp_path / "x"],                       # no --a
        ["--a", SUITE, "--b", SUITE, "--ops", "fma_loop"],                                    # no --out
        ["--a", SUITE, "--b", tmp_path / "nope", "--ops", "fma_loop", "--out", tmp_path / "x"],
        ["--a", SUITE, "--b", SUITE, "--ops", "fma_loop", "--winners", "best", "--out", tmp_path / "x"],
        ["--a", SUITE, "--b", SUITE, "--ops", "fma_loop", "--rounds", "0", "--out", tmp_path / "x"],
        ["--a", SUITE, "--b", SUITE, "--ops", "fma_loop", "--sustained", "never", "--out", tmp_path / "x"],
        ["--a", SUITE, "--b", SUITE, "--ops", "fma_loop", "--a-env", "NOEQUALS", "--out", tmp_path / "x"],
        ["--a", SUITE, "--b", SUITE, "--ops", "fma_loop", "--launcher", "pbs", "--out", tmp_path / "x"],
        ["--a", SUITE, "--b", SUITE, "--ops", "fma_loop", "--launcher", "slurm", "--shards", "0",
         "--out", tmp_path / "x"],
        ["--a", SUITE, "--b", SUITE, "--ops", "fma_loop", "--launcher", "slurm", "--devices", "0",
         "--out", tmp_path / "x"],
        ["--a", SUITE, "--b", SUITE, "--ops", "fma_loop", "--shards", "2", "--out", tmp_path / "x"],      # local
    ]
    for args in cases:
        r = ab(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "x").exists()
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "f").write_text("x")
    r = ab("--a", SUITE, "--b", SUITE, "--ops", "fma_loop", "--out", tmp_path / "used")
    assert r.returncode == 2 and "--resume" in r.stderr


def crashing_suite(tmp_path):
    return suite_with_op(
        SUITE, tmp_path / "suite", "crash_loop",
        shapes="crash_loop:\n  shapes: [[64, 100], [256, 100]]\n  shape_desc: \"N, ITERS\"\n",
        test_source="import os\n\nimport pytest\n\nimport knowneffect\n\nfrom . import base\n\n\n"
        "@pytest.mark.crash_loop\n"
        "def test_crash_loop():\n"
        "    how = os.environ.get('AB_TEST_CRASH', '')\n"
        "    if how == 'always':\n"
        "        os.abort()\n"
        "    elif how == 'skip':\n"
        "        pytest.skip('requires hardware this machine lacks')\n"
        "    elif how.startswith('skip-second:'):\n"
        "        count = how.split(':', 1)[1]\n"
        "        n = int(open(count).read()) if os.path.exists(count) else 0\n"
        "        open(count, 'w').write(str(n + 1))\n"
        "        if n == 1:\n"
        "            pytest.skip('the device was busy for a moment')\n"
        "    elif how and not os.path.exists(how):\n"
        "        open(how, 'w').close()\n"
        "        os.abort()\n"
        "    base.Benchmark('crash_loop', knowneffect.reference('fma_loop'), knowneffect.measured('fma_loop')).run()\n")


# The crashing suite's switch is a variable side B sets: part of the caliber,
# declared like any difference an A/B is about.
CRASH_DECLARED = ["--expect-diff", "AB_TEST_CRASH"]


def test_a_side_that_crashes_is_retried_on_both_sides_then_reported(tmp_path):
    suite = crashing_suite(tmp_path)
    out = tmp_path / "crash"
    once = tmp_path / "crashed-once"
    r = ab("--a", suite, "--b", suite, "--ops", "crash_loop,fma_loop", "--rounds", 2, "--out", out,
           *CRASH_DECLARED, "--b-env", f"AB_TEST_CRASH={once}", check=0)
    lines = rounds(out)
    crashed = [row for row in lines if row["op"] == "crash_loop" and row["status"] == "crashed"]
    assert len(crashed) == 1 and crashed[0]["side"] == "B" and crashed[0]["round"] == "1"
    # The round ran again on both sides, as attempt 2, and counted.
    again = [row for row in lines if row["op"] == "crash_loop" and row["round"] == "1" and row["attempt"] == "2"]
    assert {row["side"] for row in again} == {"A", "B", "*"}
    assert "ran again on every side" in r.stdout

    out2 = tmp_path / "crash2"
    r = ab("--a", suite, "--b", suite, "--ops", "crash_loop,fma_loop", "--rounds", 2, "--out", out2,
           *CRASH_DECLARED, "--b-env", "AB_TEST_CRASH=always", check=1)
    assert "AB_FAILED" in r.stderr and "FAILED op crash_loop" in r.stdout
    lines = rounds(out2)
    crash = [row for row in lines if row["op"] == "crash_loop"]
    assert [row["status"] for row in crash if row["side"] == "B"] == ["crashed", "crashed"]
    assert [row["status"] for row in crash if row["side"] == "*" and row["round"] != "0"] == ["failed"]
    summary = json.loads((out2 / "ab_summary.json").read_text())
    assert "crash_loop" in summary["failed_ops"] and summary["rounds_measured"]["fma_loop"] == 2
    assert {row["op"] for row in rows(out2)} == {"fma_loop"}


def test_a_side_whose_tests_all_skip_fails_the_op_without_a_second_attempt(tmp_path):
    # A skip for hardware or a library the machine lacks comes out the same on
    # every try: a retry would only spend device time (fp8_paged_mqa_logits on
    # the H200 ran three times before this rule).
    suite = crashing_suite(tmp_path)
    out = tmp_path / "skip"
    r = ab("--a", suite, "--b", suite, "--ops", "crash_loop", "--rounds", 2, "--out", out,
           *CRASH_DECLARED, "--b-env", "AB_TEST_CRASH=skip", check=1)
    assert "FAILED op crash_loop" in r.stdout and "running the round again" not in r.stdout
    lines = [row for row in rounds(out) if row["round"] != "0"]
    assert [(row["side"], row["status"]) for row in lines if row["side"] in ("B", "*")] == \
        [("B", "no_tests"), ("*", "failed")]
    assert {row["attempt"] for row in lines} == {"1"}
    assert "requires hardware this machine lacks" in lines[-1]["reason"]

    # An op that measured before and skips now skipped for a passing cause:
    # that round runs again.
    out2 = tmp_path / "skip2"
    r = ab("--a", suite, "--b", suite, "--ops", "crash_loop", "--rounds", 2, "--out", out2,
           *CRASH_DECLARED, "--b-env", f"AB_TEST_CRASH=skip-second:{tmp_path / 'b-runs'}", check=0)
    assert "ran again on every side" in r.stdout
    b = [(row["round"], row["attempt"], row["status"]) for row in rounds(out2) if row["side"] == "B"]
    assert b == [("1", "1", "passed"), ("2", "1", "no_tests"), ("2", "2", "passed")]


def test_a_variable_only_one_side_sets_is_refused_until_declared(tmp_path):
    """Any variable a side sets may change a number, not only the ones zlcore knows by name."""
    out = tmp_path / "env"
    args = ["--a", SUITE, "--b", SUITE, "--b-env", "MY_SWITCH=1", "--ops", "fma_loop", "--rounds", 2, "--out", out]
    r = ab(*args, check=3)
    assert "UNDECLARED env.MY_SWITCH: A (unset), B 1" in r.stdout, r.stdout
    assert json.loads((out / "ab_identity.json").read_text())["status"] == "refused"
    run = out / "runs" / "fma_loop" / "r1-t1"
    assert json.loads((run / "B" / "run_identity.json").read_text())["env"]["MY_SWITCH"] == "1"
    assert "MY_SWITCH" not in json.loads((run / "A" / "run_identity.json").read_text())["env"]
    r = ab(*args, "--resume", "--expect-diff", "MY_SWITCH", check=0)
    ident = json.loads((out / "ab_identity.json").read_text())
    assert ident["status"] == "done" and ident["caliber"].startswith("fair"), ident


def test_a_tampered_rounds_csv_keeps_every_whole_line_and_reruns_only_what_is_missing(tmp_path):
    out = tmp_path / "tampered"
    args = ["--a", SUITE, "--b", SUITE, "--ops", "fma_loop", "--rounds", 3, "--out", out]
    ab(*args, check=0)
    lines = (out / "rounds.csv").read_text().splitlines(keepends=True)
    # Round 2's round line with a status zlcore never writes, and before round
    # 3's lines a line whose quote never closes.
    at = next(i for i, line in enumerate(lines) if line.startswith("fma_loop,2,1,*,done,"))
    lines[at] = lines[at].replace(",done,", ",finished,")
    r3 = next(i for i, line in enumerate(lines) if line.startswith("fma_loop,3,"))
    lines.insert(r3, 'fma_loop,3,1,A,passed,0,1.000,"runs/fma_loop/r3-t1/A,\n')
    tampered = "".join(lines)
    (out / "rounds.csv").write_text(tampered)

    r = ab(*args, "--resume", check=0)
    assert "rounds.csv repaired: kept " in r.stdout, r.stdout
    kept = list(out.glob("rounds.csv.bak-*"))
    assert len(kept) == 1 and kept[0].read_text() == tampered
    live = (out / "rounds.csv").read_text()
    for line in lines:
        if line not in (lines[at], lines[r3]):
            assert line in live, line  # every whole line is still there
    done = [row for row in rounds(out) if row["side"] == "*" and row["status"] == "done"]
    assert sorted((int(row["round"]), row["attempt"]) for row in done) == [(0, "1"), (1, "1"), (2, "2"), (3, "1")]
    assert rows(out) and all(row["samples_a"] == row["samples_b"] == 3 for row in rows(out))

    # rounds.csv as a link (appends refuse one): refused before any round runs.
    real = out / "rounds.real"
    (out / "rounds.csv").rename(real)
    (out / "rounds.csv").symlink_to(real.name)
    before = real.read_text()
    r = ab(*[a if a != 3 else 4 for a in args], "--resume", check=2)
    assert r.stderr.count("\n") == 1 and "rounds.csv is a symbolic link" in r.stderr, r.stderr
    assert real.read_text() == before


def test_resume_after_sigint_mid_round_continues_the_rounds(tmp_path):
    out = tmp_path / "int"
    cmd = [ZLCORE or "zlcore", "ab", *COMMON, "--threshold", "5", "--a", str(SUITE), "--b", str(SUITE),
           "--ops", "fma_loop", "--rounds", "4", "--out", str(out)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=clean_env(STRIP, ZL_HOST_CLOCK=CLOCK))
    # Wait until round 1 is whole and round 2 has started, then interrupt.
    deadline = time.time() + 300
    while time.time() < deadline:
        if (out / "rounds.csv").exists():
            lines = rounds(out)
            round_one_done = any(row["side"] == "*" and row["round"] == "1" for row in lines)
            if round_one_done and (out / "runs" / "fma_loop" / "r2-t1").exists():
                break
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=120)
    print(stdout[-2000:], stderr[-2000:])
    assert p.returncode == 130, stdout + stderr
    assert json.loads((out / "ab_identity.json").read_text())["status"] == "interrupted"
    before = rounds(out)
    assert not any(row["side"] == "*" and row["round"] == "2" for row in before)
    assert (out / "rounds.csv").read_text().endswith("\n")

    ab("--a", SUITE, "--b", SUITE, "--ops", "fma_loop", "--rounds", 4, "--out", out, "--resume", check=0)
    after = rounds(out)
    done = [row for row in after if row["side"] == "*" and row["status"] == "done"]
    assert sorted(int(row["round"]) for row in done) == [0, 1, 2, 3, 4]
    # Round 1 was not run again; round 2 ran as a new attempt beside the interrupted one.
    assert [row["attempt"] for row in done if row["round"] == "1"] == ["1"]
    assert (out / "runs" / "fma_loop" / "r2-t1").is_dir()
    assert [row["attempt"] for row in done if row["round"] == "2"] == ["2"]
    ident = json.loads((out / "ab_identity.json").read_text())
    assert (ident["status"], ident["ops"], ident["rounds"]) == ("done", ["fma_loop"], 4)
    # A resume that changes a setting that changes numbers is refused.
    r = ab("--a", SUITE, "--b", SUITE, "--b-env", "X=1", "--ops", "fma_loop", "--rounds", 4, "--out", out, "--resume")
    assert r.returncode == 2 and "b-env" in r.stderr

    # Every run of every side, cold or warm, shares the A/B's one record of
    # the sides that keep the timer's sustained procedure.
    shared = str(out / "sustained_rows.jsonl")
    runs = sorted((out / "runs" / "fma_loop").glob("r*-t*/*/run_identity.json"))
    assert len(runs) >= 9
    for identity in runs:
        assert json.loads(identity.read_text())["env"]["ZL_GRAPH_SUSTAINED_ROWS"] == shared, identity
    # An A/B measured before the rule existed decided per run: it resumes
    # that way, and the refusal says how.
    ident = json.loads((out / "ab_identity.json").read_text())
    assert ident["settings"].pop("sustained") == "sticky"
    (out / "ab_identity.json").write_text(json.dumps(ident))
    r = ab("--a", SUITE, "--b", SUITE, "--ops", "fma_loop", "--rounds", 4, "--out", out, "--resume")
    assert r.returncode == 2 and "resume with --sustained per-run" in r.stderr, r.stderr
    ab("--a", SUITE, "--b", SUITE, "--ops", "fma_loop", "--rounds", 5, "--out", out, "--resume",
       "--sustained", "per-run", check=0)
    fifth = sorted((out / "runs" / "fma_loop").glob("r5-t*/*/run_identity.json"))
    assert fifth and all("ZL_GRAPH_SUSTAINED_ROWS" not in json.loads(p.read_text())["env"] for p in fifth)
    # The other way round: an A/B measured sticky does not resume per-run.
    ident = json.loads((out / "ab_identity.json").read_text())
    ident["settings"]["sustained"] = "sticky"
    (out / "ab_identity.json").write_text(json.dumps(ident))
    r = ab("--a", SUITE, "--b", SUITE, "--ops", "fma_loop", "--rounds", 5, "--out", out, "--resume",
           "--sustained", "per-run")
    assert r.returncode == 2 and "resume with --sustained sticky" in r.stderr, r.stderr


def sleeping_suite(tmp_path):
    """The known-effect suite with sleep_loop: it sleeps for the seconds the
    file $AB_TEST_SLEEP_FILE holds (saying so in $AB_TEST_SLEEP_FILE.read),
    then times fma_loop."""
    return suite_with_op(
        SUITE, tmp_path / "suite", "sleep_loop",
        shapes="sleep_loop:\n  shapes: [[64, 100]]\n  shape_desc: \"N, ITERS\"\n",
        test_source="import os\nimport time\n\nimport pytest\n\nimport knowneffect\n\nfrom . import base\n\n\n"
        "@pytest.mark.sleep_loop\n"
        "def test_sleep_loop():\n"
        "    seconds = float(open(os.environ['AB_TEST_SLEEP_FILE']).read())\n"
        "    open(os.environ['AB_TEST_SLEEP_FILE'] + '.read', 'w').close()\n"
        "    time.sleep(seconds)\n"
        "    base.Benchmark('sleep_loop', knowneffect.reference('fma_loop'), knowneffect.measured('fma_loop')).run()\n")


def running(pid):
    """Whether `pid` is a process that still runs: a zombie, dead but not yet
    reaped by whoever inherited it, is not (as zlcore's own lease check reads it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def pytest_of(run_dir):
    """pids of the processes whose environment names `run_dir` as ZL_RUN_DIR."""
    want = f"ZL_RUN_DIR={run_dir}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if want in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def test_a_run_left_by_a_killed_ab_is_stopped_before_resume_measures(tmp_path):
    suite = sleeping_suite(tmp_path)
    out = tmp_path / "k9"
    sleep_file = tmp_path / "sleep"
    sleep_file.write_text("120")
    args = ["--a", str(suite), "--b", str(suite), "--ops", "sleep_loop", "--rounds", "2", "--out", str(out)]
    env = clean_env(STRIP, ZL_HOST_CLOCK=CLOCK, AB_TEST_SLEEP_FILE=str(sleep_file))
    p = subprocess.Popen([ZLCORE or "zlcore", "ab", *COMMON, *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    record = out / "runs" / "sleep_loop" / "r0-t1" / "A"
    deadline = time.time() + 120
    while time.time() < deadline and not (tmp_path / "sleep.read").exists():
        time.sleep(0.1)
    orphans = pytest_of(record)
    assert orphans, "the record run never started its sleep"
    # Another ab on the same directory meanwhile is refused, not run beside it.
    r = zltest.zl("ab", *COMMON, *args, "--resume", env=env, timeout=60)
    assert r.returncode == 2 and "in use by another zlcore ab" in r.stderr, r.stdout + r.stderr
    p.kill()  # SIGKILL: ab's cold run leads its own process group and lives on
    p.communicate(timeout=60)
    assert all(running(pid) for pid in orphans)

    sleep_file.write_text("0")
    r = zltest.zl("ab", *COMMON, *args, "--resume", env=env, timeout=600)
    print(r.stdout[-3000:], r.stderr[-2000:])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "runs/sleep_loop/r0-t1/A" in r.stdout and "by an earlier ab, is still running" in r.stdout, r.stdout
    assert not [pid for pid in orphans if running(pid)], "the orphan still runs"
    assert not list((out / "leases").glob("*.json"))
    done = [row for row in rounds(out) if row["side"] == "*" and row["status"] == "done"]
    assert sorted(int(row["round"]) for row in done) == [0, 1, 2]


def fill(path):
    """Writes until the file system says no, in smaller and smaller pieces."""
    with open(path, "wb", buffering=0) as f:
        piece = 1 << 16
        while piece >= 1:
            try:
                while True:
                    f.write(b"x" * piece)
            except OSError:
                piece //= 4


def test_a_full_disk_stops_the_ab_and_resume_finishes_it(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here; needs root")
    try:
        out = disk / "ab"
        args = ["--a", SUITE, "--b", SUITE, "--ops", "fma_loop,copy_loop", "--rounds", 3, "--out", out]
        cmd = [ZLCORE or "zlcore", "ab", *COMMON, "--threshold", "5", *map(str, args)]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=clean_env(STRIP, ZL_HOST_CLOCK=CLOCK))
        deadline = time.time() + 300
        while time.time() < deadline and p.poll() is None:
            if (out / "runs" / "fma_loop" / "r2-t1").exists():
                break
            time.sleep(0.05)
        fill(disk / "filler")
        stdout, stderr = p.communicate(timeout=300)
        print(stdout[-3000:], stderr[-2000:])
        # One line, exit 1, and nothing retried on the same full disk.
        assert p.returncode == 1, stdout + stderr
        assert len(stderr.strip().splitlines()) == 1 and "internal error" not in stderr, stderr
        assert "No space left on device" in stderr and "--resume finishes the A/B" in stderr, stderr
        ident = json.loads((out / "ab_identity.json").read_text())
        assert ident["status"] == "failed" and ident["reason"].startswith("No space left on device"), ident
        lines = rounds(out)
        assert not [row for row in lines if row["side"] == "*" and row["status"] != "done"], lines  # nothing given up
        runs = [row for row in lines if row["side"] != "*"]
        assert all(row["status"] == "passed" for row in runs[:-1]), runs
        assert not list((out / "runs").glob("*/r*-t2")), "a round ran again on the full disk"
        assert not (out / ".space_reserve").exists()

        (disk / "filler").unlink()
        ab(*args, "--resume", check=0)
        done = [row for row in rounds(out) if row["side"] == "*" and row["status"] == "done"]
        for op in ("fma_loop", "copy_loop"):
            assert sorted(int(row["round"]) for row in done if row["op"] == op) == [0, 1, 2, 3]
        assert json.loads((out / "ab_identity.json").read_text())["status"] == "done"
        assert (out / "report.md").is_file()
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


@pytest.mark.skipif(not VENDOR, reason="run through ctest (needs the fake backend)")
def test_warm_record_mode_replays_side_a_s_winners_in_warm_workers(tmp_path):
    # The example suite's mm tunes (a LibTuner-like tuner): side A records it
    # once, cold, on an isolated cache; with --warm every round of A, B and A2
    # then runs in its side's warm worker and replays that record into the
    # side's own cache.
    common = ["ab", "--backend", "host", "--dtypes", "float32", "--a", EXAMPLE_SUITE, "--b", EXAMPLE_SUITE,
              "--ops", "mm"]
    out = tmp_path / "rec"
    r = zltest.zl(*common, "--rounds", "2", "--calibrate", "--warm", "--out", out, env=clean_env(STRIP),
                  timeout=600)
    print(r.stdout[-2000:], r.stderr[-2000:])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "autotune replay/replay: same winners (1 kernel)" in r.stdout
    record = json.loads((out / "runs/mm/r0-t1/A/run_identity.json").read_text())
    assert record["worker"]["kind"] == "cold" and record["autotune"]["mode"] == "record"
    assert record["autotune"]["tuning_benchmarks"] > 0
    measured = [row for row in rounds(out) if row["side"] in ("A", "B", "A2") and row["round"] != "0"]
    assert len(measured) == 6
    for row in measured:
        ident = json.loads((out / row["run_dir"] / "run_identity.json").read_text())
        at = ident["autotune"]
        assert ident["worker"]["kind"] == "warm", (row, ident["worker"])
        assert at["mode"] == "replay" and at["replay_in_cache"] is True, row
        assert at["source_run_id"] == record["run_id"] and at["replay_misses"] == 0, row
        assert at["tuning_benchmarks"] == 0, row
        assert at["winners_hash"] == record["autotune"]["winners_hash"], row
        assert ident["tuner_cache"]["flaggems_dir"] == str(out / "tuner" / row["side"] / "flaggems"), row
    assert json.loads((out / "ab_identity.json").read_text())["settings"]["warm"] == "1"

    # Without --warm every run is a fresh process replaying into a cache of its own.
    cold = tmp_path / "cold"
    r = zltest.zl(*common, "--rounds", "1", "--out", cold, env=clean_env(STRIP), timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    for row in [row for row in rounds(cold) if row["side"] in ("A", "B") and row["round"] == "1"]:
        ident = json.loads((cold / row["run_dir"] / "run_identity.json").read_text())
        assert ident["worker"]["kind"] == "cold" and ident["tuner_cache"]["kind"] == "isolated", row
        assert ident["autotune"]["replay_in_cache"] is False, row
    assert "warm" not in json.loads((cold / "ab_identity.json").read_text())["settings"]


def test_a_finished_ab_is_reported_again_where_there_are_no_devices(tmp_path):
    # The device machine is gone; the directory came back. Re-reporting needs
    # no device, measuring more does.
    out = tmp_path / "gone"
    args = ["ab", "--backend", "fakegpu", "--timer", "host", "--a", EXAMPLE_SUITE, "--b", EXAMPLE_SUITE,
            "--ops", "abs", "--dtypes", "float32", "--rounds", "5", "--out", out]
    r = zltest.zl(*args, env=clean_env(STRIP, ZL_FAKE_DEVICE_COUNT="1"), timeout=600, backend_dir=VENDOR)
    assert r.returncode == 0, r.stdout + r.stderr
    before = rounds(out)
    none = clean_env(STRIP, ZL_FAKE_DEVICE_COUNT="0")
    r = zltest.zl(*args, "--resume", "--samples", "placements", env=none, timeout=120, backend_dir=VENDOR)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "devices none (nothing to run)" in r.stdout
    assert rounds(out) == before and all(row["samples_a"] == 25 for row in rows(out))
    assert json.loads((out / "ab_identity.json").read_text())["status"] == "done"
    r = zltest.zl(*args[:-4], "--rounds", "6", "--out", out, "--resume", env=none, timeout=120, backend_dir=VENDOR)
    assert r.returncode == 3 and r.stderr.startswith("PREFLIGHT_FAILED check=device "), r.stdout + r.stderr
    assert rounds(out) == before
    ident = json.loads((out / "ab_identity.json").read_text())
    assert (ident["status"], ident["ops"], ident["rounds"]) == ("done", ["abs"], 5)  # what the done covers


def test_rounds_spread_over_devices_and_each_round_stays_on_one(tmp_path):
    # The multi-device fake backend of tests/loader, timed by the host timer
    # on the example suite (NumPy): what is checked is where rounds ran.
    out = tmp_path / "multi"
    suite = EXAMPLE_SUITE
    r = zltest.zl("ab", "--backend", "fakegpu", "--timer", "host", "--devices", "0,1", "--a", suite, "--b", suite,
                  "--ops", "abs", "--dtypes", "float32", "--rounds", "5", "--out", out,
                  env=clean_env(STRIP, ZL_FAKE_DEVICE_COUNT="2"), timeout=600, backend_dir=VENDOR)
    print(r.stdout[-2000:], r.stderr[-2000:])
    assert r.returncode == 0, r.stdout + r.stderr
    runs = [row for row in rounds(out) if row["side"] in ("A", "B")]
    assert {row["device"] for row in runs} == {"0", "1"}
    by_round = {}
    for row in runs:
        by_round.setdefault((row["round"], row["attempt"]), set()).add(row["device"])
    assert all(len(devices) == 1 for devices in by_round.values()), by_round
