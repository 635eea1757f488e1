"""In-process checks of helpers that need no pytest child."""

import json
import os
import subprocess
import sys
import types

import pytest

from conftest import PLUGINS, REPO, STUBS

sys.path[:0] = [str(PLUGINS)]

from zlcore_pytest import _stats, device_setup  # noqa: E402


def test_median_mean_and_spread():
    assert _stats.median([3.0, 1.0, 2.0]) == 2.0
    assert _stats.median([1.0, 2.0, 3.0, 4.0]) == 2.5
    assert _stats.mean([1.0, 2.0, 6.0]) == 3.0
    # A row's spread: across its placements, over their mean.
    assert _stats.range_over_mean_pct([1.0]) == 0.0
    assert _stats.range_over_mean_pct([0.9, 1.0, 1.1]) == pytest.approx(20.0)
    assert _stats.range_over_mean_pct([43.0, 45.0, 43.0, 45.0]) == pytest.approx(2.0 / 44.0 * 100)
    # Window medians: how far the pace moved, over the slower.
    assert _stats.range_pct([1.0, 1.15]) == pytest.approx(15.0)


def test_uuid_and_pci_normalization():
    plain = "967ef875e3f755c2abf064b93b0c7e36"
    assert device_setup.uuid_hex("GPU-967ef875-e3f7-55c2-abf0-64b93b0c7e36") == plain
    assert device_setup.uuid_hex("967EF875-E3F7-55C2-ABF0-64B93B0C7E36") == plain
    assert device_setup.uuid_hex(bytes.fromhex(plain)) == plain
    assert device_setup.uuid_hex("0000:3b:00.0") is None
    assert device_setup.uuid_hex("3") is None
    assert device_setup.pci_tuple("0000:3B:00.0") == (0, 0x3B, 0)
    assert device_setup.pci_tuple("GPU-1") is None


@pytest.fixture
def stub_triton(monkeypatch):
    monkeypatch.syspath_prepend(str(STUBS))
    for name in [m for m in sys.modules if m.split(".")[0] in ("torch", "triton")]:
        monkeypatch.delitem(sys.modules, name)
    import triton.runtime.jit as jit
    import triton.compiler.compiler as compiler

    return jit, compiler


def test_cluster_probe_sees_both_launch_paths_and_restores_them(stub_triton):
    from zlcore_pytest import cluster_fix

    jit, compiler = stub_triton
    run_before = jit.JITFunction.__dict__["run"]
    getitem_before = compiler.CompiledKernel.__dict__["__getitem__"]
    launched = []
    plain = jit.JITFunction(lambda x, cluster=False: launched.append(cluster), "plain_kernel")
    cluster = jit.JITFunction(lambda x, cluster=False: launched.append(cluster), "cluster_kernel", num_ctas=2)
    probe = cluster_fix.ClusterProbe()

    assert probe.probe(lambda: plain[(1,)](0), {"side": "gems"}) is False
    assert probe.probe(lambda: cluster[(1,)](0), {"side": "gems"}) is True  # JITFunction.run path
    compiled = cluster.kernel
    assert probe.probe(lambda: compiled[(1,)](0), {"side": "gems"}) is True  # CompiledKernel path
    assert launched == [False, True, True]
    assert jit.JITFunction.__dict__["run"] is run_before
    assert compiler.CompiledKernel.__dict__["__getitem__"] is getitem_before
    assert [s["cluster_kernel"] for s in probe.shapes] == [False, True, True]


def test_cluster_probe_restores_hooks_when_the_op_raises(stub_triton):
    from zlcore_pytest import cluster_fix

    jit, _ = stub_triton
    run_before = jit.JITFunction.__dict__["run"]

    def boom():
        raise ValueError("op failed")

    with pytest.raises(ValueError):
        cluster_fix.ClusterProbe().probe(boom, {})
    assert jit.JITFunction.__dict__["run"] is run_before


def test_graph_api_resolves_dotted_names(stub_triton):
    from zlcore_pytest.timers import graph

    import torch

    assert graph.resolve_dotted("torch.cuda.CUDAGraph") is torch.cuda.CUDAGraph
    with pytest.raises(ImportError):
        graph.resolve_dotted("no_such_module_zl.Graph")


