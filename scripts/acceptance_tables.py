#!/usr/bin/env python3
"""Tables for scripts/acceptance.sh, from the work directory it leaves behind.

    acceptance_tables.py reference WORK   graph timer (A, B and a same-winners run)
                                          against FlagGems' own --mode cudagraph
    acceptance_tables.py settle WORK      mm at several ZL_GRAPH_SETTLE_MS against
                                          the same reference

FlagGems' reference for a tuned op only means something next to a run that used
the same winners: A and B tuned in isolated caches, so for mm the same-winners
column is mm_shared2 (the shared cache the reference also ran on). Shapes that
a run reports twice (mm drops the B of FlagGems' (B, M, N, K) core shapes) are
paired by occurrence, as `zlcore compare` pairs them.
"""
import json
import pathlib
import sys


def numbered(pairs):
    out, seen = {}, {}
    for key, value in pairs:
        seen[key] = seen.get(key, 0) + 1
        out[key if seen[key] == 1 else (key[0], f"{key[1]} #{seen[key]}")] = value
    return out


def run_rows(run_dir):
    f = pathlib.Path(run_dir) / "results.jsonl"
    if not f.exists():
        return {}
    return numbered(((r["op"], r["shape"]), r["latency_ms"]) for r in map(json.loads, f.read_text().splitlines()))


def reference(work, op):
    f = work / f"ref_{op}.json"
    pairs = []
    if f.exists():
        for name, entry in json.loads(f.read_text()).items():
            for det in entry.get("details", []):
                for m in det.get("result", []):
                    pairs.append(((name, json.dumps(m["shape_detail"])), m["latency"]))
    return numbered(pairs)


def ms(v):
    return "" if v is None else f"{v:.4g}"


def pct(a, b):
    return "" if not a or not b else f"{(a - b) / b * 100:+.1f}"


def table_reference(work):
    print("| op | shape | A ms | B ms | A/B diff % | same-winners ms | FlagGems cudagraph ms | same-winners vs cudagraph % |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for op in ("abs", "add", "mm"):
        a, b = run_rows(work / "A" / "runs" / op), run_rows(work / "B" / "runs" / op)
        same = run_rows(work / "mm_shared2") if op == "mm" and (work / "mm_shared2").exists() else a
        ref = reference(work, op)
        for key, la in a.items():
            lb, ls, lr = b.get(key), same.get(key), ref.get(key)
            diff = f"{abs(la - lb) / min(la, lb) * 100:.2f}" if la and lb else ""
            print(f"| {key[0]} | {key[1]} | {ms(la)} | {ms(lb)} | {diff} | {ms(ls)} | {ms(lr)} | {pct(ls, lr)} |")


def table_settle(work):
    runs = sorted((int(p.name[len("mm_settle"):]), p) for p in work.glob("mm_settle*") if p.is_dir())
    ref = reference(work, "mm")
    head = " | ".join(f"settle {s} ms" for s, _ in runs)
    print(f"| op | shape | {head} | FlagGems cudagraph ms | last vs cudagraph % |")
    print("|---|---|" + "---:|" * (len(runs) + 2))
    rows = [run_rows(p) for _, p in runs]
    for key in (rows[0] if rows else {}):
        vals = [r.get(key) for r in rows]
        print(f"| {key[0]} | {key[1]} | " + " | ".join(ms(v) for v in vals) +
              f" | {ms(ref.get(key))} | {pct(vals[-1], ref.get(key))} |")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("reference", "settle"):
        sys.exit(__doc__)
    {"reference": table_reference, "settle": table_settle}[sys.argv[1]](pathlib.Path(sys.argv[2]))
