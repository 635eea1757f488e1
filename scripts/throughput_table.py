#!/usr/bin/env python3
"""Tables for scripts/throughput.sh: where each op's seconds and device memory went.

usage: throughput_table.py table WORK PASS...       markdown on stdout
       throughput_table.py reference-args BATCH_DIR --count N
                                                  one pytest argument a line: the files and
                                                  `-m` expression of the batch's first N passed ops

`table` reads, per pass (a batch directory WORK/PASS), ops_status.csv's time
columns (t_*), each run's identity (memory) and results.jsonl (the timer's
seconds per (shape, side)), and prints: the parts summed and per op for each
pass; per op, its seconds by part; the median and 90th percentile measurement
per (shape, side); per op, the suite's device memory peak and what zlcore's
measurement added. Plain Python, no third-party module.
"""

import argparse
import csv
import json
import os
import sys

PARTS = ["zlcore", "start", "imports", "collection", "compiling", "autotuning", "suite", "measuring_base",
         "measuring_gems", "teardown"]
GIB = float(1 << 30)


def rows_of(batch):
    """The last row of each op in the batch's ops_status.csv, in file order of first appearance."""
    path = os.path.join(batch, "ops_status.csv")
    last = {}
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            last[row["op"]] = row
    return list(last.values())


def seconds(row, part):
    value = row.get("t_" + part, "")
    return float(value) if value not in ("", None) else None


def identity(batch, row):
    path = os.path.join(batch, row["run_dir"], "run_identity.json")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def result_rows(batch, row):
    path = os.path.join(batch, row["run_dir"], "results.jsonl")
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    out.append(json.loads(line))
    except (OSError, ValueError):
        pass
    return out


def quantile(values, q):
    values = sorted(values)
    if not values:
        return None
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]


def fmt(value, spec=".2f"):
    return "-" if value is None else format(value, spec)


def pass_summary(name, batch):
    rows = rows_of(batch)
    known = [r for r in rows if seconds(r, "zlcore") is not None]
    sums = {p: sum(seconds(r, p) or 0.0 for r in known) for p in PARTS}
    total = sum(sums.values())
    n = len(known)
    lines = [f"### {name}: {len(rows)} ops ({n} with a breakdown)", "",
             "| part | seconds | share | per op |", "|---|---|---|---|"]
    for p in PARTS:
        lines.append(f"| {p} | {sums[p]:.1f} | {100 * sums[p] / total if total else 0:.1f} % | "
                     f"{sums[p] / n if n else 0:.2f} |")
    lines.append(f"| **total** | {total:.1f} | | **{total / n if n else 0:.2f}** |")
    measures = []
    for r in rows:
        for res in result_rows(batch, r):
            for key in ("measure_ms", "measure_base_ms"):
                if isinstance(res.get(key), (int, float)):
                    measures.append(res[key])
    lines += ["", f"measurement per (shape, side), {len(measures)} sides: median "
              f"{fmt(quantile(measures, 0.5), '.0f')} ms, p90 {fmt(quantile(measures, 0.9), '.0f')} ms, "
              f"max {fmt(max(measures) if measures else None, '.0f')} ms", ""]
    return lines


def per_op(passes):
    names = [name for name, _ in passes]
    header = " | ".join(f"{n} status | {n} total | {n} compile+tune | {n} measuring | {n} suite" for n in names)
    lines = ["### Per op (seconds: total = zlcore + start + imports + collection + compiling + autotuning + "
             "suite + measuring + teardown)", "",
             "| op | " + header + " |",
             "|---|" + "---|" * (5 * len(names))]
    by_pass = [{r["op"]: r for r in rows_of(batch)} for _, batch in passes]
    ops = list(by_pass[0])
    for op in ops:
        cells = [op]
        for table in by_pass:
            r = table.get(op)
            if r is None:
                cells += ["-"] * 5
                continue
            part = {p: seconds(r, p) for p in PARTS}
            known = part["zlcore"] is not None
            cells += [r["status"],
                      fmt(sum(v or 0 for v in part.values()) if known else float(r["seconds"]), ".1f"),
                      fmt((part["compiling"] or 0) + (part["autotuning"] or 0) if known else None, ".1f"),
                      fmt((part["measuring_base"] or 0) + (part["measuring_gems"] or 0) if known else None, ".1f"),
                      fmt(part["suite"], ".1f")]
        lines.append("| " + " | ".join(cells) + " |")
    return lines + [""]


def memory(name, batch):
    lines = [f"### Device memory ({name})", "",
             "| op | rows | suite peak GiB | zlcore added GiB (op side) | zlcore added GiB (torch side) | "
             "free at start GiB |", "|---|---|---|---|---|---|"]
    for r in rows_of(batch):
        ident = identity(batch, r)
        mem = ident.get("memory") or {}
        start = mem.get("start") or {}
        res = result_rows(batch, r)

        def gib(v):
            return None if not isinstance(v, (int, float)) else v / GIB

        lines.append(f"| {r['op']} | {len(res)} | {fmt(gib(mem.get('suite_peak_bytes')))} | "
                     f"{fmt(gib(mem.get('added_peak_bytes')))} | {fmt(gib(mem.get('added_peak_base_bytes')))} | "
                     f"{fmt(gib(start.get('device_free_bytes')), '.1f')} |")
    return lines + [""]


def table(a):
    passes = [(p, os.path.join(a.work, p)) for p in a.passes
              if os.path.exists(os.path.join(a.work, p, "ops_status.csv"))]
    if not passes:
        sys.exit(f"throughput_table.py: no batch under {a.work} for {' '.join(a.passes)}")
    out = ["## Where the time goes", ""]
    for name, batch in passes:
        out += pass_summary(name, batch)
    out += per_op(passes)
    out += memory(passes[-1][0], passes[-1][1])
    print("\n".join(out))


def reference_args(a):
    files, marks = [], []
    for r in rows_of(a.batch):
        if r["status"] != "passed" or len(marks) >= a.count:
            continue
        node = r["test_node"].split("::")[0].split()[0] if r["test_node"] else ""
        if not node:
            continue
        if node not in files:
            files.append(node)
        marks.append(r["op"])
    print("\n".join(files + ["-m", " or ".join(marks)]))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("table")
    t.add_argument("work")
    t.add_argument("passes", nargs="+")
    r = sub.add_parser("reference-args")
    r.add_argument("batch")
    r.add_argument("--count", type=int, default=8)
    a = p.parse_args(argv)
    table(a) if a.cmd == "table" else reference_args(a)


if __name__ == "__main__":
    main()
