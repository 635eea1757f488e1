"""Places each result row against the device's roofline.

zlcore passes the device's published peaks (ABI 1.2 device attributes) in
ZL_DEVICE_PEAKS as one JSON object: memory_bandwidth_peak_gbps and
compute_peak_tflops.<dtype>. A row's achieved bandwidth and compute are the
suite's own gbps / tflops where FlagGems computed them; where it did not, the
bandwidth is derived from the inputs' bytes plus one output the size of the
largest input (exact for the elementwise ops, an estimate for others, and the
row says which). Compute is never guessed: without the suite's tflops the row
has none.
"""

import json
import os


def peaks():
    text = os.environ.get("ZL_DEVICE_PEAKS", "")
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return {k: v for k, v in value.items() if isinstance(v, (int, float)) and v > 0} if isinstance(value, dict) else {}


def _nbytes(obj):
    """Bytes of a tensor-like value: torch (numel x element_size), NumPy (nbytes)."""
    numel = getattr(obj, "numel", None)
    size = getattr(obj, "element_size", None)
    if callable(numel) and callable(size):
        try:
            return int(numel()) * int(size())
        except Exception:
            return 0
    nbytes = getattr(obj, "nbytes", None)
    return nbytes if isinstance(nbytes, int) else 0


def input_bytes(args, kwargs):
    """(all inputs' bytes, the largest input's bytes) of a get_latency call."""
    sizes = []

    def walk(v, depth=0):
        if depth > 3:
            return
        if isinstance(v, (list, tuple)):
            for x in v:
                walk(x, depth + 1)
            return
        n = _nbytes(v)
        if n > 0:
            sizes.append(n)

    walk(list(args))
    walk(list((kwargs or {}).values()))
    return (sum(sizes), max(sizes)) if sizes else (0, 0)


def place(row, moved, peak):
    """Adds achieved_gbps/_tflops, their sources and % of peak to a row dict.
    `moved` is (input bytes, largest input bytes) or None."""
    gbps, source = row.get("gbps"), "suite"
    latency = row.get("latency_ms")
    if gbps is None and moved and moved[0] > 0 and latency:
        gbps = (moved[0] + moved[1]) / (latency * 1e-3) / 1e9
        source = "derived: inputs + one output of the largest input's size"
    row["achieved_gbps"] = gbps
    row["achieved_gbps_source"] = source if gbps is not None else None
    row["achieved_tflops"] = row.get("tflops")
    bw = peak.get("memory_bandwidth_peak_gbps")
    row["peak_gbps"] = bw
    row["pct_peak_bandwidth"] = 100.0 * gbps / bw if gbps is not None and bw else None
    compute = peak.get("compute_peak_tflops.%s" % row.get("dtype")) if row.get("dtype") else None
    row["peak_tflops"] = compute
    tflops = row.get("tflops")
    row["pct_peak_compute"] = 100.0 * tflops / compute if tflops is not None and compute else None
    return row
