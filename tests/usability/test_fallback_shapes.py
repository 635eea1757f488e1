"""timer.fallback_shapes in the caliber table. Recorded runs
(tests/compare/data/fallback): the same ten fallbacks in another order and
with other capture call counts are no difference; one more shape and one
more reason are one cell per op with counts per reason."""
from conftest import SRC, zl

DATA = SRC / "tests" / "compare" / "data"


def test_the_same_fallbacks_in_another_order_are_no_difference(tmp_path):
    r = zl(tmp_path, "compare", DATA / "fallback" / "a", DATA / "fallback" / "b", "--strict")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "caliber: measured the same way" in r.stdout


def test_a_real_difference_is_one_line_with_counts(tmp_path):
    r = zl(tmp_path, "compare", DATA / "fallback" / "a", DATA / "fallback" / "c", "--strict")
    assert r.returncode == 3
    [line] = [x for x in r.stdout.splitlines() if "timer.fallback_shapes" in x]
    assert "A 10 shapes fell back: graph capture of N calls failed: operation not permitted when stream is " \
           "capturing (10)" in line
    assert "B 11 shapes fell back: " in line and "graph replay failed after N replays: illegal address (1)" in line
    assert "2 only on B: float16 [[256, 1024]] torch, float16 [[704, 1024]] gems" in line
    assert line.rstrip().endswith("softmax")
