#!/usr/bin/env python3
"""How large a slowdown an A/B's own noise lets through: inject one, re-report.

usage: ab_injected_effect.py AB_DIR COPY_DIR [--pct 3] [--side A2]
       ab_injected_effect.py --found COPY_DIR      (after the re-report)

Copies a `zlcore ab --calibrate` directory (its rounds, runs and identity)
to COPY_DIR and multiplies every FlagGems-side time of one side's runs
(A2 by default: the side that runs A's code again) by 1 + pct/100; torch's
side stays as measured, so the control does not move. A report of the copy
(`zlcore ab --resume --out COPY_DIR` with the A/B's own flags, which needs
no device) then reads A against A2 as an A/B of a true pct % slowdown:
aa.md's "false" counts are the rows where it was found. --found prints the
share of rows of 10 us or more found (docs/results.md, "Finding an injected
effect", has the H200's figures).

Only the copy is written; AB_DIR is read.
"""

import argparse
import glob
import json
import os
import shutil
import sys

SCALED = ("latency_ms", "placements_ms", "samples_ms", "readings", "eager_ms")


def scale_run(path, factor):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            for key in SCALED:
                value = row.get(key)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    row[key] = value * factor
                elif isinstance(value, list):
                    row[key] = [v * factor if isinstance(v, (int, float)) else v for v in value]
            rows.append(json.dumps(row))
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + ("\n" if rows else ""))
    os.replace(tmp, path)
    return len(rows)


def rows_found(aa_json, min_ms=0.01):
    """(rows of min_ms or more that compare tested, of them found) from aa.json."""
    with open(aa_json, encoding="utf-8") as f:
        rows = json.load(f)["rows"]
    big = [r for r in rows if r["mean_ms"] >= min_ms and r["tested"]]
    return len(big), sum(1 for r in big if r["false_verdicts"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="*", metavar="DIR", help="AB_DIR COPY_DIR")
    ap.add_argument("--pct", type=float, default=3.0)
    ap.add_argument("--side", default="A2")
    ap.add_argument("--found", metavar="COPY_DIR",
                    help="only read COPY_DIR/aa.json (after the re-report): rows of 10 us+ tested and found")
    args = ap.parse_args(argv)
    if args.found:
        tested, found = rows_found(os.path.join(args.found, "aa.json"))
        print(f"rows of 10 us or more: {tested} tested, {found} found"
              + (f" ({found / tested * 100:.0f} %)" if tested else ""))
        return 0
    if len(args.dirs) != 2:
        ap.error("give AB_DIR and COPY_DIR (or --found COPY_DIR)")
    args.ab_dir, args.copy_dir = args.dirs
    if os.path.exists(args.copy_dir):
        sys.exit(f"ab_injected_effect: {args.copy_dir} exists; give a new directory")
    shutil.copytree(args.ab_dir, args.copy_dir, ignore=shutil.ignore_patterns("tuner", "report.*", "aa.*"))
    factor = 1.0 + args.pct / 100.0
    runs = glob.glob(os.path.join(args.copy_dir, "runs", "*", "r*", args.side, "results.jsonl"))
    if not runs:
        sys.exit(f"ab_injected_effect: no runs of side {args.side} under {args.copy_dir}/runs")
    rows = sum(scale_run(p, factor) for p in runs)
    print(f"{args.side}: {rows} rows in {len(runs)} runs scaled by {factor:g}; "
          f"now report the copy with zlcore ab --resume --out {args.copy_dir} and the A/B's flags")
    return 0


if __name__ == "__main__":
    sys.exit(main())
