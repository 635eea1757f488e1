"""zlcore ab --launcher slurm end to end, through the same one-node cluster
(conftest.py): the ops split over two shards, each shard a whole A/B of the
example suite against itself on the host backend (two rounds, so it stays
fast), and the merge job's one report over every op.
"""

import csv
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

ZLCORE = os.environ.get("ZLCORE", "")
VENDOR = os.environ.get("ZL_VENDOR_DIR", "")
SOURCE = Path(os.environ.get("ZL_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SUITE = SOURCE / "examples" / "suite"
ARTIFACTS = Path(os.environ.get("ZL_SLURM_ARTIFACTS", "/tmp/zlcore-slurm-artifacts"))

pytestmark = pytest.mark.skipif(not ZLCORE, reason="run through ctest (needs ZLCORE)")


def ab(slurm, out, ops, *extra, timeout=180, backend="host", env=None):
    clean = {k: v for k, v in slurm.env.items()
             if not k.startswith(("ZL_", "BENCH_LEVEL", "OP", "SHAPE_", "TEST_NODE", "REPLAY_FROM", "FLAGGEMS_DIR"))}
    clean["OMP_NUM_THREADS"] = clean["OPENBLAS_NUM_THREADS"] = "1"
    env = dict(clean, **(env or {}))
    head = [ZLCORE] + (["--backend-dir", VENDOR] if backend == "fakegpu" else [])
    argv = head + ["ab", "--launcher", "slurm", "--backend", backend, "--a", str(SUITE), "--b", str(SUITE),
                   "--a-python", "/usr/bin/python3", "--b-python", "/usr/bin/python3", "--dtypes", "float32",
                   "--timer", "host", "--level", "core", "--rounds", "2", "--ops", ops, "--out", str(out), *extra]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)


def round_lines(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_ab_two_shards_merge_into_one_report(slurm, tmp_path):
    out = tmp_path / "ab"
    ops = ["abs", "add", "mul", "exp"]
    r = ab(slurm, out, ",".join(ops), "--shards", "2", "--wait")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "ab_two_shards_stdout.txt").write_text(r.stdout + r.stderr)
    assert r.returncode == 0, r.stdout + r.stderr + slurm.log_tail()
    assert "submitted shards 0,1 as job array" in r.stdout
    assert (out / "summary.txt").read_text() in r.stdout

    # One report over every op, recomputed from the rounds of both shards.
    report = json.loads((out / "report.json").read_text())
    assert {row["op"] for row in report["rows"]} == set(ops)
    assert all(row["samples_a"] == row["samples_b"] == 2 for row in report["rows"]), report["rows"]
    for name in ("report.md", "report.csv", "report.html", "ab_summary.json"):
        assert (out / name).stat().st_size > 0, name
    summary = json.loads((out / "ab_summary.json").read_text())
    assert summary["rounds_measured"] == {op: 2 for op in ops}
    assert json.loads((out / "ab_identity.json").read_text())["status"] == "done"

    # Both shards ran, each its own A/B, each op in exactly one of them, and
    # both sides of a round on the same node and device.
    plan = json.loads((out / "plan.json").read_text())
    assert plan["command"] == "ab" and plan["assignment"] == [["abs", "mul"], ["add", "exp"]]
    array_job = plan["submissions"][0]["array_job"]
    merged = round_lines(out / "rounds.csv")
    shard_of = {x["op"]: x["run_dir"].split("/")[1] for x in merged}
    assert shard_of == {"abs": "0", "mul": "0", "add": "1", "exp": "1"}
    for shard in ("0", "1"):
        assert json.loads((out / "shards" / shard / "ab_identity.json").read_text())["status"] == "done"
    for x in merged:
        if x["side"] in ("A", "B"):
            host = json.loads((out / x["run_dir"] / "run_identity.json").read_text())["host"]
            assert host["SLURM_ARRAY_JOB_ID"] == array_job
            assert host["SLURM_ARRAY_TASK_ID"] == shard_of[x["op"]]

    # A resume with every shard finished submits nothing and merges in place.
    r = ab(slurm, out, ",".join(ops), "--shards", "2", "--resume", "--wait")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "nothing to submit" in r.stdout and len(plan["submissions"]) == 1


def test_ab_scancel_a_shard_then_resume_reruns_only_that_shard(slurm, tmp_path):
    out = tmp_path / "ab"
    ops = ["abs", "add", "mul", "exp"]
    r = ab(slurm, out, ",".join(ops), "--shards", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "follow:  squeue -j" in r.stdout
    sub = json.loads((out / "plan.json").read_text())["submissions"][0]
    array_job, merge_job = sub["array_job"], sub["merge_job"]

    # Kill shard 1 once its first run has landed: the next is in flight.
    shard_csv = out / "shards" / "1" / "rounds.csv"
    deadline = time.time() + 90
    while not (shard_csv.exists() and shard_csv.read_text().count("\n") >= 2):
        assert time.time() < deadline, "shard 1 wrote no round\n" + slurm.log_tail()
        time.sleep(0.05)
    subprocess.run(["scancel", f"{array_job}_1"], env=slurm.env, check=True)
    deadline = time.time() + 120
    while not (out / "merge.json").exists() or subprocess.run(
            ["squeue", "-h", "-o", "%i", "-j", f"{array_job},{merge_job}"], env=slurm.env, capture_output=True,
            text=True).stdout.strip():
        assert time.time() < deadline, "the merge job did not run after the scancel\n" + slurm.log_tail()
        time.sleep(0.2)
    assert json.loads((out / "merge.json").read_text())["exit_code"] == 1
    assert "AB_INCOMPLETE: shard(s) 1 " in (out / "summary.txt").read_text()
    shard0 = (out / "shards" / "0" / "rounds.csv").read_text()

    r = ab(slurm, out, ",".join(ops), "--shards", "2", "--resume", "--wait")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "ab_resume_stdout.txt").write_text(r.stdout + r.stderr)
    assert r.returncode == 0, r.stdout + r.stderr + slurm.log_tail()
    assert "submitted shards 1 as job array" in r.stdout, "only the killed shard is resubmitted"
    assert (out / "shards" / "0" / "rounds.csv").read_text() == shard0, "shard 0 ran nothing more"
    summary = json.loads((out / "ab_summary.json").read_text())
    assert summary["rounds_measured"] == {op: 2 for op in ops}
    assert {row["op"] for row in json.loads((out / "report.json").read_text())["rows"]} == set(ops)


def test_ab_caliber_refusal_in_a_shard_refuses_the_merged_ab(slurm, tmp_path):
    # Side B runs with a variable that changes numbers and nobody declared it:
    # each shard's caliber check refuses before measuring more than one round,
    # and the merge says so with the caliber's exit code, 3.
    out = tmp_path / "ab"
    r = ab(slurm, out, "abs,add", "--shards", "2", "--b-env", "ZL_KNOWN_EFFECT_PCT=10", "--wait")
    assert r.returncode == 3, r.stdout + r.stderr + slurm.log_tail()
    assert json.loads((out / "merge.json").read_text())["exit_code"] == 3
    assert "CALIBER_MISMATCH" in (out / "summary.txt").read_text()
    for shard in ("0", "1"):
        ident = json.loads((out / "shards" / shard / "ab_identity.json").read_text())
        assert ident["status"] == "refused", ident
        log = (out / "slurm" / f"shard-{shard}.log").read_text()
        assert "UNDECLARED env.ZL_KNOWN_EFFECT_PCT" in log, log
    # Nothing past the first round was measured in either shard.
    assert {x["round"] for x in round_lines(out / "rounds.csv")} <= {"0", "1"}

    # Declared, the same A/B resumes and finishes.
    r = ab(slurm, out, "abs,add", "--shards", "2", "--b-env", "ZL_KNOWN_EFFECT_PCT=10",
           "--expect-diff", "env.ZL_KNOWN_EFFECT_PCT", "--resume", "--wait")
    assert r.returncode == 0, r.stdout + r.stderr + slurm.log_tail()
    assert json.loads((out / "ab_identity.json").read_text())["status"] == "done"


def test_ab_calibrate_over_shards_merges_one_aa_report(slurm, tmp_path):
    out = tmp_path / "ab"
    ops = ["abs", "add"]
    r = ab(slurm, out, ",".join(ops), "--shards", "2", "--calibrate", "--wait")
    assert r.returncode == 0, r.stdout + r.stderr + slurm.log_tail()
    merged = round_lines(out / "rounds.csv")
    # Every round of every op ran side A a second time (A2), in its own shard.
    for op in ops:
        sides = {(x["round"], x["side"]) for x in merged if x["op"] == op and x["status"] == "passed"}
        assert {("1", "A2"), ("2", "A2"), ("1", "B"), ("2", "B")} <= sides, (op, sides)
    aa = json.loads((out / "aa.json").read_text())
    assert {row["op"] for row in aa["rows"]} == set(ops), aa
    assert "A/A in this run" in (out / "report.md").read_text()


def test_ab_gpus_per_shard_runs_both_sides_of_a_round_on_one_allocated_device(slurm, tmp_path):
    out = tmp_path / "ab"
    ops = ["abs", "add"]
    r = ab(slurm, out, ",".join(ops), "--shards", "1", "--gpus-per-shard", "2", "--wait", backend="fakegpu",
           env={"ZL_FAKE_DEVICE_COUNT": "4"})
    assert r.returncode == 0, r.stdout + r.stderr + slurm.log_tail()
    log = (out / "slurm" / "shard-0.log").read_text()
    assert "(SLURM_JOB_GPUS=" in log, log
    allocated = {int(i) for i in log.split("(SLURM_JOB_GPUS=")[1].split(")")[0].split(",")}
    assert len(allocated) == 2
    merged = round_lines(out / "rounds.csv")
    by_round = {}
    for x in merged:
        if x["side"] in ("A", "B") and x["status"] == "passed":
            by_round.setdefault((x["op"], x["round"]), set()).add(int(x["device"]))
    assert by_round and all(len(d) == 1 for d in by_round.values()), by_round
    assert set().union(*by_round.values()) <= allocated, (by_round, allocated)
