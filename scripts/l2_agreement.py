#!/usr/bin/env python3
"""zlcore's rows against FlagGems' own timing, one L2 policy against the mode that matches it.

    l2_agreement.py WARM_OR_COLD ZL_BATCH... --ref FLAGGEMS_JSON... [--rows]

ZL_BATCH: zlcore batch directories of the same ops, run back to back with one
`--l2` policy (three make an A/A). FLAGGEMS_JSON: FlagGems' `pytest --record json
--output` files of the same files and marks, in the mode that clears the L2 as
the policy does (`--mode kernel` for cold, `--mode cudagraph` for warm), run
more than once to know FlagGems' own run-to-run spread.

For every (op, shape, side) both report (FlagGems' kernel and torch's baseline)
the row agrees when zlcore's median over its batches and FlagGems' mean over
its runs differ by no more than the noise of the pair: zlcore's spread over its
batches plus FlagGems' over its runs (max against min, in %), and never less
than 1 % (the A/A bar of a row of 10 us or more; 3 % below). Rows zlcore
measured but FlagGems did not (or the other way) are counted, not compared.

A row outside the bar gets the likeliest reason the two differ, from what
zlcore recorded of it. Against --mode kernel, whose do_bench times each call
eagerly, zlcore's own eager estimate of the calls (`eager_ms`) tells two
apart: `dispatch` where it and FlagGems both read at least 1.3 times the
graph's time (FlagGems' Python dispatch outlasts the kernel, and do_bench
times the dispatch); `graph path` where the graph's time is 3 % or more
from FlagGems' and the eager estimate at most half as far (the op runs
another way when captured). Then `noisy` (zlcore's batches more than 10 %
apart), `under 10 us` (where one timing event pair, about 1.3 us on an
H100, and the inputs' placement weigh most), or none.
"""
import argparse
import json
import pathlib
import statistics

from acceptance_tables import agree_limit_pct, numbered

# (side, zlcore's graph time, zlcore's eager estimate, FlagGems' field)
SIDES = (("FlagGems", "latency_ms", "eager_ms", "latency"),
         ("torch", "latency_base_ms", "eager_base_ms", "latency_base"))
NOISY_PCT = 10.0
REASONS = ("dispatch", "graph path", "noisy", "under 10 us", "")
HOST_BOUND = 1.3


def zl_rows(batch, field):
    pairs = []
    for f in sorted(pathlib.Path(batch).glob("runs/*/results.jsonl")):
        for line in f.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                pairs.append(((r["op"], r["shape"]), r.get(field)))
    return numbered(pairs)


def ref_rows(path, field):
    pairs = []
    for op, entry in json.loads(pathlib.Path(path).read_text()).items():
        for det in entry.get("details", []) if isinstance(entry, dict) else []:
            for m in det.get("result", []):
                pairs.append(((det.get("op_name", op), json.dumps(m["shape_detail"])), m.get(field)))
    return numbered(pairs)


def spread_pct(values):
    return (max(values) - min(values)) / min(values) * 100 if len(values) > 1 else 0.0


def compare(batches, refs, policy):
    """One dict per (op, shape, side) that both zlcore and FlagGems report."""
    out, only_zl, only_ref = [], 0, 0
    for side, zl_field, eager_field, ref_field in SIDES:
        zl = [zl_rows(b, zl_field) for b in batches]
        eager = [zl_rows(b, eager_field) for b in batches]
        rf = [ref_rows(r, ref_field) for r in refs]
        keys = set().union(*zl)
        ref_keys = set().union(*rf)
        only_ref += len(ref_keys - keys)
        for key in sorted(keys):
            zv = [z[key] for z in zl if z.get(key)]
            rv = [r[key] for r in rf if r.get(key)]
            if not zv or not rv:
                only_zl += bool(zv)
                continue
            z, f = statistics.median(zv), statistics.fmean(rv)
            bar = max(agree_limit_pct(min(z, f)), spread_pct(zv) + spread_pct(rv))
            diff = (z - f) / f * 100
            ev = [e[key] for e in eager if e.get(key)]
            row = dict(op=key[0], shape=key[1], side=side, zl=z, zl_spread=spread_pct(zv), ref=f,
                       ref_spread=spread_pct(rv), diff=diff, bar=bar, agree=abs(diff) <= bar,
                       eager=statistics.median(ev) if ev else None)
            row["why"] = "" if row["agree"] else reason(row, policy)
            out.append(row)
    return out, only_zl, only_ref