def test_the_registry_maps_rule_names_to_modules():
    from zlcore_pytest import timers

    assert timers.module_name("graph", {}) == "zlcore_pytest.timers.graph"
    env = {"ZL_TIMER": "graph", "ZL_TIMER_MODULE": "vendor.graph_timer",
           "ZL_TIMER_FALLBACK": "direct", "ZL_TIMER_FALLBACK_MODULE": "vendor.direct_timer"}
    assert timers.module_name("graph", env) == "vendor.graph_timer"
    assert timers.module_name("direct", env) == "vendor.direct_timer"
    assert timers.module_name("host", env) == "zlcore_pytest.timers.host"
    assert timers.module_name("stopwatch", {"ZL_TIMER": "stopwatch", "ZL_TIMER_MODULE": "sw"}) == "sw"
    with pytest.raises(timers.UnknownTimer):
        timers.module_name("stopwatch", {})
    for name in timers.BUILTIN:
        module = timers.load(name, {})
        assert module.NAME == name and callable(module.create)


# -- whose fault a failure is (_blame) and the warm worker's health check (_health) -------


def _raise_through(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the test inspects it
        return exc
    raise AssertionError("did not raise")


def test_blame_our_code_raising_is_harness():
    from zlcore_pytest import _blame, _stats

    exc = _raise_through(lambda: _stats.median([]))
    judged = _blame.judge(exc, "/nonexistent-suite")
    assert judged["harness"] is True and judged["device_error"] is False


def test_blame_the_op_raising_through_our_call_is_the_ops():
    from zlcore_pytest import _bench, _blame

    class Bench:
        is_backward = False

    fn, _, _ = _bench.build_fn(Bench(), int, ("not a number",), {})
    exc = _raise_through(fn)  # raised in C, called from zlcore's call_op
    judged = _blame.judge(exc, "/nonexistent-suite")
    assert judged["harness"] is False and judged["exc_type"] == "ValueError"


def test_blame_follows_the_pytest_fail_chain_to_the_suite(tmp_path):
    from zlcore_pytest import _blame

    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "suite_mod.py").write_text(
        "def set_dtypes():\n"
        "    raise ValueError(\"Given dtype(s) 'float16'can't be supported by this op 'x'\")\n"
        "def run():\n"
        "    try:\n"
        "        set_dtypes()\n"
        "    except Exception as e:\n"
        "        raise RuntimeError('Failed: ' + str(e))\n")
    sys.path.insert(0, str(suite))
    try:
        import suite_mod
        exc = _raise_through(suite_mod.run)
    finally:
        sys.path.remove(str(suite))
    judged = _blame.judge(exc, str(suite))
    assert judged["exc_type"] == "ValueError" and "can't be supported" in judged["message"]
    assert judged["harness"] is False


def test_blame_a_device_error_is_never_harness():
    from zlcore_pytest import _blame

    def sync():
        raise RuntimeError("CUDA error: operation not permitted when stream is capturing")

    exc = _raise_through(sync)
    judged = _blame.judge(exc, "/nonexistent-suite")
    assert judged["device_error"] is True and judged["harness"] is False
    assert _blame.is_device_error(type("AcceleratorError", (Exception,), {})("x")) is True
    assert _blame.is_device_error(RuntimeError("Offset increment outside graph capture encountered unexpectedly."))


class _FakeDevice:
    def __init__(self, capturing=False, sync_error=None, value=16.0, rng_error=None):
        self.capturing, self.sync_error, self.value, self.rng_error = capturing, sync_error, value, rng_error

    def is_initialized(self):
        return True

    def is_current_stream_capturing(self):
        return self.capturing

    def synchronize(self):
        if self.sync_error:
            raise RuntimeError(self.sync_error)


class _FakeTorch:
    def __init__(self, device):
        self.cuda = device

    def ones(self, n, device):
        return _FakeTensor(self.cuda.value)

    def rand(self, n, device):
        if self.cuda.rng_error:
            raise RuntimeError(self.cuda.rng_error)
        return _FakeTensor(True)


class _FakeTensor:
    def __init__(self, value):
        self.value = value

    def __add__(self, other):
        return self

    def __ge__(self, other):
        return self

    def __lt__(self, other):
        return self

    def __and__(self, other):
        return self

    def sum(self):
        return self

    def all(self):
        return self

    def item(self):
        return self.value


