"""A stub of the few torch APIs zlcore's plugins and the fake suite use; no real compute."""

import math

from . import _stub, autograd, cuda  # noqa: F401

__version__ = "2.99.0+stub"


class dtype:
    def __init__(self, name, is_floating_point):
        self.name = name
        self.is_floating_point = is_floating_point

    def __repr__(self):
        return "torch." + self.name

    __str__ = __repr__


float16 = dtype("float16", True)
float32 = dtype("float32", True)
bfloat16 = dtype("bfloat16", True)
int32 = dtype("int32", False)


class Size(tuple):
    pass


class Tensor:
    def __init__(self, shape, dtype=float32, requires_grad=False):
        self.shape = Size(shape)
        self.dtype = dtype
        self.requires_grad = requires_grad
        self.grad = None

    def size(self):
        return self.shape

    def numel(self):
        return math.prod(self.shape)

    @property
    def ndim(self):
        return len(self.shape)

    def clone(self):
        return Tensor(self.shape, self.dtype)

    def requires_grad_(self, flag=True):
        self.requires_grad = flag
        return self


def _shape(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def randn(*shape, dtype=float32, device=None, requires_grad=False):
    return Tensor(_shape(shape), dtype, requires_grad)


def randn_like(t):
    return Tensor(t.shape, t.dtype)


def is_tensor(x):
    return isinstance(x, Tensor)


def is_floating_point(x):
    return x.dtype.is_floating_point


def abs(x):
    _stub.launch(x.numel() * _stub.COST_PER_ELEMENT_MS, numel=x.numel())
    return Tensor(x.shape, x.dtype, requires_grad=x.requires_grad)


class version:
    cuda = "13.0-stub"
    hip = None
