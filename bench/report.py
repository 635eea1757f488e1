#!/usr/bin/python3
"""zlcore's own cost: the whole-process comparisons and the one table.

A benchmark, not a test: it prints numbers and a pass/fail per target, and
always exits 0 unless it could not measure at all. scripts/bench.sh runs the
Google Benchmark binaries first (their JSON lands in --gbench-dir) and then
this script, which times whole processes and prints the table.

Every whole-process comparison runs the zlcore side and the baseline side
alternately (so drift in the machine hits both alike), `--reps` times each,
and reports medians, their ratio, and the median of the paired differences
(each pair ran back to back, so a sample another process slowed is outvoted;
the targets are judged on it):

  run        `zlcore run` of one example-suite op  vs  the exact pytest command
             line it spawned (from its run_identity.json "command"), in the
             same directory with the child's environment rebuilt
  preflight  `zlcore run` on a FlagGems dir without benchmark/ (exit 3)  vs
             that same pytest command line there (pytest: exit 4)
  backends   `zlcore backends` with every installed plugin  vs  the same
             command on an empty plugin directory (the difference is loading),
             both with a warm probe cache; and, for information, the same
             command with an empty probe cache each time (every plugin
             probed in a child of its own, docs/backend-abi.md)
  batch      `zlcore batch` of N ops on one fake device  vs  a shell script
             that runs the very `zlcore run` command lines the batch ran, one
             after another; the difference per op is the batch's scheduling
             and bookkeeping. The children are real `zlcore run`s (preflight,
             run directory, identity twice, plan, device pinning) whose pytest
             is a no-op: --python is a small shell script that answers
             preflight's probe and exits 0 for `-m pytest`.
             1,000 real pytest children (about a second each) would take
             most of an hour per side and bury a millisecond in their noise.
"""

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "suite"
FAULT = ROOT / "tests" / "fixtures" / "fault_suite"


def wall(argv, cwd=None, env=None, stdout=subprocess.DEVNULL, ok=(0,)):
    """Seconds one process takes, start to reap; raises when its exit is unexpected."""
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=cwd, env=env, stdout=stdout, stderr=subprocess.STDOUT)
    dt = time.perf_counter() - t0
    if p.returncode not in ok:
        raise RuntimeError(f"{argv[:4]}... exited {p.returncode}, expected {ok}")
    return dt


def alternate(reps, zl_side, base_side):
    """Runs the two sides alternately; returns (zlcore samples, baseline samples)."""
    zs, bs = [], []
    for i in range(reps):
        # Alternate which goes first too, so neither always runs on a cache
        # the other just warmed.
        if i % 2 == 0:
            zs.append(zl_side(i))
            bs.append(base_side(i))
        else:
            bs.append(base_side(i))
            zs.append(zl_side(i))
    return zs, bs


def child_env(identity, run_dir, prefix):
    """The pytest child's environment as run.cpp builds it (docs/run-directory.md)."""
    env = dict(os.environ)
    env.update(identity["env"])  # the number knobs: ZL_BACKEND, ZL_TIMER, GEMS_VENDOR, ...
    pp = os.environ.get("PYTHONPATH", "")
    env["PYTHONPATH"] = str(prefix / "share" / "zlcore" / "python") + (":" + pp if pp else "")
    env["PYTHONUNBUFFERED"] = "1"
    for var, value in (identity["device"].get("visibility") or {}).items():
        env[var] = value
    env["ZL_RUN_DIR"] = str(run_dir)
    env["ZL_RESULTS_FILE"] = str(run_dir / "results.jsonl")
    env["ZL_CHILD_DIR"] = str(run_dir / ".child")
    env["ZL_EXPECT_DEVICE_ID"] = identity["device"]["id"]
    return env


