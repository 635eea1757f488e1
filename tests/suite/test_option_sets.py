"""The FlagGems-layout suites zlcore's tests run each keep their own
benchmark/conftest.py (tests/fixtures/README.md says why they are not one
suite; the examples must stay self-contained, as users copy them), so what
they must share is checked here: FlagGems' option set, name for name, so a
command line zlcore builds for FlagGems parses in every one of them."""

import ast

from zltest import EXAMPLE_SUITE, FAKEGEMS_SUITE, KNOWN_EFFECT_SUITE, TUNE_SUITE

# What zlcore itself puts on a suite's command line; the smallest fixture
# (tunesuite) registers exactly these.
ZLCORE_PASSES = {"--level", "--mode", "--dtypes", "--shape_file"}


def registered_options(suite):
    """The option names benchmark/conftest.py's pytest_addoption registers."""
    tree = ast.parse((suite / "benchmark" / "conftest.py").read_text())
    return {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "addoption"
        and node.args and isinstance(node.args[0], ast.Constant)
    }


def test_every_flaggems_like_suite_registers_flaggems_option_set():
    flaggems = registered_options(EXAMPLE_SUITE)
    assert ZLCORE_PASSES < flaggems and "--collect-marks" in flaggems, flaggems
    for suite in (KNOWN_EFFECT_SUITE, FAKEGEMS_SUITE):
        assert registered_options(suite) == flaggems, suite


def test_the_smallest_fixture_registers_what_zlcore_passes():
    assert registered_options(TUNE_SUITE) == ZLCORE_PASSES
