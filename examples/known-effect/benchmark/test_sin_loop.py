import pytest

from . import base


@pytest.mark.sin_loop
def test_sin_loop():
    base.loop_benchmark("sin_loop").run()
