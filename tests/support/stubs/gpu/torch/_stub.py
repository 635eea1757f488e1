"""The fake device behind the stub torch: a timeline in ms that launches advance.

Knobs (environment, read when used):
  STUB_DEVICE_COUNT          devices torch.cuda reports (default 1)
  STUB_DEVICE_UUID           the uuid of device 0
  STUB_CAPTURE_FAIL_NUMEL    comma list of numels whose launch fails inside a capture
  STUB_CAPTURE_FAIL_CLUSTER  "1": cluster launches fail inside a capture
  STUB_CAPTURE_STAYS_OPEN    "1": ending a failed capture leaves the stream capturing
  STUB_GRAPH_SLOWDOWN        factor applied to every replay (cluster replays only
                             with STUB_GRAPH_SLOWDOWN_CLUSTER_ONLY=1)
  STUB_GRAPH_STEP            "N:F" or "N:F:each": replays after the process's (or
                             each graph's) N-th run F times slower (torch/cuda.py);
                             several, comma-separated, multiply
  STUB_GRAPH_BOOST           "F:GAP:N": after torch.cuda.synchronize() and GAP ms or
                             more (wall clock) without a replay, the next N replays
                             run F times as long, like a power-limited GPU back at
                             its boost after a rest
  STUB_PLACEMENT_SLOW_PCT    P: a kernel whose input starts in an odd MiB of the fake
                             address space runs P % slower, like inputs whose placement
                             falls in the slow one of two clusters
  STUB_STATE_FILE            where the counters below are written at exit
  STUB_MEMORY_TOTAL          the device's bytes (mem_get_info), default 80 GiB
  STUB_OOM_ABOVE_BYTES       a device allocation that would take the allocated
                             bytes past this raises torch.cuda.OutOfMemoryError
  STUB_OOM_DO_BENCH          "1": triton.testing.do_bench runs out of memory (its
                             cache-flush buffer), like a device with no room left

Device memory: every storage on a device (not "cpu") counts as allocated
from its creation until it is collected (CPython frees it when its last
tensor goes), and torch.cuda's memory_allocated / max_memory_allocated /
reset_peak_memory_stats / mem_get_info read those counts.
"""

import atexit
import json
import os

COST_PER_ELEMENT_MS = 1e-5

now_ms = 0.0
last_replay_wall = None  # time.perf_counter() at the last replay, for STUB_GRAPH_BOOST
synced_since_replay = False
boost_left = 0
cost_factor = 1.0  # flag_gems.use_gems() makes "gems" kernels 2x faster
capture = None  # (graph, stream) while a capture is open
counters = {"launches": 0, "captures_begun": 0, "captures_failed": 0, "replays": 0,
            "do_bench_calls": 0, "do_bench_args": [], "autograd_grad_calls": 0, "captured_autograd": 0,
            "clones": 0, "randn_like": 0, "empty_bytes": [], "storages": 0, "zero_launches": 0}

# storage address -> calls of the fake suite's in-place op that reached it
inplace_calls = {}

MIB = 1 << 20
_next_address = [1 << 32]


# Device bytes allocated now, and the most since the last reset of the peak.
memory = {"allocated": 0, "peak": 0}


def memory_total():
    return int(os.environ.get("STUB_MEMORY_TOTAL", str(80 << 30)))


def out_of_memory(nbytes):
    from .cuda import OutOfMemoryError

    return OutOfMemoryError(f"CUDA out of memory. Tried to allocate {nbytes} bytes (stub: "
                            f"{memory['allocated']} allocated, limit {os.environ.get('STUB_OOM_ABOVE_BYTES')})")


class Storage:
    """Bytes at a fake address from a bump allocator: a new storage never reuses an old address."""

    def __init__(self, nbytes, device="cpu"):
        self.ptr = _next_address[0]
        self._nbytes = nbytes
        _next_address[0] += (nbytes + 511) // 512 * 512 or 512
        counters["storages"] += 1
        self._counted = 0
        if str(device) != "cpu":
            limit = os.environ.get("STUB_OOM_ABOVE_BYTES")
            if limit and memory["allocated"] + nbytes > int(limit):
                raise out_of_memory(nbytes)
            self._counted = nbytes
            memory["allocated"] += nbytes
            memory["peak"] = max(memory["peak"], memory["allocated"])

    def __del__(self):
        memory["allocated"] -= self._counted

    def nbytes(self):
        return self._nbytes

    def data_ptr(self):
        return self.ptr


def placement_factor(tensor):
    pct = os.environ.get("STUB_PLACEMENT_SLOW_PCT")
    if not pct:
        return 1.0
    return 1.0 + float(pct) / 100.0 if (tensor.data_ptr() // MIB) % 2 else 1.0


def _numels(name):
    return {int(v) for v in os.environ.get(name, "").split(",") if v.strip()}


def launch(cost_ms, numel=None, cluster=False, kind="kernel"):
    from . import cuda

    global now_ms
    counters["launches"] += 1
    if capture is not None:
        graph, stream = capture
        if cuda.current_stream() is not stream:
            raise RuntimeError("stub: launch on another stream while a capture is open")
        if graph._invalid:
            raise RuntimeError("stub: capture already invalidated")
        fail = (numel is not None and numel in _numels("STUB_CAPTURE_FAIL_NUMEL")) or (
            cluster and os.environ.get("STUB_CAPTURE_FAIL_CLUSTER") == "1")
        if fail:
            graph._invalid = True
            raise RuntimeError("stub: operation not permitted when stream is capturing\nsecond line")
        graph._nodes.append((cost_ms * cost_factor, cluster))
        if kind == "autograd":
            counters["captured_autograd"] += 1
        return
    now_ms += cost_ms * cost_factor


def write_state():
    path = os.environ.get("STUB_STATE_FILE")
    if path:
        state = dict(counters, captures_open=1 if capture is not None else 0,
                     inplace_storages=len(inplace_calls), inplace_calls_max=max(inplace_calls.values(), default=0))
        with open(path, "w") as f:
            json.dump(state, f)


atexit.register(write_state)
