"""zlcore batch --launcher slurm end to end, through a real one-node Slurm
cluster (conftest.py starts it): real sbatch, a job array of shards, the
merge job, scancel of a shard mid-run, then --resume.

Run by ctest (slurm_e2e), which sets ZLCORE, ZL_SOURCE_DIR and
ZL_SLURM_ARTIFACTS (where the merged CSV and the resume log are kept).
"""

import csv
import io
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
COLUMNS = ["op", "test_node", "status", "exit_code", "signal", "backend", "device_index", "device_id", "timer",
           "bench_level", "started", "seconds", "warmed_on", "attempt", "run_dir", "reason", "t_zlcore", "t_start",
           "t_imports", "t_collection", "t_compiling", "t_autotuning", "t_suite", "t_measuring_base",
           "t_measuring_gems", "t_teardown"]

pytestmark = pytest.mark.skipif(not ZLCORE, reason="run through ctest (needs ZLCORE)")


def zl_env(slurm):
    env = {k: v for k, v in slurm.env.items()
           if not k.startswith(("ZL_", "BENCH_LEVEL", "OP", "SHAPE_", "TEST_NODE", "PARALLEL_WARMUP"))}
    env["OMP_NUM_THREADS"] = env["OPENBLAS_NUM_THREADS"] = "1"
    return env


def batch(slurm, out, ops, *extra, backend="host", env=None, timeout=150):
    head = [ZLCORE] + (["--backend-dir", VENDOR] if backend == "fakegpu" else [])
    argv = head + ["batch", "--launcher", "slurm", "--backend", backend, "--ops", ops, "--flaggems-dir", str(SUITE),
                   "--python", "/usr/bin/python3", "--dtypes", "float32", "--timer", "host", "--level", "core",
                   "--out", str(out), *extra]
    return subprocess.run(argv, env=dict(zl_env(slurm), **(env or {})), capture_output=True, text=True,
                          timeout=timeout)


def read_rows(path):
    text = Path(path).read_text()
    rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    assert rows[0] == COLUMNS, "the merged CSV keeps the columns of ops_status.csv"
    return [dict(zip(COLUMNS, r)) for r in rows[1:]]


def squeue_empty(slurm, jobs):
    r = subprocess.run(["squeue", "-h", "-o", "%i", "-j", ",".join(jobs)], env=slurm.env, capture_output=True,
                       text=True)
    return r.returncode != 0 or not r.stdout.strip()


def keep(name, text):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / name).write_text(text)
    print(f"\n===== {name}\n{text}")


def test_dry_run_prints_scripts_and_plan_and_submits_nothing(slurm, tmp_path):
    r = batch(slurm, tmp_path / "b", "abs,add,mm", "--shards", "2", "--partition", "zltest", "--time", "5",
              "--sbatch-arg=--comment=zl", "--dry-run")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "#!/bin/sh" in r.stdout and "--array=0,1" in r.stdout and "--partition=zltest" in r.stdout
    assert "--dependency=afterany:" in r.stdout and "--comment=zl" in r.stdout and "--time=5" in r.stdout
    assert '"assignment"' in r.stdout
    assert not (tmp_path / "b").exists()


def test_two_shards_merge_into_one_status_csv(slurm, tmp_path):
    out = tmp_path / "b"
    ops = ["abs", "add", "mul", "exp"]
    r = batch(slurm, out, ",".join(ops), "--shards", "2", "--wait")
    assert r.returncode == 0, r.stdout + r.stderr + slurm.log_tail()
    assert "submitted shards 0,1 as job array" in r.stdout
    rows = read_rows(out / "ops_status.csv")
    keep("two_shards_ops_status.csv", (out / "ops_status.csv").read_text())
    keep("two_shards_stdout.txt", r.stdout)
    assert sorted(x["op"] for x in rows) == sorted(ops), "every op exactly once"
    assert all(x["status"] == "passed" and x["exit_code"] == "0" for x in rows), rows
    assert {x["run_dir"].split("/")[1] for x in rows} == {"0", "1"}, "both shards ran ops"
    plan = json.loads((out / "plan.json").read_text())
    sub = plan["submissions"][0]
    for x in rows:
        ident = json.loads((out / x["run_dir"] / "run_identity.json").read_text())
        host = ident["host"]
        shard = x["run_dir"].split("/")[1]
        assert host["SLURM_ARRAY_JOB_ID"] == sub["array_job"] and host["SLURM_ARRAY_TASK_ID"] == shard
        assert host["SLURM_JOB_ID"] and host["name"] == slurm.host
        assert x["device_index"] == "0", "the host backend's one device"
    assert (out / "summary.txt").read_text() in r.stdout


