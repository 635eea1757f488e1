#!/usr/bin/env bash
# `make lint`: the style and static checks CI runs. Exit 0 only when all pass.
#   clang-format  every tracked C/C++ file, against .clang-format (no edits)
#   clang-tidy    core/ sources, against .clang-tidy, with a per-file
#                 compile_commands.json configured in BUILD/tidy-db
#   flake8        every tracked Python file, against .flake8
#   manual        scripts/lint_manual.py: no tracked line speaks of how the work was
#                 organised (its patterns say which words), no data archive or
#                 image, docs/ under 400 KB
#   code size     scripts/code_size_check.py: no file in core/src over 400 lines,
#                 no function there over 100 (its short allow-list of data
#                 tables apart); prints the largest file and longest function
# `make format` applies clang-format to the tracked C/C++ files.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD="${BUILD:-build}"
JOBS="${JOBS:-$(nproc)}"
fail=0

pick() { for t in "$@"; do command -v "$t" >/dev/null 2>&1 && { echo "$t"; return; }; done; }
CLANG_FORMAT=$(pick clang-format-14 clang-format)
CLANG_TIDY_RUN=$(pick run-clang-tidy-14 run-clang-tidy)
CLANG_TIDY=$(pick clang-tidy-14 clang-tidy)
[ -n "$CLANG_FORMAT" ] && [ -n "$CLANG_TIDY" ] && [ -n "$CLANG_TIDY_RUN" ] || {
  echo "lint: clang-format / clang-tidy missing (scripts/install-deps.sh lint)" >&2; exit 2; }

echo "lint: clang-format"
git ls-files -z '*.c' '*.h' '*.cpp' '*.hpp' | xargs -0 "$CLANG_FORMAT" --dry-run -Werror || fail=1

echo "lint: clang-tidy (core/)"
# A unity build's database names its batches, not the sources: clang-tidy
# gets a configure-only tree of its own, one entry per file.
TIDY_DB="$BUILD/tidy-db"
if ! cmake -S . -B "$TIDY_DB" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DCMAKE_UNITY_BUILD=OFF >/dev/null; then
  echo "lint: configuring $TIDY_DB for clang-tidy failed" >&2
  fail=1
else
  # A crash or a database naming no source fails too, not only a finding.
  "$CLANG_TIDY_RUN" -clang-tidy-binary "$CLANG_TIDY" -p "$TIDY_DB" -j "$JOBS" -quiet \
    "$(pwd)/core/src/.*\.cpp$" >"$BUILD/clang-tidy.log" 2>&1 || fail=1
  checked=$(grep -c "^clang-tidy" "$BUILD/clang-tidy.log" || true)
  sources=$(git ls-files 'core/src/*.cpp' | wc -l)
  if [ "$checked" -ne "$sources" ]; then
    echo "lint: clang-tidy checked $checked of the $sources sources of core/src ($BUILD/clang-tidy.log)" >&2
    fail=1
  fi
  if grep -E "(warning|error): " "$BUILD/clang-tidy.log" | grep -v "warnings generated" ; then
    fail=1
  fi
fi

echo "lint: flake8"
git ls-files -z '*.py' | xargs -0 /usr/bin/python3 -m flake8 --config .flake8 || fail=1

echo "lint: the manual (scripts/lint_manual.py)"
/usr/bin/python3 scripts/lint_manual.py || fail=1

echo "lint: code size (scripts/code_size_check.py)"
/usr/bin/python3 scripts/code_size_check.py || fail=1

exit $fail
