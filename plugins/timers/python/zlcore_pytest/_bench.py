"""What the plugins need from the suite's benchmark package (FlagGems' layout).

FlagGems keeps a module-global `Config` in benchmark/conftest.py that is None
until its pytest_configure runs, and benchmark/base.py copies it at import; so
everything here reads the suite lazily, at call time, never at plugin import.
"""

import importlib
import json
import sys

from . import _env


def base_module_name():
    return _env.bench_package() + ".base"


def base_module(import_it=True):
    name = base_module_name()
    module = sys.modules.get(name)
    if module is None and import_it:
        module = importlib.import_module(name)
    return module


def benchmark_class(module):
    cls = getattr(module, "Benchmark", None)
    if cls is None or not isinstance(cls, type):
        raise AttributeError(f"{module.__name__} has no Benchmark class")
    return cls


def config():
    """The live Config: base's copy when set, else the conftest's own global."""
    base = base_module(import_it=False)
    cfg = getattr(base, "Config", None) if base is not None else None
    if cfg is None:
        conftest = sys.modules.get(_env.bench_package() + ".conftest")
        cfg = getattr(conftest, "Config", None) if conftest is not None else None
    return cfg


def enum_text(value):
    """FlagGems stores modes and levels as Enums; rows carry their plain values."""
    if value is None:
        return None
    return str(getattr(value, "value", value))


def mode():
    cfg = config()
    return enum_text(getattr(cfg, "mode", None)) or "kernel"


def bench_level():
    cfg = config()
    level = enum_text(getattr(cfg, "bench_level", None))
    return level or _env.text("BENCH_LEVEL") or None


def warmup_ms():
    return _config_number("warm_up", 25)


def repetition_ms():
    return _config_number("repetition", 100)


def _config_number(name, default):
    value = getattr(config(), name, None)
    try:
        return float(value) if value is not None else float(default)
    except (TypeError, ValueError):
        return float(default)


def dtype_name(dtype):
    """`torch.float16` / numpy float16 / "torch.float16" -> "float16"."""
    if dtype is None:
        return None
    if isinstance(dtype, type):
        text = dtype.__name__
    else:
        text = str(dtype)
    if text.startswith("torch."):
        text = text[len("torch."):]
    return text


def infer_dtype(args, kwargs):
    """The first argument carrying a dtype; used only when the run loop's dtype is unknown."""
    for value in list(args) + list(kwargs.values()):
        dtype = getattr(value, "dtype", None)
        if dtype is not None and not isinstance(value, type):
            return dtype_name(dtype)
    return None


def plain_shape(value):
    """shape_detail as plain JSON: sizes -> lists, dtypes -> their names."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): plain_shape(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):  # torch.Size is a tuple
        return [plain_shape(v) for v in value]
    if hasattr(value, "tolist") and not hasattr(value, "dtype"):
        return plain_shape(value.tolist())
    return dtype_name(value)


def shape_key(shape_detail):
    """The row's `shape`: json.dumps with default separators, so runs match as strings."""
    return json.dumps(shape_detail)


def shape_of(bench, args, kwargs):
    """What run() stores as metric.shape_detail for these arguments."""
    record = getattr(bench, "record_shapes", None)
    if record is None:
        return None
    try:
        return plain_shape(record(*args, **kwargs))
    except Exception:
        return None


def build_fn(bench, op, args, kwargs, grad_output=None):
    """The callable FlagGems' get_latency times, its grad_to_none, and its grad output.

    Mirrors base.Benchmark.get_latency: a backward bench runs the forward once,
    then times torch.autograd.grad over the tensors that require grad, with
    `grad_output` (drawn with randn_like when not given) as the output's grad.
    """
    # The closures that call the op are named: _blame.OP_CALLERS counts a
    # failure raised through them as the op's, never as zlcore's.
    def call_op():
        return op(*args, **kwargs)

    fn = call_op
    if not getattr(bench, "is_backward", False):
        return fn, None, None
    try:
        import torch  # only backward benches need it
    except ImportError:
        return fn, None, None  # a torch-less suite (the host example) times its backward op as given
    if not any(torch.is_tensor(a) and a.requires_grad for a in args):
        return fn, None, None
    out = fn()
    dout = grad_output if grad_output is not None else torch.randn_like(out)
    xs = [a for a in args if torch.is_tensor(a) and a.requires_grad]

    def call_op_backward():
        return torch.autograd.grad((out,), xs, grad_outputs=(dout,), retain_graph=True)

    return call_op_backward, xs, dout


def device_module():
    """torch.<ZL_TORCH_DEVICE> (cuda, musa, npu, ...), importing torch_<device> when torch lacks it."""
    import torch

    device = _env.torch_device()
    module = getattr(torch, device, None)
    if module is None or not hasattr(module, "synchronize"):
        try:
            importlib.import_module("torch_" + device)
        except ImportError:
            pass
        module = getattr(torch, device, None)
    if module is None:
        raise RuntimeError(f"torch has no '{device}' device module (ZL_TORCH_DEVICE)")
    return module
