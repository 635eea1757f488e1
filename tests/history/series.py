"""Synthetic nightly series: batch directories laid out as `zlcore batch`
writes them (runs/<op>/run_identity.json + results.jsonl, no ops_status.csv,
as after a kill before the first row), from the identity of a real run in
tests/compare/data. A host whose pace wanders by up to +-5 % per batch, rows
with 1 % noise, and known changes at known batches."""
import copy
import json
import math
import os
import random
from pathlib import Path

TEMPLATE = Path(os.environ.get("ZL_SOURCE_DIR", Path(__file__).resolve().parents[2])) / \
    "tests/compare/data/verdicts/a/run_identity.json"
OPS = ["fma_loop", "sin_loop", "copy_loop", "sum_loop", "norm_loop"]
SHAPES = ["[[64]]", "[[256]]", "[[1024]]", "[[4096]]"]


def write_batch(root, b, seed, slowed=(), slow_from=6, effect=1.3, device_change=None):
    rng = random.Random(seed * 1000 + b)
    pace = math.exp(rng.uniform(-0.05, 0.05))
    template = json.loads(TEMPLATE.read_text())
    moved = device_change is not None and b >= device_change
    for o, op in enumerate(OPS):
        run = root / "runs" / op
        run.mkdir(parents=True)
        ident = copy.deepcopy(template)
        ident.update(op=op, marker=op, run_id=f"{root.name}-{op}", started=f"2026-11-{b + 1:02d}T02:00:00Z")
        ident["versions"]["flaggems"]["git_sha"] = "bbb2222" if b >= slow_from else "aaa1111"
        if moved:
            ident["device"]["name"] = "Example Accelerator X2"
        (run / "run_identity.json").write_text(json.dumps(ident))
        lines = []
        for s, shape in enumerate(SHAPES):
            for dtype in ("float16", "float32"):
                base = (0.1 + 0.3 * o + 0.2 * s) * pace * (0.6 if moved else 1.0)
                gems = base * (effect if op in slowed and b >= slow_from else 1.0)
                placements = [gems * math.exp(rng.gauss(0, 0.01)) for _ in range(4)]
                lines.append(json.dumps({
                    "op": op, "dtype": dtype, "shape": shape, "latency_ms": sum(placements) / 4,
                    "placements_ms": placements, "latency_base_ms": base * math.exp(rng.gauss(0, 0.01)),
                    "spread_base_pct": 2.0, "repeats": 4, "timer": "graph", "timer_base": "graph",
                    "error": None}))
        (run / "results.jsonl").write_text("\n".join(lines) + "\n")


def write_series(tmp, n=12, seed=1, **kw):
    dirs = []
    for b in range(n):
        root = tmp / f"nightly-{b + 1:02d}"
        write_batch(root, b, seed, **kw)
        dirs.append(root)
    return dirs


def write_ab(root, latency_b):
    """An ab directory (docs/ab.md): two rounds of one op, sides A and B."""
    template = json.loads(TEMPLATE.read_text())
    (root).mkdir(parents=True)
    (root / "ab_identity.json").write_text(json.dumps({"kind": "zlcore-ab", "status": "done"}))
    for r, side in [(1, "A"), (1, "B"), (2, "B"), (2, "A")]:
        run = root / "runs" / "abs" / f"r{r}-t1" / side
        run.mkdir(parents=True)
        ident = copy.deepcopy(template)
        ident.update(run_id=f"{root.name}-{r}-{side}", started=f"2026-11-20T0{r}:00:00Z")
        (run / "run_identity.json").write_text(json.dumps(ident))
        ms = latency_b[r - 1] if side == "B" else 9.0
        (run / "results.jsonl").write_text(json.dumps({
            "op": "abs", "dtype": "float16", "shape": "[[64, 64]]", "latency_ms": ms, "placements_ms": [ms, ms],
            "latency_base_ms": 1.0, "spread_base_pct": 0, "repeats": 2, "timer": "graph", "error": None}) + "\n")
