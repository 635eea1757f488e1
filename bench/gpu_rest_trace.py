#!/usr/bin/env python3
"""Does a rest put a power-limited kernel back on the same path? The data
behind the graph timer's rule for kernels whose pace the power limit sets.

gpu_settle_trace.py showed a GEMM's pace on an H200 following its power
controller: boost after an idle, a plateau, then slow excursions about once a
second. Whether a timer can read such a kernel the same way twice depends on
whether the path after a given rest repeats. For each round, each rest and each
case this sleeps for the rest, then replays a captured graph back to back for
--seconds, timing every replay with device events (two chunks in flight, so the
device never waits on the host). Where NVML is present (libnvidia-ml.so.1), a
thread samples the instant power, SM clock and clock-event reasons beside it.

usage: gpu_rest_trace.py [--seconds 1.5] [--rests 0.03,0.3,1.5] [--rounds 2]
                         [--out trace.csv] [--telemetry smi.csv]
Prints, per case and rest, each round's median in windows of load time.
Needs torch and a CUDA device.
"""

import argparse
import csv
import ctypes
import statistics
import threading
import time

import torch

from gpu_settle_trace import capture  # the same warm-up, estimate and capture; this folder is on sys.path

WINDOWS_MS = [(0, 20), (20, 40), (40, 70), (70, 120), (120, 200), (200, 400), (400, 700), (700, 1000),
              (1000, 1500), (1500, 2000)]
# nvmlFieldValue_t's instant power field (NVML_FI_DEV_POWER_INSTANT).
FIELD_POWER_INSTANT = 186


def cases():
    def mm(m, n, k):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        return lambda: torch.mm(a, b)

    def self_t(m, k):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        return lambda: torch.mm(a, a.t())

    def abs_(*shape):
        x = torch.randn(*shape, device="cuda", dtype=torch.float16)
        return lambda: torch.abs(x)

    return [("mm 2048^3", lambda: mm(2048, 2048, 2048)),
            ("mm 4096^3", lambda: mm(4096, 4096, 4096)),
            ("self_t 3072x768", lambda: self_t(3072, 768)),
            ("self_t 4096x1024", lambda: self_t(4096, 1024)),
            ("self_t 8192x2048", lambda: self_t(8192, 2048)),
            ("self_t 10240x4096", lambda: self_t(10240, 4096)),
            ("mm 1024^3", lambda: mm(1024, 1024, 1024)),
            ("abs 4096^2", lambda: abs_(4096, 4096)),
            ("abs 2^30", lambda: abs_(1 << 30))]


class FieldValue(ctypes.Structure):
    _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint), ("timestamp", ctypes.c_longlong),
                ("latencyUsec", ctypes.c_longlong), ("valueType", ctypes.c_uint), ("nvmlReturn", ctypes.c_uint),
                ("value", ctypes.c_ulonglong)]


