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

Memory. A placement's copies and shift are zlcore's, not the suite's: a
side whose inputs take gigabytes (2^30 elements of int64 indices are 8 GiB)
must never fail for them. Before each placement the Placer asks its budget
(MemoryBudget) whether the copies fit: within ZL_PLACEMENT_MEMORY_PCT of the
memory the allocator may use, and within what is free (the device's free
memory plus what the allocator holds idle, after handing that back if it must).
When they do not, or after an out-of-memory error in zlcore's own work
(timing.py), the side is measured "lean": on the suite's own inputs, with no
copy and no shift, which is one placement however often it is read; the
Placer's `note` says why, and the row keeps one value for the side, so compare
never claims more than one placement supports.
"""

import contextlib
import random
import sys
from dataclasses import dataclass
from typing import List, Optional

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
        for v in _leaves(value):
            if self._is_tensor(v) and id(v) not in seen:
                seen.add(id(v))
                key = _storage_key(v)
                if key is not None:
                    self.sharing[key] = self.sharing.get(key, 0) + 1

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


def _leaves(value):
    """Everything inside lists, tuples and dicts at any depth, without recursion.

    Not a recursive closure: a nested function that calls itself holds itself
    (and all it closes over) in a reference cycle, which only the collector
    frees; the cloner's copies of a 2^30-element input stayed on the device
    after their placement that way, one set per placement, until the next
    collection ran out of memory.
    """
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(reversed(list(v.values())))
        elif isinstance(v, (list, tuple)):
            stack.extend(reversed(v))
        else:
            yield v


def input_bytes(args, kwargs):
    """Bytes a clone of every tensor and array among the arguments takes (a
    storage shared by several tensors counted once)."""
    torch = sys.modules.get("torch")
    np = sys.modules.get("numpy")
    seen = set()
    total = 0
    for v in _leaves((args, kwargs)):
        if torch is not None and torch.is_tensor(v):
            key = _storage_key(v)
            if key is None:
                total += v.numel() * v.element_size()
            elif key not in seen:
                seen.add(key)
                try:
                    total += v.untyped_storage().nbytes()
                except Exception:
                    total += v.numel() * v.element_size()
        elif np is not None and isinstance(v, np.ndarray):
            total += v.nbytes
    return total


def size_text(nbytes):
    """1.50 GiB, 512.00 KiB: the unit that keeps a message's number readable."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{int(nbytes)} B"


class MemoryBudget:
    """Whether one placement's copies fit on the device (see the module's docstring).

    `device` is a _memory.DeviceMemory; a device that reports no figures (the
    host) always fits.
    """

    def __init__(self, device, pct):
        self.device = device
        self.pct = pct

    def refuse(self, need):
        """None when `need` bytes of copies fit, else why not (one line)."""
        limit, free = self.device.limit_and_free()
        if limit is None or free is None:
            return None
        share = self.pct / 100.0 * limit
        if need > share:
            return (f"copies of {size_text(need)} exceed ZL_PLACEMENT_MEMORY_PCT={self.pct:g} % "
                    f"of {size_text(limit)}")
        if need > free:
            self.device.empty_cache()  # the allocator's idle blocks back to the device, then ask again
            limit, free = self.device.limit_and_free()
            if free is not None and need > free:
                return f"copies of {size_text(need)} exceed the {size_text(free)} free"
        return None


# -- one placement ----------------------------------------------------------------


@dataclass
class Placement:
    index: int
    args: tuple
    kwargs: dict
    shift: Shift
    lean: bool = False  # the suite's own inputs, not copies


class Placer:
    """Makes the placements of one run: seeded shifts on one memory, cloned inputs.

    `note` is set, for the side being measured, once a placement was made
    lean (why); `begin_side()` clears it and `lean` (forced lean placements,
    after an out-of-memory error in zlcore's work).
    """

    def __init__(self, settings, memory, budget=None):
        self.settings = settings
        self.memory = memory
        self.budget = budget
        self.lean = False
        self.note: Optional[str] = None

    def begin_side(self, lean_because=None):
        self.lean = lean_because is not None
        self.note = lean_because

    def rng(self, context):
        return side_rng(self.settings.seed, context)

    def _lean_because(self, args, kwargs, shift):
        if self.lean:
            return self.note or "lean placements asked for"
        if self.budget is None:
            return None
        return self.budget.refuse(input_bytes(args, kwargs) + shift.small + shift.large)

    @contextlib.contextmanager
    def place(self, index, args, kwargs, rng):
        """Placement `index`: shift, clone, yield; then release both."""
        shift = draw_shift(rng, self.settings.max_shift_mb)
        why = self._lean_because(args, kwargs, shift)
        if why is not None:
            if self.note is None:
                self.note = why
            yield Placement(index, tuple(args), dict(kwargs), Shift(0, 0), lean=True)
            return
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