def test_health_device_checks(monkeypatch):
    from zlcore_pytest import _health

    monkeypatch.setitem(sys.modules, "torch", _FakeTorch(_FakeDevice()))
    assert _health.check_device("cuda") is None
    assert _health.check_device("cpu") is None  # the host: no device module to ask
    monkeypatch.setitem(sys.modules, "torch", _FakeTorch(_FakeDevice(capturing=True)))
    assert "capture is still open" in _health.check_device("cuda")
    monkeypatch.setitem(sys.modules, "torch", _FakeTorch(_FakeDevice(sync_error="CUDA error: illegal memory access")))
    assert "illegal memory access" in _health.check_device("cuda")
    monkeypatch.setitem(sys.modules, "torch", _FakeTorch(_FakeDevice(value=15.0)))
    assert "not 16" in _health.check_device("cuda")
    # What a failed graph capture left in a real worker on the H200: plain
    # kernels run, the random generator raises.
    poisoned = _FakeDevice(rng_error="Offset increment outside graph capture encountered unexpectedly.")
    monkeypatch.setitem(sys.modules, "torch", _FakeTorch(poisoned))
    assert "Offset increment outside graph capture" in _health.check_device("cuda")


class _MemoryDevice(_FakeDevice):
    """Holds `held` bytes of which `cached` go back on empty_cache."""

    def __init__(self, held, cached):
        super().__init__()
        self.held, self.cached, self.emptied = held, cached, 0

    def empty_cache(self):
        self.emptied += 1
        self.held -= self.cached
        self.cached = 0

    def memory_reserved(self):
        return self.held

    def memory_allocated(self):
        return self.held


def test_health_hands_cached_memory_back_and_replaces_a_worker_that_still_holds_too_much(monkeypatch):
    from zlcore_pytest import _health

    gib = 1 << 30
    cached = _MemoryDevice(held=30 * gib, cached=29 * gib)  # the allocator kept what the op freed
    monkeypatch.setitem(sys.modules, "torch", _FakeTorch(cached))
    memory = {}
    assert _health.check_device("cuda", memory) is None
    assert cached.emptied == 1 and memory == {"reserved_bytes": gib, "allocated_bytes": gib}

    leaked = _MemoryDevice(held=30 * gib, cached=0)  # the op left it reachable
    monkeypatch.setitem(sys.modules, "torch", _FakeTorch(leaked))
    why = _health.check_device("cuda")
    assert why == ("the worker still holds 30720 MiB of cuda memory after the op (collected and emptied, "
                   "30720 MiB of it allocated; limit ZL_WARM_MEMORY_LIMIT_MB=2048)")
    monkeypatch.setenv("ZL_WARM_MEMORY_LIMIT_MB", "40000")
    assert _health.check_device("cuda") is None
    monkeypatch.setenv("ZL_WARM_MEMORY_LIMIT_MB", "lots")  # said, and the worker does not go on
    assert "ZL_WARM_MEMORY_LIMIT_MB='lots' is not a positive number of MiB" in _health.check_device("cuda")
    monkeypatch.setenv("ZL_WARM_MEMORY_LIMIT_MB", "2048")

    result = _health.check("cuda", "", _health.threads_now(), [])
    assert result["ok"] is False and result["memory"]["reserved_bytes"] == 30 * gib


def test_health_replaces_a_worker_whose_allocation_is_not_back_to_its_baseline(monkeypatch):
    from zlcore_pytest import _health

    mib = 1 << 20
    device = _MemoryDevice(held=600 * mib, cached=0)  # under the 2048 MiB limit
    monkeypatch.setitem(sys.modules, "torch", _FakeTorch(device))
    memory = {}
    why = _health.check_device("cuda", memory, baseline=500 * mib)
    assert why == ("the op left 100 MiB of cuda memory allocated over the worker's baseline of 500 MiB "
                   "(margin ZL_WARM_MEMORY_MARGIN_MB=64)")
    assert memory == {"reserved_bytes": 600 * mib, "allocated_bytes": 600 * mib, "baseline_allocated_bytes": 500 * mib}
    assert _health.check_device("cuda", baseline=550 * mib) is None  # 50 MiB over: within the margin
    monkeypatch.setenv("ZL_WARM_MEMORY_MARGIN_MB", "128")
    assert _health.check_device("cuda", baseline=500 * mib) is None
    monkeypatch.setenv("ZL_WARM_MEMORY_MARGIN_MB", "-1")
    assert "ZL_WARM_MEMORY_MARGIN_MB='-1' is not a non-negative number of MiB" in _health.check_device(
        "cuda", baseline=500 * mib)
    monkeypatch.delenv("ZL_WARM_MEMORY_MARGIN_MB")
    result = _health.check("cuda", "", _health.threads_now(), [], baseline=500 * mib)
    assert result["ok"] is False and result["memory"]["baseline_allocated_bytes"] == 500 * mib
    assert _health.baseline_allocated("cuda") == 600 * mib


