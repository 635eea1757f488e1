"""One golden file against the output it pins: equal passes, a difference prints a unified
diff and how to accept it; ZL_REGEN_GOLDEN=1 writes the output as the new golden instead."""

import difflib
import os
import sys


def check(golden, actual, ctest_name):
    """0 when `actual` matches the file `golden` (or it was regenerated), else 1."""
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
    print(f"\n{golden} differs; if the change is intended: ZL_REGEN_GOLDEN=1 ctest -R {ctest_name}")
    return 1
