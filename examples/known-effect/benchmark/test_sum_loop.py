import pytest

from . import base


@pytest.mark.sum_loop
def test_sum_loop():
    base.loop_benchmark("sum_loop").run()