class _DeviceBuffer:
    """A device tensor as the holders search reads one."""

    class _Storage:
        def __init__(self, nbytes):
            self._nbytes = nbytes

        def data_ptr(self):
            return id(self)

        def nbytes(self):
            return self._nbytes

    def __init__(self, nbytes, shape):
        self.device = types.SimpleNamespace(type="cuda")
        self.dtype, self.shape, self._storage = "torch.bool", shape, self._Storage(nbytes)

    def untyped_storage(self):
        return self._storage


def test_a_replaced_workers_line_names_who_holds_the_leftover(monkeypatch):
    # any_dim on an H100 left 1025 MiB allocated: one 2^30-element bool
    # tensor somebody kept. The line that replaces the worker says who.
    from zlcore_pytest import _health

    mib = 1 << 20
    torch = _FakeTorch(_MemoryDevice(held=1600 * mib, cached=0))
    torch.Tensor = _DeviceBuffer
    monkeypatch.setitem(sys.modules, "torch", torch)
    suite = types.ModuleType("zl_fake_any_dim")
    suite.last_mask = _DeviceBuffer(1024 * mib, [1024, 1024, 1024])
    monkeypatch.setitem(sys.modules, suite.__name__, suite)
    why = _health.check_device("cuda", baseline=500 * mib)
    assert why.startswith("the op left 1100 MiB of cuda memory allocated over the worker's baseline"), why
    assert why.endswith("; still reachable: 1024 MiB bool [1024, 1024, 1024] held by module zl_fake_any_dim"
                        ".last_mask"), why


class _BlasBinding:
    """torch._C as far as the health check asks: the BLAS workspaces the
    device's handles keep per stream, allocated until released."""

    def __init__(self, device, workspaces):
        self.device, self.workspaces, self.calls = device, workspaces, []

    def _cuda_clearCublasWorkspaces(self):
        self.calls.append(self.device.emptied)  # when: before the caches are emptied
        self.device.cached += self.workspaces  # freed to the allocator's cache, not to the device
        self.workspaces = 0


def test_health_hands_back_the_blas_workspaces_a_session_stream_kept(monkeypatch):
    from zlcore_pytest import _health

    mib = 1 << 20
    device = _MemoryDevice(held=8 * 32 * mib, cached=0)  # eight runs' workspaces, nothing else
    torch = _FakeTorch(device)
    torch._C = _BlasBinding(device, workspaces=8 * 32 * mib)
    monkeypatch.setitem(sys.modules, "torch", torch)
    memory = {}
    assert _health.check_device("cuda", memory) is None
    assert torch._C.calls == [0]  # released once, before empty_cache gave the blocks back
    assert memory == {"reserved_bytes": 0, "allocated_bytes": 0}
    _health.release_blas_workspaces("musa")  # a device name torch binds nothing to: nothing to do

    def refuses():
        raise RuntimeError("CUDA error: not permitted")

    torch._C._cuda_clearCublasWorkspaces = refuses  # what could not be handed back is no verdict
    assert _health.check_device("cuda", memory) is None
    del torch._C  # a torch without the binding: the check still runs
    assert _health.check_device("cuda", memory) is None


def test_health_reads_the_ops_device_errors(tmp_path):
    from zlcore_pytest import _health

    assert _health.check_failures(str(tmp_path)) is None  # no outcomes written
    (tmp_path / "outcomes.json").write_text(json.dumps({"tests": [
        {"node": "t::a", "device_error": False}, {"node": "t::b", "device_error": True, "message": "CUDA error: x"}]}))
    assert "device error in t::b" in _health.check_failures(str(tmp_path))


