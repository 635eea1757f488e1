import pytest

from numgems import ref

from . import base, consts


@pytest.mark.mul
def test_mul():
    bench = base.BinaryPointwiseBenchmark(op_name="mul", torch_op=ref.mul, dtypes=consts.FLOAT_DTYPES)
    bench.run()
