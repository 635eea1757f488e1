import pytest

from numgems import ref

from . import base, consts


def layer_norm_input_fn(shape, dtype, device):
    m, n = shape
    inp = base.generate_tensor_input((m, n), dtype, device)
    weight = base.generate_tensor_input((n,), dtype, device)
    bias = base.generate_tensor_input((n,), dtype, device)
    yield inp, (n,), weight, bias


class LayerNormBenchmark(base.GenericBenchmark2DOnly):
    def set_more_shapes(self):
        return [(4096, 64), (64, 4096)]


@pytest.mark.layer_norm
def test_layer_norm():
    bench = LayerNormBenchmark(
        op_name="layer_norm", torch_op=ref.layer_norm, input_fn=layer_norm_input_fn, dtypes=consts.FLOAT_DTYPES
    )
    bench.run()
