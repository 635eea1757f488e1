#!/usr/bin/env bash
# Ops under a smaller device's memory: the default batch with every process
# capped at MEMCAP_GB (scripts/memcap/zl_memcap.py), then FlagGems' own pytest,
# alone and under the same cap, in a fresh process for every op the batch did
# not pass, so a failure is the op's or zlcore's, never a guess.
#
# usage: scripts/memcap.sh OPS_FILE
# env: ZL, FLAGGEMS_DIR, PY, BACKEND (cuda), DTYPES (float16), LEVEL (core),
#      MEMCAP_GB (48), WORK (./runs/memcap), OUT (WORK), OP_TIMEOUT_S, BUDGET_S
#      (the batch is stopped with SIGINT after this many seconds), CHECK_BUDGET_S
#      (FlagGems' own runs stop being started after this many seconds)
set -uo pipefail
ops_file=${1:?usage: scripts/memcap.sh OPS_FILE}
ZL=${ZL:-zlcore}
FG=${FLAGGEMS_DIR:?set FLAGGEMS_DIR to the FlagGems checkout}
PY=${PY:-$(command -v python3)}
WORK=${WORK:-$PWD/runs/memcap}
OUT=${OUT:-$WORK}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK" "$OUT"
export MEMCAP_GB=${MEMCAP_GB:-48} PYTEST_PLUGINS=zl_memcap
export PYTHONPATH="$HERE/memcap${PYTHONPATH:+:$PYTHONPATH}"
args=(--backend "${BACKEND:-cuda}" --flaggems-dir "$FG" --level "${LEVEL:-core}" --dtypes "${DTYPES:-float16}"
      --python "$PY" --ops-file "$ops_file" --out "$WORK/batch")
[ -n "${OP_TIMEOUT_S:-}" ] && args+=(--timeout "$OP_TIMEOUT_S")
[ -f "$WORK/batch/ops_status.csv" ] && args+=(--resume)
echo "== batch, every process capped at $MEMCAP_GB GB ($(date +%T))"
timeout -s INT -k 60 "${BUDGET_S:-0}" "$ZL" batch "${args[@]}"
echo "batch exit $?"
"$PY" - "$WORK" "$FG" "$PY" "${DTYPES:-float16}" "${LEVEL:-core}" "${CHECK_BUDGET_S:-0}" <<'PY' | tee "$OUT/memcap.md"
import csv, json, os, subprocess, sys, time
work, fg, py, dtypes, level, budget = sys.argv[1:7]
budget = float(budget)
rows = list(csv.DictReader(open(os.path.join(work, "batch", "ops_status.csv"), newline="")))
last = {r["op"]: r for r in rows}
started = time.monotonic()
gib = float(1 << 30)
print(f"| op | batch status | FlagGems alone (capped) | rows | lean rows | suite peak GiB | zlcore added GiB | reason |")
print("|---|---|---|---|---|---|---|---|")
for op, r in last.items():
    alone = "-"
    if r["status"] not in ("passed", "unsupported") and (not budget or time.monotonic() - started < budget):
        node = (r["test_node"] or "").split("::")[0].split()[0] if r["test_node"] else ""
        if node:
            p = subprocess.run([py, "-m", "pytest", "-q", "-s", node, "-m", op, "--level", level, "--dtypes", dtypes,
                                "--mode", "kernel"], cwd=fg, capture_output=True, text=True)
            alone = f"exit {p.returncode}"
    run = os.path.join(work, "batch", r["run_dir"])
    res = []
    try:
        res = [json.loads(l) for l in open(os.path.join(run, "results.jsonl")) if l.strip()]
    except OSError:
        pass
    lean = sum(1 for x in res if x.get("placement_note") or x.get("placement_note_base"))
    mem = {}
    try:
        mem = json.load(open(os.path.join(run, "run_identity.json"))).get("memory") or {}
    except (OSError, ValueError):
        pass
    peak = mem.get("suite_peak_bytes")
    added = max(mem.get("added_peak_bytes") or 0, mem.get("added_peak_base_bytes") or 0)
    print(f"| {op} | {r['status']} | {alone} | {len(res)} | {lean} | "
          f"{peak / gib if peak else 0:.2f} | {added / gib:.2f} | {r['reason'][:80]} |")
PY