def test_scancel_a_shard_then_resume_reruns_only_what_did_not_pass(slurm, tmp_path):
    out = tmp_path / "b"
    ops = ["abs", "add", "mm", "mul", "exp", "softmax", "sum", "layer_norm"]
    r = batch(slurm, out, ",".join(ops), "--shards", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    sub = json.loads((out / "plan.json").read_text())["submissions"][0]
    array_job, merge_job = sub["array_job"], sub["merge_job"]
    assert f"job array {array_job}" in r.stdout and "squeue -j" in r.stdout

    # Kill shard 1 as soon as its first op has landed: the next is in flight.
    shard_csv = out / "shards" / "1" / "ops_status.csv"
    deadline = time.time() + 90
    while time.time() < deadline:
        if shard_csv.exists() and shard_csv.read_text().count("\n") >= 2:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("shard 1 wrote no row\n" + slurm.log_tail())
    subprocess.run(["scancel", f"{array_job}_1"], env=slurm.env, check=True)

    deadline = time.time() + 90
    while not (squeue_empty(slurm, [array_job, merge_job]) and (out / "merge.json").exists()):
        assert time.time() < deadline, "the merge job did not run after the scancel\n" + slurm.log_tail()
        time.sleep(0.2)
    first = read_rows(out / "ops_status.csv")
    shard1 = [x for x in first if x["run_dir"].startswith("shards/1/")]
    assert all(x["status"] in ("passed", "interrupted") for x in shard1), \
        [(x["op"], x["status"], x["reason"]) for x in shard1]
    assert len({x["op"] for x in shard1 if x["status"] == "passed"}) < 4, "the scancel came too late to test"
    passed_before = {x["op"]: x for x in first if x["status"] == "passed"}
    keep("killed_ops_status.csv", (out / "ops_status.csv").read_text())

    r = batch(slurm, out, ",".join(ops), "--shards", "2", "--resume", "--wait")
    keep("resume_stdout.txt", r.stdout + r.stderr)
    keep("resume_batch.log", (out / "batch.log").read_text())
    assert r.returncode == 0, r.stdout + r.stderr + slurm.log_tail()
    assert "submitted shards 1 as job array" in r.stdout, "only the killed shard is resubmitted"
    rows = read_rows(out / "ops_status.csv")
    keep("resume_ops_status.csv", (out / "ops_status.csv").read_text())
    last = {}
    for x in rows:
        last[x["op"]] = x
    assert sorted(last) == sorted(ops) and all(x["status"] == "passed" for x in last.values()), rows
    for op, row in passed_before.items():
        assert [x for x in rows if x["op"] == op] == [row], f"{op} passed before and must not rerun"
    rerun = [x for x in rows if x["op"] not in passed_before]
    assert rerun and all(x["run_dir"].startswith("shards/1/") for x in rerun)
    assert any(x["attempt"] == "2" for x in rerun if x["status"] == "passed") or \
        all(x["attempt"] == "1" for x in rerun), "attempts count up from the killed shard's rows"


@pytest.mark.skipif(not VENDOR, reason="needs the fake multi-device backend (ZL_VENDOR_DIR)")
def test_shards_run_on_the_gpus_slurm_allocated(slurm, tmp_path):
    # The fake backend's visibility variable is not one Slurm sets, so each
    # shard maps SLURM_JOB_GPUS through the backend; the cluster has 4 GPUs.
    out = tmp_path / "b"
    ops = ["abs", "add", "mul", "exp"]
    r = batch(slurm, out, ",".join(ops), "--shards", "2", "--gpus-per-shard", "2", "--wait", backend="fakegpu",
              env={"ZL_FAKE_DEVICE_COUNT": "4"})
    assert r.returncode == 0, r.stdout + r.stderr + slurm.log_tail()
    rows = read_rows(out / "ops_status.csv")
    assert sorted(x["op"] for x in rows) == sorted(ops)
    per_shard = {}
    for x in rows:
        per_shard.setdefault(x["run_dir"].split("/")[1], set()).add(int(x["device_index"]))
    allocated = {}
    for shard in ("0", "1"):
        log = (out / "slurm" / f"shard-{shard}.log").read_text()
        assert "(SLURM_JOB_GPUS=" in log, log
        allocated[shard] = {int(i) for i in log.split("(SLURM_JOB_GPUS=")[1].split(")")[0].split(",")}
        assert len(allocated[shard]) == 2
        assert per_shard[shard] <= allocated[shard], (per_shard, allocated)
    assert not allocated["0"] & allocated["1"], "Slurm gave the shards different GPUs"
