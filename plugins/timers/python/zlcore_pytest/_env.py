"""The child's view of the environment zlcore sets (docs/run-directory.md).

Read lazily on each call rather than cached at import: tests and plugins set
variables after this module may already have been imported. The timers'
settings are parsed, with errors, by timers/settings.py.
"""

import os


def text(name, default=""):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip()


def _number(name, default, parse, accept):
    """The variable parsed, or the default when unset, unparsable or not accepted."""
    raw = text(name)
    if not raw:
        return default
    try:
        value = parse(raw)
    except ValueError:
        return default
    return value if accept(value) else default


def positive_float(name, default):
    return _number(name, default, float, lambda v: v > 0)


def bench_package():
    """The suite's benchmark package; FlagGems and the example suite both call it `benchmark`."""
    return text("ZL_BENCH_PACKAGE", "benchmark") or "benchmark"


def torch_device():
    return text("ZL_TORCH_DEVICE").lower()


def uses_torch_device():
    # An empty value means zlcore named no torch device: treat it like the host.
    return torch_device() not in ("", "cpu", "host", "none")


def compile_only():
    """ZL_COMPILE_ONLY=1 (`zlcore run --compile-only`): each side runs once so
    its kernels compile into the caches; nothing is measured or tuned."""
    return text("ZL_COMPILE_ONLY") == "1"


def planned_timer():
    return text("ZL_TIMER").lower()


def fallback_timer():
    """The per-shape fallback, or "" when the plan gives none."""
    value = text("ZL_TIMER_FALLBACK").lower()
    return "" if value in ("none", "-") else value


def graph_api():
    return text("ZL_GRAPH_API")


def child_dir():
    return text("ZL_CHILD_DIR")


def results_file():
    return text("ZL_RESULTS_FILE")


def vendor():
    return text("GEMS_VENDOR")


def expect_device_id():
    return text("ZL_EXPECT_DEVICE_ID")


def visibility_vars():
    return [name.strip() for name in text("ZL_VISIBILITY_ENV").split(",") if name.strip()]


def capabilities():
    """`key=value;key2=value2` -> dict; a bare key maps to ""."""
    caps = {}
    for item in text("ZL_CAPABILITIES").split(";"):
        item = item.strip()
        if not item:
            continue
        key, _, value = item.partition("=")
        caps[key.strip()] = value.strip()
    return caps
