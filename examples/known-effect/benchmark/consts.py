"""Enums, defaults and result records (FlagGems' benchmark/consts.py role, cut to what this suite uses)."""

from dataclasses import dataclass
from enum import Enum
from typing import List, Optional, Tuple

import knowneffect

# FlagGems' --dtypes names; each maps to the implementation's own dtype, or
# None where it has none (they are skipped with a note).
DTYPE_NAMES = ("float16", "float32", "bfloat16", "int16", "int32", "bool", "complex64")
FLOAT_DTYPES = [knowneffect.dtype_by_name("float16"), knowneffect.dtype_by_name("float32")]

# --warmup / --iter in milliseconds: short on the host so a batch of the whole
# suite runs in seconds; do_bench's own defaults on a device.
DEFAULT_WARMUP_TIME = 10 if knowneffect.BACKEND == "host" else 25
DEFAULT_ITER_TIME = 20 if knowneffect.BACKEND == "host" else 100

DEFAULT_METRICS = ["latency_base", "latency", "speedup"]


@dataclass
class BenchmarkMetrics:
    legacy_shape: Optional[int] = None
    shape_detail: Optional[Tuple[int, ...]] = None
    latency_base: Optional[float] = None  # ms, the reference side (N iterations)
    latency: Optional[float] = None  # ms, the measured side (N scaled by ZL_KNOWN_EFFECT_PCT)
    gbps_base: Optional[float] = None
    gbps: Optional[float] = None
    speedup: Optional[float] = None  # latency_base / latency
    accuracy: Optional[float] = None
    tflops: Optional[float] = None
    utilization: Optional[float] = None
    compared_speedup: Optional[float] = None
    error_msg: Optional[str] = None


@dataclass
class BenchmarkResult:
    """One dtype's results for one op; what update_result() receives as a dict."""

    op_name: str
    dtype: str
    mode: str
    level: str
    result: List[BenchmarkMetrics]

    def __str__(self):
        lines = [f"\nOperator: {self.op_name}  Performance Test (dtype={self.dtype}, mode={self.mode},"
                 f"level={self.level}, effect={knowneffect.effect_pct():g} %)\n",
                 f"{'Status':<10}{'Reference (ms)':>20}{'Measured (ms)':>20}{'Ratio':>12}    Size Detail\n"]
        for m in self.result:
            status = "SUCCESS" if m.error_msg is None else "FAILED"
            ratio = f"{m.latency / m.latency_base:.4f}" if m.latency and m.latency_base else "N/A"
            ref = f"{m.latency_base:.6f}" if m.latency_base is not None else "N/A"
            mine = f"{m.latency:.6f}" if m.latency is not None else "N/A"
            lines.append(f"{status:<10}{ref:>20}{mine:>20}{ratio:>12}    {m.shape_detail}\n")
        return "".join(lines)


class BenchMode(Enum):
    KERNEL = "kernel"
    OPERATOR = "operator"
    WRAPPER = "wrapper"
    CUDAGRAPH = "cudagraph"


class BenchLevel(Enum):
    COMPREHENSIVE = "comprehensive"
    CORE = "core"
