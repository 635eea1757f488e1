"""Issue 19's host A/A: the example suite against itself, every op, both dtypes.

The bound: at most one row in 50 FASTER or SLOWER. It is asserted on the
setup that can hold it on the machines CI runs on. On those 2-core VMs the
host runs in two states, one 50-70 % slower than the other, each lasting
hundreds of milliseconds; sequential batches compared with `zlcore compare`
read 7-8 % of rows FASTER or SLOWER, since a whole side can sit in the slow
state (docs/evidence/h200-2026-12-04-session15.md, "The host", and
h200-2026-12-04-session16.md, "The host"). `zlcore ab` alternates the
sides round by round, so both sides draw both states, and its rank test
over rounds calls what it cannot separate NOISY. The test prints the
verdict counts: most rows are NOISY on such a machine, and that is the
honest answer; the check is that none of them says FASTER or SLOWER.
"""

import json

import zltest
from zltest import EXAMPLE_SUITE, PY, clean_env

# What the A/A must not inherit: zlcore's knobs, FlagGems' selectors, a replay or suite from the caller.
STRIP = ("ZL_", "BENCH_LEVEL", "OP", "SHAPE_", "REPLAY_FROM", "FLAGGEMS_DIR")
OPS = ["abs", "abs_", "add", "add_", "exp", "layer_norm", "mm", "mul", "softmax", "sum"]


def test_the_example_suite_against_itself_is_faster_or_slower_on_at_most_one_row_in_50(tmp_path):
    out = tmp_path / "aa"
    r = zltest.zl("ab", "--backend", "host", "--a", EXAMPLE_SUITE, "--b", EXAMPLE_SUITE, "--a-python", PY,
                  "--b-python", PY, "--ops", ",".join(OPS), "--out", out,
                  env=clean_env(STRIP, ZL_HOST_CLOCK="thread"), timeout=800)
    print(r.stdout[-4000:], r.stderr[-2000:])
    assert r.returncode == 0, r.stdout + r.stderr
    summary = json.loads((out / "ab_summary.json").read_text())
    verdicts = summary["verdicts"]
    rows = json.loads((out / "report.json").read_text())["rows"]
    assert {row["op"] for row in rows} >= set(OPS) and len(rows) >= 50
    # Every row was tested on its rounds: none is short of samples.
    assert verdicts.get("UNCONFIRMED", 0) == 0 and verdicts.get("ERROR", 0) == 0, verdicts
    wrong = verdicts.get("FASTER", 0) + verdicts.get("SLOWER", 0)
    print(f"host A/A of the example suite: {len(rows)} rows, verdicts {verdicts}, {wrong} FASTER/SLOWER")
    assert wrong * 50 <= len(rows), verdicts
