"""The host implementation: NumPy, one pass over the array per iteration.

Every iteration is one or two ufunc calls on arrays small enough to stay in
cache, so the call's time is the loop's, proportional to the iteration count
(a few percent of fixed cost: the Python call, the output array).
"""

import numpy as np

DEVICE = "cpu"
_DTYPES = {"float16": np.dtype("float16"), "float32": np.dtype("float32")}


def dtype_by_name(name):
    return _DTYPES.get(name)


def make_input(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape, dtype=np.float32).astype(dtype)


def fma_loop(x, iters):
    y = x.copy()
    a, b = y.dtype.type(0.999), y.dtype.type(0.001)
    for _ in range(iters):
        np.multiply(y, a, out=y)
        np.add(y, b, out=y)
    return y


def sin_loop(x, iters):
    y = x.copy()
    for _ in range(iters):
        np.sin(y, out=y)
    return y


def copy_loop(x, iters):
    a = x.copy()
    b = np.empty_like(x)
    for _ in range(iters):
        np.copyto(b, a)
        np.copyto(a, b)
    return a


def sum_loop(x, iters):
    acc = np.zeros(x.shape[:-1], dtype=np.float32)
    for _ in range(iters):
        acc += x.sum(axis=-1, dtype=np.float32)
    return acc.astype(x.dtype)


def norm_loop(x, iters):
    y = x.astype(np.float32)
    for _ in range(iters):
        y -= y.mean(axis=-1, keepdims=True)
        y *= 0.5
    return y.astype(x.dtype)
