import pytest

from numgems import ref

from . import base, consts


@pytest.mark.sum
def test_sum():
    bench = base.UnaryReductionBenchmark(op_name="sum", torch_op=ref.sum, dtypes=consts.FLOAT_DTYPES)
    bench.run()
