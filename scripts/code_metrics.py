#!/usr/bin/env python3
"""The shape of the code, for before/after comparisons of a reshaping.

usage: code_metrics.py [--top N]     (run from the repository root)

Prints, over the files git tracks:
  - the N longest functions in C++ (core, plugins, sdk) and in Python (plugins,
    scripts, bench, tests), by lines from signature to closing brace or dedent;
  - lines per top-level folder (and per folder under core/src and plugins);
  - how many definitions of each small helper exist (join, trim, split, one_line,
    CSV quoting, spawn-and-capture, time formatting): the copies a shared
    utility layer should bring down to one.
Repeated code over the tree comes from the `duplicates` tool, where installed.
"""

import argparse
import ast
import collections
import re
import subprocess
import sys

CPP_EXT = (".cpp", ".hpp", ".h", ".c", ".cc")

# A C++ function definition opens at the end of its signature line (or the line
# after it); this finds signatures conservatively: a name followed by a parameter
# list, not a control statement, not a declaration ending in ';'.
CPP_SIGNATURE = re.compile(r"^\s*(?:[\w:<>,*&~\s]+?\s)?([~\w:]+)\s*\([^;{}]*\)\s*(?:const|override|noexcept|final|\s)*"
                           r"(?:->\s*[\w:<>]+\s*)?(?::[^;{]*)?\{?\s*$")
CONTROL = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "static_assert"}

HELPERS = {
    "join": r"^\s*(?:static\s+|inline\s+)?std::string\s+join\w*\s*\(|^def _?join\w*\(",
    "trim": r"^\s*(?:static\s+|inline\s+)?std::string\s+trim\w*\s*\(|^def _?(?:trim|strip_ws)\w*\(",
    "split": r"^\s*(?:static\s+|inline\s+)?std::vector<std::string>\s+split\w*\s*\(",
    "one_line": r"^\s*(?:static\s+|inline\s+)?std::string\s+one_line\w*\s*\(|^def _?(?:one_line|first_line)\w*\(",
    "csv quoting": r"^\s*(?:static\s+|inline\s+)?std::string\s+(?:csv_\w*quote\w*|quote_csv\w*|csv_field\w*)\s*\(",
    "spawn and capture": r"^[\w:<>]+(?:<[\w:]+>)?\s+(?:\w+::)*(?:capture_output|run_tool)\s*\([^;]*$",
    "time formatting": r"^\s*(?:static\s+)?std::string\s+\w*(?:stamp|now|time)\w*\s*\(",
}


def tracked(paths_under=None):
    out = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True).stdout.split()
    return [p for p in out if not paths_under or p.startswith(paths_under)]


def cpp_functions(path):
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError:
        return []
    found = []
    i = 0
    while i < len(lines):
        m = CPP_SIGNATURE.match(lines[i])
        name = m.group(1).split("::")[-1] if m else None
        if m and name not in CONTROL and not lines[i].lstrip().startswith(("#", "//", "return", "else")):
            # The body starts at this line's '{' or the next line's.
            j = i if lines[i].rstrip().endswith("{") else i + 1
            if j < len(lines) and "{" in lines[j]:
                depth, k = 0, j
                while k < len(lines):
                    code = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|//.*', "", lines[k])
                    depth += code.count("{") - code.count("}")
                    if depth <= 0 and k > j or (depth <= 0 and code.count("}") and k == j):
                        break
                    k += 1
                found.append((k - i + 1, f"{path}:{i + 1}", m.group(1)))
                i = k + 1
                continue
        i += 1
    return found


def python_functions(path):
    try:
        tree = ast.parse(open(path, encoding="utf-8").read())
    except (OSError, SyntaxError, ValueError):
        return []
    return [(node.end_lineno - node.lineno + 1, f"{path}:{node.lineno}", node.name)
            for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def line_count(path):
    try:
        with open(path, "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=10)
    a = ap.parse_args(argv)
    files = tracked()
    code = [p for p in files if "testdata" not in p and "/golden/" not in p and "/data/" not in p]

    cpp = [f for p in code if p.endswith(CPP_EXT) for f in cpp_functions(p)]
    py = [f for p in code if p.endswith(".py") for f in python_functions(p)]
    for title, funcs in (("C++", cpp), ("Python", py)):
        print(f"## The {a.top} longest functions, {title} ({len(funcs)} functions)\n")
        for n, where, name in sorted(funcs, reverse=True)[: a.top]:
            print(f"{n:5d}  {name}  {where}")
        print()

    print("## Lines per folder (tracked text files; testdata, goldens and data apart)\n")
    per = collections.Counter()
    for p in code:
        parts = p.split("/")
        key = "/".join(parts[:3]) if parts[0] in ("core", "plugins") and len(parts) > 3 else (
            parts[0] if len(parts) > 1 else ".")
        per[key] += line_count(p)
    for key, n in sorted(per.items()):
        print(f"{n:7d}  {key}")
    print(f"{sum(per.values()):7d}  total\n")

    print("## Definitions of small helpers (copies a utility layer should make one)\n")
    for name, pattern in HELPERS.items():
        rx = re.compile(pattern)
        hits = []
        for p in code:
            if not p.endswith((".cpp", ".c", ".cc", ".py")):  # definitions, not declarations
                continue
            try:
                for n, line in enumerate(open(p, encoding="utf-8", errors="replace"), 1):
                    if rx.search(line):
                        hits.append(f"{p}:{n}")
            except OSError:
                pass
        print(f"{len(hits):3d}  {name}: " + ", ".join(hits[:12]) + (" ..." if len(hits) > 12 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
