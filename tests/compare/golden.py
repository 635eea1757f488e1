#!/usr/bin/env python3
"""Runs `zlcore compare ...` and checks its stdout, stderr and exit status (or
a file it wrote) against a golden file.

    golden.py ZLCORE DATA_DIR GOLDEN_FILE [--file NAME] [--pre "ARGS"] [--list-out] -- compare ARGS...

ARGS may name {out}: a fresh scratch directory, written back as {out} in the
output so the golden does not hold a temporary path. With --file NAME the
golden holds that file from {out} instead of stdout. --pre runs one zlcore
command first (its arguments in one string, split on spaces; it must exit 0),
e.g. a calibration whose file the compared command reads. --list-out appends
the names of the files left in {out}, to show that a failed command wrote
nothing. To regenerate every golden file after an intended change, from the
build directory:
    ZL_REGEN_GOLDEN=1 ctest -R compare_golden
then review `git diff tests/compare/golden`.
"""
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import golden_file  # noqa: E402  (tests/golden_file.py)


def main():
    zlcore, data_dir, golden = sys.argv[1:4]
    rest = sys.argv[4:]
    file_name = pre = None
    list_out = False
    while rest[:1] != ["--"]:
        if rest[:1] == ["--file"]:
            file_name, rest = rest[1], rest[2:]
        elif rest[:1] == ["--pre"]:
            pre, rest = rest[1], rest[2:]
        elif rest[:1] == ["--list-out"]:
            list_out, rest = True, rest[1:]
        else:
            raise SystemExit("usage: golden.py ZLCORE DATA GOLDEN [--file NAME] [--pre ARGS] [--list-out] -- ARGS")
    with tempfile.TemporaryDirectory() as out:
        if pre:
            # Relative paths in, so the output names data/... the same on every machine.
            p = subprocess.run([zlcore] + pre.replace("{out}", out).split(), cwd=data_dir,
                               capture_output=True, text=True)
            if p.returncode != 0:
                print(f"--pre {pre} exited {p.returncode}:\n{p.stdout}{p.stderr}")
                return 1
        args = [a.replace("{out}", out) for a in rest[1:]]
        p = subprocess.run([zlcore] + args, cwd=data_dir, capture_output=True, text=True)
        if file_name:
            with open(os.path.join(out, file_name)) as f:
                actual = f.read() + f"--- exit {p.returncode}\n"
        else:
            actual = f"{p.stdout}--- stderr\n{p.stderr}--- exit {p.returncode}\n"
        if list_out:
            actual += "--- files in {out}: " + (" ".join(sorted(os.listdir(out))) or "none") + "\n"
        actual = actual.replace(out, "{out}")
    return golden_file.check(golden, actual, "compare_golden")


if __name__ == "__main__":
    sys.exit(main())
