"""The Benchmark class and its families (FlagGems' benchmark/base.py role).

Patch points zlcore relies on, kept as FlagGems has them:

* ``Benchmark.get_latency(self, op, *args, **kwargs) -> ms`` is the one call
  every mode goes through, for both sides of every shape.
* ``Config``, ``update_result`` and ``emit_record_logger`` are copied from
  ``.conftest`` at import time, so importing this module before
  pytest_configure leaves ``Config`` None here (the hazard a plugin must
  avoid by patching in pytest_sessionstart or later).
* ``run()`` calls ``update_result`` through this module's global name once per
  dtype, so replacing ``benchmark.base.update_result`` sees every result.
"""

import gc
import math
import os
import statistics
import time
from dataclasses import asdict
from typing import Any, Generator, List, Optional, Tuple

import numpy as np
import pytest
import yaml

import numgems

from . import consts
from .conftest import Config, emit_record_logger, update_result
from .consts import (
    BenchmarkMetrics,
    BenchmarkResult,
    OperationAttribute,
    check_metric_dependencies,
    model_shapes,
)

device = numgems.device
vendor_name = numgems.vendor_name

# Bounds on the calls a time-based loop makes, so a sub-microsecond op does
# not spin for millions of calls and a slow one is still called once.
MIN_CALLS, MAX_CALLS = 1, 10000


def _estimate_ms(fn):
    start = time.perf_counter()
    for _ in range(5):
        fn()
    return max((time.perf_counter() - start) / 5 * 1e3, 1e-6)


def get_iter_count(fn):
    """Calls of warmup and of measurement that fill Config's millisecond budgets."""
    estimate = _estimate_ms(fn)

    def calls(budget_ms):
        return min(MAX_CALLS, max(MIN_CALLS, int(budget_ms / estimate)))

    return calls(Config.warm_up), calls(Config.repetition)


