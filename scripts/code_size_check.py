#!/usr/bin/env python3
"""Fails when a C++ file under core/src is over 400 lines or a function over 100.

usage: code_size_check.py [--root DIR] [--max-file-lines N] [--max-function-lines N]

Always prints the largest file and the longest function with their sizes, so
the margin is in view before it is gone. Functions are found as
scripts/code_metrics.py finds them. A data table that is long because it is
data (one entry a line) may stand in ALLOWED_LONG_FUNCTIONS below, by its file
and name; nothing else is excepted. Exit 0 when all fit, 1 when one does not.
`make lint` runs it (scripts/lint.sh).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from code_metrics import CPP_EXT, cpp_functions, line_count  # noqa: E402

# (file under the root, function name): tables whose length is their data.
ALLOWED_LONG_FUNCTIONS = {
    ("core/src/identity/identity_schema.cpp", "fields"),  # one row per run_identity.json field
}


def source_files(root, under):
    top = os.path.join(root, under)
    found = []
    for folder, dirs, names in os.walk(top):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(CPP_EXT):
                found.append(os.path.relpath(os.path.join(folder, name), root))
    return found


def check(root, under="core/src", max_file_lines=400, max_function_lines=100, allowed=None):
    """Returns (problems, largest file, longest function) over the C++ files below root/under."""
    allowed = ALLOWED_LONG_FUNCTIONS if allowed is None else allowed
    problems = []
    largest = (0, "")
    longest = (0, "", "")
    for rel in source_files(root, under):
        path = os.path.join(root, rel)
        lines = line_count(path)
        largest = max(largest, (lines, rel))
        if lines > max_file_lines:
            problems.append(f"{rel}: {lines} lines, more than {max_file_lines}: split it along its concepts")
        for n, where, name in cpp_functions(path):
            where = rel + where[len(path):]
            short = name.split("::")[-1]
            if (rel, short) in allowed or (rel, name) in allowed:
                continue
            longest = max(longest, (n, where, name))
            if n > max_function_lines:
                problems.append(f"{where}: function {name} is {n} lines, more than {max_function_lines}")
    return problems, largest, longest


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=".", help="the repository root (default: this folder)")
    ap.add_argument("--under", default="core/src", help="the folder below the root to check (default: core/src)")
    ap.add_argument("--max-file-lines", type=int, default=400)
    ap.add_argument("--max-function-lines", type=int, default=100)
    a = ap.parse_args(argv)
    if not os.path.isdir(os.path.join(a.root, a.under)):
        print(f"code size: {os.path.join(a.root, a.under)} is not a directory", file=sys.stderr)
        return 2
    problems, largest, longest = check(a.root, a.under, a.max_file_lines, a.max_function_lines)
    print(f"code size: largest file {largest[1]} ({largest[0]} lines, at most {a.max_file_lines})")
    if longest[1]:
        print(f"code size: longest function {longest[2]} at {longest[1]} ({longest[0]} lines, "
              f"at most {a.max_function_lines})")
    for p in problems:
        print(f"code size: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
