"""zlcore's own memory is never why an op fails: bounded placement copies and a lean fallback.

The stub device counts every storage on it (tests/support/stubs/gpu/torch/_stub.py); its
knobs shrink the device (STUB_MEMORY_TOTAL) or fail allocations past a limit
(STUB_OOM_ABOVE_BYTES) or in do_bench (STUB_OOM_DO_BENCH).
"""

import sys
import types

import pytest

from conftest import PLUGINS

sys.path[:0] = [str(PLUGINS)]

from zlcore_pytest._memory import DeviceMemory, out_of_memory  # noqa: E402
from zlcore_pytest.timers.placement import MemoryBudget  # noqa: E402

FAST = ["--level", "core", "--warmup", "1", "--iter", "5"]
MIB = 1 << 20
# The fake suite's abs: (dtype, shape) -> input bytes.
INPUT = {("float16", "[[64, 64]]"): 8192, ("float16", "[[1024]]"): 2048, ("float16", "[[64, 512, 8]]"): 512 * 1024,
         ("float32", "[[64, 64]]"): 16384, ("float32", "[[1024]]"): 4096, ("float32", "[[64, 512, 8]]"): MIB}


def test_copies_over_the_share_of_the_device_are_not_made(run_child):
    # A 3 MiB device: 25 % is 768 KiB, so only the 1 MiB input's copies are refused.
    run = run_child(["benchmark/test_ops.py", "-m", "abs"] + FAST, STUB_MEMORY_TOTAL=str(3 * MIB),
                    ZL_PLACEMENT_MAX_SHIFT_MB="0")
    assert run.rc == 0, run.output
    rows = {(r["dtype"], r["shape"]): r for r in run.rows()}
    assert set(rows) == set(INPUT)
    for key, row in rows.items():
        if INPUT[key] > 512 * 1024:
            for side in ("", "_base"):
                assert row["placement_note" + side].startswith(
                    "copies of 1.00 MiB exceed ZL_PLACEMENT_MEMORY_PCT=25 % of 3.00 MiB"), row
            # One placement, whatever the timer read: compare's test gets one value.
            assert row["repeats"] == 1 and len(row["placements_ms"]) == len(row["placements_base_ms"]) == 1
            assert row["memory_added_bytes"] <= INPUT[key]  # one call's output, no copy of the input
            assert row["error"] is None and row["latency_ms"] > 0
        else:
            assert row["placement_note"] is None and row["placement_note_base"] is None
            assert row["repeats"] == 4
            assert row["memory_added_bytes"] >= 2 * INPUT[key]  # a copy and an output
    assert run.child("timing")["sides_lean"] == 2


