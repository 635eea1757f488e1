"""The placement helper: clones on stub torch tensors and NumPy arrays, seeded shifts, release."""

import collections
import gc
import sys
import weakref

import pytest

from conftest import PLUGINS, STUBS

sys.path[:0] = [str(PLUGINS)]

from zlcore_pytest.timers import placement  # noqa: E402
from zlcore_pytest.timers.settings import PlacementSettings  # noqa: E402


@pytest.fixture
def torch(monkeypatch):
    monkeypatch.syspath_prepend(str(STUBS))
    for name in [m for m in sys.modules if m.split(".")[0] in ("torch", "triton")]:
        monkeypatch.delitem(sys.modules, name)
    import torch

    return torch


def test_tensors_get_new_storage_with_the_same_layout(torch):
    x = torch.randn(64, 32, dtype=torch.float16, device="cuda")
    (y,), _ = placement.clone_inputs((x,), {})
    assert y is not x and y.data_ptr() != x.data_ptr()
    assert y.shape == x.shape and y.stride() == x.stride() and y.dtype is x.dtype and y.device == "cuda"
    assert not y.requires_grad


def test_a_tensor_that_requires_grad_is_cloned_into_a_leaf_that_does(torch):
    x = torch.randn(16, device="cuda").requires_grad_()
    (y,), _ = placement.clone_inputs((x,), {})
    assert y.requires_grad and y.is_leaf and y.data_ptr() != x.data_ptr()


def test_an_intermediate_that_requires_grad_is_cloned_into_an_intermediate(torch):
    # FlagGems' addbmm_ bias: created without grad, then an in-place op with
    # inputs that require grad makes it an intermediate. A leaf clone of it
    # refuses the next in-place op; the original does not.
    bias = torch.randn(16, device="cuda")
    bias.mul_(torch.ones((), device="cuda", requires_grad=True))
    assert bias.requires_grad and not bias.is_leaf
    bias.mul_(torch.ones((), device="cuda"))
    with torch.no_grad():
        (y,), _ = placement.clone_inputs((bias,), {})
    assert y.requires_grad and not y.is_leaf and y.data_ptr() != bias.data_ptr()
    y.mul_(torch.ones((), device="cuda"))
    leaf = torch.randn(16, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf.mul_(torch.ones((), device="cuda"))


def test_other_arguments_pass_through_and_containers_are_rebuilt(torch):
    Pair = collections.namedtuple("Pair", "a b")
    x = torch.randn(8, device="cuda")
    size = torch.Size((8,))
    args = (x, 3, "mean", None, torch.float16, [x, (1, 2)], Pair(x, 2.5), size)
    kwargs = {"dim": -1, "weight": x, "nested": {"t": [x]}}
    new_args, new_kwargs = placement.clone_inputs(args, kwargs)
    c = new_args[0]
    assert c is not x and c.data_ptr() != x.data_ptr()
    assert new_args[1:5] == (3, "mean", None, torch.float16) and new_args[4] is torch.float16
    # One object passed several times stays one object: an op that aliases its
    # arguments still aliases them.
    assert new_args[5][0] is c and new_args[5][1] == (1, 2)
    assert isinstance(new_args[6], Pair) and new_args[6].a is c and new_args[6].b == 2.5
    assert isinstance(new_args[7], torch.Size) and new_args[7] == size
    assert new_kwargs["dim"] == -1 and new_kwargs["weight"] is c and new_kwargs["nested"]["t"][0] is c


def test_views_keep_their_strides_offsets_and_shared_storage(torch):
    base = torch.randn(32, 16, device="cuda")
    transposed = base.t()  # dense, not contiguous: a plain clone keeps its strides
    (t,), _ = placement.clone_inputs((transposed,), {})
    assert t.stride() == (1, 16) and t.data_ptr() != base.data_ptr()

    # Two views of one storage, one at an offset: both land in one new storage
    # at the same distance apart, so alignment and aliasing are as they were.
    head = base.as_strided((8, 16), (16, 1), 0)
    tail = base.as_strided((8, 16), (16, 1), 64)
    (h, tl), _ = placement.clone_inputs((head, tail), {})
    assert h.untyped_storage() is tl.untyped_storage()
    assert h.untyped_storage() is not base.untyped_storage()
    assert tl.data_ptr() - h.data_ptr() == tail.data_ptr() - head.data_ptr()
    assert tl.storage_offset() == 64 and tl.stride() == (16, 1)

    # A lone view away from its storage's start keeps its offset too.
    (alone,), _ = placement.clone_inputs((tail,), {})
    assert alone.storage_offset() == 64 and alone.untyped_storage().nbytes() == base.untyped_storage().nbytes()


def test_arrays_are_copied_so_in_place_ops_do_not_leak_between_placements():
    np = pytest.importorskip("numpy")
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    f = np.asfortranarray(a)
    (ca, cf), kw = placement.clone_inputs((a, f), {"b": a})
    assert kw["b"] is ca and ca is not a and not np.shares_memory(ca, a)
    assert cf.flags.f_contiguous and (cf == f).all()
    np.add(ca, 1, out=ca)  # what an in-place op does to its placement
    assert (a == np.arange(12, dtype=np.float32).reshape(3, 4)).all()


class Held:
    def __init__(self, nbytes):
        self.nbytes = nbytes


class RecordingMemory:
    def __init__(self):
        self.held = []

    def hold(self, nbytes):
        obj = Held(nbytes)
        self.held.append(weakref.ref(obj))
        return obj


def shifts(seed, context, n=4, max_mb=128.0):
    placer = placement.Placer(PlacementSettings(seed=seed, max_shift_mb=max_mb), RecordingMemory())
    rng = placer.rng(context)
    return [placement.draw_shift(rng, max_mb).as_list() for _ in range(n)]


def test_shifts_are_seeded_per_side_and_span_both_pools():
    side = {"op": "abs", "dtype": "float16", "shape": "[[64, 64]]", "side": "gems"}
    first = shifts(0, side)
    assert first == shifts(0, side)  # reproducible given the seed
    assert first != shifts(1, side)
    assert first != shifts(0, dict(side, side="base"))
    for small, large in shifts(0, side, n=200):
        assert 512 <= small < placement.MIB and small % 512 == 0
        assert placement.MIB <= large <= 128 * placement.MIB and large % 512 == 0
    assert len({s for s, _ in shifts(0, side, n=50)}) > 40  # they vary
    assert shifts(0, side, max_mb=0) == [[0, 0]] * 4  # shifting off: clones only


def test_a_placement_holds_its_shift_and_clones_then_lets_them_go(torch):
    memory = RecordingMemory()
    placer = placement.Placer(PlacementSettings(seed=3), memory)
    x = torch.randn(16, device="cuda")
    rng = placer.rng({"op": "abs"})
    with placer.place(0, (x,), {"k": x}, rng) as p:
        clone = weakref.ref(p.args[0])
        assert p.kwargs["k"] is p.args[0] and p.index == 0
        assert [h().nbytes for h in memory.held] == p.shift.as_list()
    gc.collect()
    assert clone() is None and all(h() is None for h in memory.held)


def test_shifts_go_to_the_torch_device_or_the_host(torch):
    assert isinstance(placement.memory_for("cuda"), placement.TorchMemory)
    held = placement.memory_for("cuda").hold(4096)
    assert held.device == "cuda" and held.dtype is torch.uint8 and held.numel() == 4096
    for name in ("cpu", "", "host"):
        assert isinstance(placement.memory_for(name), placement.HostMemory)
