"""A warm worker: pay the imports once per device, then run one op after another in-process.

Started by `zlcore batch` (core/src/batch/warm_executor.cpp) as
`python -m zlcore_pytest.worker --socket PATH` with the device's environment and the
suite root as its working directory. It imports what is expensive and safe to share
(torch, triton, flag_gems by default: ZL_WORKER_PREIMPORT), takes a snapshot of the
process, and then serves one `zlcore run` at a time over a Unix socket:

    worker -> run   {"pid": P, "ops_before": N, "standby": B, "compile_only": C}   (once ready)
    run -> worker   {"args": [...], "env": {...}, "cwd": D, "log": F}
    worker -> run   {"exit_code": C, "seconds": S}

Each op runs `pytest.main(args)` with fds 1/2 on its log, the exact environment and
cwd a cold child would get, and afterwards the process is put back to the snapshot
(docs/warm-workers.md lists what is reset). A crash or hang is not handled here: the
process dies or is killed, the op in flight is recorded as such by `zlcore run`, and
the batch starts a fresh worker. Ops that need cold caches never come here, and a
worker started for compile-only runs (ZL_COMPILE_ONLY=1 at its start, with LibTuner's
store in memory) serves only those, as any other serves none of them.

With --standby it imports only what touches no device (ZL_WORKER_STANDBY_PREIMPORT,
default torch and triton) and waits; the first connection makes it the device's worker,
and the rest of the imports run then, before its handshake (docs/warm-workers.md,
"The standby worker").

Why not fork after the imports: `import flag_gems` initializes the device runtime,
and a process forked after that cannot use it; forking after torch+triton only
would still pay FlagGems' ~5 s per op (docs/warm-workers.md).
"""

import argparse
import configparser
import importlib
import json
import os
import socket
import sys
import time
import warnings
import weakref

from . import _env
from ._heap import after_op, freeze_imports

DEFAULT_PREIMPORT = "torch,triton,flag_gems"
DEFAULT_STANDBY_PREIMPORT = "torch,triton"


def _die_with_parent():
    # A SIGKILLed batch cannot stop its workers; the kernel can.
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        if os.getppid() == 1:
            os._exit(1)
    except Exception:
        pass


def _ini_pythonpath(root):
    """The suite's `pythonpath` from pytest.ini, so flag_gems (under src/) imports now."""
    ini = os.path.join(root, "pytest.ini")
    if not os.path.isfile(ini):
        return []
    parser = configparser.ConfigParser()
    try:
        parser.read(ini)
        raw = parser.get("pytest", "pythonpath", fallback="")
    except Exception:
        return []
    return [os.path.normpath(os.path.join(root, p)) for p in raw.split() if p]


class _TunerTracker:
    """Every triton Autotuner created from now on, so its in-memory winners can be dropped.

    Plain @triton.autotune keeps winners only in memory: a cold process tunes afresh,
    so a warm one must forget them between ops or it would time different configs.
    Installed before flag_gems is imported, because FlagGems builds its tuners then.
    """

    def __init__(self):
        self.tuners = weakref.WeakSet()
        self.installed = False

    def install(self):
        try:
            from triton.runtime import autotuner
        except Exception:
            return
        cls = autotuner.Autotuner
        original = cls.__init__
        tuners = self.tuners

        def __init__(self, *args, **kwargs):
            original(self, *args, **kwargs)
            try:
                tuners.add(self)
            except TypeError:
                pass

        __init__.__wrapped__ = original
        cls.__init__ = __init__
        self.installed = True

    def clear(self):
        cleared = 0
        for tuner in list(self.tuners):
            cache = getattr(tuner, "cache", None)
            if isinstance(cache, dict) and cache:
                cache.clear()
                cleared += 1
        return cleared


def clear_launch_caches(modules=None):
    """Empty FlagGems' LibEntry launch caches; returns how many held entries.

    LibEntry (flag_gems.utils.libentry) keeps, per kernel and device, the
    compiled kernel and config it launched for each argument signature, and
    launches from there without asking the autotuner again. A cold process
    starts with them empty; a warm one must too, or a kernel that an earlier
    op ran would keep that op's config (on the H200 the rounds after the first
    of a warm op reported no autotune lookups at all). The kernels are module
    globals of flag_gems, so the modules are searched, not the heap.
    """
    cleared = 0
    for name, module in list((modules if modules is not None else sys.modules).items()):
        if module is None or not (name == "flag_gems" or name.startswith("flag_gems.")):
            continue
        try:
            values = list(vars(module).values())
        except TypeError:
            continue
        for value in values:
            if type(value).__name__ != "LibEntry":
                continue
            caches = getattr(value, "kernel_cache", None)
            caches = caches if isinstance(caches, (tuple, list)) else (caches,)
            held = False
            for cache in caches:
                if isinstance(cache, dict) and cache:
                    cache.clear()
                    held = True
            cleared += held
    return cleared


