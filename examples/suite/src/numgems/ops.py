"""numgems' own implementations ("kernels") of the suite's operators.

They compute the same results as numgems.ref but differently (blocked loops,
in-place temporaries, float32 accumulation), so the two sides of a benchmark
really differ, as FlagGems' Triton kernels differ from torch's.
"""

import numpy as np

from .tuner import Config, libtuner

# Elements per block of the blocked pointwise loops.
POINTWISE_BLOCK = 1 << 16


def abs(x):
    return np.absolute(x, out=np.empty_like(x))


def abs_(x):
    return np.absolute(x, out=x)


def add(a, b):
    return np.add(a, b, out=np.empty_like(a))


def add_(a, b):
    return np.add(a, b, out=a)


def mul(a, b):
    return np.multiply(a, b, out=np.empty_like(a))


def exp(x):
    out = np.empty_like(x)
    flat_in, flat_out = x.reshape(-1), out.reshape(-1)
    for start in range(0, flat_in.size, POINTWISE_BLOCK):
        np.exp(flat_in[start : start + POINTWISE_BLOCK], out=flat_out[start : start + POINTWISE_BLOCK])
    return out


def softmax(x, dim=-1):
    work = x.astype(np.float32, copy=True)
    work -= work.max(axis=dim, keepdims=True)
    np.exp(work, out=work)
    work /= work.sum(axis=dim, keepdims=True)
    return work.astype(x.dtype, copy=False)


def sum(x, dim=None):
    # Accumulate half precision in float32, as GPU reduction kernels do.
    acc = np.float32 if x.dtype == np.float16 else None
    return np.add.reduce(x, axis=dim, dtype=acc).astype(x.dtype, copy=False)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    work = x.astype(np.float32, copy=True)
    mean = work.mean(axis=axes, keepdims=True)
    work -= mean
    var = np.mean(work * work, axis=axes, keepdims=True)
    work *= 1.0 / np.sqrt(var + eps)
    if weight is not None:
        work *= weight
    if bias is not None:
        work += bias
    return work.astype(x.dtype, copy=False)


MM_CONFIGS = [
    Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk})
    for bm, bn, bk in ((32, 32, 32), (64, 64, 32), (64, 64, 64), (128, 128, 64))
]


def _mm_key(a, b):
    return (a.shape[0], b.shape[1], a.shape[1], str(a.dtype))


@libtuner(name="mm_kernel", configs=MM_CONFIGS, key_fn=_mm_key, strategy="log")
def mm_kernel(a, b, BLOCK_M, BLOCK_N, BLOCK_K):
    m, k = a.shape
    n = b.shape[1]
    c = np.zeros((m, n), dtype=np.result_type(a, b))
    for i in range(0, m, BLOCK_M):
        for j in range(0, n, BLOCK_N):
            acc = c[i : i + BLOCK_M, j : j + BLOCK_N]
            for p in range(0, k, BLOCK_K):
                acc += a[i : i + BLOCK_M, p : p + BLOCK_K] @ b[p : p + BLOCK_K, j : j + BLOCK_N]
    return c


def mm(a, b):
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"mm: cannot multiply {a.shape} by {b.shape}")
    return mm_kernel(a, b)
