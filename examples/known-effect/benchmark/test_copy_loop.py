import pytest

from . import base


@pytest.mark.copy_loop
def test_copy_loop():
    base.loop_benchmark("copy_loop").run()
