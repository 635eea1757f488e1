"""In-process checks of helpers that need no pytest child."""

import sys

import pytest

from conftest import PLUGINS, STUBS

sys.path[:0] = [str(PLUGINS)]

from zlcore_pytest import _stats, device_setup  # noqa: E402


def test_median_and_spread():
    assert _stats.median([3.0, 1.0, 2.0]) == 2.0
    assert _stats.median([1.0, 2.0, 3.0, 4.0]) == 2.5
    assert _stats.spread_pct([1.0]) == 0.0
    assert _stats.spread_pct([0.9, 1.0, 1.2]) == pytest.approx(30.0)
    # A sustained reading: two clock levels and an excursion; the middle half spans the levels.
    sustained = [1.0] * 40 + [1.02] * 40 + [1.5] * 10
    assert _stats.spread_pct(sustained) == pytest.approx(50.0 / 1.02)
    assert _stats.middle_half_pct(sustained) == pytest.approx(2.0 / 1.02)
    assert _stats.middle_half_pct([1.0] * 6 + [2.0] * 2) == 0.0  # the quartiles mirror each other
    assert _stats.middle_half_pct([1.0, 2.0, 3.0]) == pytest.approx(100.0)  # too few: the full range


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
    from zlcore_pytest import graph_capture

    import torch

    assert graph_capture.resolve_dotted("torch.cuda.CUDAGraph") is torch.cuda.CUDAGraph
    with pytest.raises(ImportError):
        graph_capture.resolve_dotted("no_such_module_zl.Graph")