def measure_run(zlcore, prefix, python, scratch, reps, op):
    common = ["run", "--backend", "host", "--flaggems-dir", str(EXAMPLE), "--op", op, "--python", python]
    # A first run to learn the command line and to warm the page cache and
    # __pycache__ for both sides.
    first = scratch / "run-first"
    wall([zlcore] + common + ["--out", str(first)])
    identity = json.loads((first / "run_identity.json").read_text())
    command, cwd = identity["command"], identity["flaggems_dir"]

    def zl_side(i):
        return wall([zlcore] + common + ["--out", str(scratch / f"run-zl-{i}")])

    def base_side(i):
        rd = scratch / f"run-base-{i}"
        (rd / ".child").mkdir(parents=True)
        with open(rd / "pytest.log", "wb") as log:
            return wall(command, cwd=cwd, env=child_env(identity, rd, prefix), stdout=log)

    base_side(-1)
    zs, bs = alternate(reps, zl_side, base_side)
    return zs, bs, " ".join(command)


def measure_preflight(zlcore, prefix, python, scratch, reps, op):
    # A "FlagGems" without benchmark/: zlcore stops at check=flaggems_dir; the
    # same pytest command line there stops at argparse (exit 4, unrecognized
    # arguments --level ...), the confusing failure preflight exists to replace.
    empty = scratch / "no-benchmark"
    empty.mkdir()
    identity = json.loads((scratch / "run-first" / "run_identity.json").read_text())
    command = identity["command"]

    def zl_side(i):
        return wall([zlcore, "run", "--backend", "host", "--flaggems-dir", str(empty), "--op", op,
                     "--python", python, "--out", str(scratch / f"pf-{i}")], ok=(3,))

    def base_side(i):
        rd = scratch / f"pf-base-{i}"
        (rd / ".child").mkdir(parents=True)
        return wall(command, cwd=empty, env=child_env(identity, rd, prefix), ok=(4,))

    zl_side(-1)
    base_side(-1)
    return alternate(reps, zl_side, base_side)


def measure_backends(zlcore, scratch, reps):
    empty = scratch / "no-plugins"
    empty.mkdir()
    # This first call fills the probe cache: the warm samples spawn no probe.
    warm = dict(os.environ, ZL_CACHE_DIR=str(scratch / "probe-cache"))
    n = len(json.loads(subprocess.run([zlcore, "backends", "--json"], capture_output=True, text=True, env=warm,
                                      check=True).stdout).get("backends", []))
    zs, bs = alternate(reps, lambda i: wall([zlcore, "backends"], env=warm),
                       lambda i: wall([zlcore, "--backend-dir", str(empty), "backends"], env=warm))
    cold = [wall([zlcore, "backends"], env=dict(os.environ, ZL_CACHE_DIR=str(scratch / f"probe-cache-cold-{i}")))
            for i in range(reps)]
    return zs, bs, n, cold


def results_writer_seconds(prefix, python, scratch, shapes=1000):
    """The Python results plugin appending `shapes` rows, timed in its own interpreter."""
    code = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from zlcore_pytest.results import _Writer
out, n = sys.argv[2], int(sys.argv[3])
rows = [{"op": "abs", "test_node": "benchmark/test_abs.py::test_abs", "dtype": "float16",
         "shape": json.dumps([[64 * (i + 1), 64]]), "shape_detail": [[64 * (i + 1), 64]],
         "mode": "kernel", "bench_level": "core", "latency_base_ms": 0.00161, "latency_ms": 0.00108,
         "speedup": 1.49, "timer": "graph", "timer_base": "graph", "fallback_reason": None,
         "repeats": 10, "samples_ms": [0.00108] * 10, "samples_base_ms": [0.00161] * 10,
         "spread_pct": 0.4, "spread_base_pct": 0.3, "gbps": None, "tflops": None,
         "cluster_kernel": None, "error": None} for i in range(n)]
best = None
for rep in range(5):
    path = os.path.join(out, "results-%d.jsonl" % rep)
    w = _Writer(path)
    t0 = time.perf_counter()
    for r in rows:
        w(r)
    dt = time.perf_counter() - t0
    best = dt if best is None else min(best, dt)
    assert w.rows == n and w.write_errors == 0, w.as_json()
