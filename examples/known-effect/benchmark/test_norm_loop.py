import pytest

from . import base


@pytest.mark.norm_loop
def test_norm_loop():
    base.loop_benchmark("norm_loop").run()
