"""examples/known-effect on the host backend: the measured side is X % slower, and the rows say so.

Timing on a shared CI machine is noisy, so the bounds are loose and the
numbers are printed: the test checks behaviour (every op runs, every row has
its placements, the slowdown shows in the aggregate), not precision.
"""

import math

import pytest

import zltest
from zltest import KNOWN_EFFECT_SUITE as SUITE, PY, identity, read_jsonl

OPS = ["fma_loop", "sin_loop", "copy_loop", "sum_loop", "norm_loop"]
# What a run must not inherit: zlcore's knobs and FlagGems' selectors.
STRIP = ("ZL_", "BENCH_LEVEL", "OP", "SHAPE_")
# The NumPy loops are single-threaded: the thread's CPU time is their time,
# and unlike the wall clock it does not count the stretches a busy shared
# machine spends running something else (docs/results.md, "The host timer's clock").
CLOCK = "thread"


def run_op(out, op, pct, **env):
    r = zltest.zl("run", "--backend", "host", "--flaggems-dir", SUITE, "--op", op, "--python", PY, "--out", out,
                  env=zltest.clean_env(STRIP, ZL_KNOWN_EFFECT_PCT=pct, ZL_HOST_CLOCK=CLOCK, **env), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return read_jsonl(out / "results.jsonl"), identity(out)


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    base = tmp_path_factory.mktemp("known_effect")
    out = {}
    for pct in (0, 10):
        rows, idents = [], {}
        for op in OPS:
            r, ident = run_op(base / f"x{pct}" / op, op, pct)
            rows += r
            idents[op] = ident
        out[pct] = ({(r["op"], r["dtype"], r["shape"]): r for r in rows}, idents)
    return out


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def test_every_op_runs_with_placements_recorded(sides):
    rows, idents = sides[0]
    assert len(rows) >= 50
    assert {op for op, _, _ in rows} == set(OPS)
    for row in rows.values():
        assert row["error"] is None and row["timer"] == row["timer_base"] == "host"
        assert row["repeats"] == len(row["placements_ms"]) == len(row["placements_base_ms"]) == 5
        assert row["latency_ms"] == pytest.approx(sum(row["placements_ms"]) / 5, rel=1e-9)
        assert row["latency_base_ms"] == pytest.approx(sum(row["placements_base_ms"]) / 5, rel=1e-9)
    settings = idents["fma_loop"]["timer"]["settings"]
    assert settings["host_repeat"] == 5 and settings["host_clock"] == CLOCK
    assert settings["placement"] == {"seed": 0, "max_shift_mb": 128.0, "memory_pct": 25.0}


def test_ten_percent_more_work_reads_about_ten_percent_slower(sides):
    a, _ = sides[0]
    b, _ = sides[10]
    keys = sorted(set(a) & set(b))
    assert len(keys) >= 50
    measured = geomean([b[k]["latency_ms"] / a[k]["latency_ms"] for k in keys])
    reference = geomean([b[k]["latency_base_ms"] / a[k]["latency_base_ms"] for k in keys])
    # The reference side does the same work in both runs: dividing by its
    # ratio takes out whatever else changed on the machine between them.
    effect = measured / reference
    within_a = geomean([a[k]["latency_ms"] / a[k]["latency_base_ms"] for k in keys])
    within_b = geomean([b[k]["latency_ms"] / b[k]["latency_base_ms"] for k in keys])
    slower = sum(b[k]["latency_ms"] > a[k]["latency_ms"] for k in keys)
    print(f"\nknown effect 10 %: {len(keys)} rows; measured B/A {measured:.4f}, reference B/A {reference:.4f}, "
          f"effect {effect:.4f}; measured/reference within A {within_a:.4f}, within B {within_b:.4f}; "
          f"{slower} rows slower")
    assert 1.03 < effect < 1.25
    assert 1.03 < within_b / within_a < 1.25
