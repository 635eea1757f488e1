import pytest

from numgems import ref

from . import base, consts

# NumPy has no fast float16 matmul (it emulates it, ~10x slower than float32),
# so the BLAS benchmarks run float32 only.
MM_DTYPES = [consts.float32]


def mm_input_fn(b, m, n, k, dtype, device, b_column_major):
    inp1 = base.generate_tensor_input((m, k), dtype, device)
    if b_column_major:
        yield inp1, base.generate_tensor_input((n, k), dtype, device).T
    else:
        yield inp1, base.generate_tensor_input((k, n), dtype, device)


@pytest.mark.mm
def test_mm():
    bench = base.BlasBenchmark(op_name="mm", input_fn=mm_input_fn, torch_op=ref.mm, dtypes=MM_DTYPES)
    bench.run()


class MmSelfTransposeBenchmark(base.GenericBenchmark2DOnly):
    DEFAULT_METRICS = consts.DEFAULT_METRICS[:] + ["tflops"]

    def set_more_shapes(self):
        return []

    def get_tflops(self, op, *args, **kwargs):
        m, k = args[0].shape
        return 2 * m * m * k


def self_transpose_input_fn(shape, dtype, device):
    m, k = shape
    yield (base.generate_tensor_input((k, m), dtype, device).T,)


def mm_self_transpose(inp):
    return ref.mm(inp, inp.T)


# Marked `mm` too, as in FlagGems, so `-m mm` selects two tests.
@pytest.mark.mm
def test_mm_self_transpose_benchmark():
    bench = MmSelfTransposeBenchmark(
        op_name="mm_self_transpose", input_fn=self_transpose_input_fn, torch_op=mm_self_transpose, dtypes=MM_DTYPES
    )
    bench.run()