def reason(row, policy):
    """The likeliest reason a row outside the bar differs (module docstring)."""
    z, eager, ref = row["zl"], row["eager"], row["ref"]
    if policy == "cold" and eager:
        if eager >= HOST_BOUND * z and ref >= HOST_BOUND * z:
            return "dispatch"
        eager_gap = abs(eager - ref) / ref * 100
        if abs(row["diff"]) >= 3.0 and eager_gap * 2 <= abs(row["diff"]):
            return "graph path"
    if row["zl_spread"] > NOISY_PCT:
        return "noisy"
    return "under 10 us" if size_class(z) == "under 10 us" else ""


def size_class(ms):
    return "under 10 us" if ms < 0.010 else ("10-100 us" if ms < 0.100 else "100 us or more")


def report(policy, batches, refs, rows_too):
    rows, only_zl, only_ref = compare(batches, refs, policy)
    mode = "kernel" if policy == "cold" else "cudagraph"
    print(f"## `--l2 {policy}` against FlagGems `--mode {mode}`\n")
    print(f"{len(batches)} zlcore batch(es), {len(refs)} FlagGems run(s); {len(rows)} (shape, side) rows in both, "
          f"{only_zl} only in zlcore's, {only_ref} only in FlagGems'.\n")
    print("| latency (FlagGems' mean) | rows | agree | zlcore faster | zlcore slower | median diff % |")
    print("|---|---:|---:|---:|---:|---:|")
    for cls in ("under 10 us", "10-100 us", "100 us or more", "all"):
        part = [r for r in rows if cls == "all" or size_class(r["ref"]) == cls]
        if not part:
            continue
        off = [r for r in part if not r["agree"]]
        print(f"| {cls} | {len(part)} | {len(part) - len(off)} | {sum(r['diff'] < 0 for r in off)} "
              f"| {sum(r['diff'] > 0 for r in off)} | {statistics.median(r['diff'] for r in part):+.1f} |")
    off = [r for r in rows if not r["agree"]]
    if off:
        counts = ", ".join(f"{why or 'no reason recorded'} {sum(r['why'] == why for r in off)}" for why in REASONS)
        print(f"\nOutside the bar, by likeliest reason: {counts}.")
    shown = rows if rows_too else sorted((r for r in rows if not r["agree"]), key=lambda r: -abs(r["diff"]))[:15]
    if shown:
        print(f"\n{'Every row' if rows_too else 'Rows outside the bar, largest first (at most 15)'}:\n")
        print("| op | shape | side | zlcore ms | its A/A % | FlagGems ms | its runs % | diff % | bar % | why |")
        print("|---|---|---|---:|---:|---:|---:|---:|---:|---|")
        for r in shown:
            print(f"| {r['op']} | {r['shape']} | {r['side']} | {r['zl']:.4g} | {r['zl_spread']:.1f} | {r['ref']:.4g} "
                  f"| {r['ref_spread']:.1f} | {r['diff']:+.1f} | {r['bar']:.1f} | {r['why']} |")
    print()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("policy", choices=("warm", "cold"))
    p.add_argument("batches", nargs="+")
    p.add_argument("--ref", nargs="+", required=True)
    p.add_argument("--rows", action="store_true", help="every row, not only those outside the bar")
    a = p.parse_args(argv)
    report(a.policy, a.batches, a.ref, a.rows)


if __name__ == "__main__":
    main()