def test_health_threads_running_suite_code(tmp_path):
    import threading

    from zlcore_pytest import _health

    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "lingers.py").write_text(
        "import time\n"
        "def linger(stop):\n"
        "    while not stop.is_set():\n"
        "        time.sleep(0.01)\n")
    sys.path.insert(0, str(suite))
    try:
        import lingers
    finally:
        sys.path.remove(str(suite))
    before = _health.threads_now()
    stop = threading.Event()
    elsewhere = threading.Thread(target=stop.wait, name="library-pool")
    elsewhere.start()
    assert _health.check_threads(before, [str(suite)], grace_s=0.05) is None  # not the suite's code
    t = threading.Thread(target=lingers.linger, args=(stop,), name="op-thread")
    t.start()
    try:
        why = _health.check_threads(before, [str(suite)], grace_s=0.05)
        assert why is not None and "op-thread at lingers.py" in why
    finally:
        stop.set()
        t.join()
        elsewhere.join()
    assert _health.check_threads(before, [str(suite)], grace_s=0.05) is None


def test_health_threads_started_outside_threading_are_never_joined(tmp_path):
    # A thread a library starts natively (torch's autograd workers, for one)
    # shows in threading.enumerate() as a dummy thread once it touches
    # threading, and joining one raises: the check must look at its code
    # instead, and still name it when it runs the suite's code.
    import _thread
    import threading

    from zlcore_pytest import _health

    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "native_linger.py").write_text(
        "import threading, time\n"
        "def linger(ready, stop):\n"
        "    threading.current_thread()\n"
        "    ready.set()\n"
        "    while not stop.is_set():\n"
        "        time.sleep(0.01)\n")
    sys.path.insert(0, str(suite))
    try:
        import native_linger
    finally:
        sys.path.remove(str(suite))
    before = _health.threads_now()
    ready, stop = threading.Event(), threading.Event()
    idle = threading.Event()

    def library_thread():
        threading.current_thread()
        idle.set()
        stop.wait()

    _thread.start_new_thread(library_thread, ())
    _thread.start_new_thread(native_linger.linger, (ready, stop))
    assert idle.wait(5) and ready.wait(5)
    try:
        dummies = [t for t in _health.threads_now().values() if isinstance(t, threading._DummyThread)]
        assert len(dummies) >= 2
        why = _health.check_threads(before, [str(suite)], grace_s=0.05)
        assert why is not None and "native_linger.py" in why and "1 thread(s)" in why
    finally:
        stop.set()


def test_holders_name_where_a_large_leftover_hangs():
    # After an op, the worker's allocation stayed 1 GiB over its baseline:
    # the line that replaces the worker says who still holds the memory.
    import types

    from zlcore_pytest import _holders

    class Buffer:
        def __init__(self, nbytes):
            self.nbytes = nbytes

    def describe(obj):
        return (id(obj), obj.nbytes, "buffer") if isinstance(obj, Buffer) else None

    suite = types.ModuleType("zl_fake_suite_cache")
    suite.CACHE = {"last": [Buffer(1024 * _holders.MIB)]}

    class Timer:
        previous = Buffer(512 * _holders.MIB)

    def keeps():
        kept = Buffer(256 * _holders.MIB)
        return lambda: kept

    suite.callback = keeps()
    small = Buffer(1 * _holders.MIB)  # under the floor: not reported
    sys.modules[suite.__name__] = suite
    try:
        lines = _holders.largest_holders(describe, top=5)  # room for more: the 1 MiB one must not be there
    finally:
        del sys.modules[suite.__name__]
    assert len(lines) == 3, lines
    assert lines[0] == "1024 MiB buffer held by module zl_fake_suite_cache.CACHE['last'][0]"
    assert lines[1].startswith("512 MiB buffer held by class ") and lines[1].endswith("Timer.previous"), lines[1]
    assert lines[2].startswith("256 MiB buffer held by module zl_fake_suite_cache.callback"), lines[2]
    assert "(closure cell)" in lines[2]
    del small


def test_the_worker_lets_go_of_what_a_failed_test_held(tmp_path):
    # pytest keeps a failed test's traceback in sys.last_* (its frames, the
    # op's inputs); in a warm worker that is device memory the next op lacks.
    import gc
    import types
    import weakref

    import pytest as outer_pytest
    from zlcore_pytest import worker

    box = types.ModuleType("zl_held_box")
    sys.modules["zl_held_box"] = box
    (tmp_path / "test_holds.py").write_text(
        "import zl_held_box\n\n"
        "class Inputs:\n    pass\n\n"
        "def test_fails_holding_inputs():\n"
        "    inputs = Inputs()\n"
        "    zl_held_box.ref = __import__('weakref').ref(inputs)\n"
        "    assert inputs is None\n")
    saved = {n: getattr(sys, n) for n in ("last_type", "last_value", "last_traceback", "last_exc") if hasattr(sys, n)}
    try:
        code = outer_pytest.main(["-q", "-p", "no:cacheprovider", str(tmp_path / "test_holds.py")])
        assert code == 1
        gc.collect()
        assert isinstance(box.ref, weakref.ref) and box.ref() is not None  # pytest still holds it
        worker.forget_the_last_failure()
        gc.collect()
        assert box.ref() is None
    finally:
        del sys.modules["zl_held_box"]
        for name, value in saved.items():
            setattr(sys, name, value)


