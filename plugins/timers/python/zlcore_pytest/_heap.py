"""The imported heap, frozen out of the collector's way.

FlagGems' benchmark loop runs `gc.collect()` after every shape, and pytest
twice more at its end. Each full collection walks every object the process
holds, and after `import torch, triton, flag_gems` that is ~340 thousand
objects: 140-210 ms a collection on the H200 host, about a second of every
op's wall time. `gc.freeze()` moves the objects that exist now to a permanent
generation the collector skips; what the op creates afterwards (its inputs,
its benchmark objects, their cycles) is collected as before.

Called once per process: by a warm worker after its imports, and by the
timing plugin of a cold child after collection. A worker's ops each import
their benchmark modules anew and drop them afterwards, so a second freeze
there would keep every op's modules for good: only an unfrozen process
freezes.
"""

import gc


def freeze_imports():
    """Collect what is garbage now, then freeze the rest. True if this call froze."""
    if gc.get_freeze_count() > 0:
        return False
    gc.collect()
    gc.freeze()
    return True
