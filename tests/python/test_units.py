"""In-process checks of helpers that need no pytest child."""

import sys

import pytest

from conftest import PLUGINS, STUBS

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
