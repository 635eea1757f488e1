"""Where things are: the source tree, its fixture suites, and what ctest passes in."""

import os
from pathlib import Path

# ctest sets ZL_SOURCE_DIR; run by hand, the checkout this file is in.
SRC = Path(os.environ.get("ZL_SOURCE_DIR", Path(__file__).resolve().parents[3]))
EXAMPLE_SUITE = SRC / "examples" / "suite"
KNOWN_EFFECT_SUITE = SRC / "examples" / "known-effect"
# tests/fixtures/README.md says what each suite is for and why they are not one.
FAULT_SUITE = SRC / "tests" / "fixtures" / "fault_suite"
FAKEGEMS_SUITE = SRC / "tests" / "fixtures" / "fakegems"
TUNE_SUITE = SRC / "tests" / "fixtures" / "tunesuite"
STUBS = SRC / "tests" / "support" / "stubs"
PY = "/usr/bin/python3"
# The built zlcore and the fake backends of tests/loader; empty when not run through ctest.
ZLCORE = os.environ.get("ZLCORE", "")
VENDOR = os.environ.get("ZL_VENDOR_DIR", "")
