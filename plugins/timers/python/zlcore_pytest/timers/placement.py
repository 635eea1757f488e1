"""Input placements: the same values in new storage, after a seeded shift of the allocator.

Where a kernel's inputs live changes its time by more than the spread of any
one placement (docs/graph-timer.md), so every timer measures each (shape,
side) on several placements. One placement:

  1. shift the allocator: hold two allocations of random size drawn from the
     side's seeded generator, one below 1 MiB and one from 1 MiB up to
     ZL_PLACEMENT_MAX_SHIFT_MB. Caching allocators (torch's, and the vendors'
     modelled on it) serve small and large requests from separate pools, so
     one shift per pool moves small inputs as well as large ones. On a torch
     device they come from torch.empty on ZL_TORCH_DEVICE (the framework's
     own allocator, never managed memory); on the host, from NumPy (malloc).
  2. clone the inputs: every tensor or array among args and kwargs, in lists,
     tuples and dicts at any depth, gets new storage with the same values,
     shape, strides and storage offset; tensors that required grad still do
     (as new leaves), tensors that shared storage still share it, and
     everything else (numbers, dtypes, strings, None) is passed as is. An
     in-place op therefore mutates only its placement's clones.
  3. the timer builds and times its callable on the clones.
  4. everything is released before the next placement: the clones, the shift.

The generator is seeded by ZL_PLACEMENT_SEED and the side's (op, dtype, shape,
side), so a run draws the same shifts as any other run with that seed,
whatever else it runs.
"""

import contextlib
import random
import sys
from dataclasses import dataclass
from typing import List

MIB = 1 << 20
# Below this, torch's caching allocator serves requests from its small pool.
SMALL_POOL_BYTES = MIB
ALIGN = 512


@dataclass
class Shift:
    """The sizes one placement held while its inputs were cloned (bytes)."""

    small: int
    large: int

    def as_list(self):
        return [self.small, self.large]


def side_rng(seed, context):
    """The side's own generator: the same draws for the same seed and side."""
    key = "|".join(str(context.get(k)) for k in ("op", "dtype", "shape", "side"))
    return random.Random(f"zlcore-placement|{seed}|{key}")


