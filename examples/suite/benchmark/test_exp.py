import pytest

from numgems import ref

from . import base, consts


@pytest.mark.exp
def test_exp():
    bench = base.UnaryPointwiseBenchmark(op_name="exp", torch_op=ref.exp, dtypes=consts.FLOAT_DTYPES)
    bench.run()