class Snapshot:
    """What one op may change in this process and must not leave to the next."""

    def __init__(self, shared_packages):
        self.modules = set(sys.modules)
        self.path = list(sys.path)
        self.meta_path = list(sys.meta_path)
        self.path_hooks = list(sys.path_hooks)
        self.argv = list(sys.argv)
        self.env = dict(os.environ)
        self.cwd = os.getcwd()
        self.filters = list(warnings.filters)
        # Module globals of the shared (pre-imported) libraries: an op that sets
        # `flag_gems.something = ...` must not hand it to the next op.
        self.globals = {}
        for name, module in list(sys.modules.items()):
            if module is not None and any(name == p or name.startswith(p + ".") for p in shared_packages):
                try:
                    self.globals[name] = dict(vars(module))
                except TypeError:
                    pass
        # Classes the plugins patch (autotune hooks Autotuner/LibTuner methods and
        # undoes it at session end; a session that never ended would leave them).
        self.classes = {}
        for modname, clsname in (("triton.runtime.autotuner", "Autotuner"), ("flag_gems.utils.libentry", "LibTuner")):
            cls = getattr(sys.modules.get(modname), clsname, None)
            if isinstance(cls, type):
                self.classes[cls] = dict(vars(cls))
        self.torch = _torch_flags()

    def restore(self, suite_root):
        report = {}
        os.chdir(self.cwd)
        os.environ.clear()
        os.environ.update(self.env)
        added_paths = [p for p in sys.path if p not in self.path]
        sys.path[:] = self.path
        sys.meta_path[:] = self.meta_path
        sys.path_hooks[:] = self.path_hooks
        sys.path_importer_cache.clear()
        sys.argv[:] = self.argv
        warnings.filters[:] = self.filters
        if hasattr(warnings, "_filters_mutated"):
            warnings._filters_mutated()
        report["modules_purged"] = self._purge(suite_root, added_paths)
        report["globals_restored"] = self._restore_globals()
        for cls, saved in self.classes.items():
            for key in [k for k in vars(cls) if k not in saved]:
                delattr(cls, key)
            for key, value in saved.items():
                if key not in ("__dict__", "__weakref__") and vars(cls).get(key) is not value:
                    setattr(cls, key, value)
        _set_torch_flags(self.torch)
        importlib.invalidate_caches()
        return report

    def _purge(self, suite_root, added_paths):
        """Drop the modules this op brought in from the suite (benchmark.*, conftests,
        test modules, the suite's own library on its pytest.ini path) and the plugins.
        Third-party libraries stay: re-importing a C extension (numpy) is unsafe, and
        a cold process would import the very same files."""
        # pytest removes its ini `pythonpath` again at unconfigure, so those
        # entries are read from pytest.ini rather than seen as added.
        roots = [os.path.join(os.path.realpath(r), "")
                 for r in [suite_root, *_ini_pythonpath(suite_root), *added_paths] if r]
        bench = os.environ.get("ZL_BENCH_PACKAGE", "benchmark") or "benchmark"
        purged = 0
        for name in [n for n in sys.modules if n not in self.modules]:
            module = sys.modules.get(name)
            drop = (name in ("zlcore_pytest", "conftest", bench) or name.startswith("zlcore_pytest.")
                    or name.startswith(bench + "."))
            if not drop:
                origin = getattr(module, "__file__", None) or ""
                if origin:
                    # Both: a suite may link files in from elsewhere (fault_suite does).
                    candidates = (os.path.abspath(origin), os.path.realpath(origin))
                    drop = any(c.startswith(r) for c in candidates for r in roots)
                else:
                    # Namespace packages (no __file__) that the suite's paths provide.
                    paths = list(getattr(module, "__path__", []) or [])
                    drop = bool(paths) and all(
                        any(os.path.join(os.path.realpath(p), "").startswith(r) for r in roots) for p in paths)
            if drop:
                del sys.modules[name]
                purged += 1
        return purged

    def _restore_globals(self):
        changed = 0
        for name, saved in self.globals.items():
            module = sys.modules.get(name)
            if module is None:
                continue
            current = vars(module)
            for key in [k for k in current if k not in saved]:
                del current[key]
                changed += 1
            for key, value in saved.items():
                if current.get(key, _MISSING) is not value:
                    current[key] = value
                    changed += 1
        return changed


_MISSING = object()


def _torch_flags():
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    flags = {}
    try:
        flags["default_dtype"] = torch.get_default_dtype()
        flags["grad"] = torch.is_grad_enabled()
        flags["deterministic"] = torch.are_deterministic_algorithms_enabled()
        flags["matmul_tf32"] = torch.backends.cuda.matmul.allow_tf32
        flags["cudnn_tf32"] = torch.backends.cudnn.allow_tf32
    except Exception:
        pass
    return flags


