import os

from torch import _stub

_calls = [0]


def _factor():
    factors = [float(v) for v in os.environ.get("STUB_DO_BENCH_FACTORS", "1").split(",")]
    value = factors[_calls[0] % len(factors)]
    _calls[0] += 1
    return value


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    _stub.counters["do_bench_calls"] += 1
    if os.environ.get("STUB_OOM_DO_BENCH") == "1":
        raise _stub.out_of_memory(256 << 20)
    _stub.counters["do_bench_args"].append({"warmup": warmup, "rep": rep, "return_mode": return_mode,
                                            "grad_to_none": grad_to_none is not None})
    fn()
    start = _stub.now_ms
    fn()
    return (_stub.now_ms - start) * _factor()


def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None, return_mode="mean"):
    fn()
    start = _stub.now_ms
    fn()
    return _stub.now_ms - start