def draw_shift(rng, max_shift_mb):
    """One small-pool and one large-pool size, multiples of 512 bytes; zeros when shifting is off."""
    max_bytes = int(max_shift_mb * MIB)
    if max_bytes <= 0:
        return Shift(0, 0)
    small = rng.randrange(1, SMALL_POOL_BYTES // ALIGN) * ALIGN
    large = 0
    if max_bytes >= SMALL_POOL_BYTES:
        large = rng.randrange(SMALL_POOL_BYTES // ALIGN, max_bytes // ALIGN + 1) * ALIGN
    return Shift(small, large)


# -- allocation ------------------------------------------------------------------


class TorchMemory:
    """Shift allocations from the framework's allocator on one torch device."""

    def __init__(self, device):
        self.device = device

    def hold(self, nbytes):
        import torch

        return torch.empty(nbytes, dtype=torch.uint8, device=self.device)


class HostMemory:
    """Shift allocations in host memory (NumPy's allocator when NumPy is loaded)."""

    def hold(self, nbytes):
        np = sys.modules.get("numpy")
        if np is not None:
            return np.empty(nbytes, dtype=np.uint8)
        return bytearray(nbytes)


def memory_for(torch_device):
    """Where shifts go: the torch device zlcore named, or the host for cpu / none."""
    if torch_device and torch_device not in ("cpu", "host", "none"):
        return TorchMemory(torch_device)
    return HostMemory()


# -- cloning ---------------------------------------------------------------------


class _Cloner:
    """Clones one set of arguments, keeping aliasing between them."""

    def __init__(self):
        self.torch = sys.modules.get("torch")
        self.np = sys.modules.get("numpy")
        self.by_id = {}  # id(original) -> clone: an object passed twice stays one object
        self.storages = {}  # storage key -> new flat tensor holding a copy of the whole storage
        self.sharing = {}  # storage key -> how many distinct tensors use it
        self.keep = []  # originals, so their ids stay unique while cloning

    def _is_tensor(self, x):
        return self.torch is not None and self.torch.is_tensor(x)

    def _is_array(self, x):
        return self.np is not None and isinstance(x, self.np.ndarray)

    def count(self, value):
        """First pass: which storages more than one distinct tensor uses."""
        seen = set()

        def walk(v):
            if self._is_tensor(v):
                if id(v) not in seen:
                    seen.add(id(v))
                    key = _storage_key(v)
                    if key is not None:
                        self.sharing[key] = self.sharing.get(key, 0) + 1
            elif isinstance(v, dict):
                for item in v.values():
                    walk(item)
            elif isinstance(v, (list, tuple)):
                for item in v:
                    walk(item)

        walk(value)

    def clone(self, value):
        if self._is_tensor(value) or self._is_array(value):
            done = self.by_id.get(id(value))
            if done is None:
                done = self._tensor(value) if self._is_tensor(value) else value.copy(order="K")
                self.by_id[id(value)] = done
                self.keep.append(value)
            return done
        if isinstance(value, dict):
            return type(value)((k, self.clone(v)) for k, v in value.items())
        if isinstance(value, tuple):
            items = [self.clone(v) for v in value]
            if hasattr(value, "_fields"):  # a namedtuple
                return type(value)(*items)
            try:
                return type(value)(items)
            except TypeError:
                return tuple(items)
        if isinstance(value, list):
            return type(value)(self.clone(v) for v in value)
        return value

    def _tensor(self, t):
        torch = self.torch
        src = t.detach()
        key = _storage_key(t)
        strided = getattr(t, "layout", None) == torch.strided
        new = None
        if strided and key is not None and self.sharing.get(key, 0) <= 1:
            new = src.clone(memory_format=torch.preserve_format)
            if tuple(new.stride()) != tuple(src.stride()) or src.storage_offset() != 0:
                # Not dense, or not at the start of its storage (its alignment
                # decides which kernel variant runs): copy the whole storage
                # below, which keeps layout and offset.
                new = None
        if new is None and strided and key is not None:
            flat = self.storages.get(key)
            if flat is None:
                size = t.untyped_storage().nbytes() // t.element_size()
                flat = src.as_strided((size,), (1,), 0).clone()
                self.storages[key] = flat
            # Through detach(): another view's grad_fn (below) stays its own.
            new = flat.detach().as_strided(src.size(), src.stride(), src.storage_offset())
        if new is None:
            new = src.clone()  # sparse, quantized, nested...: values only
        if t.requires_grad:
            if t.is_leaf:
                new.requires_grad_(True)
            else:
                _make_intermediate(torch, new)
        return new


def _make_intermediate(torch, new):
    """Makes `new` an autograd intermediate, as the tensor it copies is. An
    in-place op on a leaf that requires grad is an error, on an intermediate
    it is not: addbmm_'s bias becomes one at its first call, and a leaf clone
    of it failed every later call. Multiplying by a one that requires grad
    changes no value (not even a -0.0 or a NaN) and gives the tensor a grad_fn."""
    try:
        with torch.enable_grad():
            new.mul_(torch.ones((), dtype=new.dtype, device=new.device, requires_grad=True))
    except Exception:
        new.requires_grad_(True)  # a dtype without an in-place multiply: a leaf, as before


def _storage_key(t):
    try:
        return (str(t.device), t.untyped_storage().data_ptr())
    except Exception:
        return None


def clone_inputs(args, kwargs):
    """(args, kwargs) with every tensor and array in new storage, everything else as is."""
    cloner = _Cloner()
    cloner.count((args, kwargs))
    return tuple(cloner.clone(tuple(args))), cloner.clone(dict(kwargs))


# -- one placement ----------------------------------------------------------------


@dataclass
class Placement:
    index: int
    args: tuple
    kwargs: dict
    shift: Shift


class Placer:
    """Makes the placements of one run: seeded shifts on one memory, cloned inputs."""

    def __init__(self, settings, memory):
        self.settings = settings
        self.memory = memory

    def rng(self, context):
        return side_rng(self.settings.seed, context)

    @contextlib.contextmanager
    def place(self, index, args, kwargs, rng):
        """Placement `index`: shift, clone, yield; then release both."""
        shift = draw_shift(rng, self.settings.max_shift_mb)
        held: List[object] = [self.memory.hold(n) for n in shift.as_list() if n > 0]
        try:
            cloned_args, cloned_kwargs = clone_inputs(args, kwargs)
            placement = Placement(index, cloned_args, cloned_kwargs, shift)
            try:
                yield placement
            finally:
                placement.args = placement.kwargs = None
                del cloned_args, cloned_kwargs
        finally:
            held.clear()
