"""The device implementation: Triton kernels that loop `iters` times.

The loop runs inside the kernel, so a call is one launch whose duration is
the loop's: compute-bound chains for fma_loop and sin_loop, a rotating read
of the whole input for copy_loop, a reduction per iteration for sum_loop and
norm_loop. Inputs are torch tensors on ZL_TORCH_DEVICE (default cuda); the
work is done in float32 whatever the input's dtype.
"""

import os

import torch
import triton
import triton.language as tl

DEVICE = os.environ.get("ZL_TORCH_DEVICE", "").strip().lower() or "cuda"
_DTYPES = {"float16": torch.float16, "float32": torch.float32}
BLOCK = 1024


def dtype_by_name(name):
    return _DTYPES.get(name)


def make_input(shape, dtype, seed=0):
    generator = torch.Generator(device=DEVICE).manual_seed(seed)
    return torch.randn(shape, dtype=torch.float32, device=DEVICE, generator=generator).to(dtype)


@triton.jit
def _fma_loop_kernel(x_ptr, y_ptr, n, iters, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    for _ in range(iters):
        acc = acc * 0.999 + 0.001
    tl.store(y_ptr + offs, acc.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _sin_loop_kernel(x_ptr, y_ptr, n, iters, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    for _ in range(iters):
        acc = tl.sin(acc)
    tl.store(y_ptr + offs, acc.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _copy_loop_kernel(x_ptr, y_ptr, n, iters, BLOCK: tl.constexpr):
    # Iteration i reads block (pid + i) mod blocks: every iteration reads the
    # whole input once, from wherever it lives (L2 or memory).
    pid = tl.program_id(0)
    blocks = tl.num_programs(0)
    lanes = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(iters):
        offs = ((pid + i) % blocks) * BLOCK + lanes
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    offs = pid * BLOCK + lanes
    tl.store(y_ptr + offs, acc.to(y_ptr.dtype.element_ty), mask=offs < n)


@triton.jit
def _sum_loop_kernel(x_ptr, y_ptr, cols, iters, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    lanes = tl.arange(0, BLOCK_N)
    v = tl.load(x_ptr + row * cols + lanes, mask=lanes < cols, other=0.0).to(tl.float32)
    acc = tl.sum(v, axis=0) * 0.0  # a float32 scalar, as the loop carries it
    for _ in range(iters):
        acc = acc * 0.5 + tl.sum(v, axis=0)
        v = v * 0.999
    tl.store(y_ptr + row, acc.to(y_ptr.dtype.element_ty))


@triton.jit
def _norm_loop_kernel(x_ptr, y_ptr, cols, iters, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    lanes = tl.arange(0, BLOCK_N)
    mask = lanes < cols
    v = tl.load(x_ptr + row * cols + lanes, mask=mask, other=0.0).to(tl.float32)
    for _ in range(iters):
        mean = tl.sum(v, axis=0) / cols
        v = tl.where(mask, (v - mean) * 0.5, 0.0)
    tl.store(y_ptr + row * cols + lanes, v.to(y_ptr.dtype.element_ty), mask=mask)


def _pointwise(kernel, x, iters):
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    kernel[(triton.cdiv(n, BLOCK),)](x, y, n, iters, BLOCK=BLOCK)
    return y


def fma_loop(x, iters):
    return _pointwise(_fma_loop_kernel, x, iters)


def sin_loop(x, iters):
    return _pointwise(_sin_loop_kernel, x, iters)


def copy_loop(x, iters):
    return _pointwise(_copy_loop_kernel, x, iters)


def _rows(x):
    x = x.contiguous()
    cols = x.shape[-1]
    return x, x.numel() // cols, cols, triton.next_power_of_2(cols)


def sum_loop(x, iters):
    x, rows, cols, block_n = _rows(x)
    y = torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)
    _sum_loop_kernel[(rows,)](x, y, cols, iters, BLOCK_N=block_n)
    return y


def norm_loop(x, iters):
    x, rows, cols, block_n = _rows(x)
    y = torch.empty_like(x)
    _norm_loop_kernel[(rows,)](x, y, cols, iters, BLOCK_N=block_n)
    return y
