#!/usr/bin/env bash
# Throughput on a device: where each op's seconds and device memory go, on
# empty caches (cold) and again on the caches that left (warm). docs/performance.md,
# "Throughput on a device", shows the tables this prints and how to read them.
#
# usage: scripts/throughput.sh OPS_FILE
#   OPS_FILE: one op a line ('#' comments), e.g. from scripts/sample_ops.py
# env: ZL (zlcore binary), FLAGGEMS_DIR, PY (python with torch), BACKEND (cuda),
#      DTYPES (float16), LEVEL (core), WORK (batch directories and the caches;
#      default ./runs/throughput), OUT (tables; default WORK),
#      PASSES ("cold warm": which batches; a pass whose directory exists is resumed),
#      OP_TIMEOUT_S (batch --timeout, when set), BUDGET_S (each pass is stopped with
#      SIGINT after this many seconds, 0: no limit; --resume finishes it later;
#      BUDGET_COLD_S, BUDGET_WARM_S: one pass's own), REF_BUDGET_S (the reference's),
#      REFERENCE=1: then FlagGems' own pytest --mode kernel over the same files and
#      marks in one process on the warm caches, timed (REF_OPS: how many ops, 8),
#      BATCH_ARGS: more `zlcore batch` flags for every pass (e.g. --no-compile-ahead)
# The caches are WORK/cache/{flaggems,triton}: empty before the cold pass when
# WORK is new, so "cold" means a fresh machine's first batch.
set -uo pipefail
ops_file=${1:?usage: scripts/throughput.sh OPS_FILE}
ZL=${ZL:-zlcore}
FG=${FLAGGEMS_DIR:?set FLAGGEMS_DIR to the FlagGems checkout}
PY=${PY:-$(command -v python3)}
WORK=${WORK:-$PWD/runs/throughput}
OUT=${OUT:-$WORK}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK/cache/flaggems" "$WORK/cache/triton" "$OUT"
export FLAGGEMS_CACHE_DIR="$WORK/cache/flaggems" TRITON_CACHE_DIR="$WORK/cache/triton"
COMMON=(--backend "${BACKEND:-cuda}" --flaggems-dir "$FG" --level "${LEVEL:-core}" --dtypes "${DTYPES:-float16}"
        --python "$PY" --ops-file "$ops_file")
[ -n "${OP_TIMEOUT_S:-}" ] && COMMON+=(--timeout "$OP_TIMEOUT_S")
read -r -a more <<< "${BATCH_ARGS:-}"
COMMON+=("${more[@]}")

grep -v '^#' "$ops_file" | tr '\n' ' '; echo
for pass in ${PASSES:-cold warm}; do
  again=(); [ -f "$WORK/$pass/ops_status.csv" ] && again=(--resume)
  echo "== $pass ${again[*]} ($(date +%T))"
  start=$SECONDS
  budget_var="BUDGET_${pass^^}_S"
  timeout -s INT -k 60 "${!budget_var:-${BUDGET_S:-0}}" "$ZL" batch "${COMMON[@]}" --out "$WORK/$pass" "${again[@]}"
  rc=$?
  echo "$pass exit $rc wall $((SECONDS - start)) s" | tee -a "$OUT/walls.txt"
done

if [ "${REFERENCE:-0}" = 1 ]; then
  # FlagGems alone: one pytest process over the files and marks of the first
  # REF_OPS ops, on the same warm caches.
  mapfile -t args < <("$PY" "$HERE/throughput_table.py" reference-args "$WORK/warm" --count "${REF_OPS:-8}")
  echo "== reference: pytest ${args[*]} ($(date +%T))"
  start=$SECONDS
  (cd "$FG" && GEMS_VENDOR=${GEMS_VENDOR:-nvidia} timeout -s INT -k 30 "${REF_BUDGET_S:-0}" \
     "$PY" -m pytest -q -s "${args[@]}" --mode kernel \
     --level "${LEVEL:-core}" --dtypes "${DTYPES:-float16}" > "$WORK/reference.log" 2>&1)
  rc=$?
  echo "reference exit $rc wall $((SECONDS - start)) s" | tee -a "$OUT/walls.txt"
fi

"$PY" "$HERE/throughput_table.py" table "$WORK" ${PASSES:-cold warm} | tee "$OUT/throughput.md"
