#!/usr/bin/env python3
"""Writes the recorded run directories the compare tests read.

The files are committed; this script is how they were written, kept so that a
change to the schema (docs/run-directory.md) is one edit here and a rerun:
    python3 tests/compare/data/make_data.py
Every latency is chosen so that one row lands on one verdict; the comments
next to the rows say which and why.
"""
import copy
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))

BASE_IDENTITY = {
    "schema": 1, "run_id": "", "zlcore_version": "0.1.0",
    "status": "passed", "exit_code": 0,
    "started": "2026-12-02T10:30:00Z", "ended": "2026-12-02T10:31:00Z", "seconds": 60.0,
    "backend": {"name": "gpu0", "abi": "1.1", "path": "/opt/zlcore/lib/zlcore/plugins/zl_backend_gpu0.so"},
    "device": {"index": 0, "id": "DEV-0000", "name": "Example Accelerator X1", "memory_total_bytes": 0},
    "host": {"name": "node1"},
    "test_node": "", "op": "", "marker": "",
    "bench_level": "core", "mode": "kernel", "dtypes": ["float16", "float32"],
    "shapes": {"mode": "upstream", "file": "benchmark/core_shapes.yaml", "sha256": "5e1f00d"},
    "timer": {"name": "graph", "fallback": "direct", "fallback_shapes": [],
              "settings": {"direct_repeat": 10, "graph": {"budget_ms": 70.0, "min_windows": 3}}},
    "pytest_plugins": ["zlcore_pytest.device_setup", "zlcore_pytest.results"],
    "tuner_cache": {"kind": "isolated", "dir": "/tmp/tc", "inherited_winners": 0, "variants_compiled": 7},
    "autotune": {"mode": "tune", "source_run_id": None, "records_hash": None,
                 "variants_compiled": 7, "tuning_benchmarks": 0},
    "worker": {"kind": "cold", "ops_before": 0},
    "versions": {"zlcore": "0.1.0", "python": "3.12.3", "torch": "2.11.0", "triton": "3.6.0",
                 "flaggems": {"version": "4.1", "git_sha": "abc1234", "dirty": False}},
    "env": {"GEMS_VENDOR": "example", "ZL_ENABLE_CUDAGRAPH": "1", "ZL_DIRECT_REPEAT": "10"},
    "command": ["python3", "-m", "pytest"],
}


def identity(op, run_id, autotune_mode="tune", source=None, **changes):
    ident = copy.deepcopy(BASE_IDENTITY)
    ident.update(run_id=run_id, op=op, marker=op, test_node=f"benchmark/test_{op}.py::test_{op}")
    ident["autotune"]["mode"] = autotune_mode
    ident["autotune"]["source_run_id"] = source
    for path, value in changes.items():
        node = ident
        keys = path.split("__")
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value
    return ident


def row(op, dtype, shape, ms, base_ms, repeats=10, spread=1.0, spread_base=1.0, timer="graph", error=None):
    return {
        "op": op, "test_node": f"benchmark/test_{op}.py::test_{op}", "dtype": dtype,
        "shape": json.dumps(shape), "shape_detail": shape, "mode": "kernel", "bench_level": "core",
        "latency_base_ms": base_ms, "latency_ms": ms,
        "speedup": None if ms is None else round(base_ms / ms, 4),
        "timer": timer, "timer_base": "graph", "fallback_reason": None if timer == "graph" else "capture failed",
        "repeats": repeats, "samples_ms": [], "samples_base_ms": [],
        "spread_pct": spread, "spread_base_pct": spread_base,
        "gbps": None, "tflops": None, "cluster_kernel": None, "error": error,
    }


