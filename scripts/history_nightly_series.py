#!/usr/bin/env python3
"""A nightly series with a known regression, for `zlcore history`: N nights
of the known-effect suite (examples/known-effect), some ops slower by PCT
from night K on (ZL_KNOWN_EFFECT_PCT, recorded in every identity through
ZL_CALIBER_ENV), each night added to a history; then the report, and
whether it found those ops at night K and nothing else.

usage: history_nightly_series.py OUT_DIR [--zlcore PATH] [--backend host] [--nights 12]
                                 [--slow-from 7] [--slowed sin_loop,sum_loop] [--pct 30]

A timing experiment, not a test: on a machine others load, an op's process
is now and then slowed 30-60 % for several nights, and a series reads a
step where nothing changed (docs/history.md, "False steps"). Exit 0 when
the report found exactly the slowed ops at night K on FlagGems' side and
no torch-side step.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPS = ["fma_loop", "sin_loop", "copy_loop", "sum_loop", "norm_loop"]


def night(args, root, n, slowed):
    for op in OPS:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ZL_", "BENCH_LEVEL", "OP", "SHAPE_"))}
        env.update(ZL_KNOWN_EFFECT_PCT=str(args.pct if op in slowed and n >= args.slow_from else 0),
                   ZL_CALIBER_ENV="ZL_KNOWN_EFFECT_PCT", ZL_HOST_CLOCK="thread")
        subprocess.run([args.zlcore, "run", "--backend", args.backend, "--flaggems-dir",
                        str(ROOT / "examples" / "known-effect"), "--op", op, "--python", "/usr/bin/python3",
                        "--out", str(root / "runs" / op)], env=env, check=True, stdout=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--zlcore", default="zlcore")
    ap.add_argument("--backend", default="host")
    ap.add_argument("--nights", type=int, default=12)
    ap.add_argument("--slow-from", type=int, default=7)
    ap.add_argument("--slowed", default="sin_loop,sum_loop")
    ap.add_argument("--pct", type=float, default=30.0)
    args = ap.parse_args()
    slowed = set(args.slowed.split(","))
    args.out.mkdir(parents=True)
    db = args.out / "history.db"
    for n in range(1, args.nights + 1):
        root = args.out / f"night-{n:02d}"
        night(args, root, n, slowed)
        subprocess.run([args.zlcore, "history", "add", "--db", str(db), str(root)], check=True)
    subprocess.run([args.zlcore, "history", "report", "--db", str(db)], check=True)
    rep = json.loads(subprocess.run([args.zlcore, "history", "report", "--db", str(db), "--format", "json"],
                                    check=True, capture_output=True, text=True).stdout)
    found = {(s["op"], s["first_bad_run"]) for s in rep["steps"] if s["side"] == "gems"}
    others = [s for s in rep["steps"] if s["side"] != "gems"]
    expected = {(op, args.slow_from) for op in slowed}
    print(f"expected {sorted(expected)}; found on FlagGems' side {sorted(found)}; {len(others)} torch-side step(s)")
    return 0 if found == expected and not others else 1


if __name__ == "__main__":
    sys.exit(main())