class Telemetry:
    """NVML samples every `period` s on a thread: (host time, instant W, average W, SM MHz, reasons)."""

    def __init__(self, period=0.005):
        self.period, self.samples, self._stop = period, [], threading.Event()
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        if self.lib.nvmlInit_v2() != 0:
            raise OSError("nvmlInit_v2 failed")
        self.handle = ctypes.c_void_p()
        if self.lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.handle)) != 0:
            raise OSError("no NVML device 0")
        limit = ctypes.c_uint()
        self.lib.nvmlDeviceGetEnforcedPowerLimit(self.handle, ctypes.byref(limit))
        self.limit_w = limit.value / 1000.0
        # Renamed from ...ThrottleReasons in driver 535; both names are exported since.
        self.reasons_fn = getattr(self.lib, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            self.lib.nvmlDeviceGetCurrentClocksThrottleReasons
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def sample(self):
        lib, h = self.lib, self.handle
        field = FieldValue(fieldId=FIELD_POWER_INSTANT)
        instant = None
        if lib.nvmlDeviceGetFieldValues(h, 1, ctypes.byref(field)) == 0 and field.nvmlReturn == 0:
            instant = (field.value & 0xFFFFFFFF) / 1000.0  # an unsigned int in mW
        avg, mhz, reasons = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_ulonglong()
        lib.nvmlDeviceGetPowerUsage(h, ctypes.byref(avg))
        lib.nvmlDeviceGetClockInfo(h, 1, ctypes.byref(mhz))  # NVML_CLOCK_SM
        self.reasons_fn(h, ctypes.byref(reasons))
        return instant, avg.value / 1000.0, mhz.value, reasons.value

    def _run(self):
        while not self._stop.is_set():
            self.samples.append((time.perf_counter(),) + self.sample())
            time.sleep(self.period)

    def stop(self):
        self._stop.set()
        self.thread.join()


def load(graph, calls, seconds, chunk=8):
    """Replays back to back for `seconds` of device time; (load ms at the end, ms per call) each,
    and the host time the load began. Two chunks in flight: the device never idles."""
    def enqueue():
        events = [torch.cuda.Event(enable_timing=True) for _ in range(chunk + 1)]
        events[0].record()
        for i in range(chunk):
            graph.replay()
            events[i + 1].record()
        return events

    out, elapsed = [], 0.0
    began = time.perf_counter()
    pending = enqueue()
    while elapsed < seconds * 1000.0:
        following = enqueue()
        pending[-1].synchronize()
        for i in range(chunk):
            ms = pending[i].elapsed_time(pending[i + 1])
            elapsed += ms
            out.append((elapsed, ms / calls))
        pending = following
    pending[-1].synchronize()
    return out, began


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--rests", default="0.03,0.3,1.5")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--out", default="")
    ap.add_argument("--telemetry", default="")
    args = ap.parse_args()
    rests = [float(r) for r in args.rests.split(",")]
    chosen = [c for c in cases() if not args.cases or c[0] in args.cases.split(",")]
    try:
        tele = Telemetry()
        print(f"NVML: enforced power limit {tele.limit_w:.0f} W", flush=True)
    except OSError as exc:
        tele = None
        print(f"no NVML telemetry: {exc}", flush=True)
    built = []
    for name, build in chosen:
        fn = build()
        graph, calls, _ = capture(torch.cuda, torch.cuda.CUDAGraph, fn, 2.0)
        built.append((name, fn, graph, calls))
    rows, spans = [], []
    for rnd in range(1, args.rounds + 1):
        for rest in rests:
            for name, _, graph, calls in built:
                time.sleep(rest)
                trace, began = load(graph, calls, args.seconds)
                spans.append((name, rnd, rest, began, began + trace[-1][0] / 1000.0))
                parts = []
                for lo, hi in WINDOWS_MS:
                    inside = [ms for t, ms in trace if lo <= t < hi]
                    if inside:
                        parts.append(f"{lo}:{statistics.median(inside) * 1000:.2f}")
                print(f"{name} rest {rest} s round {rnd}: us/call " + " ".join(parts), flush=True)
                rows += [(name, rnd, rest, f"{t:.3f}", f"{ms:.7f}") for t, ms in trace]
    if tele is not None:
        tele.stop()
    if args.out:
        with open(args.out, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["case", "round", "rest_s", "load_ms", "ms_per_call"])
            w.writerows(rows)
    if tele is not None and args.telemetry:
        with open(args.telemetry, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["case", "round", "rest_s", "host_ms_from_load_start", "power_instant_w", "power_avg_w",
                        "sm_mhz", "reasons", "limit_w"])
            for t, instant, avg, mhz, reasons in tele.samples:
                span = next((s for s in spans if s[3] - 0.05 <= t <= s[4] + 0.05), None)
                if span is not None:
                    w.writerow([span[0], span[1], span[2], f"{(t - span[3]) * 1000:.1f}",
                                "" if instant is None else f"{instant:.1f}", f"{avg:.1f}", mhz, hex(reasons),
                                f"{tele.limit_w:.0f}"])


if __name__ == "__main__":
    main()
