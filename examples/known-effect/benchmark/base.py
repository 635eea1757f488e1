"""The Benchmark class (FlagGems' benchmark/base.py role, cut to what this suite needs).

The same patch points as FlagGems: `Benchmark.get_latency(self, op, *args,
**kwargs) -> ms` for both sides of every shape; Config, update_result and
emit_record_logger copied from .conftest at import; run() per dtype and shape
creating a BenchmarkMetrics, timing the reference side (latency_base) then the
measured side (latency, through gems_op), and calling update_result per dtype.

A shape here is the input's dimensions followed by the base iteration count:
[4096, 100] is a vector of 4096 elements looped 100 times. core_shapes.yaml
is keyed by op name; on a device the entry `<op>@gpu` wins, with sizes that
make the kernels last ~10 us to ~1 ms instead of the host's ~0.1-2 ms calls.
"""

import gc
import statistics
import time

import pytest
import yaml

import knowneffect

from . import consts
from .conftest import Config, emit_record_logger, update_result  # noqa: F401 - the names FlagGems' base has
from .consts import BenchmarkMetrics, BenchmarkResult


def _config():
    # base copies Config at import like FlagGems' does; read the live one.
    from . import conftest

    return conftest.Config


class Benchmark:
    def __init__(self, op_name, torch_op, gems_op, dtypes=None):
        self.op_name = op_name
        self.torch_op = torch_op
        self.gems_op = gems_op
        self.is_backward = False
        self.dtypes = dtypes if dtypes is not None else consts.FLOAT_DTYPES
        self.to_bench_dtypes = self.dtypes
        self.to_bench_metrics = list(consts.DEFAULT_METRICS)
        self.shapes = []

    def set_dtypes(self, names):
        if not names:
            self.to_bench_dtypes = self.dtypes
            return
        wanted = []
        for name in names:
            dtype = knowneffect.dtype_by_name(name)
            if dtype is None:
                print(f"note: skipping {name} (knowneffect runs float16 and float32)")
                continue
            if dtype not in self.dtypes:
                raise ValueError(f"Given dtype(s) '{name}'can't be supported by this op '{self.op_name}'")
            wanted.append(dtype)
        if not wanted:
            pytest.skip(f"none of {', '.join(names)} is a dtype knowneffect runs")
        self.to_bench_dtypes = wanted

    def set_shapes(self, path):
        with open(path) as f:
            table = yaml.safe_load(f) or {}
        entry = table.get(f"{self.op_name}@gpu") if knowneffect.BACKEND == "gpu" else None
        entry = entry or table.get(self.op_name)
        if entry is None:
            raise ValueError(f"shape file {path} has no entry for '{self.op_name}'")
        self.shapes = [tuple(s) for s in entry["shapes"]]

    def init_user_config(self):
        cfg = _config()
        self.set_dtypes(cfg.user_desired_dtypes)
        if cfg.user_desired_metrics:
            self.to_bench_metrics = list(cfg.user_desired_metrics)
        self.set_shapes(cfg.shape_file)

    def record_shapes(self, x, iters):
        return [list(x.shape), iters]

    def get_input_iter(self, dtype):
        for shape in self.shapes:
            *dims, iters = shape
            yield knowneffect.make_input(tuple(dims), dtype), int(iters)

    def get_latency(self, op, *args, **kwargs):
        """Milliseconds per call: do_bench on a device, the median of timed calls on the host."""
        cfg = _config()
        fn = lambda: op(*args, **kwargs)  # noqa: E731
        if knowneffect.BACKEND == "gpu":
            import triton

            if cfg.mode == consts.BenchMode.CUDAGRAPH:
                return triton.testing.do_bench_cudagraph(fn, rep=cfg.repetition, return_mode="median")
            return triton.testing.do_bench(fn, warmup=cfg.warm_up, rep=cfg.repetition, return_mode="median")
        if cfg.mode == consts.BenchMode.CUDAGRAPH:
            raise RuntimeError("cudagraph mode needs a device; knowneffect runs on the host here")
        deadline = time.perf_counter() + cfg.warm_up / 1000.0
        while time.perf_counter() < deadline:
            fn()
        samples = []
        deadline = time.perf_counter() + cfg.repetition / 1000.0
        while not samples or time.perf_counter() < deadline:
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
        return statistics.median(samples) * 1e3

    def run(self):
        cfg = _config()
        self.init_user_config()
        if cfg.query:
            print(f"{self.op_name}: {self.shapes}")
            return
        for dtype in self.to_bench_dtypes:
            metrics = []
            for inputs in self.get_input_iter(dtype):
                metric = BenchmarkMetrics()
                try:
                    args = list(inputs)
                    metric.shape_detail = self.record_shapes(*args)
                    if "latency_base" in self.to_bench_metrics:
                        metric.latency_base = self.get_latency(self.torch_op, *args)
                    if "latency" in self.to_bench_metrics:
                        metric.latency = self.get_latency(self.gems_op, *args)
                    if "speedup" in self.to_bench_metrics:
                        metric.speedup = metric.latency_base / metric.latency
                except Exception as e:
                    metric.error_msg = str(e)
                    pytest.fail(str(e))
                finally:
                    metrics.append(metric)
                    gc.collect()
            result = BenchmarkResult(op_name=self.op_name, dtype=str(dtype).replace("torch.", ""),
                                     mode=cfg.mode.value, level=cfg.bench_level.value, result=metrics)
            print(result)
            update_result(self.op_name, _as_dict(result))
            emit_record_logger(str(result))


def _as_dict(result):
    from dataclasses import asdict

    return asdict(result)


def loop_benchmark(op):
    """The benchmark of one knowneffect op: reference N iterations, measured N scaled."""
    return Benchmark(op, knowneffect.reference(op), knowneffect.measured(op))