class Benchmark:
    device: str = device
    DEFAULT_METRICS = consts.DEFAULT_METRICS
    DEFAULT_DTYPES = consts.FLOAT_DTYPES
    DEFAULT_SHAPES = consts.DEFAULT_SHAPES
    DEFAULT_SHAPE_DESC = "M, N"
    DEFAULT_SHAPE_FILES = os.path.join(os.path.dirname(__file__), "core_shapes.yaml")

    def __init__(self, op_name, torch_op, dtypes=None, is_backward=False, is_inplace=False, **kwargs):
        self.op_name = op_name
        if is_backward and "_backward" not in self.op_name:
            self.op_name += "_backward"
        # torch_op keeps FlagGems' name: the reference op, run bare for
        # latency_base and inside numgems.use_gems() for latency.
        self.torch_op = torch_op
        self.gems_op = kwargs.get("gems_op", None)
        self.is_backward = is_backward
        self.is_inplace = is_inplace
        self._input_iter = None
        self.dtypes = dtypes if dtypes is not None else self.DEFAULT_DTYPES
        self.metrics = list(self.DEFAULT_METRICS)
        self.shapes = self.DEFAULT_SHAPES
        self.shape_desc = self.DEFAULT_SHAPE_DESC
        self.shape_file = self.DEFAULT_SHAPE_FILES
        self.to_bench_dtypes = self.dtypes
        self.to_bench_metrics = self.metrics
        for k in kwargs:
            if hasattr(self, k):
                setattr(self, k, kwargs[k])

    # ------------------------------------------------------------ configuration

    def set_metrics(self, user_desired_metrics: Optional[List[str]]):
        if user_desired_metrics:
            invalid = [m for m in user_desired_metrics if m not in self.metrics]
            if invalid:
                raise ValueError(f"Invalid metrics: {', '.join(invalid)} for operation: '{self.op_name}'")
            unsatisfied = check_metric_dependencies(user_desired_metrics)
            if unsatisfied:
                raise ValueError(f"Unsatisfied metric dependencies: {', '.join(unsatisfied)}")
        self.to_bench_metrics = list(user_desired_metrics or self.metrics)
        if Config.bench_level == consts.BenchLevel.COMPREHENSIVE and not Config.query:
            for metric in self.set_more_metrics():
                if metric not in self.to_bench_metrics:
                    self.to_bench_metrics.append(metric)

    def set_more_metrics(self):
        return []

    def set_dtypes(self, user_desired_dtypes):
        if user_desired_dtypes:
            # Types the host cannot represent are dropped, not failed: the same
            # command line then works against FlagGems and against this suite.
            unsupported = [d for d in user_desired_dtypes if isinstance(d, consts.UnsupportedDtype)]
            wanted = [d for d in user_desired_dtypes if d not in unsupported]
            if unsupported:
                names = ", ".join(str(d) for d in unsupported)
                if not wanted:
                    pytest.skip(f"{names} has no NumPy type on the host; nothing to run for '{self.op_name}'")
                print(f"note: skipping {names} (no NumPy type on the host)")
            invalid = [d for d in wanted if d not in self.dtypes]
            if invalid:
                raise ValueError(
                    f"Given dtype(s) '{', '.join(str(d) for d in invalid)}'"
                    f"can't be supported by this op '{self.op_name}'"
                )
            self.to_bench_dtypes = wanted
        else:
            self.to_bench_dtypes = self.dtypes

    def set_shapes(self, shape_file_path=None):
        if not os.path.isfile(shape_file_path):
            raise FileNotFoundError(f"Shape file '{shape_file_path}' does not exist.")
        try:
            with open(shape_file_path) as f:
                yaml_config = yaml.safe_load(f) or {}
        except yaml.YAMLError as e:
            raise ValueError(f"Shape file '{shape_file_path}' is not a valid YAML file. Error: {e}")
        # The op name wins, then the first class along the MRO that the file names.
        entry = yaml_config.get(self.op_name)
        if entry is None:
            entry = next((yaml_config[c.__name__] for c in type(self).__mro__ if c.__name__ in yaml_config), None)
        if entry is not None:
            self.shapes = entry.get("shapes", self.DEFAULT_SHAPES)
            self.shape_desc = entry.get("shape_desc", self.DEFAULT_SHAPE_DESC)
        else:
            self.shapes = self.DEFAULT_SHAPES
        self.shapes = [tuple(shape) for shape in self.shapes]
        if Config.bench_level == consts.BenchLevel.COMPREHENSIVE and not Config.query:
            more = self.set_more_shapes()
            if more:
                self.shapes = list(dict.fromkeys(self.shapes + [tuple(s) for s in more]))

    def set_more_shapes(self) -> Optional[List[Tuple[Any, ...]]]:
        """Extra shapes merged at --level comprehensive."""
        return []

    def init_default_config(self):
        self.set_shapes(self.DEFAULT_SHAPE_FILES)

    def init_user_config(self):
        self.mode = Config.mode
        self.set_dtypes(Config.user_desired_dtypes)
        self.set_metrics(Config.user_desired_metrics)
        self.set_shapes(Config.shape_file)

    def set_gems(self, gems_op):
        self.gems_op = gems_op

    # ------------------------------------------------------------ measurement

    def record_shapes(self, *args, **kwargs):
        def deep_parse(item):
            if isinstance(item, np.ndarray):
                return tuple(item.shape)
            if isinstance(item, (int, float, str)):
                return item
            if isinstance(item, (np.dtype, consts.UnsupportedDtype)):
                return str(item)
            if isinstance(item, (list, tuple)):
                return [deep_parse(sub) for sub in item]
            if isinstance(item, dict):
                return {k: deep_parse(v) for k, v in item.items()}
            return None

        parsed_args = [deep_parse(a) for a in args]
        parsed_kwargs = {k: deep_parse(v) for k, v in kwargs.items()}
        if parsed_args and parsed_kwargs:
            return parsed_args, parsed_kwargs
        return parsed_args if parsed_args else parsed_kwargs

    def get_latency(self, op, *args, **kwargs):
        """Milliseconds one call of op(*args, **kwargs) takes, by host wall clock.

        numgems has no autograd, so a backward benchmark times its op as given.
        """
        fn = lambda: op(*args, **kwargs)  # noqa: E731
        if Config.mode == consts.BenchMode.CUDAGRAPH:
            raise RuntimeError("cudagraph mode needs a device graph API; numgems runs on the host, which has none")
        n_warm, n_rep = get_iter_count(fn)
        for _ in range(n_warm):
            fn()
        if Config.mode == consts.BenchMode.KERNEL:
            # do_bench's role: the median of individually timed calls.
            samples = []
            for _ in range(n_rep):
                start = time.perf_counter()
                fn()
                samples.append(time.perf_counter() - start)
            return statistics.median(samples) * 1e3
        if Config.mode in (consts.BenchMode.OPERATOR, consts.BenchMode.WRAPPER):
            # The host has nothing to synchronize, so the two loops coincide.
            start = time.perf_counter()
            for _ in range(n_rep):
                fn()
            return (time.perf_counter() - start) / n_rep * 1e3
        raise ValueError("Undefined Value of Benchmark Mode.")

    def get_gbps(self, args, latency=None):
        raise NotImplementedError("Each Benchmark must implement its own get_gbps.")

    def get_tflops(self, op, *args, **kwargs):
        """Floating point operations of one call (not per second; run() divides)."""
        return 0

    def get_input_iter(self, dtype) -> Generator:
        raise NotImplementedError("Each Benchmark must implement its own input iterator.")

    def get_inputs(self, dtype):
        if self._input_iter is None:
            self._input_iter = self.get_input_iter(dtype)
        try:
            return next(self._input_iter)
        except StopIteration:
            return None

    def unpack_to_args_kwargs(self, input_tuple):
        args, kwargs = [], {}
        for item in input_tuple:
            if isinstance(item, dict):
                kwargs.update(item)
            else:
                args.append(item)
        return args, kwargs

    def run(self):
        if Config.query:
            self.init_default_config()
            attri = OperationAttribute(
                op_name=self.op_name, recommended_core_shapes=self.shapes, shape_desc=self.shape_desc
            )
            print(attri)
            emit_record_logger(attri.to_dict())
            return

        self.init_user_config()
        for dtype in self.to_bench_dtypes:
            metrics = []
            input_iter = self.get_input_iter(dtype)
            while True:
                try:
                    inputs = next(input_iter)
                except StopIteration:
                    break
                except Exception as e:
                    print(f"\033[31mFAILED\033[0m: Operator={self.op_name} dtype={dtype} err=<<<{e}>>>")
                    pytest.fail(str(e))
                metric = BenchmarkMetrics()
                try:
                    args, kwargs = self.unpack_to_args_kwargs(inputs)
                    metric.shape_detail = self.record_shapes(*args, **kwargs)
                    if "latency_base" in self.to_bench_metrics:
                        metric.latency_base = self.get_latency(self.torch_op, *args, **kwargs)
                    if "latency" in self.to_bench_metrics:
                        if self.gems_op:
                            metric.latency = self.get_latency(self.gems_op, *args, **kwargs)
                        else:
                            with numgems.use_gems():
                                metric.latency = self.get_latency(self.torch_op, *args, **kwargs)
                    if "speedup" in self.to_bench_metrics:
                        metric.speedup = metric.latency_base / metric.latency
                    if "gbps" in self.to_bench_metrics:
                        metric.gbps_base = self.get_gbps(args, latency=metric.latency_base)
                        metric.gbps = self.get_gbps(args, latency=metric.latency)
                    if "tflops" in self.to_bench_metrics:
                        flops = self.get_tflops(self.torch_op, *args, **kwargs)
                        metric.tflops = flops / metric.latency / 1e12 * 1e3 if flops else None
                except Exception as e:
                    metric.error_msg = str(e)
                    pytest.fail(str(e))
                finally:
                    metrics.append(metric)
                    gc.collect()

            result = BenchmarkResult(
                level=Config.bench_level.value,
                op_name=self.op_name,
                dtype=str(dtype),
                mode=Config.mode.value,
                result=metrics,
            )
            print(result)
            update_result(self.op_name, asdict(result))
            emit_record_logger(result.to_json())