def test_the_imported_heap_is_frozen_once_and_what_comes_after_is_still_collected():
    # The suite collects after every shape; the imports are frozen out of that
    # walk, once per process, and an op's own cycles are still collected.
    script = (
        "import gc, weakref\n"
        "from zlcore_pytest._heap import freeze_imports\n"
        "class Node: pass\n"
        "first = freeze_imports(); frozen = gc.get_freeze_count()\n"
        "second = freeze_imports()\n"
        "a = Node(); a.me = a; ref = weakref.ref(a); del a\n"
        "gc.collect()\n"
        "print(first, second, frozen > 0, gc.get_freeze_count() == frozen, ref() is None)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(PLUGINS)}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "False", "True", "True", "True"]


def test_the_cluster_check_reads_graph_timings_only():
    # The check compares a graph's replays with the eager calls; a direct
    # timing that keeps its own estimate in eager_ms has nothing to compare.
    from zlcore_pytest import cluster_fix
    from zlcore_pytest.timers.base import CaptureFailed, SideTiming

    def timing(timer):
        t = SideTiming.over_placements(timer, [3.0], eager_ms=2.0)
        t.cluster = True
        return t

    probe = cluster_fix.ClusterProbe()
    probe.check(timing("direct"))
    with pytest.raises(CaptureFailed):
        probe.check(timing("graph"))


def test_the_worker_empties_flag_gems_launch_caches_between_ops():
    # LibEntry launches a kernel it ran before without asking the autotuner,
    # so a warm worker would carry one op's configs into the next.
    import types

    from zlcore_pytest import worker

    class LibEntry:
        def __init__(self, held):
            self.kernel_cache = ({"sig": ("kernel", {"BLOCK": 64})} if held else {}, {})

    ops = types.ModuleType("flag_gems.ops.softmax")
    ops.softmax_kernel, ops.idle_kernel = LibEntry(True), LibEntry(False)
    other = types.ModuleType("not_flag_gems")
    other.kernel = LibEntry(True)
    modules = {"flag_gems.ops.softmax": ops, "not_flag_gems": other, "flag_gems.gone": None}
    assert worker.clear_launch_caches(modules) == 1
    assert ops.softmax_kernel.kernel_cache == ({}, {})
    assert other.kernel.kernel_cache[0], "only flag_gems' kernels are FlagGems' LibEntry"
    assert worker.clear_launch_caches(modules) == 0


def test_ab_injected_effect_slows_one_sides_flaggems_times_in_a_copy(tmp_path):
    script = REPO / "scripts" / "ab_injected_effect.py"
    ab, copy = tmp_path / "AB", tmp_path / "copy"
    row = {"op": "abs", "shape": "[[64]]", "latency_ms": 1.0, "placements_ms": [1.0, 2.0], "samples_ms": [1.0],
           "readings": None, "eager_ms": 2.0, "latency_base_ms": 4.0, "placements_base_ms": [4.0]}
    for side in ("A", "A2"):
        (ab / "runs" / "abs" / "r1-t1" / side).mkdir(parents=True)
        (ab / "runs" / "abs" / "r1-t1" / side / "results.jsonl").write_text(json.dumps(row) + "\n")
    (ab / "aa.json").write_text("{}")
    run = subprocess.run([sys.executable, str(script), str(ab), str(copy), "--pct", "10"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    scaled = json.loads((copy / "runs" / "abs" / "r1-t1" / "A2" / "results.jsonl").read_text())
    assert scaled["latency_ms"] == pytest.approx(1.1) and scaled["placements_ms"] == pytest.approx([1.1, 2.2])
    assert scaled["eager_ms"] == pytest.approx(2.2) and scaled["readings"] is None
    # torch's side, side A and the A/B itself stay as measured; the old report is not copied.
    assert scaled["latency_base_ms"] == 4.0 and scaled["placements_base_ms"] == [4.0]
    assert json.loads((copy / "runs" / "abs" / "r1-t1" / "A" / "results.jsonl").read_text()) == row
    assert json.loads((ab / "runs" / "abs" / "r1-t1" / "A2" / "results.jsonl").read_text()) == row
    assert not (copy / "aa.json").exists()
    again = subprocess.run([sys.executable, str(script), str(ab), str(copy)], capture_output=True, text=True)
    assert again.returncode != 0 and "exists" in again.stderr

    # --found: rows of 10 us or more that compare tested, and of them those read SLOWER.
    (copy / "aa.json").write_text(json.dumps({"rows": [
        {"mean_ms": 0.02, "tested": True, "false_verdicts": 1},
        {"mean_ms": 0.02, "tested": True, "false_verdicts": 0},
        {"mean_ms": 0.005, "tested": True, "false_verdicts": 1},
        {"mean_ms": 0.5, "tested": False, "false_verdicts": 0}]}))
    found = subprocess.run([sys.executable, str(script), "--found", str(copy)], capture_output=True, text=True)
    assert found.stdout.strip() == "rows of 10 us or more: 2 tested, 1 found (50 %)"


def test_a_profiled_worker_op_leaves_its_statistics_and_its_answer(tmp_path):
    # ZL_WORKER_PROFILE: where a warm op's seconds go inside the worker. The
    # op's own answer comes back unchanged, and both files are whole.
    import pstats

    from zlcore_pytest import worker

    def op():
        sum(range(1000))
        return 0, 1.5, {"modules_purged": 3}, {"ok": True}

    assert worker._profiled(str(tmp_path), 7, op) == (0, 1.5, {"modules_purged": 3}, {"ok": True})
    stem = tmp_path / f"worker{os.getpid()}-op007"
    assert pstats.Stats(str(stem) + ".prof").total_calls > 0
    assert "cumulative" in open(str(stem) + ".txt").read()
    assert sorted(p.name for p in tmp_path.iterdir()) == [stem.name + ".prof", stem.name + ".txt"]


def test_a_worker_freezes_what_an_op_left_and_still_frees_an_ops_garbage():
    # After an op, what the worker keeps (a library the op imported) is frozen
    # so the next op's collections skip it; the op's own garbage (a purged
    # module's cycle) is collected first; and every FULL_EVERY ops a cycle
    # that frozen objects formed and then let go of is freed too. Run in a
    # child: freezing is process-wide.
    code = r"""
import gc, sys, weakref
from zlcore_pytest import _heap

class Node:
    pass

def cycle():
    a, b = Node(), Node()
    a.other, b.other = b, a
    return a

assert _heap.freeze_imports()
frozen_at_start = gc.get_freeze_count()
kept = [cycle() for _ in range(1000)]        # a library the op imported: the worker keeps it
garbage = cycle(); dropped = weakref.ref(garbage); del garbage   # the op's purged module
_heap.after_op(1)
assert dropped() is None, "the op's garbage was frozen instead of collected"
assert gc.get_freeze_count() >= frozen_at_start + 2000, "what the op left was not frozen"
gone = weakref.ref(kept[0]); del kept[:]       # a later op lets go of a frozen cycle
for n in range(2, _heap.FULL_EVERY):
    _heap.after_op(n)
assert gone() is not None, "frozen cycles are only freed by the periodic full collection"
_heap.after_op(_heap.FULL_EVERY)
assert gone() is None, "the periodic full collection left a frozen cycle"
print("ok")
"""
    env = dict(os.environ, PYTHONPATH=str(PLUGINS))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_a_run_that_names_its_test_file_skips_the_siblings_only(tmp_path):
    # pytest builds (and drops) a node for every sibling of the file a run
    # names; zlcore tells it to skip them. The named file, conftest.py and
    # __init__.py are never skipped, a file named through a link is found,
    # and a directory argument (or a missing file) turns the pruning off.
    from zlcore_pytest._scope import NamedFiles

    bench = tmp_path / "suite" / "benchmark"
    bench.mkdir(parents=True)
    for name in ("test_abs.py", "test_add.py", "conftest.py", "__init__.py", "helpers.py"):
        (bench / name).write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "suite")
    named = NamedFiles(["benchmark/test_abs.py::test_abs"], tmp_path / "link")
    assert not named.skips(bench / "test_abs.py")
    assert named.skips(bench / "test_add.py") and named.skips(bench / "helpers.py")
    assert not named.skips(bench / "conftest.py") and not named.skips(bench / "__init__.py")
    assert not named.skips(bench)  # directories: pytest walks them to reach the file
    assert not NamedFiles(["benchmark"], tmp_path / "suite").skips(bench / "test_add.py")
    assert not NamedFiles(["benchmark/test_gone.py"], tmp_path / "suite").skips(bench / "test_add.py")
    assert not NamedFiles([], tmp_path / "suite").skips(bench / "test_add.py")


def test_the_named_test_still_runs_with_the_siblings_skipped(tmp_path):
    suite = tmp_path / "suite"
    (suite / "benchmark").mkdir(parents=True)
    (suite / "benchmark" / "__init__.py").write_text("")
    (suite / "benchmark" / "test_abs.py").write_text("def test_abs():\n    pass\n")
    (suite / "benchmark" / "test_broken.py").write_text("this is not python\n")
    env = dict(os.environ, PYTHONPATH=str(PLUGINS), ZL_CHILD_DIR=str(tmp_path / "child"))
    (tmp_path / "child").mkdir()

    def pytest_run(*args):
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                               "zlcore_pytest.outcomes", *args], cwd=suite, env=env, capture_output=True, text=True)

    named = pytest_run("benchmark/test_abs.py")
    assert named.returncode == 0 and "1 passed" in named.stdout, named.stdout + named.stderr
    whole = pytest_run("benchmark")  # a directory: every file is collected, the broken one too
    assert whole.returncode != 0 and "test_broken.py" in whole.stdout


