#!/usr/bin/env python3
"""Runs `zlcore compare ...` and checks its stdout, stderr and exit status (or
a file it wrote) against a golden file.

    golden.py ZLCORE DATA_DIR GOLDEN_FILE [--file NAME] -- compare ARGS...

ARGS may name {out}: a fresh scratch directory. With --file NAME the golden
holds that file from {out} instead of stdout. To regenerate every golden file
after an intended change, from the build directory:
    ZL_REGEN_GOLDEN=1 ctest -R compare_golden
then review `git diff tests/compare/golden`.
"""
import difflib
import os
import subprocess
import sys
import tempfile


def main():
    zlcore, data_dir, golden = sys.argv[1:4]
    rest = sys.argv[4:]
    file_name = None
    if rest[:1] == ["--file"]:
        file_name = rest[1]
        rest = rest[2:]
    assert rest[:1] == ["--"], "usage: golden.py ZLCORE DATA GOLDEN [--file NAME] -- ARGS"
    with tempfile.TemporaryDirectory() as out:
        args = [a.replace("{out}", out) for a in rest[1:]]
        # Relative paths in, so the output names data/... the same on every machine.
        p = subprocess.run([zlcore] + args, cwd=data_dir, capture_output=True, text=True)
        if file_name:
            with open(os.path.join(out, file_name)) as f:
                actual = f.read() + f"--- exit {p.returncode}\n"
        else:
            actual = f"{p.stdout}--- stderr\n{p.stderr}--- exit {p.returncode}\n"
    if os.environ.get("ZL_REGEN_GOLDEN") == "1":
        with open(golden, "w") as f:
            f.write(actual)
        print(f"wrote {golden}")
        return 0
    try:
        with open(golden) as f:
            expected = f.read()
    except FileNotFoundError:
        expected = ""
    if actual == expected:
        return 0
    sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                               golden, "actual"))
    print(f"\n{golden} differs; if the change is intended: ZL_REGEN_GOLDEN=1 ctest -R compare_golden")
    return 1


if __name__ == "__main__":
    sys.exit(main())
