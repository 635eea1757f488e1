#!/usr/bin/env python3
"""How close `zlcore batch` comes to ideal scaling over k devices.

A benchmark, not a test. It writes a throwaway suite of N sleep-only ops
(each one shape that sleeps --sleep seconds, via the fault suite's
SleepBenchmark), runs them as a batch on k = 1, 2, 4, 8 devices of the
multi-device fake backend, and compares each wall time with the ideal:

    ideal(k) = ceil(N / k) * t_op

where t_op is the median wall time of one lone `zlcore run` of the same op
(process start, preflight, pytest, identity: everything an op costs when
nothing else runs). Efficiency = ideal / wall; 90 % or more is the target.

A second figure separates the scheduler from the ops: occupancy =
sum of the ops' own seconds (ops_status.csv) / (k * wall), the share of the
batch's wall time during which the devices had an op running. Where
efficiency falls below occupancy, the ops themselves got slower when run
side by side (start-up competing for CPU), not the queue.

The ops only sleep, so the scheduler is what is measured, as long as the
host has a core per concurrent op for the start-up work (pytest and numpy
imports). On a 2-core host, k = 8 measures CPU contention as well.

usage: bench/batch_scaling.py [--zlcore build/bin/zlcore]
       [--vendor-dir build/tests/loader/vendor] [--ops 16] [--sleep 2] [--k 1,2,4,8]
"""

import argparse
import csv
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAULT = ROOT / "tests" / "fixtures" / "fault_suite"
EXAMPLE = ROOT / "examples" / "suite"


def make_suite(where: Path, n: int) -> Path:
    suite = where / "sleep_suite"
    bench = suite / "benchmark"
    bench.mkdir(parents=True)
    markers = "\n".join(f"    sleep{i}: operator sleep{i} (sleeps once)" for i in range(n))
    (suite / "pytest.ini").write_text(
        f"[pytest]\ntestpaths = benchmark\npythonpath = {EXAMPLE / 'src'}\nmarkers =\n{markers}\n")
    (bench / "__init__.py").write_text("")
    # The suite's harness by symlink, as the fault suite does it (so
    # benchmark.base binds to this suite's conftest).
    for name in ("base.py", "conftest.py", "consts.py"):
        os.symlink(EXAMPLE / "benchmark" / name, bench / name)
    os.symlink(FAULT / "benchmark" / "faults.py", bench / "faults.py")
    (bench / "core_shapes.yaml").write_text(
        "".join(f"sleep{i}:\n  shapes:\n    - [1]\n  shape_desc: \"N\"\n" for i in range(n)))
    for i in range(n):
        (bench / f"test_sleep{i}.py").write_text(
            "import pytest\n\nfrom . import faults\n\n\n"
            f"@pytest.mark.sleep{i}\ndef test_sleep{i}():\n"
            f"    faults.SleepBenchmark(op_name=\"sleep{i}\", torch_op=faults.no_op, gems_op=faults.sleep_op,\n"
            "                          dtypes=faults.FAULT_DTYPES).run()\n")
    return suite


def common(args, suite):
    return ["--flaggems-dir", str(suite), "--python", sys.executable if args.python is None else args.python,
            "--level", "core", "--timer", "host"]


def env(args, devices):
    e = dict(os.environ, ZL_FAKE_DEVICE_COUNT=str(devices), ZL_SLEEP_OP_SECONDS=str(args.sleep))
    # One BLAS thread per op: eight numpy imports at once with a thread per
    # core each would oversubscribe the host and measure that instead.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        e.setdefault(var, str(args.threads_per_op))
    e.pop("ZL_FAKE_BUSY", None)
    e.pop("PARALLEL_WARMUP_GPUS", None)
    return e


def lone_run(args, suite, work: Path, i: int) -> float:
    out = work / f"lone{i}"
    cmd = [args.zlcore, "--backend-dir", args.vendor_dir, "run", "--backend", "fakegpu", "--device", "0",
           "--op", "sleep0", "--out", str(out), "--quiet", *common(args, suite)]
    t = time.monotonic()
    r = subprocess.run(cmd, env=env(args, 1), capture_output=True, text=True)
    wall = time.monotonic() - t
    if r.returncode != 0:
        sys.exit(f"lone run failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return wall


def batch(args, suite, work: Path, k: int):
    out = work / f"batch_k{k}"
    ops = ",".join(f"sleep{i}" for i in range(args.ops))
    cmd = [args.zlcore, "--backend-dir", args.vendor_dir, "batch", "--backend", "fakegpu", "--devices", "all",
           "--ops", ops, "--out", str(out), *common(args, suite)]
    t = time.monotonic()
    r = subprocess.run(cmd, env=env(args, k), capture_output=True, text=True)
    wall = time.monotonic() - t
    if r.returncode != 0:
        sys.exit(f"batch k={k} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    with open(out / "ops_status.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == args.ops and all(x["status"] == "passed" for x in rows)
    devices = {x["device_index"] for x in rows}
    op_seconds = [float(x["seconds"]) for x in rows]
    return wall, len(devices), statistics.mean(op_seconds), sum(op_seconds) / (k * wall)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--zlcore", default=str(ROOT / "build" / "bin" / "zlcore"))
    p.add_argument("--vendor-dir", default=str(ROOT / "build" / "tests" / "loader" / "vendor"))
    p.add_argument("--python", default="/usr/bin/python3")
    p.add_argument("--ops", type=int, default=16)
    p.add_argument("--sleep", type=float, default=2.0)
    p.add_argument("--k", default="1,2,4,8")
    p.add_argument("--lone-runs", type=int, default=3)
    p.add_argument("--threads-per-op", type=int, default=1, help="OPENBLAS/OMP/MKL threads per op (default 1)")
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    args = p.parse_args()

    work = Path(tempfile.mkdtemp(prefix="zl_batch_scaling_"))
    try:
        suite = make_suite(work, args.ops)
        lone = [lone_run(args, suite, work, i) for i in range(args.lone_runs)]
        t_op = statistics.median(lone)
        print(f"host: {os.cpu_count()} cpus; {args.ops} sleep-only ops of {args.sleep:g} s; "
              f"one lone `zlcore run`: median {t_op:.2f} s of {', '.join(f'{x:.2f}' for x in lone)}")
        print(f"{'k':>2}  {'devices used':>12}  {'wall s':>7}  {'ideal s':>7}  {'efficiency':>10}  "
              f"{'over ideal':>10}  {'mean op s':>9}  {'occupancy':>9}")
        for k in (int(x) for x in args.k.split(",")):
            wall, used, op_mean, occupancy = batch(args, suite, work, k)
            ideal = math.ceil(args.ops / k) * t_op
            print(f"{k:>2}  {used:>12}  {wall:>7.2f}  {ideal:>7.2f}  {ideal / wall * 100:>9.1f}%  "
                  f"{(wall / ideal - 1) * 100:>9.1f}%  {op_mean:>9.2f}  {occupancy * 100:>8.1f}%", flush=True)
    finally:
        if args.keep:
            print("work directory:", work)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
