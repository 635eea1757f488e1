#!/usr/bin/env bash
# Acceptance runs on a GPU host with real FlagGems: the "done when" checks of
# the timer, run, autotune, batch and compare work, in stages small enough for
# one call each on a machine held for a limited time. Results land in $OUT (or ./acceptance-out).
#
# usage: scripts/acceptance.sh STAGE...    stages, in this order:
#   record     batch A: abs add mul softmax mm addmm, isolated caches (records
#              autotune winners), then --resume (must run nothing)
#   replay     batch B: the same ops replaying A's winners; compare A B (md, html)
#   shared     mm twice on one shared tuner cache (inheritance in the identity)
#   timer      the timer's check: abs add mm twice in a row (batches T1,
#              T2) on one tuner cache holding A's mm winners (a replay of A's
#              records with --keep-tuner-cache; a tuning run when there is no
#              A), then FlagGems' own --mode cudagraph on that cache: the same
#              winners, timed by FlagGems; the agreement table and the
#              measurement cost per (shape, side)
#   warm       10 ops cold and warm (zlcore batch --cold vs default)
#   suite      the whole-suite check: the default (warm) batch over SUITE_N
#              (60) marks drawn at random with SEED (scripts/sample_ops.py) plus
#              is_nonzero early and layer_norm last (SUITE_EARLY, SUITE_LATE); a batch directory that exists is
#              resumed, so it spans calls (BUDGET_S). Then FlagGems' own pytest, in a
#              fresh process without zlcore, for every op whose status is neither passed
#              nor unsupported; then the table (suite_check.md)
#   aa         numbers that hold across processes: AA_N (30) marks drawn with
#              AA_SEED (20261204), none of them in suite_ops.txt when it exists nor in
#              scripts/measured_ops.txt (so no earlier result measured them), plus AA_LATE
#              (layer_norm) last; a batch starts only with AA_START_MIN_S (30) of BUDGET_S left,
#              and AA_OP_TIMEOUT_S, when set, bounds each op (batch --timeout);
#              batches AA_RUNS (AA1 AA2 AA3; "" for none) back to back on one tuner cache kept in WORK
#              (a name that exists is resumed: the stage spans calls, and AA4 in a later call is the other
#              machine; the winners are saved in $OUT/aa_winners.tgz, and a WORK
#              without aa_cache but with aa_winners.tgz starts from them); then the
#              known-effect suite at 0, 3 and 10 % (KE0 KE3 KE10; AA_KE_PCTS="" skips it);
#              then every pair compared, calibrated, and the cost (aa_check.md)
#   ab         zlcore ab: AB_N (20) marks drawn with AB_SEED (20261205), none in
#              scripts/measured_ops.txt, plus abs (scripts/sample_ops.py; seed and list printed).
#              One A/B, AB: AB_ROUNDS (5, the fewest a verdict over rounds takes) rounds,
#              --calibrate, so A against A2 is FlagGems against itself (the in-run A/A) and
#              A against B is against a copy in $WORK/fg_slow whose abs kernel tiles by 32
#              elements with one warp (a CodeGenConfig given to its pointwise_dynamic, made by
#              a small Python edit): abs must read SLOWER, nothing else move. Then the sequence
#              it replaces: batch A (records) + batch B (replays) + compare over the same ops,
#              each timed (ab_check.md). Both on AB_DEVICES (all): ab spreads its rounds,
#              batch its ops, over them. An ab or batch directory that exists is resumed;
#              BUDGET_S bounds each call; AB_OP_TIMEOUT_S, when set, each run (ab and
#              batch --timeout). AB_WINNERS=own runs the ab sides in warm workers,
#              each tuning on its own cache, and the sequence's two batches likewise
#              ($WORK/seq_cache/SA, SB); default record: A records (a cold run per op), every
#              ab side replays it, in its warm worker unless AB_WARM=0 (ab --warm); the
#              sequence records (SA) and replays (SB) cold. AB_SUSTAINED, when set, is ab's
#              --sustained (sticky or per-run; an A/B begun per-run resumes per-run).
#              AB_NAMED: ops run besides the AB_N drawn (space-separated), before abs.
#              AB_SEQUENCE=0: the A/B alone, no batch sequence (an A/B that measures
#              the timer, not ab's cost).
#   abi        ABI 1.2: `zlcore devices --backend $BACKEND --json` (attributes
#              and state); batch R of ABI_OPS (abs,add,mm,softmax) at --level core, whose
#              abs/add shapes include 1024^3 = 2^30 elements, in ABI_DTYPES (float16);
#              every row with achieved GB/s and TFLOPS and % of the device's peak; each
#              run's device state at start and end and the graph timer's per-side clocks
#              and throttle reasons (abi_check.md); nvidia-smi's answers to the backend's
#              attribute and state queries, to record as testdata
#   l2         the L2 policy: L2_N (12) marks drawn with L2_SEED (20261211), none in
#              scripts/measured_ops.txt; batches L2_RUNS (W1 C1 W2 C2 W3 C3: W warm, C --l2 cold)
#              back to back on one tuner cache in WORK (a name that exists is resumed, so the
#              stage spans calls); FlagGems' own pytest --record json over the first passed
#              ops' files and marks, --mode kernel and --mode cudagraph, L2_REF_RUNS (2) times
#              each; `run --op abs --profile` on FlagGems and on the slowed copy (see ab),
#              compared; the clock check (ZL_GRAPH_CLOCK_CHECK=on) over L2_CLOCK_OPS (4) of the
#              ops while another process runs bursts of float16 GEMMs, and again without; then
#              l2_check.md: every pair of a policy compared, the agreement of each policy with
#              its FlagGems mode (scripts/l2_agreement.py), the clock check's counts
#   series     a nightly series for zlcore history: SERIES_NIGHTS batches of SERIES_N marks drawn
#              with SERIES_SEED plus abs, abs slowed from night SERIES_SLOW_FROM on (see the stage)
# env: ZL (zlcore binary), FLAGGEMS_DIR, PY (python with torch), BACKEND (cuda), OPS,
#      DTYPES (float16), WORK (kept between stages; default ./runs/acceptance), OUT,
#      BUDGET_S (record: SIGINT batch A after this many seconds, so a call ends in
#      time and the next call's `record` resumes it; 0 = no limit), REF_RUNS (timer:
#      2 runs FlagGems' reference twice), TIMER_OPS (timer: the ops, default abs,add,mm;
#      without mm nothing tunes, and the runs share an empty tuner cache). ZL_GRAPH_* knobs in the environment reach
#      the timer (and its identity), e.g. ZL_GRAPH_SUSTAINED_MS=2200 acceptance.sh timer
set -uo pipefail
ZL=${ZL:-zlcore}
FG=${FLAGGEMS_DIR:?set FLAGGEMS_DIR to the FlagGems checkout}
PY=${PY:-$(command -v python3)}
BACKEND=${BACKEND:-cuda}
WORK=${WORK:-$PWD/runs/acceptance}
OUT=${OUT:-$PWD/acceptance-out}
mkdir -p "$WORK" "$OUT"
COMMON=(--backend "$BACKEND" --flaggems-dir "$FG" --level core --dtypes "${DTYPES:-float16}" --python "$PY")
OPS=${OPS:-abs,add,mul,softmax,mm,addmm}
# Every op an earlier result measured: aa and ab draw none of them
# (sample_ops.py --exclude).
MEASURED=$(dirname "$0")/measured_ops.txt