def _set_torch_flags(flags):
    torch = sys.modules.get("torch")
    if torch is None or not flags:
        return
    try:
        torch.set_default_dtype(flags["default_dtype"])
        torch.set_grad_enabled(flags["grad"])
        torch.use_deterministic_algorithms(flags["deterministic"])
        torch.backends.cuda.matmul.allow_tf32 = flags["matmul_tf32"]
        torch.backends.cudnn.allow_tf32 = flags["cudnn_tf32"]
    except Exception:
        pass


def _release_device_memory():
    # Memory the previous op left cached in torch's allocator would change the
    # next op's allocation pattern; a cold process starts with none.
    torch = sys.modules.get("torch")
    if torch is None:
        return
    for name in ("cuda", "musa", "npu", "mlu"):
        mod = getattr(torch, name, None)
        try:
            if mod is not None and mod.is_initialized():
                mod.synchronize()
                mod.empty_cache()
        except Exception:
            pass


def forget_the_last_failure():
    """pytest keeps the last failed test's exception in sys.last_* for a
    post-mortem debugger; its traceback holds the test's frames and whatever
    they referenced (a FlagGems op's inputs: gigabytes of device memory). A cold
    process ends there; a worker takes the next op, so it lets go here."""
    for name in ("last_type", "last_value", "last_traceback", "last_exc"):
        if hasattr(sys, name):
            delattr(sys, name)


def preimport(names, tracker=None):
    imported, missing = [], {}
    tracker = tracker or _TunerTracker()
    for name in names:
        if name == "flag_gems" and not tracker.installed:
            tracker.install()
        try:
            importlib.import_module(name)
            imported.append(name)
        except Exception as exc:  # absent, or broken: the ops import it themselves
            missing[name] = f"{type(exc).__name__}: {exc}"[:300]
        if name == "triton" and name in imported and not tracker.installed:
            tracker.install()
    return imported, missing, tracker


def standby_split(names, env=None):
    """(what a standby imports while it waits, what it imports once it takes over).

    A standby waits beside the worker that is measuring, so it imports only what
    touches no device: ZL_WORKER_STANDBY_PREIMPORT, default torch and triton, whose
    runtimes start on first use. flag_gems initializes the device at import, so it
    waits for the takeover, when the device is between ops."""
    raw = (env if env is not None else os.environ).get("ZL_WORKER_STANDBY_PREIMPORT", DEFAULT_STANDBY_PREIMPORT)
    early = {n.strip() for n in raw.split(",") if n.strip()}
    return [n for n in names if n in early], [n for n in names if n not in early]


def _wait_as_standby(server, names):
    """Import the device-free part, then block until the batch's first connection
    makes this the device's worker; the rest of the imports run then."""
    early, late = standby_split(names)
    started = time.monotonic()
    imported, missing, tracker = preimport(early)
    import pytest  # noqa: F401 - shared by every op
    print(json.dumps({"worker": os.getpid(), "standby": True, "imported": imported, "missing": missing,
                      "import_seconds": round(time.monotonic() - started, 3)}), flush=True)
    conn, _ = server.accept()
    taken = time.monotonic()
    more, more_missing, tracker = preimport(late, tracker)
    late_seconds = time.monotonic() - taken
    print(json.dumps({"worker": os.getpid(), "took_over_after_s": round(taken - started, 3), "imported": more,
                      "missing": more_missing, "import_seconds": round(late_seconds, 3)}), flush=True)
    return conn, imported + more, {**missing, **more_missing}, tracker, late_seconds


def _send(conn, obj):
    conn.sendall((json.dumps(obj) + "\n").encode())


def _recv_line(conn):
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    return json.loads(data.decode())


