"""The imported heap, frozen out of the collector's way.

FlagGems' benchmark loop runs `gc.collect()` after every shape, and pytest
twice more at its end. Each full collection walks every object the process
holds, and after `import torch, triton, flag_gems` that is ~340 thousand
objects: 140-210 ms a collection on the H200 host, about a second of every
op's wall time. `gc.freeze()` moves the objects that exist now to a permanent
generation the collector skips; what the op creates afterwards (its inputs,
its benchmark objects, their cycles) is collected as before.

Called once per process: by a warm worker after its imports, and by the
timing plugin of a cold child after collection (freeze_imports: only an
unfrozen process freezes there).

A warm worker also freezes again after every op (after_op). Its first op
imports what the worker's own imports did not (pytest's entry-point plugins,
sympy, torch.distributed, ...: ~0.25 s a collection on the H100 host, nine
collections an op), and those modules stay for every later op. The freeze
comes after the op's reset and a collection, when the op's own modules are
gone from sys.modules and its garbage is collected, so what it freezes is
what the worker keeps anyway. A frozen object that a later op lets go of is
still freed by its reference count; only a cycle among such objects would
wait, so every FULL_EVERY ops the worker unfreezes and collects everything.
"""

import gc


def freeze_imports():
    """Collect what is garbage now, then freeze the rest. True if this call froze."""
    if gc.get_freeze_count() > 0:
        return False
    gc.collect()
    gc.freeze()
    return True


# Ops between two full collections of a worker's whole heap (after_op).
FULL_EVERY = 8


def after_op(ops_done):
    """A warm worker's heap after its ops_done-th op has been reset: collected
    and frozen, everything unfrozen and collected first every FULL_EVERY ops."""
    if ops_done % FULL_EVERY == 0:
        gc.unfreeze()
    gc.collect()
    gc.freeze()
