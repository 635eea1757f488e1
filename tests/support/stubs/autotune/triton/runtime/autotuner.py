"""Autotuner and Config as in triton 3.6's python/triton/runtime/autotuner.py:
the same attributes (configs, keys, cache, cache_results, arg_names, nargs,
best_config, base_fn, fn) and the same run -> prune_configs -> _bench flow, without the
disk cache and the device benchmarker."""

import builtins
import inspect
import os

BENCHED = []  # (kernel, config str) of every config benchmarked


class Autotuner:
    def __init__(self, fn, arg_names, configs, key, reset_to_zero=None, restore_value=None, pre_hook=None,
                 post_hook=None, prune_configs_by=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None,
                 cache_results=False):
        self.configs = configs or [Config({}, num_warps=4, num_stages=3, num_ctas=1)]
        # As in triton: decided once, when the kernel is decorated (knobs.autotuning.cache).
        self.cache_results = cache_results or os.environ.get("TRITON_CACHE_AUTOTUNING", "").lower() in (
            "1", "true", "on", "yes")
        self.keys = key
        self.cache = {}
        self.arg_names = arg_names
        self.pre_hook = lambda kwargs, reset_only=False: 0
        self.post_hook = lambda kwargs, exception: 0
        self.early_config_prune = (prune_configs_by or {}).get("early_config_prune")
        self.fn = fn
        self.base_fn = fn
        while not inspect.isfunction(self.base_fn):
            self.base_fn = self.base_fn.fn

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    def _bench(self, *args, config, **meta):
        current = dict(meta, **config.all_kwargs())
        BENCHED.append((self.base_fn.__name__, str(config)))
        t = self.fn.run(*args, **current)
        return [t, t, t]

    def run(self, *args, **kwargs):
        self.nargs = dict(zip(self.arg_names, args))
        if len(self.configs) > 1:
            all_args = {**self.nargs, **kwargs}
            _args = {k: v for (k, v) in all_args.items() if k in self.arg_names}
            key = [_args[key] for key in self.keys if key in _args]
            for _, arg in _args.items():
                if hasattr(arg, "dtype"):
                    key.append(str(arg.dtype))
            key = tuple(key)
            if key not in self.cache:
                pruned_configs = self.prune_configs(kwargs)
                if len(pruned_configs) == 1:
                    self.cache[key] = pruned_configs[0]
                else:
                    timings = {config: self._bench(*args, config=config, **kwargs) for config in pruned_configs}
                    self.cache[key] = builtins.min(timings, key=timings.get)
                    self.configs_timings = timings
            config = self.cache[key]
        else:
            config = self.configs[0]
        self.best_config = config
        ret = self.fn.run(*args, **kwargs, **config.all_kwargs())
        self.nargs = None
        return ret

    def prune_configs(self, kwargs):
        pruned = self.configs
        if self.early_config_prune:
            pruned = self.early_config_prune(self.configs, self.nargs, **kwargs)
        return pruned


class Config:
    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None, ir_override=None):
        self.kwargs = kwargs
        self.num_warps = num_warps
        self.num_ctas = num_ctas
        self.num_stages = num_stages
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook
        self.ir_override = ir_override

    def all_kwargs(self):
        fields = (("num_warps", self.num_warps), ("num_ctas", self.num_ctas), ("num_stages", self.num_stages),
                  ("maxnreg", self.maxnreg), ("ir_override", self.ir_override))
        return {**self.kwargs, **{k: v for (k, v) in fields if v is not None}}

    def __str__(self):
        res = [f"{k}: {v}" for k, v in self.kwargs.items()]
        res += [f"num_warps: {self.num_warps}", f"num_ctas: {self.num_ctas}", f"num_stages: {self.num_stages}",
                f"maxnreg: {self.maxnreg}", f"ir_override: {self.ir_override}"]
        return ", ".join(res)

    def __hash__(self):
        return hash((*self.all_kwargs().items(), self.pre_hook))

    def __eq__(self, other):
        return (tuple((*self.all_kwargs().items(), self.pre_hook)) ==
                tuple((*other.all_kwargs().items(), other.pre_hook)))


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, pre_hook=None,
             post_hook=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None, cache_results=False):
    def decorator(fn):
        return Autotuner(fn, fn.arg_names, configs, key, reset_to_zero, restore_value, pre_hook=pre_hook,
                         post_hook=post_hook, prune_configs_by=prune_configs_by)

    return decorator