# ---------------------------------------------------------------- inputs


def generate_tensor_input(shape, dtype, device=device, rng=None):
    rng = rng or np.random.default_rng(0)
    if dtype.kind == "f":
        return rng.standard_normal(shape, dtype=np.float32).astype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    raise ValueError(f"no input generator for dtype {dtype}")


def unary_input_fn(shape, dtype, device):
    yield (generate_tensor_input(shape, dtype, device),)


def binary_input_fn(shape, dtype, device):
    yield generate_tensor_input(shape, dtype, device), generate_tensor_input(shape, dtype, device)


def _size_in_bytes(array):
    return array.size * array.itemsize


# ---------------------------------------------------------------- families


class GenericBenchmark(Benchmark):
    """Any op whose inputs an `input_fn(shape, dtype, device)` generator yields."""

    def __init__(self, *args, input_fn, **kwargs):
        super().__init__(*args, **kwargs)
        self.input_fn = input_fn

    def set_more_shapes(self):
        return [(1 << 16,), (1000, 1), (1000, 64), (10, 64, 10)]

    def get_input_iter(self, dtype) -> Generator:
        for shape in self.shapes:
            yield from self.input_fn(shape, dtype, self.device)


class GenericBenchmark2DOnly(GenericBenchmark):
    def set_more_shapes(self):
        return [s for s in super().set_more_shapes() if len(s) == 2]