say() { echo "== $* ($(date +%T))"; }
# Tuner caches stay behind: the shared one holds compiled binaries (tens of MB).
pack() { (cd "$WORK" && tar czf "$OUT/acceptance.tgz" --exclude=.tuner_cache --exclude='*.db' --exclude=./shared \
                        --exclude=./aa_cache --exclude=./l2_cache --exclude=./fg_slow --exclude='./AB*/tuner' --exclude=./seq_cache .); }
# The slower copy ($WORK/fg_slow): abs's pointwise_dynamic gets a
# CodeGenConfig with a 32-element tile and one warp; every other op is the
# same code. Made once per WORK.
slow_copy() {
  [ -f "$WORK/fg_slow/.zl_slow_abs" ] && return 0
  rm -rf "$WORK/fg_slow"
  cp -a "$FG" "$WORK/fg_slow" || return 1
  "$PY" - "$WORK/fg_slow/src/flag_gems/ops/abs.py" <<'PY' || return 1
import sys
path = sys.argv[1]
text = open(path).read()
old = '@pointwise_dynamic(promotion_methods=[(0, "COMPLEX_TO_FLOAT")])'
new = ('@pointwise_dynamic(promotion_methods=[(0, "COMPLEX_TO_FLOAT")], '
       'config=CodeGenConfig(32, (65536, 65536, 65536), 1, True, prefer_1d_tile=False))')
if text.count(old) != 1:
    sys.exit(f"ab: {path}: the abs decorator is not there once; cannot make the slow copy")
text = text.replace(old, new).replace(
    "from flag_gems.utils import pointwise_dynamic",
    "from flag_gems.utils import pointwise_dynamic\nfrom flag_gems.utils.codegen_config_utils import CodeGenConfig", 1)
open(path, "w").write(text)
print(f"ab: slowed abs in {path}")
PY
  touch "$WORK/fg_slow/.zl_slow_abs"
}
ident() {  # the identity lines each check reads
  "$PY" - "$@" <<'PY'
import json, os, sys
for path in sys.argv[1:]:
    if not os.path.exists(path):
        print(f"{path}: absent"); continue
    d = json.load(open(path))
    a, t = d.get("autotune", {}), d.get("tuner_cache", {})
    print(f"{path}: status={d['status']} seconds={d['seconds']:.1f} timer={d['timer']['name']} "
          f"tuner_cache={t.get('kind')} winners_present={t.get('winners_present')} "
          f"inherited_winners={t.get('inherited_winners')} variants_compiled={t.get('variants_compiled')} "
          f"autotune={a.get('mode')} tuning_benchmarks={a.get('tuning_benchmarks')} "
          f"records_written={a.get('records_written')} records_hash={(a.get('records_hash') or '')[:12]} "
          f"source_run_id={a.get('source_run_id')} replay_misses={a.get('replay_misses')}")
PY
}

for stage in "$@"; do
  case "$stage" in
    abi)
      say "abi: devices --json"
      "$ZL" devices --backend "$BACKEND" --json > "$OUT/devices.json"; echo "devices exit $?"
      cat "$OUT/devices.json"
      if command -v nvidia-smi > /dev/null; then  # the recordings plugins/backend-cuda/testdata wants
        nvidia-smi --query-gpu=uuid,driver_version,compute_cap,clocks.max.sm,clocks.max.memory,enforced.power.limit,ecc.mode.current,pci.bus_id \
          --format=csv,noheader,nounits > "$OUT/smi_attributes.txt" 2>&1
        nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active,utilization.gpu,memory.used \
          --format=csv,noheader,nounits > "$OUT/smi_state.txt" 2>&1
        nvidia-smi -q -d CLOCK,POWER > "$OUT/smi_clock_power.txt" 2>&1
      fi
      again=(); [ -f "$WORK/R/ops_status.csv" ] && again=(--resume)
      say "abi: batch R ${again[*]}"
      timeout -s INT -k 30 "${BUDGET_S:-0}" "$ZL" batch --backend "$BACKEND" --flaggems-dir "$FG" --level core \
        --dtypes "${ABI_DTYPES:-float16}" --python "$PY" --ops "${ABI_OPS:-abs,add,mm,softmax}" --out "$WORK/R" "${again[@]}"
      echo "R exit $?"
      cat "$WORK/R/ops_status.csv"
      "$PY" - "$WORK/R" "$OUT/devices.json" <<'PY' | tee "$OUT/abi_check.md"
