import pytest

from numgems import ref

from . import base, consts


def softmax_input_fn(shape, dtype, device):
    # The reduced dimension is the last one, as in a model's attention.
    yield base.generate_tensor_input(shape, dtype, device), -1


@pytest.mark.softmax
def test_softmax():
    bench = base.GenericBenchmark2DOnly(
        op_name="softmax", torch_op=ref.softmax, input_fn=softmax_input_fn, dtypes=consts.FLOAT_DTYPES
    )
    bench.run()
