"""Median, mean and spreads as docs/run-directory.md defines them."""


def median(samples):
    ordered = sorted(samples)
    n = len(ordered)
    if n == 0:
        raise ValueError("median of no samples")
    mid = n // 2
    if n % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2.0


def mean(values):
    if not values:
        raise ValueError("mean of no values")
    return sum(values) / len(values)


def range_pct(values):
    """(max - min) / min * 100 over several medians; 0 with fewer than two."""
    if len(values) < 2 or min(values) <= 0:
        return 0.0
    return (max(values) - min(values)) / min(values) * 100.0


def range_over_mean_pct(values):
    """(max - min) / mean * 100: a row's spread across its placements; 0 with fewer than two."""
    if len(values) < 2:
        return 0.0
    m = mean(values)
    if m == 0:
        return 0.0
    return (max(values) - min(values)) / m * 100.0
