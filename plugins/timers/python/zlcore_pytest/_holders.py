"""What keeps device memory alive after an op, in words (docs/warm-workers.md).

When a warm worker's allocation stays over its baseline after an op, the
worker is replaced, and the one line that says so is all a user gets. On an
H100 that happened after ops whose leftover was exactly one of their
2^30-element tensors (1024 MiB of bool after any_dim, 2 GiB of float16 after
min_dim): somebody still held it. This finds the largest such objects still
reachable and, for each, a chain of referrers back to where it hangs: a
module's global, a class attribute, a running frame. Only called when a
worker is about to be replaced anyway, and bounded in time.
"""

import gc
import sys
import time
import types

MIB = 1 << 20


def _module_globals():
    """id of each module's globals -> the module's name, read once a search."""
    return {id(vars(m)): name for name, m in list(sys.modules.items()) if hasattr(m, "__dict__")}


def _step_name(holder, child):
    """How `holder` refers to `child`, as a short path element."""
    if isinstance(holder, dict):
        for key, value in holder.items():
            if value is child:
                return f"[{key!r}]"
        return "[?]"
    if isinstance(holder, (list, tuple)):
        for i, value in enumerate(holder):
            if value is child:
                return f"[{i}]"
        return "[?]"
    if isinstance(holder, types.FrameType):
        for name, value in holder.f_locals.items():
            if value is child:
                return f": local {name}"
        return ": a local"
    if isinstance(holder, types.CellType):
        return "(closure cell)"
    return f"<{type(holder).__name__}>"


def _namespace_of(obj, d):
    # An instance's __dict__ is the dict itself; a class's is a read-only
    # view of it, so a class is matched by its names.
    if not isinstance(d, dict):
        return False
    if isinstance(obj, type):
        return set(obj.__dict__) == set(d)
    return getattr(obj, "__dict__", None) is d


def _ours(obj):
    # The search's own frames hold what they look at in their locals.
    return isinstance(obj, types.FrameType) and obj.f_code.co_filename == __file__


def _root_name(obj, modules):
    """A name for a referrer that ends a chain, or None to keep walking."""
    if isinstance(obj, dict) and id(obj) in modules:
        return f"module {modules[id(obj)]}"
    if isinstance(obj, types.FrameType):
        code = obj.f_code
        return f"a running frame of {code.co_name} ({code.co_filename.rsplit('/', 1)[-1]}:{obj.f_lineno})"
    if isinstance(obj, type):
        return f"class {obj.__module__}.{obj.__qualname__}"
    if isinstance(obj, types.ModuleType):
        return f"module {obj.__name__}"
    return None


def chain_to_root(target, ignore, depth=8, deadline=None):
    """'module m['CACHE'][0]' style path from a root to `target`, or None.

    A breadth-first walk over gc.get_referrers; `ignore` holds ids of objects
    the search itself made (lists of candidates, this frame) that must not
    count as holders."""
    frame = sys._getframe()
    ignore = set(ignore) | {id(frame)}
    modules = _module_globals()
    parents = {id(target): None}
    keep = {id(target): target}
    level = [target]
    for _ in range(depth):
        nxt = []
        ignore.add(id(nxt))
        ignore.add(id(level))
        for child in level:
            if deadline is not None and time.monotonic() > deadline:
                return None
            for holder in gc.get_referrers(child):
                hid = id(holder)
                if hid in ignore or hid in parents or holder is parents or holder is keep or _ours(holder):
                    continue
                parents[hid] = child
                keep[hid] = holder
                root = _root_name(holder, modules)
                if root is not None:
                    path = []
                    node = holder
                    # The last step went from an object to its __dict__ (a
                    # module's globals start so): the next is an attribute.
                    attribute = isinstance(holder, dict)
                    while parents[id(node)] is not None:
                        below = parents[id(node)]
                        if _namespace_of(node, below):
                            attribute = True
                        else:
                            step = _step_name(node, below)
                            path.append("." + step[2:-2] if attribute and step.startswith("['") else step)
                            attribute = False
                        node = below
                    return root + "".join(path)
                nxt.append(holder)
        level = nxt
        if not level:
            break
    return None


def largest_holders(describe, min_bytes=64 * MIB, top=3, budget_s=3.0):
    """Lines naming the `top` largest objects `describe` recognises (it maps
    an object to (storage_key, bytes, text) or None), each with its holder.
    Objects sharing a storage_key (views of one buffer) count once."""
    deadline = time.monotonic() + budget_s
    found = {}  # storage key -> (bytes, text, id of the object)
    objects = {}  # id -> object: the only reference the search keeps, ignored as a holder
    everything = gc.get_objects()
    try:
        for candidate in everything:
            try:
                seen = describe(candidate)
            except Exception:  # noqa: BLE001 - an object that cannot say is not ours to judge
                seen = None
            if seen is None:
                continue
            key, size, text = seen
            if size >= min_bytes and (key not in found or found[key][0] < size):
                found[key] = (size, text, id(candidate))
                objects[id(candidate)] = candidate
    finally:
        del everything
        candidate = None
    lines = []
    ignore = {id(objects), id(sys._getframe())}
    for size, text, oid in sorted(found.values(), key=lambda t: -t[0])[:top]:
        where = chain_to_root(objects[oid], ignore, deadline=deadline)
        lines.append(f"{size / MIB:.0f} MiB {text} held by {where or 'nothing found in time'}")
    return lines


def torch_describer(device):
    """describe() for largest_holders: the device's tensors, by storage."""
    torch = sys.modules.get("torch")
    tensor = getattr(torch, "Tensor", None)
    if tensor is None:
        return None

    def describe(obj):
        if not isinstance(obj, tensor) or obj.device.type != device:
            return None
        storage = obj.untyped_storage()
        return storage.data_ptr(), storage.nbytes(), f"{str(obj.dtype).replace('torch.', '')} {list(obj.shape)}"

    return describe
