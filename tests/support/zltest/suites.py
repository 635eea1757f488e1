"""FlagGems-layout suites a test makes in its tmp directory.

A test that needs one more op (one that crashes, sleeps, ...) copies a fixture
suite (tests/fixtures/README.md lists them) and adds the op the way FlagGems
adds one: a marker in pytest.ini, shapes in benchmark/core_shapes.yaml, a
benchmark/test_<op>.py. A test that needs a suite zlcore must refuse gets
the test files without the harness.
"""

import re
import shutil
from pathlib import Path

from .paths import EXAMPLE_SUITE


def _outside_kept(src, entry):
    """A pythonpath entry of the suite at `src`, absolute where it points
    outside the suite (the copy has what is inside)."""
    target = (src / entry).resolve()
    return str(target) if not target.is_relative_to(src.resolve()) else entry


def suite_with_op(src, dest, op, test_source, shapes=None, description=None):
    """A copy of the suite `src` at `dest` with one more op: `op`'s marker
    registered in pytest.ini ("operator <description or op>"), `shapes` (a
    core_shapes.yaml block, text) appended to the shape file when given, and
    `test_source` as benchmark/test_<op>.py. A pythonpath that leads out of
    `src` (the fault suite finds the example's library so) is made absolute,
    so the copy finds the same library. Returns `dest`."""
    src, dest = Path(src), Path(dest)
    shutil.copytree(src, dest, symlinks=False)
    ini = dest / "pytest.ini"
    text = re.sub(r"^pythonpath = (.+)$", lambda m: f"pythonpath = {_outside_kept(src, m.group(1))}",
                  ini.read_text(), count=1, flags=re.M)
    ini.write_text(text + f"    {op}: operator {description or op}\n")
    if shapes is not None:
        shape_file = dest / "benchmark" / "core_shapes.yaml"
        shape_file.write_text(shape_file.read_text() + "\n" + shapes)
    (dest / "benchmark" / f"test_{op}.py").write_text(test_source)
    return dest


def suite_without_harness(dest, src=EXAMPLE_SUITE):
    """benchmark/test_abs.py of `src` alone at `dest`: no conftest.py to
    register FlagGems' options, so not a FlagGems-layout suite. Returns `dest`."""
    dest = Path(dest)
    (dest / "benchmark").mkdir(parents=True)
    shutil.copy(Path(src) / "benchmark" / "test_abs.py", dest / "benchmark")
    return dest