def write_run(path, ident, rows, torn_tail=False):
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "run_identity.json"), "w") as f:
        json.dump(ident, f, indent=1)
        f.write("\n")
    with open(os.path.join(path, "results.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
        if torn_tail:  # what a crash mid-append leaves
            f.write('{"op": "abs", "dtype": "float16", "sha')


def verdict_pair():
    """One run per side, record on A and replay of A on B: the fair pairing."""
    a, b = [], []
    def both(dtype, shape, ms_a, ms_b, **kw):
        kw_a = {k[:-2]: v for k, v in kw.items() if k.endswith("_a")}
        kw_b = {k[:-2]: v for k, v in kw.items() if k.endswith("_b")}
        common = {k: v for k, v in kw.items() if not k.endswith(("_a", "_b"))}
        a.append(row("abs", dtype, shape, ms_a, 0.0100, **common, **kw_a))
        b.append(row("abs", dtype, shape, ms_b, 0.0100, **common, **kw_b))
    both("float16", [[64, 64]], 0.0100, 0.0090)                 # FASTER: 1.111, noise 1 %
    both("float16", [[256, 256]], 0.0200, 0.0220)               # SLOWER: 0.909
    both("float16", [[1024, 1024]], 0.0500, 0.0501, spread=0.5)  # SAME: 0.998
    both("float16", [[4096, 4096]], 0.4000, 0.3800, spread=8.0)  # NOISY: 5 % gain inside 8 % noise
    both("float32", [[64, 64]], 0.0120, 0.0121, spread_b=5.0)    # NOISY: near 1 but noise 5 % > 2 %
    both("float32", [[256, 256]], 0.0300, 0.0250, repeats=1, spread=0.0)  # UNCONFIRMED: one repeat
    both("float32", [[1024, 1024]], 0.0800, None, error_b="replay_miss: no record for this key")  # ERROR
    both("float32", [[4096, 4096]], 0.9000, 0.8000, timer_b="direct")  # FASTER, timer fell back on B
    a.append(row("abs", "float16", [[8192, 8192]], 1.5, 1.6))   # A only
    b.append(row("abs", "bfloat16", [[64, 64]], 0.011, 0.010))  # B only
    write_run(os.path.join(HERE, "verdicts/a"), identity("abs", "run-a-abs", "record"), a)
    write_run(os.path.join(HERE, "verdicts/b"), identity("abs", "run-b-abs", "replay", "run-a-abs"), b, torn_tail=True)


def caliber_runs():
    """A base run, one that differs in every caliber field, and one in a single env knob."""
    rows = [row("mul", "float16", [[1024]], 0.0100, 0.0200), row("mul", "float16", [[4096]], 0.0300, 0.0600)]
    # base records, the others replay: only what each one changes on purpose differs.
    write_run(os.path.join(HERE, "caliber/base"), identity("mul", "run-base", "record"), rows)
    everything = identity(
        "mul", "run-all", "replay", "run-somewhere-else",
        backend__name="gpu1", device__name="Example Accelerator X2",
        timer__name="direct", timer__fallback="host", timer__fallback_shapes=["[[4096]]"],
        timer__settings={"direct_repeat": 10, "graph": {"budget_ms": 50.0, "min_windows": 2}},
        bench_level="comprehensive", mode="operator", shapes__mode="file", shapes__sha256="77aa0ff",
        tuner_cache__kind="shared", tuner_cache__inherited_winners=3, worker__kind="warm",
        versions__zlcore="0.2.0", versions__python="3.11.2", versions__torch="2.10.0",
        versions__triton="3.5.0", versions__flaggems={"version": "4.2", "git_sha": "def5678", "dirty": True},
        env={"GEMS_VENDOR": "example", "ZL_ENABLE_CUDAGRAPH": "0", "TRITON_SWITCH": "1"})
    write_run(os.path.join(HERE, "caliber/all_differ"), everything, rows)
    env_only = identity("mul", "run-env", "replay", "run-base", env=dict(BASE_IDENTITY["env"], TRITON_SWITCH="1"))
    write_run(os.path.join(HERE, "caliber/env_only"), env_only, [row("mul", "float16", [[1024]], 0.0090, 0.0200),
                                                                row("mul", "float16", [[4096]], 0.0270, 0.0600)])


def autotune_runs():
    rows = [row("sum", "float16", [[4096]], 0.0100, 0.0100)]
    write_run(os.path.join(HERE, "autotune/record"), identity("sum", "run-rec", "record"), rows)
    write_run(os.path.join(HERE, "autotune/replay_of_record"), identity("sum", "run-rep", "replay", "run-rec"), rows)
    write_run(os.path.join(HERE, "autotune/replay_of_other"), identity("sum", "run-rep2", "replay", "run-zzz"), rows)
    write_run(os.path.join(HERE, "autotune/tune1"), identity("sum", "run-t1"), rows)
    write_run(os.path.join(HERE, "autotune/tune2"), identity("sum", "run-t2"), rows)


def batch(name, ops, torch_ms, fallback_on=()):
    root = os.path.join(HERE, name)
    side = name[-1]
    status = ["op,device,status,exit_code,run_dir"]
    for op, rows in ops.items():
        run_id = f"batch{side}-{op}"
        mode, src = ("record", None) if side == "a" else ("replay", f"batcha-{op}")
        fallback = ["[[64, 64]]"] if op in fallback_on else []
        ident = identity(op, run_id, mode, src, timer__fallback_shapes=fallback)
        write_run(os.path.join(root, "runs", op), ident,
                  [row(op, dtype, shape, ms, torch_ms) for dtype, shape, ms in rows])
        status.append(f"{op},0,passed,0,runs/{op}")
    with open(os.path.join(root, "ops_status.csv"), "w") as f:
        f.write("\n".join(status) + "\n")


def batches():
    # torch_ms moves 10 % between the sides: the control should flag it.
    batch("batch_a", {
        "abs": [("float16", [[64, 64]], 0.010), ("float32", [[64, 64]], 0.020)],
        "add": [("float16", [[64, 64]], 0.030), ("float32", [[64, 64]], 0.060)],
        "mul": [("float16", [[64, 64]], 0.040)],
    }, torch_ms=0.020)
    batch("batch_b", {
        "abs": [("float16", [[64, 64]], 0.008), ("float32", [[64, 64]], 0.016)],
        "add": [("float16", [[64, 64]], 0.033), ("float32", [[64, 64]], 0.066)],
        "softmax": [("float16", [[64, 64]], 0.050)],
    }, torch_ms=0.018, fallback_on=("add",))


def repeated_shape_pair():
    """FlagGems' BlasBenchmark core shapes are (B, M, N, K); mm ignores B, so
    [2, 4096, 4096, 4096] and [16, 4096, 4096, 4096] both report the shape
    [[4096, 4096], [4096, 4096]]. The k-th occurrence on A must meet the k-th on
    B (each pair agrees; crossed, they would read 13 % apart)."""
    shape = [[4096, 4096], [4096, 4096]]
    for side in ("a", "b"):
        rows = [row("mm", "float16", [[384, 384], [384, 384]], 0.0028, 0.0028),
                row("mm", "float16", shape, 0.2054, 0.2062),
                row("mm", "float16", shape, 0.2364, 0.1837)]
        write_run(os.path.join(HERE, "repeated", side), identity("mm", f"run-{side}-mm"), rows)


if __name__ == "__main__":
    for d in ("verdicts", "caliber", "autotune", "batch_a", "batch_b", "repeated"):
        shutil.rmtree(os.path.join(HERE, d), ignore_errors=True)
    verdict_pair()
    caliber_runs()
    autotune_runs()
    batches()
    repeated_shape_pair()