import glob, json, os, sys
batch, devices = sys.argv[1], sys.argv[2]
try:
    dev = json.load(open(devices))["devices"][0]
    a = dev.get("attributes", {})
    print(f"device: {dev['name']}  peak bandwidth {a.get('memory_bandwidth_peak_gbps')} GB/s "
          f"({a.get('memory_bandwidth_source')}); fp16 peak {a.get('compute_peak_tflops.float16')} TFLOPS "
          f"({a.get('compute_peak_source')})\n")
except Exception as e:
    print(f"devices.json unreadable: {e}\n")
def f(v, fmt="{:.4g}"):
    return "-" if v is None else fmt.format(v)
def side(st):
    if not st:
        return "-"
    return f"{st.get('clock_sm_mhz', '?')}/{st.get('clock_memory_mhz', '?')} MHz {st.get('power_draw_w', '?')} W {st.get('throttle_reasons', '?')}"
print("| op | dtype | shape | gems ms | GB/s | % peak bw | TFLOPS | % peak fp | bw source | gems SM/mem clock, power, throttle | torch ditto | sustained |")
print("|---|---|---|---:|---:|---:|---:|---:|---|---|---|---|")
for run in sorted(glob.glob(os.path.join(batch, "runs", "*"))):
    path = os.path.join(run, "results.jsonl")
    if not os.path.exists(path):
        continue
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        print(f"| {r['op']} | {r['dtype']} | {r['shape']} | {f(r.get('latency_ms'))} | {f(r.get('achieved_gbps'), '{:.0f}')} | "
              f"{f(r.get('pct_peak_bandwidth'), '{:.0f}')} | {f(r.get('achieved_tflops'))} | {f(r.get('pct_peak_compute'), '{:.0f}')} | "
              f"{(r.get('achieved_gbps_source') or '-')[:7]} | {side(r.get('device_state'))} | {side(r.get('device_state_base'))} | "
              f"{r.get('sustained') or '-'} |")
print()
for ident in sorted(glob.glob(os.path.join(batch, "runs", "*", "run_identity.json"))):
    d = json.load(open(ident)).get("device", {})
    print(f"{os.path.basename(os.path.dirname(ident))}: state_start {json.dumps(d.get('state_start'))}")
    print(f"{' ' * len(os.path.basename(os.path.dirname(ident)))}  state_end   {json.dumps(d.get('state_end'))}")
