#!/usr/bin/env python3
"""How a device's pace moves under sustained load: the data behind the graph
timer's settling rule (docs/graph-timer.md).

A heavy GEMM on random data can run ~15 % faster in its first tens of
milliseconds on an idle GPU than once its clocks come down under load. For
each case this replays a captured graph back to back after an idle pause,
timing every replay with device events, then pauses for growing gaps and
times the first replays after each, to see how fast the boost comes back.

usage: gpu_settle_trace.py [--device cuda] [--graph-api torch.cuda.CUDAGraph]
                           [--seconds 3] [--idle 3] [--out trace.csv]
Prints, per case, the median per-call time in windows of load time as a
percentage of the final second's pace. Needs torch and a device with graphs.
"""

import argparse
import csv
import importlib
import statistics
import time

import torch

WINDOWS_MS = [(0, 10), (10, 25), (25, 50), (50, 100), (100, 200), (200, 400),
              (400, 700), (700, 1000), (1000, 2000), (2000, 3000)]
GAPS_S = [0.005, 0.02, 0.1, 0.5, 2.0]


def cases(device):
    def mm(m, n, k):
        a = torch.randn(m, k, device=device, dtype=torch.float16)
        b = torch.randn(k, n, device=device, dtype=torch.float16)
        return lambda: torch.mm(a, b)

    def self_t(m, k):
        a = torch.randn(m, k, device=device, dtype=torch.float16)
        return lambda: torch.mm(a, a.t())

    def abs_(n):
        x = torch.randn(n, device=device, dtype=torch.float16)
        return lambda: torch.abs(x)

    return [("mm 4096^3", lambda: mm(4096, 4096, 4096)),
            ("mm 2048^3", lambda: mm(2048, 2048, 2048)),
            ("mm_self_transpose 8192x2048", lambda: self_t(8192, 2048)),
            ("mm_self_transpose 10240x4096", lambda: self_t(10240, 4096)),
            ("abs 2^30", lambda: abs_(1 << 30))]


def capture(dev, graph_class, fn, replay_ms):
    for _ in range(3):
        fn()
    dev.synchronize()
    start, end = dev.Event(enable_timing=True), dev.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        fn()
    end.record()
    end.synchronize()
    per_call = start.elapsed_time(end) / 5
    calls = max(1, int(replay_ms / per_call))
    graph = graph_class()
    stream = dev.Stream()
    stream.wait_stream(dev.current_stream())
    with dev.stream(stream):
        graph.capture_begin()
        for _ in range(calls):
            fn()
        graph.capture_end()
    dev.synchronize()
    return graph, calls, per_call


def replay_for(dev, graph, calls, seconds, chunk=64):
    """Back-to-back replays for `seconds` of device time; per-call ms of each."""
    out, elapsed = [], 0.0
    while elapsed < seconds * 1000.0:
        events = [dev.Event(enable_timing=True) for _ in range(chunk + 1)]
        events[0].record()
        for i in range(chunk):
            graph.replay()
            events[i + 1].record()
        events[-1].synchronize()
        for i in range(chunk):
            ms = events[i].elapsed_time(events[i + 1])
            elapsed += ms
            out.append((elapsed, ms / calls))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--graph-api", default="torch.cuda.CUDAGraph")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--replay-ms", type=float, default=2.0)
    ap.add_argument("--idle", type=float, default=3.0, help="idle seconds before each case")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    dev = getattr(torch, args.device)
    owner, _, attr = args.graph_api.rpartition(".")
    graph_class = getattr(importlib.import_module(owner), attr)
    rows = []
    for name, build in cases(args.device):
        fn = build()
        graph, calls, eager = capture(dev, graph_class, fn, args.replay_ms)
        time.sleep(args.idle)
        trace = replay_for(dev, graph, calls, args.seconds)
        final = statistics.median(ms for t, ms in trace if t >= trace[-1][0] - 1000.0)
        parts = []
        for lo, hi in WINDOWS_MS:
            inside = [ms for t, ms in trace if lo <= t < hi]
            if inside:
                parts.append(f"{lo}-{hi}:{statistics.median(inside) / final * 100 - 100:+.1f}%")
        print(f"{name}: {calls} calls/replay, eager {eager:.4f} ms, final {final:.5f} ms/call; "
              + " ".join(parts), flush=True)
        rows += [(name, "load", f"{t:.3f}", f"{ms:.6f}") for t, ms in trace]
        for gap in GAPS_S:
            time.sleep(gap)
            after = replay_for(dev, graph, calls, 0.05, chunk=8)
            head = [ms for t, ms in after[:4]]
            print(f"  after {gap * 1000:.0f} ms idle: first replays "
                  + " ".join(f"{ms / final * 100 - 100:+.1f}%" for ms in head)
                  + f"; 50 ms in {after[-1][1] / final * 100 - 100:+.1f}%", flush=True)
            rows += [(name, f"gap{gap}", f"{t:.3f}", f"{ms:.6f}") for t, ms in after]
            replay_for(dev, graph, calls, 0.3)  # back to sustained load before the next gap
        del graph, fn
        dev.empty_cache()
    if args.out:
        with open(args.out, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["case", "phase", "load_ms", "ms_per_call"])
            w.writerows(rows)


if __name__ == "__main__":
    main()