def test_out_of_memory_in_zlcores_copies_measures_the_side_again_lean(run_child):
    # Room for the suite's 1 MiB input and its output, not for a copy besides them.
    run = run_child(["benchmark/test_ops.py", "-m", "abs"] + FAST, STUB_OOM_ABOVE_BYTES=str(2 * MIB + MIB // 2),
                    ZL_PLACEMENT_MAX_SHIFT_MB="0")
    assert run.rc == 0, run.output
    rows = {(r["dtype"], r["shape"]): r for r in run.rows()}
    big = rows[("float32", "[[64, 512, 8]]")]
    for side in ("", "_base"):
        assert big["placement_note" + side].startswith("out of memory in zlcore's measurement"), big
    assert big["error"] is None and big["latency_ms"] > 0 and big["repeats"] == 1
    assert "out of memory" in big["fallback_reason"]
    for key, row in rows.items():
        if key != ("float32", "[[64, 512, 8]]"):
            assert row["placement_note"] is None and row["repeats"] == 4, row
    outcomes = run.child("outcomes")
    assert outcomes is None or not any(t.get("harness") for t in outcomes.get("tests", []))


def test_out_of_memory_also_lean_fails_the_row_not_the_op(run_child):
    run = run_child(["benchmark/test_ops.py", "-m", "abs"] + FAST, STUB_OOM_ABOVE_BYTES=str(2 * MIB + MIB // 2),
                    STUB_OOM_DO_BENCH="1", ZL_PLACEMENT_MAX_SHIFT_MB="0")
    assert run.rc == 0, run.output  # the test went on to its other shapes
    rows = {(r["dtype"], r["shape"]): r for r in run.rows()}
    big = rows[("float32", "[[64, 512, 8]]")]
    assert "out of memory in zlcore's measurement" in big["error"]
    assert "again lean, on the suite's own inputs" in big["error"]
    assert all(r["error"] is None for k, r in rows.items() if k != ("float32", "[[64, 512, 8]]"))


def test_out_of_memory_in_the_suites_own_call_is_the_suites(run_child):
    # No room even for the op's output beside its input: FlagGems alone fails the same way.
    run = run_child(["benchmark/test_ops.py", "-m", "abs"] + FAST, STUB_OOM_ABOVE_BYTES=str(MIB + MIB // 2),
                    ZL_PLACEMENT_MAX_SHIFT_MB="0")
    assert run.rc == 1, run.output
    failed = [t for t in run.child("outcomes")["tests"] if t["outcome"] == "failed"]
    assert failed and not failed[0]["harness"], failed
    assert "OutOfMemoryError" in failed[0]["exc_type"]


class FakeDevice:
    def __init__(self, total, free, reserved=0, allocated=0, fraction=None):
        self.total, self.free, self.reserved, self.allocated = total, free, reserved, allocated
        self.fraction = fraction
        self.emptied = 0

    def is_initialized(self):
        return True

    def mem_get_info(self):
        return self.free, self.total

    def memory_reserved(self):
        return self.reserved

    def memory_allocated(self):
        return self.allocated

    def empty_cache(self):
        self.emptied += 1
        self.free += self.reserved - self.allocated
        self.reserved = self.allocated

    def get_per_process_memory_fraction(self):
        if self.fraction is None:
            raise AttributeError("no fraction")
        return self.fraction


@pytest.fixture
def fake(monkeypatch):
    def make(**kw):
        device = FakeDevice(**kw)
        monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(fakedev=device))
        return device, DeviceMemory("fakedev")

    return make


def test_the_budget_is_a_share_of_what_the_allocator_may_use(fake):
    device, memory = fake(total=80 * 1024 * MIB, free=70 * 1024 * MIB, fraction=0.6)  # 48 GiB of 80
    budget = MemoryBudget(memory, 25.0)
    assert budget.refuse(12 * 1024 * MIB - 1) is None
    assert budget.refuse(12 * 1024 * MIB + 1) == "copies of 12.00 GiB exceed ZL_PLACEMENT_MEMORY_PCT=25 % of 48.00 GiB"


def test_the_budget_hands_idle_blocks_back_before_it_refuses(fake):
    gib = 1024 * MIB
    device, memory = fake(total=80 * gib, free=2 * gib, reserved=10 * gib, allocated=4 * gib)
    budget = MemoryBudget(memory, 25.0)
    assert budget.refuse(7 * gib) is None  # 2 free + 6 idle
    assert budget.refuse(9 * gib) == "copies of 9.00 GiB exceed the 8.00 GiB free"
    assert device.emptied == 1


def test_out_of_memory_is_found_down_the_chain():
    class OutOfMemoryError(RuntimeError):
        pass

    try:
        try:
            raise OutOfMemoryError("CUDA out of memory")
        except OutOfMemoryError as inner:
            raise RuntimeError("direct timer failed") from inner
    except RuntimeError as outer:
        assert out_of_memory(outer)
    assert not out_of_memory(ValueError("shape mismatch"))


def test_a_placements_copies_go_when_it_ends_without_the_collector():
    # A reference cycle around the copies kept them on the device until the
    # next collection: one set per placement, gigabytes each for large inputs.
    import gc
    import random
    import weakref

    import numpy as np

    from zlcore_pytest.timers.placement import HostMemory, Placer
    from zlcore_pytest.timers.settings import PlacementSettings

    placer = Placer(PlacementSettings(max_shift_mb=0.0), HostMemory())
    original = np.ones(1000)
    gc.disable()
    try:
        with placer.place(0, (original, [original]), {"out": original}, random.Random(0)) as p:
            copy = weakref.ref(p.args[0])
            assert p.args[0] is not original and p.args[1][0] is p.args[0]  # aliasing kept
        assert copy() is None
    finally:
        gc.enable()
