#!/usr/bin/env bash
# Configures and builds the sanitizer tree, $SAN_BUILD (build-san): clang-14
# at -O1 with line tables, AddressSanitizer and UndefinedBehaviorSanitizer in
# everything, libFuzzer's coverage with them (-DZL_FUZZ=ON). The C++ tests
# labelled sanitize (`make test-asan`) and the libFuzzer targets
# (scripts/fuzz.sh) both come from this one tree, so the core is compiled
# once for both.
#
#   scripts/sanitized-build.sh                  every target
#   scripts/sanitized-build.sh results_fuzz     only the targets named
#
# The sanitizers' own suppressions are tests/ubsan.supp; whatever runs a
# binary of this tree passes that file in UBSAN_OPTIONS.
set -euo pipefail
cd "$(dirname "$0")/.."

SAN_BUILD=${SAN_BUILD:-build-san}
JOBS=${JOBS:-$(nproc)}

bash scripts/install-deps.sh fuzz
# -O1 with line tables: the sanitizers' usual build, and half the compile
# time of -O2 -g for a tree that exists only to be checked. A unity build
# (each target's sources compiled a few at a time as one file) parses the
# shared headers once per batch instead of once per file; the main build
# compiles every file alone, so a file that leans on another's includes
# still fails there.
CC=clang-14 CXX=clang++-14 cmake -S . -B "$SAN_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_UNITY_BUILD=ON -DZL_FUZZ=ON -DZL_STATIC_DEPS=OFF >/dev/null
if [ $# -gt 0 ]; then
  cmake --build "$SAN_BUILD" -j "$JOBS" --target "$@"
else
  cmake --build "$SAN_BUILD" -j "$JOBS"
fi
