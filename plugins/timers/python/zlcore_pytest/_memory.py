"""Device memory as the framework's caching allocator counts it, for the run's accounting.

Each row says what the suite's own work needed (the allocator's peak between
one measured side and the next: inputs, outputs, the reference call) and what
zlcore's measurement added on top of what was allocated when it began (its
placements' clones and shifts, graphs, outputs of the timed calls), per side.
The identity says the device's total and free memory at the session's start
and the process's allocation at its start and end.

Only a device module that is already initialized is asked: asking would
otherwise initialize the device, which the suite and the timer decide. Every
figure is None where the framework has no such count (the host, a vendor
module without memory statistics).
"""

import sys


class DeviceMemory:
    def __init__(self, torch_device):
        self.device = torch_device if torch_device not in (None, "", "cpu", "host", "none") else None

    def _module(self):
        if self.device is None:
            return None
        torch = sys.modules.get("torch")
        module = getattr(torch, self.device, None) if torch is not None else None
        if module is None:
            return None
        initialized = getattr(module, "is_initialized", None)
        try:
            if callable(initialized) and not initialized():
                return None
        except Exception:
            return None
        return module

    def _ask(self, name, *args):
        module = self._module()
        fn = getattr(module, name, None) if module is not None else None
        if not callable(fn):
            return None
        try:
            return fn(*args)
        except Exception:
            return None

    def allocated(self):
        value = self._ask("memory_allocated")
        return int(value) if isinstance(value, int) else None

    def reserved(self):
        value = self._ask("memory_reserved")
        return int(value) if isinstance(value, int) else None

    def peak(self):
        """The allocator's peak since the last reset_peak()."""
        value = self._ask("max_memory_allocated")
        return int(value) if isinstance(value, int) else None

    def reset_peak(self):
        self._ask("reset_peak_memory_stats")

    def free_and_total(self):
        value = self._ask("mem_get_info")
        if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, int) for v in value):
            return value
        return None, None

    def empty_cache(self):
        self._ask("empty_cache")

    def limit_and_free(self):
        """(bytes the allocator may use, bytes it can still get): the device's
        total and free memory, under a per-process fraction where one is set
        (torch.<device>.set_per_process_memory_fraction, how a smaller device
        is stood for), with what the allocator holds idle counted as free.
        (None, None) where the framework does not say."""
        free, total = self.free_and_total()
        if free is None or total is None:
            return None, None
        reserved = self.reserved() or 0
        allocated = self.allocated() or 0
        limit = total
        fraction = self._ask("get_per_process_memory_fraction")
        if isinstance(fraction, float) and 0.0 < fraction < 1.0:
            limit = int(total * fraction)
            free = min(free, max(0, limit - reserved))
        return limit, free + max(0, reserved - allocated)

    def snapshot(self):
        """The figures an identity records at a session's start or end."""
        free, total = self.free_and_total()
        return {
            "device_total_bytes": total,
            "device_free_bytes": free,
            "allocated_bytes": self.allocated(),
            "reserved_bytes": self.reserved(),
        }


class SideMemory:
    """Brackets one measured side: the suite's peak before it, zlcore's peak added during it."""

    def __init__(self, memory):
        self.memory = memory
        self.suite_peak = None
        self.added = None
        self._entry = None

    def __enter__(self):
        self.suite_peak = self.memory.peak()
        self._entry = self.memory.allocated()
        self.memory.reset_peak()
        return self

    def __exit__(self, *exc):
        peak = self.memory.peak()
        if peak is not None and self._entry is not None:
            self.added = max(0, peak - self._entry)
        self.memory.reset_peak()  # the suite's next work is counted from here
        return False


class SuiteOutOfMemory(RuntimeError):
    """Out of memory in the suite's own call on its own inputs, which the suite would meet without zlcore."""


def out_of_memory(exc):
    """Whether `exc`, or an exception it was raised from, is the framework's out-of-memory error."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if type(exc).__name__ == "OutOfMemoryError" or "out of memory" in str(exc).lower():
            return True
        exc = exc.__cause__ or exc.__context__
    return False