class UnaryPointwiseBenchmark(Benchmark):
    DEFAULT_METRICS = consts.DEFAULT_METRICS[:] + ["tflops"]

    def set_more_shapes(self):
        return [(1024, 2**i) for i in range(0, 9, 4)] + [(16, 16, 2**i) for i in range(0, 9, 4)]

    def get_input_iter(self, dtype) -> Generator:
        for shape in self.shapes:
            yield (generate_tensor_input(shape, dtype, self.device),)

    def get_tflops(self, op, *args, **kwargs):
        return math.prod(args[0].shape)


class BinaryPointwiseBenchmark(Benchmark):
    DEFAULT_METRICS = consts.DEFAULT_METRICS[:] + ["tflops"]

    def set_more_shapes(self):
        return [(1024, 2**i) for i in range(0, 9, 4)] + [(16, 16, 2**i) for i in range(0, 9, 4)]

    def get_input_iter(self, dtype) -> Generator:
        for shape in self.shapes:
            yield generate_tensor_input(shape, dtype, self.device), generate_tensor_input(shape, dtype, self.device)

    def get_tflops(self, op, *args, **kwargs):
        return 2 * math.prod(args[0].shape)


class UnaryReductionBenchmark(Benchmark):
    def set_more_metrics(self):
        return ["gbps"]

    def get_gbps(self, args, latency):
        inp = args[0]
        return 2 * _size_in_bytes(inp) * 1e-9 / (latency * 1e-3)

    def set_more_shapes(self):
        return [(1 << 18,), (1024, 1), (1024, 256), (16, 256, 16)]

    def get_input_iter(self, dtype) -> Generator:
        for shape in self.shapes:
            inp = generate_tensor_input(shape, dtype, self.device)
            yield (inp, 1) if inp.ndim > 1 else (inp,)


class BlasBenchmark(Benchmark):
    """mm-like ops over (B, M, N, K) shapes; comprehensive adds column-major B."""

    DEFAULT_METRICS = consts.DEFAULT_METRICS[:] + ["tflops"]
    DEFAULT_SHAPE_DESC = "B, M, N, K"

    def __init__(self, *args, input_fn, **kwargs):
        super().__init__(*args, **kwargs)
        self.input_fn = input_fn

    def get_input_iter(self, dtype) -> Generator:
        for b, m, n, k in self.shapes:
            yield from self.input_fn(b, m, n, k, dtype, self.device, False)
        if Config.bench_level == consts.BenchLevel.COMPREHENSIVE:
            for b, m, n, k in self.shapes:
                yield from self.input_fn(b, m, n, k, dtype, self.device, True)

    def set_more_shapes(self):
        large_k = [(1, 32, 32, 2048), (1, 64, 1, 4096)]
        return large_k + model_shapes()

    def get_tflops(self, op, *args, **kwargs):
        if self.op_name == "mm":
            return 2 * args[0].shape[0] * args[0].shape[1] * args[1].shape[1]
        return 0