PY
      ;;
    record)
      # A batch directory that exists is continued (--resume), so the record
      # can span calls: e.g. `OPS=abs,add,mul,softmax acceptance.sh record`,
      # then `acceptance.sh record` for mm and addmm (~3.5 min of cold tuning each).
      again=(); [ -f "$WORK/A/ops_status.csv" ] && again=(--resume)
      say "record: batch A ${again[*]}"
      timeout -s INT -k 30 "${BUDGET_S:-0}" \
        "$ZL" batch "${COMMON[@]}" --ops "$OPS" --isolate-tuner-cache 1 --out "$WORK/A" "${again[@]}"
      rc=$?; echo "A exit $rc"
      cat "$WORK/A/ops_status.csv"
      if [ "$rc" = 0 ]; then
        say "record: resume A (runs nothing)"
        "$ZL" batch "${COMMON[@]}" --ops "$OPS" --isolate-tuner-cache 1 --out "$WORK/A" --resume; echo "resume exit $?"
      fi
      ident "$WORK"/A/runs/mm/run_identity.json "$WORK"/A/runs/addmm/run_identity.json
      ;;
    replay)
      say "replay: batch B from A"
      "$ZL" batch "${COMMON[@]}" --ops "$OPS" --replay-from "$WORK/A" --out "$WORK/B"; echo "B exit $?"
      cat "$WORK/B/ops_status.csv"
      ident "$WORK"/B/runs/mm/run_identity.json "$WORK"/B/runs/addmm/run_identity.json
      "$ZL" compare "$WORK/A" "$WORK/B" --format md > "$OUT/compare.md"; echo "compare exit $?"
      "$ZL" compare "$WORK/A" "$WORK/B" --html "$OUT/compare.html"
      ;;
    shared)
      for r in 1 2; do
        say "shared: mm run $r"
        FLAGGEMS_CACHE_DIR=$WORK/shared/fg TRITON_CACHE_DIR=$WORK/shared/triton \
          "$ZL" run "${COMMON[@]}" --op mm --out "$WORK/mm_shared$r" > "$WORK/mm_shared$r.out" 2>&1
        echo "exit $?"; head -12 "$WORK/mm_shared$r.out"
      done
      ident "$WORK"/A/runs/mm/run_identity.json "$WORK"/mm_shared1/run_identity.json "$WORK"/mm_shared2/run_identity.json
      say "preflight failure, timed"
      for i in 1 2 3; do
        /usr/bin/time -f "%e s" "$ZL" run --backend "$BACKEND" --flaggems-dir /nonexistent/FlagGems --op abs \
          --python "$PY" --out "$WORK/x$i"; echo "exit $?"
      done
      ;;
    timer)
      # One cache holding A's mm winners, kept after the replay that built it:
      # T1, T2 and the reference all find them there, so all three time the
      # same kernels and nothing tunes (without A, the run tunes them, ~3 min).
      W=$WORK/winners TOPS=${TIMER_OPS:-abs,add,mm}
      TOPS=${TOPS// /}  # "abs, mm" too
      rm -rf "$W" "$WORK/T1" "$WORK/T2"
      if [[ ",$TOPS," != *,mm,* ]]; then
        say "timer: no mm among $TOPS, so no winners to keep"
        mkdir -p "$W/.tuner_cache/flaggems" "$W/.tuner_cache/triton"
      elif [ -d "$WORK/A/runs/mm/autotune_records" ]; then
        say "timer: mm replaying A's winners into one kept cache"
        "$ZL" run "${COMMON[@]}" --op mm --replay-from "$WORK/A/runs/mm" --keep-tuner-cache --out "$W" > "$WORK/winners.out" 2>&1
      else
        say "timer: mm tuning into one kept cache (no batch A to replay)"
        "$ZL" run "${COMMON[@]}" --op mm --isolate-tuner-cache 1 --keep-tuner-cache --out "$W" > "$WORK/winners.out" 2>&1
      fi
      echo "exit $?"
      export FLAGGEMS_CACHE_DIR=$W/.tuner_cache/flaggems TRITON_CACHE_DIR=$W/.tuner_cache/triton
      for t in T1 T2; do
        say "timer: batch $t ($TOPS)"
        "$ZL" batch "${COMMON[@]}" --ops "$TOPS" --out "$WORK/$t"; echo "$t exit $?"
      done
      # REF_RUNS=2: the reference twice, to know FlagGems' own run-to-run spread.
      rm -f "$WORK"/ref_*.json "$WORK"/ref2_*.json
      for ref in ref $( [ "${REF_RUNS:-1}" -ge 2 ] && echo ref2 ); do
        for op in ${TOPS//,/ }; do
          say "timer: FlagGems --mode cudagraph $op ($ref)"
          (cd "$FG" && "$PY" -m pytest -s -p no:cacheprovider "benchmark/test_$op.py" -m "$op" --level core \
             --dtypes "${DTYPES:-float16}" --mode cudagraph --record json --output "$WORK/${ref}_$op.json" \
             > "$WORK/${ref}_$op.out" 2>&1)
          echo "exit $?"
        done
      done
      unset FLAGGEMS_CACHE_DIR TRITON_CACHE_DIR
      "$PY" "$(dirname "$0")/acceptance_tables.py" timer "$WORK" | tee "$OUT/timer_agreement.md"
      "$PY" "$(dirname "$0")/acceptance_tables.py" cost "$WORK/T1" "$WORK/T2" | tee "$OUT/timer_cost.md"
      ;;
    warm)
      OPS10=abs,add,mul,sub,exp,neg,relu,sigmoid,softmax,sum
      say "warm: 10 ops cold"
      "$ZL" batch "${COMMON[@]}" --ops "$OPS10" --cold --out "$WORK/cold"; echo "cold exit $?"
      say "warm: 10 ops warm"
      "$ZL" batch "${COMMON[@]}" --ops "$OPS10" --out "$WORK/warm"; echo "warm exit $?"
      "$ZL" compare "$WORK/cold" "$WORK/warm" --format md > "$OUT/warm_vs_cold.md"
      "$PY" "$(dirname "$0")/acceptance_tables.py" cost "$WORK/warm" "$WORK/cold" | tee "$OUT/warm_cost.md"
      ;;
    suite)
      ops_file="$WORK/suite_ops.txt"
      "$ZL" ops --flaggems-dir "$FG" --json > "$WORK/suite_index.json"
      if [ ! -f "$ops_file" ]; then
        "$PY" "$(dirname "$0")/sample_ops.py" "$WORK/suite_index.json" --seed "${SEED:-20261203}" \
          --count "${SUITE_N:-60}" --early "${SUITE_EARLY:-is_nonzero}" --late "${SUITE_LATE:-layer_norm}" \
          > "$ops_file" || exit 1
      fi
      tr '\n' ' ' < "$ops_file"; echo
      again=(); [ -f "$WORK/S/ops_status.csv" ] && again=(--resume)
      say "suite: batch S ${again[*]}"
      start=$(date +%s)
      timeout -s INT -k 60 "${BUDGET_S:-0}" "$ZL" batch "${COMMON[@]}" --ops-file "$ops_file" --out "$WORK/S" "${again[@]}"
      echo "S exit $? after $(( $(date +%s) - start )) s"
      # FlagGems alone, in a fresh process each, for what did not pass: is it the op or us?
      "$PY" - "$WORK" "$FG" "$PY" "${DTYPES:-float16}" "${CHECK_BUDGET_S:-0}" <<'PY'
import csv, json, os, subprocess, sys, time
work, fg, py, dtypes, budget = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
index = json.load(open(os.path.join(work, "suite_index.json")))["ops"]
rows = {r["op"]: r for r in csv.DictReader(open(os.path.join(work, "S", "ops_status.csv"), newline=""))}
done_path = os.path.join(work, "fresh_check.json")
done = json.load(open(done_path)) if os.path.exists(done_path) else {}
started = time.monotonic()
for op, row in rows.items():
    if budget < 0:
        break  # CHECK_BUDGET_S=-1: no fresh check in this call
    if row["status"] in ("passed", "unsupported") or op in done:
        continue
    if budget and time.monotonic() - started > budget:
        print(f"fresh check: budget spent, {op} and later left for the next call"); break
    files = index.get(op, {}).get("runs", [])
    argv = [py, "-m", "pytest", "-s", "-p", "no:cacheprovider", *files, "-m", op, "--level", "core",
            "--dtypes", dtypes, "--mode", "kernel"]
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, cwd=fg, capture_output=True, text=True, timeout=600)
        code, tail = p.returncode, (p.stdout + p.stderr).strip().splitlines()[-1:]
    except subprocess.TimeoutExpired:
        code, tail = "timeout", ["600 s"]
    done[op] = {"exit": code, "seconds": round(time.monotonic() - t0, 1), "last_line": (tail or [""])[0][:200]}
    print(f"fresh pytest {op}: exit {code} in {done[op]['seconds']} s: {done[op]['last_line']}", flush=True)
    json.dump(done, open(done_path, "w"), indent=1)