print(best)
"""
    out = subprocess.run([python, "-c", code, str(prefix / "share" / "zlcore" / "python"), str(scratch), str(shapes)],
                         capture_output=True, text=True, check=True).stdout
    return float(out.strip())


FAKE_PYTHON = """#!/bin/sh
# A pytest that does nothing: preflight's probe (-c ...) gets what it asks
# for (version, executable, the modules it lacks: none; run/python_choice.cpp)
# and `-m pytest ...` exits 0 at once. Everything else zlcore run does is real.
if [ "$1" = "-c" ]; then echo 3.11.2; echo "$0"; echo missing:; fi
exit 0
"""


def measure_batch(zlcore, vendor_dir, scratch, ops, reps):
    fake = scratch / "fake-python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    ops_file = scratch / "ops.yaml"
    ops_file.write_text("ops:\n" + "".join(
        f"  - {{name: op{i:04d}, node: 'benchmark/test_ok1.py::test_ok1'}}\n" for i in range(ops)))
    env = dict(os.environ, ZL_FAKE_DEVICE_COUNT="1")

    def batch_argv(out):
        # --cold: the children are no-op `zlcore run`s, which a warm worker
        # (a real Python serving pytest) cannot stand in for; this measures
        # the queue and its bookkeeping, the warm path has its own figures.
        return [zlcore, "--backend-dir", str(vendor_dir), "batch", "--backend", "fakegpu", "--devices", "0", "--cold",
                "--ops-file", str(ops_file), "--flaggems-dir", str(FAULT), "--python", str(fake), "--out", str(out)]

    # A no-op pytest writes no row, so every op ends `empty` and the batch
    # exits 1 (not every op passed); anything else means the children did
    # not run as meant, and the figure would time something else.
    empty_ok = (1,)
    # A first batch gives the exact `zlcore run` command lines (each run's
    # identity has them); the loop replays them with its own output paths.
    first = scratch / "batch-first"
    wall(batch_argv(first), env=env, ok=empty_ok)
    with open(first / "ops_status.csv", newline="") as f:
        statuses = {row["status"] for row in csv.DictReader(f)}
    if statuses != {"empty"}:
        raise RuntimeError(f"the no-op batch's ops ended {sorted(statuses)}, expected only empty: see {first}")
    lines = []
    for i in range(ops):
        ident = json.loads((first / "runs" / f"op{i:04d}" / "run_identity.json").read_text())
        lines.append(ident["zlcore_command"][2:])  # after "zlcore", "run"

    def loop_script(out):
        # The batch also writes each op's output to a log of its own; so does the loop.
        body = [f"mkdir -p '{out}/runs' '{out}/logs'"]
        for i, args in enumerate(lines):
            args = [a.replace(str(first), str(out)) for a in args]
            quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in args)
            body.append(f"'{zlcore}' --backend-dir '{vendor_dir}' run {quoted} > '{out}/logs/op{i:04d}.log' 2>&1")
        body.append("exit 0  # each run ends empty (exit 7), as in the batch")
        script = out.parent / (out.name + ".sh")
        script.write_text("\n".join(body) + "\n")
        return script

    def zl_side(i):
        return wall(batch_argv(scratch / f"batch-zl-{i}"), env=env, ok=empty_ok)

    def base_side(i):
        out = scratch / f"batch-loop-{i}"
        script = loop_script(out)
        return wall(["/bin/sh", str(script)], env=env)

    return alternate(reps, zl_side, base_side)


def gbench(gbench_dir):
    """name -> real time in seconds, from every Google Benchmark JSON file."""
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    out = {}
    for f in sorted(Path(gbench_dir).glob("*.json")):
        for b in json.loads(f.read_text()).get("benchmarks", []):
            if b.get("run_type", "iteration") != "iteration":
                continue
            out[b["name"]] = b["real_time"] * scale[b["time_unit"]]
    return out


def ms(seconds):
    if seconds is None:
        return "-"
    v = seconds * 1e3
    if v < 0.01:
        return f"{seconds * 1e9:.0f} ns"  # negotiate_abi and the like
    return f"{v:.3f} ms" if v < 1 else f"{v:.1f} ms" if v < 1000 else f"{seconds:.2f} s"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefix", required=True, help="zlcore install prefix (bin/zlcore, lib/zlcore/plugins)")
    ap.add_argument("--gbench-dir", required=True, help="the Google Benchmark JSON files")
    ap.add_argument("--vendor-dir", required=True, help="directory with zl_backend_fakegpu.so")
    ap.add_argument("--python", default="/usr/bin/python3", help="the Python with pytest and numpy")
    ap.add_argument("--reps", type=int, default=11, help="alternations of each whole-process pair")
    ap.add_argument("--batch-ops", type=int, default=1000)
    ap.add_argument("--batch-reps", type=int, default=5)
    ap.add_argument("--op", default="abs", help="example-suite op for the run measure")
    ap.add_argument("--scratch", help="working directory (default: a temporary one, removed)")
    ap.add_argument("--markdown", help="also write the table as Markdown here")
    ap.add_argument("--json", help="also write every sample here")
    ap.add_argument("--only", help="comma-separated measures to run: run, preflight, backends, identity, batch "
                                   "(default: all)")
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else {"run", "preflight", "backends", "identity", "batch"}

    prefix = Path(a.prefix).resolve()
    zlcore = str(prefix / "bin" / "zlcore")
    scratch = Path(a.scratch or tempfile.mkdtemp(prefix="zlbench-", dir=str(ROOT / "build-bench"))).resolve()
    scratch.mkdir(parents=True, exist_ok=True)
    g = gbench(a.gbench_dir)
    samples = {}
    rows = []  # (measure, zlcore, baseline, ratio, target, result)

    def log(msg):
        print(f"bench: {msg}", file=sys.stderr, flush=True)

    med = statistics.median

    def paired(zs, bs):
        # Each pair ran back to back: the median of their differences shrugs
        # off a sample slowed by something else on the host, which a
        # difference of medians does not.
        return med([z - b for z, b in zip(zs, bs)])

    if "run" in only:
        measure_run_rows(a, zlcore, prefix, scratch, samples, rows, med, paired, log)
    if "preflight" in only:
        measure_preflight_rows(a, zlcore, prefix, scratch, samples, rows, med, log)
    if "backends" in only:
        measure_backends_rows(a, zlcore, scratch, samples, rows, med, paired, log)
    if "identity" in only:
        measure_identity_rows(a, prefix, scratch, samples, rows, g, log)
    if "batch" in only:
        measure_batch_rows(a, zlcore, scratch, samples, rows, med, paired, log)
    print_table(a, g, rows, samples, scratch)


def measure_run_rows(a, zlcore, prefix, scratch, samples, rows, med, paired, log):
    log(f"zlcore run vs pytest ({a.reps} alternations)")
    zs, bs, cmd = measure_run(zlcore, prefix, a.python, scratch, a.reps, a.op)
    samples["run"] = {"zlcore": zs, "pytest": bs, "command": cmd}
    over = paired(zs, bs)
    limit = max(0.02 * med(bs), 0.050)
    rows.append((f"`zlcore run` ({a.op}, example suite) vs its pytest", ms(med(zs)), ms(med(bs)),
                 f"{med(zs) / med(bs):.3f} ({over * 1e3:+.1f} ms paired)", "< +2 % or +50 ms",
                 "pass" if over < limit else "FAIL"))
    # zlcore's own share, free of pytest's noise: its wall time minus the
    # child's lifetime as run.cpp measured it (identity child_seconds).
    own = [z - json.loads((scratch / f"run-zl-{i}" / "run_identity.json").read_text())["child_seconds"]
           for i, z in enumerate(zs)]
    samples["run"]["outside_child"] = own
    rows.append(("`zlcore run`: wall minus its pytest child's lifetime", ms(med(own)), "-", "-", "< 50 ms",
                 "pass" if med(own) < 0.050 else "FAIL"))


def measure_preflight_rows(a, zlcore, prefix, scratch, samples, rows, med, log):
    log(f"preflight failure vs pytest failing the same way ({a.reps * 3} alternations)")
    zs, bs = measure_preflight(zlcore, prefix, a.python, scratch, a.reps * 3, a.op)
    samples["preflight"] = {"zlcore": zs, "pytest": bs}
    rows.append(("preflight failure reported (exit 3 vs pytest's 4)", ms(med(zs)), ms(med(bs)),
                 f"{med(zs) / med(bs):.3f}", "< 50 ms", "pass" if med(zs) < 0.050 else "FAIL"))


def measure_backends_rows(a, zlcore, scratch, samples, rows, med, paired, log):
    log(f"zlcore backends ({a.reps * 3} alternations, then {a.reps * 3} with a cold probe cache)")
    zs, bs, n, cold = measure_backends(zlcore, scratch, a.reps * 3)
    samples["backends"] = {"zlcore": zs, "empty_plugin_dir": bs, "cold_probe_cache": cold}
    rows.append((f"`zlcore backends`, {n} plugins (baseline: no plugins)", ms(med(zs)), ms(med(bs)),
                 f"{med(zs) / med(bs):.3f} ({paired(zs, bs) * 1e3:+.1f} ms paired)", "< 10 ms",
                 "pass" if med(zs) < 0.010 else "FAIL"))
    rows.append((f"`zlcore backends`, {n} plugins, cold probe cache (each probed in a child)", ms(med(cold)),
                 "-", "-", "-", "info"))


def measure_identity_rows(a, prefix, scratch, samples, rows, g, log):
    log("identity + results of 1,000 shapes")
    core = g.get("BM_identity_and_results_1000")
    py = results_writer_seconds(prefix, a.python, scratch)
    samples["identity_results"] = {"core": core, "python_writer": py}
    if core is not None:
        total = core + py
        rows.append(("identity + results, 1,000 shapes (core + Python writer)", ms(total),
                     f"{ms(core)} + {ms(py)}", "-", "< 50 ms", "pass" if total < 0.050 else "FAIL"))


def measure_batch_rows(a, zlcore, scratch, samples, rows, med, paired, log):
    log(f"zlcore batch of {a.batch_ops} ops vs a loop of its run command lines ({a.batch_reps} alternations)")
    zs, bs = measure_batch(zlcore, Path(a.vendor_dir).resolve(), scratch, a.batch_ops, a.batch_reps)
    samples["batch"] = {"zlcore": zs, "loop": bs, "ops": a.batch_ops}
    per_op = paired(zs, bs) / a.batch_ops
    rows.append((f"`zlcore batch`, {a.batch_ops} no-op-pytest ops, per op (vs sh loop)",
                 ms(med(zs) / a.batch_ops), ms(med(bs) / a.batch_ops),
                 f"{med(zs) / med(bs):.3f} ({per_op * 1e3:+.2f} ms/op paired)", "< +1 ms/op",
                 "pass" if per_op < 0.001 else "FAIL"))


def print_table(a, g, rows, samples, scratch):
    # In process, no target of their own: where the time above goes.
    info = [
        ("load_backends, all plugins, warm (in process)", "BM_load_backends_warm"),
        ("negotiate_abi, all plugins", "BM_negotiate_abi"),
        ("load_rules (rules.yaml)", "BM_load_rules"),
        ("derive_plan, every shipped backend", "BM_derive_plan_all_backends"),
        ("identity written at start and end", "BM_identity_start_and_end"),
        ("results table over 1,000 rows", "BM_results_table_1000"),
        ("one atomic small-file write (fsync: the disk)", "BM_fsync_small_file"),
        ("ops_status.csv: one row appended (fsync)", "BM_append_status_row"),
        ("ops_status.csv: read back 1,000 rows (resume)", "BM_read_status_csv_1000"),
        ("compare, 10,000 rows a side (in memory)", "BM_compare_10000_rows"),
        ("compare, 10,000 rows: load, compare, table + csv", "BM_compare_10000_rows_load_and_format"),
    ]
    for label, key in info:
        if key in g:
            rows.append((label, ms(g[key]), "-", "-", "-", "info"))

    head = ("measure", "zlcore", "baseline", "ratio", "target", "result")
    widths = [max(len(str(r[c])) for r in rows + [head]) for c in range(len(head))]

    def line(r):
        return "  ".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip()

    print(line(head))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))
    if a.markdown:
        md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        md += ["| " + " | ".join(str(v) for v in r) + " |" for r in rows]
        Path(a.markdown).write_text("\n".join(md) + "\n")
    if a.json:
        Path(a.json).write_text(json.dumps(samples, indent=1) + "\n")
    if not a.scratch:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