def test_compiling_ahead_compiles_each_config_once_without_launching_and_counts_failures():
    import threading

    from zlcore_pytest import _precompile

    class Config:
        def __init__(self, block):
            self.block = block

        def all_kwargs(self):
            return {"BLOCK": self.block, "num_warps": 4}

    calls = []

    class Kernel:
        def run(self, *args, grid, warmup, **kwargs):
            calls.append((args, grid, warmup, kwargs["BLOCK"], threading.current_thread().name))
            if kwargs["BLOCK"] == 128:
                raise RuntimeError("out of resources")  # its benchmark meets it again and handles it

    class Tuner:
        fn = Kernel()
        nargs = {"x": "tensor", "n": 4096}

    ahead = _precompile.CompileAhead(3)
    configs = [Config(b) for b in (16, 32, 64, 128)]
    assert ahead.wanted(configs) and not ahead.wanted(configs[:1])
    ahead.run(Tuner(), configs, {"grid": (8,), "warmup": False})
    assert sorted(c[3] for c in calls) == [16, 32, 64, 128]
    assert all(c[0] == ("tensor", 4096) and c[1] == (8,) and c[2] is True for c in calls), "a call launched"
    assert calls[0][3] == 16 and calls[0][4] == threading.current_thread().name  # the first, in the caller
    assert all(c[4].startswith("zl-compile") for c in calls[1:])
    assert ahead.as_json() == {"threads": 3, "tuners": 1, "configs": 4, "failed": 1,
                               "seconds": ahead.as_json()["seconds"], "error": None}
    assert not _precompile.CompileAhead(1).wanted(configs) and not _precompile.CompileAhead(0).wanted(configs)


