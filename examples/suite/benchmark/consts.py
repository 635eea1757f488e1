"""Enums, defaults and result records of the suite (FlagGems' benchmark/consts.py role).

Field names of BenchmarkMetrics / BenchmarkResult match FlagGems', because
zlcore reads them from what update_result() receives and from --record json.
"""

import json
import math
from dataclasses import asdict, dataclass, fields
from enum import Enum
from typing import List, Optional, Tuple

import numpy as np


class UnsupportedDtype:
    """A dtype name FlagGems accepts that NumPy has no type for (bfloat16).

    Kept as an object rather than dropped at parse time so that `--dtypes
    bfloat16`, which zlcore may pass as it would to FlagGems, parses and then
    skips with a reason instead of failing the command line.
    """

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, UnsupportedDtype) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


float16 = np.dtype("float16")
float32 = np.dtype("float32")
bfloat16 = UnsupportedDtype("bfloat16")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
bool_ = np.dtype("bool")
complex64 = np.dtype("complex64")

# The names FlagGems' --dtypes accepts, in its order.
DTYPE_BY_NAME = {
    "float16": float16,
    "float32": float32,
    "bfloat16": bfloat16,
    "int16": int16,
    "int32": int32,
    "bool": bool_,
    "complex64": complex64,
}

# bfloat16 is left out: ops default to what the host can really run.
FLOAT_DTYPES = [float16, float32]
INT_DTYPES = [int16, int32]
BOOL_DTYPES = [bool_]
COMPLEX_DTYPES = [complex64]

# FlagGems' --warmup / --iter are milliseconds of warmup and of measurement per
# side and shape (1000 / 100 there). Small here so an op finishes in about a
# second on one core.
DEFAULT_WARMUP_TIME = 10
DEFAULT_ITER_TIME = 20

DEFAULT_SHAPES = [
    (1024,),
    (64, 64),
    (128, 256),
    (8, 64, 64),
]


def model_shapes():
    """(B, M, N, K) shapes of a small "model", FlagGems' model_shapes() role."""
    batch_tokens = [1, 16, 96]
    nk = [(128, 64), (64, 192)]
    return [(1, m, n, k) for m in batch_tokens for n, k in nk]


def dtype_name(dtype):
    return str(dtype)


@dataclass
class BenchmarkMetrics:
    legacy_shape: Optional[int] = None
    shape_detail: Optional[Tuple[int, ...]] = None
    latency_base: Optional[float] = None  # ms, reference (torch's role) side
    latency: Optional[float] = None  # ms, numgems (FlagGems' role) side
    gbps_base: Optional[float] = None
    gbps: Optional[float] = None
    speedup: Optional[float] = None  # latency_base / latency
    accuracy: Optional[float] = None
    tflops: Optional[float] = None
    utilization: Optional[float] = None
    compared_speedup: Optional[float] = None
    error_msg: Optional[str] = None


ALL_AVAILABLE_METRICS = set(f.name for f in fields(BenchmarkMetrics)) - {
    "legacy_shape",
    "shape_detail",
}

DEFAULT_METRICS = ["latency_base", "latency", "speedup"]

_METRIC_DEPENDENCIES = {
    "speedup": ["latency", "latency_base"],
    "utilization": ["latency", "tflops"],
}


def check_metric_dependencies(requested_metrics: Optional[List[str]]) -> List[str]:
    """Metrics asked for before (or without) the metrics they are computed from."""
    if requested_metrics is None:
        return []
    satisfied, unsatisfied = set(), []
    for metric in requested_metrics:
        needs = _METRIC_DEPENDENCIES.get(metric, [])
        if all(n in satisfied for n in needs):
            satisfied.add(metric)
        else:
            unsatisfied.append(metric)
    return unsatisfied


def get_recommended_shapes(op_name, op_specified_shapes):
    shapes = op_specified_shapes or DEFAULT_SHAPES
    shapes = [s if isinstance(s, tuple) else (s,) for s in shapes]
    return sorted(shapes, key=math.prod)


class BenchMode(Enum):
    KERNEL = "kernel"
    OPERATOR = "operator"
    WRAPPER = "wrapper"
    CUDAGRAPH = "cudagraph"


class BenchLevel(Enum):
    COMPREHENSIVE = "comprehensive"
    CORE = "core"


@dataclass
class OperationAttribute:
    op_name: str
    recommended_core_shapes: List[Tuple[int, ...]]
    shape_desc: str

    def __str__(self):
        return (
            f"{'Operator name':<40} |  {self.op_name}\n"
            f"{'Recommended Core Shapes[' + self.shape_desc + ']':<40} |  "
            f"{self.recommended_core_shapes}\n"
        )

    def to_dict(self):
        return dict(self.__dict__)


def _json_default(obj):
    if isinstance(obj, (np.dtype, UnsupportedDtype)):
        return str(obj)
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"Object of type {obj.__class__.__name__} is not JSON serializable")


@dataclass
class BenchmarkResult:
    """One dtype's results for one op; what update_result() receives as a dict."""

    op_name: str
    dtype: str
    mode: str
    level: str
    result: List[BenchmarkMetrics]

    def __str__(self):
        title = (
            f"\nOperator: {self.op_name}  Performance Test (dtype={self.dtype}, "
            f"mode={self.mode},level={self.level})\n"
        )
        show_gbps = bool(self.result) and self.result[0].gbps is not None
        cols = [
            f"{'Status':<10}",
            f"{'Torch Latency (ms)':>20}",
            f"{'Gems Latency (ms)':>20}",
            f"{'Gems Speedup':>20}",
        ]
        if show_gbps:
            cols += [f"{'Torch GBPS ':>20}", f"{'Gems GBPS ':>20}"]
        cols.append(f"{'Size Detail':>20}\n")
        head = " ".join(cols)
        lines = [title, head, "-" * len(head) + "\n"]

        def fmt(value, spec):
            return format(value, spec) if value is not None else "N/A"

        for m in self.result:
            status = "SUCCESS" if m.error_msg is None else "FAILED"
            line = (
                f"{status:<10}{fmt(m.latency_base, '.6f'):>20}"
                f"{fmt(m.latency, '.6f'):>20}{fmt(m.speedup, '.3f'):>20}"
            )
            if show_gbps:
                line += f"{fmt(m.gbps_base, '.3f'):>20}{fmt(m.gbps, '.3f'):>20}"
            line += " " * 10 + f"{m.shape_detail}\n"
            lines.append(line)
        return "".join(lines)

    def to_json(self):
        return json.dumps(asdict(self), default=_json_default)

    def to_dict(self):
        return dict(self.__dict__)
