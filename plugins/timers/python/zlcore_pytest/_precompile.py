"""Compile an autotuner's configurations side by side, before it benchmarks them.

A tuner that meets a new key benchmarks each of its configurations in turn,
and Triton compiles each one at its first call: on the H100 host a cold
`mm_out` spent 20.6 s compiling and 4.0 s benchmarking, one core busy and
fifteen idle. Here, once the tuner has pruned its configurations, they are
compiled first, `threads` at a time (Triton's compiler releases the GIL in
LLVM and runs ptxas as a process), each as a warm-up call that compiles and
launches nothing. The benchmarks then find every kernel compiled, as they
would in a process whose compile cache was already warm; which
configuration wins is still decided by the same benchmarks.

The first configuration compiles in the calling thread, so the JIT's
per-device state is created once, there. A configuration that fails to
compile ahead is simply compiled again by its benchmark, which handles the
failure as it always did. Nothing here touches the device between or
inside benchmarks: every compilation has finished before the first one.

ZL_COMPILE_AHEAD: the threads (unset, empty, 0, 1 or "off": none).
"""

import os
import time
from concurrent.futures import ThreadPoolExecutor

MAX_THREADS = 64


class SettingError(ValueError):
    pass


def threads_from_env(env=None):
    given = (env if env is not None else os.environ).get("ZL_COMPILE_AHEAD", "")
    raw = given.strip().lower()
    if given == "" or raw == "off":
        return 0
    # ASCII digits only: int() would take other scripts' digits and underscores.
    value = int(raw) if raw.isascii() and raw.isdigit() else -1
    if not 0 <= value <= MAX_THREADS:
        raise SettingError(f"ZL_COMPILE_AHEAD={given!r} is not allowed; use a number of threads from 0 to "
                           f"{MAX_THREADS}, or off")
    return value


class CompileAhead:
    """What compiling ahead did in this process, for autotune.json."""

    def __init__(self, threads):
        self.threads = threads
        self.tuners = 0  # tuning calls whose configurations were compiled ahead
        self.configs = 0  # configurations compiled ahead
        self.failed = 0  # ... that failed to (their benchmarks compile them again)
        self.seconds = 0.0
        self.error = None  # why compiling ahead stopped for this process, if it did

    def wanted(self, configs):
        return self.threads > 1 and self.error is None and len(configs) > 1

    def run(self, tuner, configs, kwargs):
        """Compile `configs` for the call `tuner` is tuning now; never raises."""
        nargs = getattr(tuner, "nargs", None)
        run = getattr(getattr(tuner, "fn", None), "run", None)
        if not isinstance(nargs, dict) or not callable(run):
            self.error = "the tuner has no arguments or kernel to compile with"
            return
        args = tuple(nargs.values())

        def compile_one(config):
            call = dict(kwargs)
            call.update(config.all_kwargs())
            call["warmup"] = True  # compile, launch nothing
            call.setdefault("grid", (1,))
            run(*args, **call)

        started = time.perf_counter()
        failed = 0
        try:
            compile_one(configs[0])
        except Exception:  # noqa: BLE001 - its benchmark meets the same failure and handles it
            failed += 1
        rest = list(configs[1:])
        if rest:
            # A compile-only run compiles every configuration even without
            # threads to spare: one worker then compiles them in turn.
            workers = max(1, min(self.threads, len(rest)))
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="zl-compile") as pool:
                futures = [pool.submit(compile_one, c) for c in rest]
            failed += sum(1 for f in futures if f.exception() is not None)
        self.tuners += 1
        self.configs += len(configs)
        self.failed += failed
        self.seconds += time.perf_counter() - started

    def as_json(self):
        return {"threads": self.threads, "tuners": self.tuners, "configs": self.configs, "failed": self.failed,
                "seconds": round(self.seconds, 3), "error": self.error}