def test_compile_ahead_setting():
    from zlcore_pytest import _precompile

    given = ("", "off", "0", "8", " 2 ")
    assert [_precompile.threads_from_env({"ZL_COMPILE_AHEAD": v}) for v in given] == [0, 0, 0, 8, 2]
    assert _precompile.threads_from_env({}) == 0
    for bad in ("-1", "lots", "65", "1.5", " ", "\uff15", "\u0663", "1_0", "+5"):
        with pytest.raises(_precompile.SettingError, match="ZL_COMPILE_AHEAD"):
            _precompile.threads_from_env({"ZL_COMPILE_AHEAD": bad})


def test_a_standby_imports_only_what_touches_no_device_before_it_takes_over():
    from zlcore_pytest import worker

    names = ["torch", "triton", "flag_gems", "numpy"]
    assert worker.standby_split(names, {}) == (["torch", "triton"], ["flag_gems", "numpy"])
    assert worker.standby_split(names, {"ZL_WORKER_STANDBY_PREIMPORT": "numpy, torch"}) == \
        (["torch", "numpy"], ["triton", "flag_gems"])
    # Nothing early: the standby still waits, and imports everything when it takes over.
    assert worker.standby_split(names, {"ZL_WORKER_STANDBY_PREIMPORT": ""}) == ([], names)