PY
      "$PY" "$(dirname "$0")/acceptance_tables.py" suite "$WORK" | tee "$OUT/suite_check.md"
      ;;
    aa)
      "$ZL" ops --flaggems-dir "$FG" --json > "$WORK/aa_index.json"
      if [ ! -f "$WORK/aa_ops.txt" ]; then
        exclude=(); [ -f "$WORK/suite_ops.txt" ] && exclude=(--exclude "$WORK/suite_ops.txt")
        late=(); for op in ${AA_LATE-layer_norm}; do late+=(--late "$op"); done
        "$PY" "$(dirname "$0")/sample_ops.py" "$WORK/aa_index.json" --seed "${AA_SEED:-20261204}" \
          --count "${AA_N:-30}" "${late[@]}" "${exclude[@]}" --exclude "$MEASURED" \
          > "$WORK/aa_ops.txt" || exit 1
      fi
      tr '\n' ' ' < "$WORK/aa_ops.txt"; echo
      # One tuner cache for every A/A batch: the same winners, the same binaries.
      # On a fresh machine (AA4, "another machine") the winners the earlier
      # calls saved are put back first, so it times the same kernels instead
      # of tuning its own (the binaries are compiled again).
      if [ ! -d "$WORK/aa_cache" ] && [ -f "$WORK/aa_winners.tgz" ]; then
        say "aa: restoring the A/A winners from aa_winners.tgz"
        tar xzf "$WORK/aa_winners.tgz" -C "$WORK" || exit 1
      fi
      export FLAGGEMS_CACHE_DIR=$WORK/aa_cache/flaggems TRITON_CACHE_DIR=$WORK/aa_cache/triton
      start=$(date +%s)
      left() { [ "${BUDGET_S:-0}" = 0 ] && echo 0 || echo $(( BUDGET_S - ($(date +%s) - start) )); }
      for run in ${AA_RUNS-AA1 AA2 AA3}; do  # AA_RUNS="" runs none (the known-effect suite alone)
        # A batch that ran to its end is not resumed: --resume would run its
        # failed and no_tests ops again, a minute of device time for nothing.
        [ -f "$WORK/$run/.acceptance_done" ] && { say "aa: batch $run is complete"; continue; }
        # A batch cut by the budget resumes its op on a new worker, as that
        # worker's first op: not how the other batches ran it. AA_START_MIN_S
        # keeps a batch for the next call unless this many seconds are left.
        [ "${BUDGET_S:-0}" != 0 ] && [ "$(left)" -le "${AA_START_MIN_S:-30}" ] &&
          { say "aa: budget spent before $run"; break; }
        again=(); [ -f "$WORK/$run/ops_status.csv" ] && again=(--resume)
        say "aa: batch $run ${again[*]}"
        # AA_OP_TIMEOUT_S: an op past it says `timeout` in every batch alike,
        # rather than one slow op (a NumPy torch side of seconds a call) eating the call.
        per_op=(); [ -n "${AA_OP_TIMEOUT_S:-}" ] && per_op=(--timeout "$AA_OP_TIMEOUT_S")
        timeout -s INT -k 60 "$(left)" "$ZL" batch "${COMMON[@]}" --ops-file "$WORK/aa_ops.txt" --out "$WORK/$run" \
          "${per_op[@]}" "${again[@]}" | tail -3
        # 0: every op passed or was declined; 1: some failed (docs/cli.md).
        # Anything else (the budget's SIGINT, a usage error, a crash) is resumed.
        rc=${PIPESTATUS[0]}
        { [ "$rc" = 0 ] || [ "$rc" = 1 ]; } && touch "$WORK/$run/.acceptance_done"
      done
      unset FLAGGEMS_CACHE_DIR TRITON_CACHE_DIR
      # The winners alone (FlagGems' tuner database: small), for the call that runs
      # on another machine. Nothing of Triton's cache: its kernel metadata
      # without the binaries it names makes Triton fail with KeyError 'cubin'.
      if [ -d "$WORK/aa_cache/flaggems" ]; then
        (cd "$WORK" && find aa_cache/flaggems -type f -print0 | tar czf aa_winners.tgz --null -T -) &&
          cp "$WORK/aa_winners.tgz" "$OUT/aa_winners.tgz"
      fi
      KE=$(dirname "$0")/../examples/known-effect
      for pct in ${AA_KE_PCTS-0 3 10}; do
        [ "${BUDGET_S:-0}" != 0 ] && [ "$(left)" -le 30 ] && { say "aa: budget spent before KE$pct"; break; }
        again=(); [ -f "$WORK/KE$pct/ops_status.csv" ] && again=(--resume)
        say "aa: known-effect suite at $pct %"
        ZL_KNOWN_EFFECT_PCT=$pct timeout -s INT -k 60 "$(left)" "$ZL" batch --backend "$BACKEND" --flaggems-dir "$KE" \
          --level core --python "$PY" --ops all --out "$WORK/KE$pct" "${again[@]}" | tail -3
      done
      "$PY" "$(dirname "$0")/acceptance_tables.py" aa "$WORK" "$ZL" | tee "$OUT/aa_check.md"
      ;;
    ab)
      "$ZL" ops --flaggems-dir "$FG" --json > "$WORK/ab_index.json"
      if [ ! -f "$WORK/ab_ops.txt" ]; then
        echo "ab: sampling ${AB_N:-20} ops with seed ${AB_SEED:-20261205}"
        # abs_ runs the same (edited) kernel as abs: drawn, it would move too.
        echo abs_ > "$WORK/ab_exclude.txt"
        # Ops named besides the draw (AB_NAMED, space-separated): rows an
        # earlier A/B found hard, measured again beside fresh ones.
        named=(); for op in ${AB_NAMED:-}; do named+=(--late "$op"); done
        "$PY" "$(dirname "$0")/sample_ops.py" "$WORK/ab_index.json" --seed "${AB_SEED:-20261205}" \
          --count "${AB_N:-20}" "${named[@]}" --late abs --exclude "$WORK/ab_exclude.txt" --exclude "$MEASURED" \
          > "$WORK/ab_ops.txt" || exit 1
      fi
      echo "ab ops (seed ${AB_SEED:-20261205}): $(tr '\n' ' ' < "$WORK/ab_ops.txt")"
      slow_copy || exit 1
      start=$(date +%s)
      left() { [ "${BUDGET_S:-0}" = 0 ] && echo 0 || echo $(( BUDGET_S - ($(date +%s) - start) )); }
      # Every device the machine has, for ab and for the batches it is timed
      # against alike: on a machine of several GPUs the stage's device
      # time shrinks with their number (AB_DEVICES=0 for one).
      AB_DEVICES=${AB_DEVICES:-all}
      AB_COMMON=(--backend "$BACKEND" --devices "$AB_DEVICES" --level core --dtypes "${DTYPES:-float16}" --a-python "$PY" --b-python "$PY"
                 --ops-file "$WORK/ab_ops.txt" --rounds "${AB_ROUNDS:-5}" --winners "${AB_WINNERS:-record}")
      # Replays in warm workers: the fresh process per run costs ~14 s of
      # imports on the H200; A2 (--calibrate) measures what warm costs.
      [ "${AB_WARM:-1}" = 1 ] && AB_COMMON+=(--warm)
      # A drawn op that hangs would hold a call for ab's default 600 s a try.
      op_timeout=(); [ -n "${AB_OP_TIMEOUT_S:-}" ] && op_timeout=(--timeout "$AB_OP_TIMEOUT_S")
      AB_COMMON+=("${op_timeout[@]}")
      # An A/B begun by a zlcore that decided the timer's path per run
      # resumes only that way: AB_SUSTAINED=per-run (ab --sustained).
      [ -n "${AB_SUSTAINED:-}" ] && AB_COMMON+=(--sustained "$AB_SUSTAINED")
      timed() {  # name, command...: runs it, appends "name seconds exit" to ab_wall.txt
        local name=$1; shift; local t0; t0=$(date +%s)
        timeout -s INT -k 60 "$(left)" "$@"; local rc=$?
        echo "$name $(( $(date +%s) - t0 )) $rc" | tee -a "$WORK/ab_wall.txt"
        return $rc
      }
      # One A/B does both checks: --calibrate runs side A twice (A, A2), so
      # A against A2 is FlagGems against itself and A against B the slowed
      # copy, in the same rounds (3 sides, not the 5 of two separate A/Bs).
      run=AB
      if [ "${BUDGET_S:-0}" != 0 ] && [ "$(left)" -le 30 ]; then
        say "ab: budget spent before $run"
      else
        # Always resumed once it exists, "done" included: done is only as far as
        # the --ops of the last invocation (a report made elsewhere from some of
        # them says done too); a resume with nothing left writes the report.
        again=(); [ -f "$WORK/$run/ab_identity.json" ] && again=(--resume)
        extra=(--calibrate --expect-diff 'versions.flaggems.*')
        # Each side tuning itself may pick other winners: declared, not hidden.
        [ "${AB_WINNERS:-record}" = own ] && extra+=(--expect-diff autotune)
        say "ab: $run ${again[*]}"
        timed "$run" "$ZL" ab "${AB_COMMON[@]}" --a "$FG" --b "$WORK/fg_slow" "${extra[@]}" --out "$WORK/$run" "${again[@]}" \
          | tail -25
      fi
      # The sequence ab replaces, over the same ops: batch A, batch B, compare.
      for run in SA SB; do
        [ "${AB_SEQUENCE:-1}" = 0 ] && break
        [ "${BUDGET_S:-0}" != 0 ] && [ "$(left)" -le 30 ] && { say "ab: budget spent before $run"; break; }
        again=(); [ -f "$WORK/$run/ops_status.csv" ] && again=(--resume)
        [ -f "$WORK/$run.done" ] && continue
        # The sequence's winners as ab's: record (A records, B replays A's
        # record, cold processes) or own (each batch warm, tuning on a cache of
        # its own that lasts across calls, as ab's sides do).
        caches=()
        if [ "${AB_WINNERS:-record}" = own ]; then
          [ $run = SA ] && args=(--flaggems-dir "$FG") || args=(--flaggems-dir "$WORK/fg_slow")
          caches=(FLAGGEMS_CACHE_DIR="$WORK/seq_cache/$run/flaggems" TRITON_CACHE_DIR="$WORK/seq_cache/$run/triton")
        elif [ $run = SA ]; then args=(--flaggems-dir "$FG" --isolate-tuner-cache 1)
        else args=(--flaggems-dir "$WORK/fg_slow" --replay-from "$WORK/SA"); fi
        say "ab: sequence batch $run ${again[*]}"
        timed "batch_$run" env "${caches[@]}" "$ZL" batch --backend "$BACKEND" --devices "$AB_DEVICES" --level core \
          --dtypes "${DTYPES:-float16}" --python "$PY" --ops-file "$WORK/ab_ops.txt" "${args[@]}" "${op_timeout[@]}" --out "$WORK/$run" \
          "${again[@]}" | tail -3
        rc=${PIPESTATUS[0]}; { [ "$rc" = 0 ] || [ "$rc" = 1 ]; } && touch "$WORK/$run.done"
      done
      if [ -f "$WORK/SA.done" ] && [ -f "$WORK/SB.done" ]; then
        declared=(--expect-diff 'versions.flaggems.*')
        [ "${AB_WINNERS:-record}" = own ] && declared+=(--expect-diff autotune)
        timed compare "$ZL" compare "$WORK/SA" "$WORK/SB" "${declared[@]}" --format md > "$OUT/ab_sequence_compare.md"
      fi
      {
        echo "# zlcore ab acceptance"; echo
        echo "ops (seed ${AB_SEED:-20261205}, ${AB_N:-20} drawn + abs): $(tr '\n' ' ' < "$WORK/ab_ops.txt")"; echo
        echo "wall seconds, summed over the calls a step took (a resumed step has several lines):"; echo '```'
        awk '{t[$1]+=$2} END {for (n in t) print n, t[n]; print "ab (A, A2 and B, 5 rounds):", t["AB"]; \
             print "sequence (batch_SA + batch_SB + compare):", t["batch_SA"]+t["batch_SB"]+t["compare"]}' \
          "$WORK/ab_wall.txt" 2>/dev/null; echo '```'
        run=AB
        if [ -f "$WORK/$run/report.md" ]; then
          echo "## $run"; echo '```'; cat "$WORK/$run/ab_summary.json"; echo '```'
          grep -E "^- (A/A|FAILED|rounds|winners)" "$WORK/$run/report.md"
          echo; echo "### A against A2 (FlagGems against itself, the same rounds)"; echo
          sed -n '/^## Verdicts per pair/,/^## Noise floor/p' "$WORK/$run/aa.md" | grep -v "^## Noise floor"
          echo "### A against B (abs slowed): rows not SAME"; echo; "$PY" - "$WORK/$run/report.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    if r["verdict"] != "SAME":
        print(f"  {r['op']} {r['dtype']} {r['shape']}: {r['verdict']} speedup {r['speedup']} [{r['ci_low']}, {r['ci_high']}]")
PY
        else
          echo "$run: no report yet"
        fi
      } | tee "$OUT/ab_check.md"
      [ -f "$WORK/AB/report.html" ] && cp "$WORK/AB/report.html" "$OUT/AB.html"
      ;;
    series)
      # A nightly series for `zlcore history` on a device: SERIES_N (12) marks
      # drawn with SERIES_SEED (20261209; none in scripts/measured_ops.txt) plus
      # abs, one default batch per name of SERIES_NIGHTS (S1 S2 S3), each a
      # night; nights from SERIES_SLOW_FROM (5) on run the slowed copy, so abs
      # must step there and nothing else. A name that exists is resumed; a
      # later call on another machine goes on with the next names. The batch
      # directories come back in $OUT/acceptance.tgz; `zlcore history add
      # --db H S*/ && zlcore history report --db H` reads them anywhere.
      if [ ! -f "$WORK/series_ops.txt" ]; then
        "$ZL" ops --flaggems-dir "$FG" --json > "$WORK/series_index.json"
        echo abs_ > "$WORK/series_exclude.txt"
        "$PY" "$(dirname "$0")/sample_ops.py" "$WORK/series_index.json" --seed "${SERIES_SEED:-20261209}" \
          --count "${SERIES_N:-12}" --late abs --exclude "$WORK/series_exclude.txt" --exclude "$MEASURED" \
          > "$WORK/series_ops.txt" || exit 1
      fi
      echo "series ops: $(tr '\n' ' ' < "$WORK/series_ops.txt")"
      slow_copy || exit 1
      start=$(date +%s)
      for night in ${SERIES_NIGHTS:-S1 S2 S3}; do
        n=${night//[!0-9]/}
        fg=$FG; [ "${n:-0}" -ge "${SERIES_SLOW_FROM:-5}" ] && fg=$WORK/fg_slow
        left=$(( ${BUDGET_S:-0} == 0 ? 0 : BUDGET_S - ($(date +%s) - start) ))
        [ "${BUDGET_S:-0}" != 0 ] && [ $left -lt 30 ] && { echo "$night: not started, $left s left"; break; }
        again=(); [ -f "$WORK/$night/ops_status.csv" ] && again=(--resume)
        say "series night $night on $( [ "$fg" = "$FG" ] && echo FlagGems || echo the slowed copy)"
        timeout -s INT -k 30 "$left" "$ZL" batch --backend "$BACKEND" --flaggems-dir "$fg" --level core \
          --dtypes "${DTYPES:-float16}" --python "$PY" --ops-file "$WORK/series_ops.txt" \
          --out "$WORK/$night" "${again[@]}" | tail -16
      done
      ;;
    l2)
      start=$(date +%s)
      left() { [ "${BUDGET_S:-0}" = 0 ] && echo 0 || echo $(( BUDGET_S - ($(date +%s) - start) )); }
      spent() { [ "${BUDGET_S:-0}" != 0 ] && [ "$(left)" -le "${1:-30}" ] && say "l2: budget spent before $2"; }
      if [ ! -f "$WORK/l2_ops.txt" ]; then
        "$ZL" ops --flaggems-dir "$FG" --json > "$WORK/l2_index.json"
        "$PY" "$(dirname "$0")/sample_ops.py" "$WORK/l2_index.json" --seed "${L2_SEED:-20261211}" \
          --count "${L2_N:-12}" --exclude "$MEASURED" > "$WORK/l2_ops.txt" || exit 1
      fi
      echo "l2 ops: $(grep -v '^#' "$WORK/l2_ops.txt" | tr '\n' ' ')"
      # One tuner cache for every batch and FlagGems' own runs: all time the same winners.
      export FLAGGEMS_CACHE_DIR=$WORK/l2_cache/flaggems TRITON_CACHE_DIR=$WORK/l2_cache/triton
      mkdir -p "$FLAGGEMS_CACHE_DIR" "$TRITON_CACHE_DIR"
      for run in ${L2_RUNS:-W1 C1 W2 C2 W3 C3}; do
        spent 30 "$run" && break
        policy=warm; [ "${run#C}" != "$run" ] && policy=cold
        again=(); [ -f "$WORK/$run/ops_status.csv" ] && again=(--resume)
        say "l2: batch $run, --l2 $policy"
        timeout -s INT -k 30 "$(left)" "$ZL" batch "${COMMON[@]}" --ops-file "$WORK/l2_ops.txt" --l2 "$policy" \
          --out "$WORK/$run" "${again[@]}" | tail -14
      done
      first=$(set -- ${L2_RUNS:-W1}; echo "$1")
      mapfile -t ref_args < <("$PY" "$(dirname "$0")/throughput_table.py" reference-args "$WORK/$first" --count "${L2_N:-12}")
      for n in $(seq 1 "${L2_REF_RUNS:-2}"); do
        for mode in kernel cudagraph; do
          [ -f "$WORK/ref_${mode}$n.json" ] && continue
          spent 60 "ref_${mode}$n" && break 2
          say "l2: FlagGems' own pytest --mode $mode, run $n"
          (cd "$FG" && GEMS_VENDOR=${GEMS_VENDOR:-nvidia} timeout -s INT -k 20 "$(left)" "$PY" -m pytest -q -s \
             "${ref_args[@]}" --mode "$mode" --level core --dtypes "${DTYPES:-float16}" --record json \
             --output "$WORK/ref_${mode}$n.json.part" > "$WORK/ref_${mode}$n.log" 2>&1)
          echo "exit $? ($(tail -1 "$WORK/ref_${mode}$n.log"))"
          [ -s "$WORK/ref_${mode}$n.json.part" ] && mv "$WORK/ref_${mode}$n.json.part" "$WORK/ref_${mode}$n.json"
        done
      done
      slow_copy || exit 1
      for side in PA PB; do
        [ -d "$WORK/$side" ] && continue
        spent 30 "$side" && break
        fg=$FG; [ $side = PB ] && fg=$WORK/fg_slow
        timeout -s INT -k 20 "$(left)" "$ZL" run --backend "$BACKEND" --flaggems-dir "$fg" --level core \
          --dtypes "${DTYPES:-float16}" --python "$PY" --op abs --profile --out "$WORK/$side" | tail -3
      done
      [ -d "$WORK/PB" ] && "$ZL" compare "$WORK/PA" "$WORK/PB" > "$WORK/profile_compare.txt"
      grep -v '^#' "$WORK/l2_ops.txt" | head -"${L2_CLOCK_OPS:-4}" > "$WORK/l2_clock_ops.txt"
      for run in K1 K0; do
        [ -f "$WORK/$run/ops_status.csv" ] && continue
        spent 60 "$run" && break
        load=
        if [ $run = K1 ]; then  # bursts of GEMMs from another process: 250 ms on, 250 ms off
          "$PY" -c 'import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