def run_op(request, snapshot, tracker, suite_root, baseline=None):
    """One op: pytest.main with the cold child's env/cwd/log, then back to the snapshot,
    then the health check (_health.py) that decides whether this worker takes another."""
    import pytest

    from . import _health

    threads_before = _health.threads_now()

    log_fd = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644)
    sys.stdout.flush()
    sys.stderr.flush()
    saved_fds = (os.dup(1), os.dup(2))
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    started = time.monotonic()
    try:
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        args = list(request["args"])
        sys.argv[:] = [pytest.__file__] + args
        try:
            code = int(pytest.main(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException as exc:  # noqa: BLE001 - the op's failure, not ours
            print(f"zlcore worker: pytest.main raised {type(exc).__name__}: {exc}", file=sys.stderr)
            code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved_fds[0], 1)
        os.dup2(saved_fds[1], 2)
        for fd in saved_fds:
            os.close(fd)
    seconds = time.monotonic() - started
    forget_the_last_failure()
    env = request.get("env", {})
    report = snapshot.restore(suite_root)
    report["tuners_cleared"] = tracker.clear() + clear_launch_caches()
    health = _health.check(env.get("ZL_TORCH_DEVICE", ""), env.get("ZL_CHILD_DIR", ""), threads_before,
                           [suite_root, *_ini_pythonpath(suite_root)], baseline=baseline)
    if health["ok"]:
        _release_device_memory()
    return code, seconds, report, health


def _profiled(profile_dir, number, call):
    """call() under cProfile, its statistics written to profile_dir as
    workerPID-opNNN.prof (pstats) and .txt (the 60 costliest calls, cumulative):
    where a warm op's seconds go inside the worker, its own bookkeeping
    included (ZL_WORKER_PROFILE, docs/warm-workers.md)."""
    import cProfile
    import io
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    try:
        return call()
    finally:
        profile.disable()
        try:
            stem = os.path.join(profile_dir, f"worker{os.getpid()}-op{number:03d}")
            profile.dump_stats(stem + ".prof.tmp")
            os.replace(stem + ".prof.tmp", stem + ".prof")
            text = io.StringIO()
            pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(60)
            with open(stem + ".txt.tmp", "w") as f:
                f.write(text.getvalue())
            os.replace(stem + ".txt.tmp", stem + ".txt")
        except OSError as exc:
            print(f"zlcore worker: ZL_WORKER_PROFILE: cannot write under {profile_dir}: {exc}", file=sys.stderr)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="zlcore_pytest.worker")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--standby", action="store_true",
                        help="import only what touches no device, and the rest once the batch connects")
    opts = parser.parse_args(argv)
    _die_with_parent()

    # Bind first: `zlcore run` may connect while the imports below still run.
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(opts.socket)
    server.listen(4)

    suite_root = os.getcwd()
    started = time.monotonic()
    for p in _ini_pythonpath(suite_root):
        if p not in sys.path:
            sys.path.insert(0, p)
    names = [n.strip() for n in os.environ.get("ZL_WORKER_PREIMPORT", DEFAULT_PREIMPORT).split(",") if n.strip()]
    first = None  # a standby's first connection, accepted while it waited
    if opts.standby:
        first, imported, missing, tracker, import_seconds = _wait_as_standby(server, names)
    else:
        imported, missing, tracker = preimport(names)
        import pytest  # noqa: F401 - shared by every op
        import_seconds = time.monotonic() - started
    shared = [n for n in imported if n not in ("torch", "triton")]
    snapshot = Snapshot(shared)
    freeze_imports()  # every op's gc.collect() skips what the imports left
    baseline = None  # device bytes allocated before the first op: what each op must leave
    profile_dir = os.environ.get("ZL_WORKER_PROFILE", "")
    if profile_dir and not os.path.isdir(profile_dir):
        print(f"zlcore worker: ZL_WORKER_PROFILE={profile_dir!r} is not a directory; no profiles", file=sys.stderr)
        profile_dir = ""
    if not opts.standby:
        print(json.dumps({"worker": os.getpid(), "imported": imported, "missing": missing,
                          "import_seconds": round(import_seconds, 3)}), flush=True)

    compile_only = _env.compile_only()  # as started: what flag_gems imported with
    ops_done = 0
    while True:
        if first is not None:
            conn, first = first, None
        else:
            conn, _ = server.accept()
        with conn:
            try:
                _send(conn, {"pid": os.getpid(), "ops_before": ops_done, "imported": imported,
                             "import_seconds": round(import_seconds, 3), "standby": opts.standby,
                             "compile_only": compile_only})
                request = _recv_line(conn)
            except (OSError, ValueError):
                continue
            if request is None:
                continue  # the run went away (or decided to run cold) before asking
            if ops_done == 0:
                from . import _health

                baseline = _health.baseline_allocated(request.get("env", {}).get("ZL_TORCH_DEVICE", ""))

            def one_op():
                return run_op(request, snapshot, tracker, suite_root, baseline)

            if profile_dir:
                code, seconds, report, health = _profiled(profile_dir, ops_done + 1, one_op)
            else:
                code, seconds, report, health = one_op()
            ops_done += 1
            after_op(ops_done)  # the next op's collections skip what this one imported
            print(json.dumps({"op": ops_done, "exit_code": code, "seconds": round(seconds, 3), **report,
                              "health": health}), flush=True)
            try:
                _send(conn, {"exit_code": code, "seconds": seconds, "reset": report, "health": health})
            except OSError:
                pass
        if not health["ok"]:
            # Whatever is wrong cannot be put back in this process: leave, and
            # let the batch start a fresh worker for the next op.
            print(json.dumps({"worker": os.getpid(), "exits": "unhealthy", "why": health["why"]}), flush=True)
            server.close()
            os._exit(0)


if __name__ == "__main__":
    main()
