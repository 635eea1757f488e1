"""The reference operators: plain NumPy, playing torch's part.

Each function runs numgems.ops' implementation instead when called inside
numgems.use_gems(), the way flag_gems.use_gems() overrides torch's aten ops,
so a benchmark can pass the same callable for both sides.
"""

import functools

import numpy as np

from . import ops
from .dispatch import gems_enabled


def _overridable(fn):
    name = fn.__name__

    @functools.wraps(fn)
    def dispatch(*args, **kwargs):
        if gems_enabled(name):
            return getattr(ops, name)(*args, **kwargs)
        return fn(*args, **kwargs)

    return dispatch


@_overridable
def abs(x):
    return np.abs(x)


@_overridable
def abs_(x):
    return np.abs(x, out=x)


@_overridable
def add(a, b):
    return a + b


@_overridable
def add_(a, b):
    a += b
    return a


@_overridable
def mul(a, b):
    return a * b


@_overridable
def exp(x):
    return np.exp(x)


@_overridable
def softmax(x, dim=-1):
    shifted = x - x.max(axis=dim, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=dim, keepdims=True)


@_overridable
def sum(x, dim=None):
    return np.sum(x, axis=dim)


@_overridable
def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y.astype(x.dtype, copy=False)


@_overridable
def mm(a, b):
    return a @ b