while True:
    t = time.time()
    while time.time() - t < 0.25:
        a @ a; torch.cuda.synchronize()
    time.sleep(0.25)' & load=$!
          sleep 5
        fi
        say "l2: clock check $run ($( [ -n "$load" ] && echo under load || echo unloaded))"
        ZL_GRAPH_CLOCK_CHECK=on timeout -s INT -k 30 "$(left)" "$ZL" batch "${COMMON[@]}" --no-idle-check \
          --ops-file "$WORK/l2_clock_ops.txt" --out "$WORK/$run" | tail -3
        [ -n "$load" ] && kill "$load" && wait "$load" 2> /dev/null
      done
      {
        echo "# The L2 policy ($(date -u +%FT%TZ))"; echo
        for pair in W1:W2 W2:W3 W1:W3 C1:C2 C2:C3 C1:C3; do
          a=${pair%:*} b=${pair#*:}
          [ -d "$WORK/$a" ] && [ -d "$WORK/$b" ] && echo "$a-$b: $("$ZL" compare "$WORK/$a" "$WORK/$b" | grep '^verdicts:')"
        done
        warm=$(ls -d "$WORK"/W[0-9]* 2> /dev/null); cold=$(ls -d "$WORK"/C[0-9]* 2> /dev/null)
        ls "$WORK"/ref_cudagraph*.json > /dev/null 2>&1 && [ -n "$warm" ] &&
          "$PY" "$(dirname "$0")/l2_agreement.py" warm $warm --ref "$WORK"/ref_cudagraph*.json
        ls "$WORK"/ref_kernel*.json > /dev/null 2>&1 && [ -n "$cold" ] &&
          "$PY" "$(dirname "$0")/l2_agreement.py" cold $cold --ref "$WORK"/ref_kernel*.json
        [ -f "$WORK/profile_compare.txt" ] && sed -n '/^kernels that moved/,/^verdicts/p' "$WORK/profile_compare.txt"
        for run in K1 K0; do
          for f in "$WORK/$run"/runs/*/run_identity.json; do
            [ -f "$f" ] && "$PY" -c 'import json, sys
c = json.load(open(sys.argv[2]))["timer"].get("clock_check") or {}
print(sys.argv[1], {k: c.get(k) for k in ("sides_checked", "windows_dropped", "sides_throttled")})' "$run" "$f"
          done
        done
      } > "$WORK/l2_check.md" 2>&1
      cp "$WORK/l2_check.md" "$OUT/"; cat "$WORK/l2_check.md"
      ;;
    *) echo "acceptance.sh: unknown stage '$stage'" >&2; exit 2 ;;
  esac
  pack
done
