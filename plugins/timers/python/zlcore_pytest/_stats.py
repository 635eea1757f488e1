"""Median and spreads as docs/run-directory.md defines them."""


def median(samples):
    ordered = sorted(samples)
    n = len(ordered)
    if n == 0:
        raise ValueError("median of no samples")
    mid = n // 2
    if n % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2.0


def spread_pct(samples):
    """(max - min) / median * 100; 0 with fewer than two samples."""
    if len(samples) < 2:
        return 0.0
    mid = median(samples)
    if mid == 0:
        return 0.0
    return (max(samples) - min(samples)) / mid * 100.0


def range_pct(values):
    """(max - min) / min * 100 over several medians; 0 with fewer than two."""
    if len(values) < 2 or min(values) <= 0:
        return 0.0
    return (max(values) - min(values)) / min(values) * 100.0


def middle_half_pct(samples):
    """(p75 - p25) / median * 100: the spread of a sustained reading, whose
    samples span its power controller's excursions. On the H200 their full
    range was 8-65 % where two runs' medians differed by 0-1.9 %, and the
    middle half 0.3-3.7 %. With fewer than four samples, the full range."""
    if len(samples) < 4:
        return spread_pct(samples)
    ordered = sorted(samples)
    mid = median(ordered)
    if mid == 0:
        return 0.0
    n = len(ordered)
    return (ordered[n - 1 - n // 4] - ordered[n // 4]) / mid * 100.0
