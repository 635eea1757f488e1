#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan, UBSan) in
# $FUZZ_BUILD and runs each for $FUZZ_SECONDS seconds from its seed corpus,
# $FUZZ_JOBS at a time. Fails when any target finds something (a crash, a
# sanitizer report, a leak, an input slower than $FUZZ_TIMEOUT seconds); the
# input that did it is kept under $FUZZ_BUILD/fuzz-work/<name>/ and named.
#
#   scripts/fuzz.sh                      every target, 60 s each
#   FUZZ_SECONDS=3600 FUZZ_SEED=random scripts/fuzz.sh results   one target, an hour
#
# The gate is reproducible: every target runs with libFuzzer's -seed
# $FUZZ_SEED (1 unless set) from its seed corpus alone, so a CI run and a
# local run of the same commit try the same inputs in the same order.
# FUZZ_SEED=random lets libFuzzer pick a seed and keeps what earlier runs
# found, for long runs that should explore.
#
# New inputs that reach new code go to $FUZZ_BUILD/fuzz-work/<name>/corpus,
# never into the tree's seed corpus (docs/fuzzing.md says how to keep some).
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_BUILD=${FUZZ_BUILD:-build-san}
FUZZ_JOBS=${FUZZ_JOBS:-$(nproc)}
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-10}
FUZZ_RSS_MB=${FUZZ_RSS_MB:-2048}
FUZZ_SEED=${FUZZ_SEED:-1}
case "$FUZZ_SEED" in
  random) seed_flag=() ;;
  *[!0-9]* | '' | 0)
    echo "fuzz.sh: FUZZ_SEED='$FUZZ_SEED' is not allowed; use a whole number from 1 to 4294967295, or random" >&2
    exit 2
    ;;
  *)
    if [ ${#FUZZ_SEED} -gt 10 ] || [ "$FUZZ_SEED" -gt 4294967295 ]; then
      echo "fuzz.sh: FUZZ_SEED='$FUZZ_SEED' is not allowed; use a whole number from 1 to 4294967295, or random" >&2
      exit 2
    fi
    seed_flag=(-seed="$FUZZ_SEED")
    ;;
esac

names=()
if [ $# -gt 0 ]; then
  names=("$@")
else
  for f in tests/fuzz/*_fuzz.cpp; do
    n=$(basename "$f")
    names+=("${n%_fuzz.cpp}")
  done
fi
for n in "${names[@]}"; do
  if [ ! -f "tests/fuzz/${n}_fuzz.cpp" ]; then
    echo "fuzz.sh: no target '$n' (tests/fuzz/${n}_fuzz.cpp)" >&2
    exit 2
  fi
done

# The sanitizer tree (scripts/sanitized-build.sh), shared with the C++ tests
# that run under the sanitizers; only the targets are built here.
targets=()
for n in "${names[@]}"; do targets+=("${n}_fuzz"); done
SAN_BUILD="$FUZZ_BUILD" JOBS="$FUZZ_JOBS" bash scripts/sanitized-build.sh "${targets[@]}"

work="$FUZZ_BUILD/fuzz-work"
mkdir -p "$work"
# One target: its own corpus copy and artifacts; the log says what it found,
# rc its exit status.
run_one() {
  local n=$1 dir="$work/$1" rc=0
  # A seeded run starts from the seeds alone: inputs an earlier run found
  # would change what this one tries.
  if [ "$FUZZ_SEED" != random ]; then rm -rf "$dir/corpus"; fi
  mkdir -p "$dir/corpus"
  rm -f "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-* "$dir"/slow-unit-* "$dir/rc"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=tests/ubsan.supp \
    "$FUZZ_BUILD/fuzz/${n}_fuzz" -max_total_time="$FUZZ_SECONDS" -timeout="$FUZZ_TIMEOUT" \
    -rss_limit_mb="$FUZZ_RSS_MB" "${seed_flag[@]}" -print_final_stats=1 -artifact_prefix="$dir/" \
    "$dir/corpus" "tests/fuzz/corpus/$n" >"$dir/log" 2>&1 || rc=$?
  echo "$rc" >"$dir/rc"
}

echo "fuzz: ${#names[@]} target(s), ${FUZZ_SECONDS} s each, ${FUZZ_JOBS} at a time, seed ${FUZZ_SEED}"
running=0
for n in "${names[@]}"; do
  if [ "$running" -ge "$FUZZ_JOBS" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_one "$n" &
  running=$((running + 1))
done
wait
failed=()
for n in "${names[@]}"; do
  if [ "$(cat "$work/$n/rc" 2>/dev/null)" = 0 ]; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$n/log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz: $n: nothing found in $runs inputs"
  else
    failed+=("$n")
    echo "fuzz: $n: FOUND something; the input: $(ls "$work/$n"/crash-* "$work/$n"/leak-* "$work/$n"/timeout-* \
      "$work/$n"/oom-* 2>/dev/null | head -1); the log: $work/$n/log" >&2
    tail -n 40 "$work/$n/log" >&2
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} target(s) found something: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: ${#names[@]} passed, 0 failed"
