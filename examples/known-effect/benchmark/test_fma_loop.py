import pytest

from . import base


@pytest.mark.fma_loop
def test_fma_loop():
    base.loop_benchmark("fma_loop").run()
