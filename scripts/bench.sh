#!/usr/bin/env bash
# `make bench`: zlcore's own cost (docs/performance.md). Builds the
# Google Benchmark binaries in build-bench, runs them (JSON), then the
# whole-process comparisons against the installed zlcore in PREFIX, and prints
# one table. A benchmark, not a test: it exits 0 whatever the numbers say.
#
# usage: scripts/bench.sh [PREFIX]     (PREFIX: a `make install` prefix;
#        default: build-bench installed into build-bench/_install)
# knobs: BENCH_REPS (11), BENCH_BATCH_OPS (1000), BENCH_BATCH_REPS (5)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=build-bench
py=/usr/bin/python3

bash scripts/install-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZL_BUILD_BENCH=ON -DZL_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "$(nproc)"

prefix=${1:-}
if [ -z "$prefix" ]; then
  prefix=$root/$build/_install
  cmake --install "$build" --prefix "$prefix" >/dev/null
fi

results=$root/$build/bench/results
rm -rf "$results"
mkdir -p "$results"
for name in loader plan identity status_csv compare; do
  echo "bench: bench_$name" >&2
  "$build/bench/bench_$name" --benchmark_format=json >"$results/$name.json"
done

"$py" bench/report.py --prefix "$prefix" --gbench-dir "$results" --vendor-dir "$build/bench/vendor" \
  --python "$py" --reps "${BENCH_REPS:-11}" --batch-ops "${BENCH_BATCH_OPS:-1000}" \
  --batch-reps "${BENCH_BATCH_REPS:-5}" --markdown "$results/table.md" --json "$results/samples.json"
echo "bench: the table as Markdown: $results/table.md; every sample: $results/samples.json" >&2
