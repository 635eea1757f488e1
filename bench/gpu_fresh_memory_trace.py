#!/usr/bin/env python3
"""Is a memory-bound kernel slower on memory the device has just handed out?

On the H200 (docs/results.md, "Fresh device memory") FlagGems'
log_sigmoid_forward on 2^30 fp16 elements read 1.60 ms on the graph timer's
first placement and on the sustained readings (both measured tens of
milliseconds or more after their inputs were cloned) and 1.73 ms on every
other placement (measured within a few milliseconds of the clone, after the
timer had emptied the caches, so on freshly mapped memory). abs on the same
size split its placements between 1.07 and 1.17 ms. If fresh memory is slow
for a while (the driver clearing or mapping pages beside the kernel), the
timer's number depends on how soon after a placement it starts timing.

For each case this times one elementwise op (out = abs(x), 2^30 fp16 by
default) with device events, call by call, in four ways per trial:

  cached     x and out stay allocated across trials (the reference pace);
  recycled   x and out are freed and allocated again from the allocator's
             cache (no empty_cache): same physical memory, new tensors;
  fresh      freed, the caches emptied, allocated again: new device memory;
  fresh+R    as fresh, then the device idles R ms before the first call.

usage: gpu_fresh_memory_trace.py [--device cuda] [--elements 1073741824]
                                 [--trials 8] [--rests 5,20,100,300]
Prints, per way, the median per-call time of calls 1, 2-4, 5-12 and 13-40
after the (re)allocation, in us and against `cached`. Needs torch and a device.
"""

import argparse
import statistics
import time

import torch

SPANS = [(0, 1), (1, 4), (4, 12), (12, 40)]


def timed_calls(dev, fn, calls):
    events = [(dev.Event(enable_timing=True), dev.Event(enable_timing=True)) for _ in range(calls)]
    for start, end in events:
        start.record()
        fn()
        end.record()
    events[-1][1].synchronize()
    return [start.elapsed_time(end) * 1000.0 for start, end in events]  # us


def allocate(n, device):
    # Written by a kernel before timing, as placement.py's clones are.
    x = torch.empty(n, device=device, dtype=torch.float16)
    x.fill_(1.0)
    return x, torch.empty_like(x)


def one_way(dev, n, device, way, rest_s, calls, keep):
    if way == "cached":
        x, out = keep
    else:
        keep.clear()
        if way != "recycled":
            dev.empty_cache()
        x, out = allocate(n, device)
        keep.extend([x, out])
    dev.synchronize()
    if rest_s:
        time.sleep(rest_s)
    return timed_calls(dev, lambda: torch.abs(x, out=out), calls)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--elements", type=int, default=1 << 30)
    ap.add_argument("--trials", type=int, default=8)
    ap.add_argument("--rests", default="5,20,100,300", help="ms, comma-separated")
    args = ap.parse_args()
    dev = getattr(torch, args.device)
    calls = SPANS[-1][1]
    ways = [("cached", 0.0), ("recycled", 0.0), ("fresh", 0.0)]
    ways += [(f"fresh+{r}", float(r) / 1000.0) for r in args.rests.split(",") if r.strip()]
    keep = list(allocate(args.elements, args.device))
    one_way(dev, args.elements, args.device, "cached", 0.0, calls, keep)  # warm-up: kernels loaded
    per_way = {name: [[] for _ in SPANS] for name, _ in ways}
    for _ in range(args.trials):
        for name, rest in ways:  # interleaved, so drift spreads over every way alike
            base = name.split("+")[0]
            times = one_way(dev, args.elements, args.device, base, rest, calls, keep)
            for i, (lo, hi) in enumerate(SPANS):
                per_way[name][i].extend(times[lo:hi])
    ref = [statistics.median(v) for v in per_way["cached"]]
    print(f"abs, {args.elements} fp16 elements, {args.trials} trials; median us per call "
          f"(vs cached) for calls " + ", ".join(f"{lo + 1}-{hi}" if hi - lo > 1 else f"{hi}" for lo, hi in SPANS))
    for name, _ in ways:
        cells = []
        for i, values in enumerate(per_way[name]):
            m = statistics.median(values)
            cells.append(f"{m:9.1f} ({(m / ref[i] - 1) * 100:+5.1f} %)")
        print(f"  {name:<10} " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
