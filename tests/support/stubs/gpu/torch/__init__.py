"""A stub of the few torch APIs zlcore's plugins and the fake suite use; no real compute."""

import math

from . import _stub, autograd, cuda  # noqa: F401
OutOfMemoryError = cuda.OutOfMemoryError

__version__ = "2.99.0+stub"


class dtype:
    def __init__(self, name, is_floating_point, itemsize):
        self.name = name
        self.is_floating_point = is_floating_point
        self.itemsize = itemsize

    def __repr__(self):
        return "torch." + self.name

    __str__ = __repr__


float16 = dtype("float16", True, 2)
float32 = dtype("float32", True, 4)
bfloat16 = dtype("bfloat16", True, 2)
int32 = dtype("int32", False, 4)
uint8 = dtype("uint8", False, 1)

strided = "torch.strided"
sparse_coo = "torch.sparse_coo"
preserve_format = "torch.preserve_format"
contiguous_format = "torch.contiguous_format"


class Size(tuple):
    pass


def _contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


class Tensor:
    """Shape, dtype, strides and a storage at a fake address; no values."""

    def __init__(self, shape, dtype=float32, requires_grad=False, device="cuda", storage=None, stride=None,
                 offset=0, layout=strided):
        self.shape = Size(shape)
        self.dtype = dtype
        self.requires_grad = requires_grad
        self.grad = None
        self._grad_fn = None
        self.device = device
        self.layout = layout
        self._stride = tuple(stride) if stride is not None else _contiguous_strides(self.shape)
        self._offset = offset
        if storage is None:
            extent = 1 + sum((n - 1) * st for n, st in zip(self.shape, self._stride)) if self.numel() else 0
            storage = _stub.Storage((offset + extent) * dtype.itemsize, device)
        self._storage = storage

    def size(self):
        return self.shape

    def numel(self):
        return math.prod(self.shape)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def is_leaf(self):
        return not self.requires_grad or self._grad_fn is None

    def mul_(self, other):
        """Values aside, what torch's autograd does with an in-place op."""
        if self.requires_grad and self.is_leaf:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        if is_tensor(other) and other.requires_grad and _grad_enabled[0]:
            self.requires_grad = True
            self._grad_fn = "MulBackward0"
        return self

    def zero_(self):
        """A write over the whole tensor: one kernel, costed per byte (the L2 clear of timers/l2_clear.py)."""
        _stub.counters["zero_launches"] += 1
        _stub.launch(self.numel() * self.dtype.itemsize * _stub.COST_PER_ELEMENT_MS)
        return self

    def stride(self):
        return self._stride

    def storage_offset(self):
        return self._offset

    def element_size(self):
        return self.dtype.itemsize

    def untyped_storage(self):
        return self._storage

    def data_ptr(self):
        return self._storage.ptr + self._offset * self.dtype.itemsize

    def detach(self):
        return Tensor(self.shape, self.dtype, False, self.device, self._storage, self._stride, self._offset,
                      self.layout)

    def clone(self, memory_format=None):
        dense = sorted(self._stride, reverse=True) == list(_contiguous_strides(sorted(self.shape, reverse=True)))
        stride = self._stride if memory_format == preserve_format and dense else None
        _stub.counters["clones"] += 1
        return Tensor(self.shape, self.dtype, False, self.device, stride=stride, layout=self.layout)

    def as_strided(self, size, stride, storage_offset=0):
        return Tensor(size, self.dtype, False, self.device, self._storage, stride, storage_offset, self.layout)

    def requires_grad_(self, flag=True):
        self.requires_grad = flag
        return self

    def t(self):
        return self.as_strided(tuple(reversed(self.shape)), tuple(reversed(self._stride)), self._offset)


_grad_enabled = [True]


class _GradMode:
    def __init__(self, enabled):
        self.enabled = enabled

    def __enter__(self):
        self.before = _grad_enabled[0]
        _grad_enabled[0] = self.enabled

    def __exit__(self, *exc):
        _grad_enabled[0] = self.before


def enable_grad():
    return _GradMode(True)


def no_grad():
    return _GradMode(False)


def ones(*shape, dtype=float32, device=None, requires_grad=False):
    return Tensor(_shape(shape), dtype, requires_grad, device=device or "cpu")


def empty(*shape, dtype=float32, device=None):
    _stub.counters["empty_bytes"].append(math.prod(_shape(shape)) * dtype.itemsize)
    return Tensor(_shape(shape), dtype, device=device or "cpu")


def _shape(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def randn(*shape, dtype=float32, device=None, requires_grad=False):
    return Tensor(_shape(shape), dtype, requires_grad, device=device or "cpu")


def zeros(*shape, dtype=float32, device=None):
    t = Tensor(_shape(shape), dtype, device=device or "cpu")
    _stub.launch(t.numel() * _stub.COST_PER_ELEMENT_MS, numel=t.numel())
    return t


def randn_like(t):
    _stub.counters["randn_like"] += 1
    return Tensor(t.shape, t.dtype, device=t.device)


def is_tensor(x):
    return isinstance(x, Tensor)


def is_floating_point(x):
    return x.dtype.is_floating_point


def abs(x):
    _stub.launch(x.numel() * _stub.COST_PER_ELEMENT_MS * _stub.placement_factor(x), numel=x.numel())
    return Tensor(x.shape, x.dtype, requires_grad=x.requires_grad, device=x.device)


class version:
    cuda = "13.0-stub"  # noqa: F811 (torch.version.cuda, not the module)
    hip = None
