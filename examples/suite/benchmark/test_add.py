import pytest

from numgems import ref

from . import base, consts


@pytest.mark.add
def test_add():
    bench = base.BinaryPointwiseBenchmark(op_name="add", torch_op=ref.add, dtypes=consts.FLOAT_DTYPES)
    bench.run()


@pytest.mark.add_
def test_add_inplace():
    bench = base.BinaryPointwiseBenchmark(
        op_name="add_", torch_op=ref.add_, dtypes=consts.FLOAT_DTYPES, is_inplace=True
    )
    bench.run()
