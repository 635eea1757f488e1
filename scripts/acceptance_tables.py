#!/usr/bin/env python3
"""Tables for scripts/acceptance.sh, from the work directory it leaves behind.

    acceptance_tables.py timer WORK     batches T1 and T2 (abs add mm, one after the
                                        other, same winners) against each other and
                                        against FlagGems' own --mode cudagraph, each
                                        side of each shape (FlagGems' and torch's)
    acceptance_tables.py cost DIR...    what measuring cost per (shape, side) in each
                                        run or batch directory, compile and tuning apart
    acceptance_tables.py aa WORK ZL     every pair of the A/A batches (AA*)
                                        compared (FASTER/SLOWER and NOISY shares),
                                        their calibration, the known-effect suite's
                                        SLOWER share on rows of 10 us or more at 3 %
                                        and 10 %, and the cost per (shape, side)
    acceptance_tables.py suite WORK     the whole-suite check: counts per
                                        status, every op not passed with its reason and
                                        FlagGems' own fresh-process verdict, the wall
                                        time and its extrapolation to the whole suite

The timer check's targets: T1 and T2 within 1 % per shape of 10 us or
more and 3 % below; the graph timer within 5 % of FlagGems' cudagraph mode.
Shapes that a run reports twice (mm drops the B of FlagGems' (B, M, N, K) core
shapes) are paired by occurrence, as `zlcore compare` pairs them.
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


# The two sides of a row: FlagGems' kernel and torch's baseline, as zlcore's
# results rows and FlagGems' --record json name their latencies.
SIDES = (("FlagGems", "latency_ms", "latency"), ("torch", "latency_base_ms", "latency_base"))


def run_rows(run_dir, field):
    f = pathlib.Path(run_dir) / "results.jsonl"
    if not f.exists():
        return {}
    return numbered(((r["op"], r["shape"]), r[field]) for r in map(json.loads, f.read_text().splitlines()))


def reference(work, op, field, name="ref"):
    f = work / f"{name}_{op}.json"
    pairs = []
    if f.exists():
        for op_name, entry in json.loads(f.read_text()).items():
            for det in entry.get("details", []):
                for m in det.get("result", []):
                    pairs.append(((op_name, json.dumps(m["shape_detail"])), m[field]))
    return numbered(pairs)


def ms(v):
    return "" if v is None else f"{v:.4g}"


def pct(a, b):
    return "" if not a or not b else f"{(a - b) / b * 100:+.1f}"


def agree_limit_pct(latency_ms):
    return 1.0 if latency_ms >= 0.010 else 3.0


def within_ref(values, ref):
    return bool(ref) and all(abs(v - ref) / ref * 100 <= 5.0 for v in values)


def table_timer(work):
    twice = any(work.glob("ref2_*.json"))
    extra = " FlagGems run 2 ms | its runs apart % | within vs run 2 |" if twice else ""
    print("| op | shape | side | T1 ms | T2 ms | T1/T2 diff % | target % | FlagGems cudagraph ms | T1 vs cudagraph % "
          f"| T2 vs cudagraph % | within |{extra}")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|" + ("---:|---:|---|" if twice else ""))
    missed = missed_both = 0
    for op in ("abs", "add", "mm"):
        for side, field, ref_field in SIDES:
            t1, t2 = run_rows(work / "T1" / "runs" / op, field), run_rows(work / "T2" / "runs" / op, field)
            ref, ref2 = reference(work, op, ref_field), reference(work, op, ref_field, "ref2")
            for key, l1 in t1.items():
                if not l1:  # an error row, or a side that has no baseline
                    print(f"| {key[0]} | {key[1]} | {side} | {ms(l1)} | {ms(t2.get(key))} | | | | | | NO |")
                    missed += 1
                    missed_both += 1
                    continue
                l2, lr = t2.get(key), ref.get(key)
                limit = agree_limit_pct(min(l1, l2 or l1))
                diff = abs(l1 - l2) / min(l1, l2) * 100 if l2 else None
                agree = diff is not None and diff <= limit
                ok = agree and within_ref((l1, l2), lr)
                missed += 0 if ok else 1
                shown = '' if diff is None else f'{diff:.2f}'
                line = (f"| {key[0]} | {key[1]} | {side} | {ms(l1)} | {ms(l2)} | {shown} "
                        f"| {limit:g} | {ms(lr)} | {pct(l1, lr)} | {pct(l2, lr)} | {'yes' if ok else 'NO'} |")
                if twice:
                    r2 = ref2.get(key)
                    apart = f"{abs(lr - r2) / min(lr, r2) * 100:.2f}" if lr and r2 else ""
                    ok2 = agree and within_ref((l1, l2), r2)
                    missed_both += 0 if (ok or ok2) else 1
                    line += f" {ms(r2)} | {apart} | {'yes' if ok2 else 'NO'} |"
                print(line)
    print(f"\n{missed} row(s) outside the targets")
    if twice:
        print(f"{missed_both} row(s) outside them against either run of FlagGems' cudagraph mode")


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else None


def table_cost(dirs, per_op=None):
    """The cost table; per_op names the dirs whose ops get a line each (default: all)."""
    print("| run | op | sides | measure ms median | p90 | max | over 100 ms | capture ms median | held / sustained "
          "| warm-up ms median |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---:|")
    for d in map(pathlib.Path, dirs):
        files = sorted(d.glob("runs/*/results.jsonl")) or sorted(d.glob("results.jsonl"))
        every = []
        for f in files:
            measure, capture, sustained, warmup = [], [], [], []
            op = f.parent.name if f.parent != d else d.name
            for r in map(json.loads, f.read_text().splitlines()):
                for suffix in ("", "_base"):
                    if r.get(f"measure{suffix}_ms") is None:
                        continue
                    measure.append(r[f"measure{suffix}_ms"])
                    capture.append(r.get(f"capture{suffix}_ms") or 0.0)
                    sustained.append(bool(r.get(f"sustained{suffix}")))
                    warmup.append(r.get(f"warmup{suffix}_ms") or 0.0)
            every += measure
            if measure and (per_op is None or d in per_op):
                # held: the steady pass stood; sustained: a power-limited pace, one reading per placement
                spread = f"{sum(not x for x in sustained)} / {sum(sustained)}"
                print(f"| {d.name} | {op} | {len(measure)} | {quantile(measure, 0.5):.1f} "
                      f"| {quantile(measure, 0.9):.1f} | {max(measure):.1f} | {sum(m > 100 for m in measure)} "
                      f"| {quantile(capture, 0.5):.1f} | {spread} "
                      f"| {quantile(warmup, 0.5):.1f} |")
        if every:
            print(f"| {d.name} | all | {len(every)} | {quantile(every, 0.5):.1f} | {quantile(every, 0.9):.1f} "
                  f"| {max(every):.1f} | {sum(m > 100 for m in every)} | | | mean {sum(every) / len(every):.1f} |")


def table_suite(work):
    import csv

    rows = list(csv.DictReader(open(work / "S" / "ops_status.csv", newline="")))
    latest = {}
    for r in rows:
        latest[r["op"]] = r  # a resumed op's last row
    fresh_path = work / "fresh_check.json"
    fresh = json.loads(fresh_path.read_text()) if fresh_path.exists() else {}
    index = json.loads((work / "suite_index.json").read_text())["ops"]
    wanted = [line.strip() for line in (work / "suite_ops.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    counts = {}
    for r in latest.values():
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print(f"{len(latest)} of {len(wanted)} ops have a row: " +
          ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda kv: -kv[1])))
    print("\n| op | status | attempt | seconds | reason | FlagGems alone, fresh process |")
    print("|---|---|---:|---:|---|---|")
    for op in wanted:
        r = latest.get(op)
        if r is None or r["status"] in ("passed",):
            continue
        f = fresh.get(op)
        verdict = "" if f is None else f"exit {f['exit']}: {f['last_line']}"
        reason = r["reason"].replace("|", "/")[:160]
        print(f"| {op} | {r['status']} | {r['attempt']} | {float(r['seconds']):.1f} | {reason} | {verdict} |")
    missed = [op for op in wanted if op in latest and latest[op]["status"] not in ("passed", "unsupported")
              and op in fresh and fresh[op]["exit"] == 0 and " passed" in fresh[op]["last_line"]]
    # pytest exits 0 when every test is skipped: that op has nothing to pass (no_tests), so
    # only a summary that counts passed tests makes "FlagGems passes it alone".
    print(f"\nops FlagGems passes alone in a fresh process but the batch did not pass: {len(missed)} "
          f"{', '.join(missed)}")
    print(f"harness_error: {counts.get('harness_error', 0)}; failed with a decline message: "
          f"{sum(1 for r in latest.values() if r['status'] == 'failed' and 'supported by this op' in r['reason'])}")
    seconds = sum(float(r["seconds"]) for r in rows)
    per_op = seconds / max(1, len(rows))
    total = len(index)
    print(f"\nop time {seconds:.0f} s over {len(rows)} op runs ({per_op:.1f} s each, resumed runs counted); "
          f"the whole suite ({total} marks) at that rate: {total * per_op / 3600:.1f} h on one device, "
          f"{total * per_op / 3600 / 8:.1f} h on eight")


def compare_json(zl, a, b):
    import subprocess

    p = subprocess.run([zl, "compare", str(a), str(b), "--format", "json"], capture_output=True, text=True)
    if p.returncode not in (0, 1, 3):
        return None
    try:
        return json.loads(p.stdout)
    except ValueError:
        return None


def table_aa(work, zl):
    import itertools
    import subprocess

    runs = sorted(d for d in work.glob("AA*") if (d / "ops_status.csv").exists())
    # An op whose sides ran different autotune winners is not an A/A: its kernels
    # differ, and compare's caliber names them. Its rows are counted apart.
    print("| A | B | rows of the same code | FASTER | SLOWER | false verdicts | SAME | NOISY | NO_WORK | UNCONFIRMED "
          "| ERROR | rows with other winners (their FASTER/SLOWER) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    total = false = noisy = 0
    for a, b in itertools.combinations(runs, 2):
        doc = compare_json(zl, a, b)
        if doc is None:
            print(f"| {a.name} | {b.name} | compare failed | | | | | | | | | |")
            continue
        retuned = {op for d in doc["caliber"].get("differences", []) if d.get("key") == "autotune"
                   for op in d.get("ops", [])}
        c = {v: 0 for v in ("FASTER", "SLOWER", "SAME", "NOISY", "NO_WORK", "UNCONFIRMED", "ERROR")}
        other = [r for r in doc["rows"] if r["op"] in retuned]
        for r in doc["rows"]:
            if r["op"] not in retuned:
                c[r["verdict"]] = c.get(r["verdict"], 0) + 1
        n = sum(c.values())
        fs = c["FASTER"] + c["SLOWER"]
        total, false, noisy = total + n, false + fs, noisy + c["NOISY"]
        other_fs = sum(1 for r in other if r["verdict"] in ("FASTER", "SLOWER"))
        print(f"| {a.name} | {b.name} | {n} | {c['FASTER']} | {c['SLOWER']} | {fs / max(n, 1) * 100:.1f} % "
              f"| {c['SAME']} | {c['NOISY']} ({c['NOISY'] / max(n, 1) * 100:.0f} %) | {c['NO_WORK']} "
              f"| {c['UNCONFIRMED']} "
              f"| {c['ERROR']} "
              f"| {len(other)} ({other_fs}) {', '.join(sorted(retuned))} |")
    if total:
        print(f"\nall pairs, rows of the same code: {false} of {total} FASTER/SLOWER ({false / total * 100:.2f} %, "
              f"target <= 1 %), {noisy} NOISY ({noisy / total * 100:.1f} %, target <= 10 %)")
    if len(runs) >= 2:
        p = subprocess.run([zl, "compare", "--calibrate", *map(str, runs), "--format", "md"], capture_output=True,
                           text=True)
        # The pair and per-op rates come first; the per-row floors after them are long.
        print("\n" + (p.stdout if p.returncode == 0 else p.stderr)[:6000])
    base = work / "KE0"
    for pct in (3, 10):
        other = work / f"KE{pct}"
        if not (base / "ops_status.csv").exists() or not (other / "ops_status.csv").exists():
            continue
        doc = compare_json(zl, base, other)
        if doc is None:
            continue
        big = [r for r in doc["rows"] if r.get("a_ms") and r["a_ms"] >= 0.010]
        slower = sum(1 for r in big if r["verdict"] == "SLOWER")
        print(f"known effect +{pct} %: SLOWER on {slower} of {len(big)} rows of 10 us or more "
              f"({slower / max(len(big), 1) * 100:.1f} %, target >= 95 %); all rows: "
              + ", ".join(f"{v} {sum(1 for r in doc['rows'] if r['verdict'] == v)}"
                          for v in ("SLOWER", "SAME", "NOISY", "FASTER", "UNCONFIRMED")))
    if runs:
        print()
        # Per op for the first batch; every batch's whole, so that batches compare.
        table_cost(runs, per_op={runs[0]})


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "aa":
        table_aa(pathlib.Path(sys.argv[2]), sys.argv[3])
        sys.exit(0)
    tables = ("timer", "cost", "suite")
    if len(sys.argv) < 3 or sys.argv[1] not in tables or (sys.argv[1] in ("timer", "suite") and len(sys.argv) != 3):
        sys.exit(__doc__)
    if sys.argv[1] == "timer":
        table_timer(pathlib.Path(sys.argv[2]))
    elif sys.argv[1] == "suite":
        table_suite(pathlib.Path(sys.argv[2]))
    else:
        table_cost(sys.argv[2:])
