"""The host backend's bounds: the example suite against itself, and +10 % more work.

The A/A bound: FASTER or SLOWER on no more rows than a false-verdict rate of
1 % explains, every op of the example suite, both dtypes. The known-effect
bound: SLOWER on at least 90 % of the known-effect suite's rows when side B
does 10 % more work.

Both are asserted through `zlcore ab`, the setup that holds them on the
2-core VMs CI runs on. There the host runs in two states 50-70 % apart, each
lasting from one placement to a second or more, so sequential batches
compared with `zlcore compare` read 7-8 % of rows FASTER or SLOWER: a whole
side can sit in the slow state (docs/results.md, "A/A" and "Finding an
injected effect", on the host). `ab` alternates the sides
round by round, so both draw both states; its rank test over rounds calls
what it cannot separate NOISY, and more rounds separate a real effect.
"""


from math import comb

import zltest
from zltest import EXAMPLE_SUITE, KNOWN_EFFECT_SUITE, PY, clean_env
from zltest import ab_rows as rows, ab_verdicts as verdicts

# What an A/B must not inherit: zlcore's knobs, FlagGems' selectors, a replay or suite from the caller.
STRIP = ("ZL_", "BENCH_LEVEL", "OP", "SHAPE_", "REPLAY_FROM", "FLAGGEMS_DIR")
OPS = ["abs", "abs_", "add", "add_", "exp", "layer_norm", "mm", "mul", "softmax", "sum"]
KNOWN_EFFECT_OPS = ["fma_loop", "sin_loop", "copy_loop", "sum_loop", "norm_loop"]


def ab(*args, timeout=900):
    r = zltest.zl("ab", "--backend", "host", "--a-python", PY, "--b-python", PY, *args,
                  env=clean_env(STRIP, ZL_HOST_CLOCK="thread"), timeout=timeout)
    print(r.stdout[-4000:], r.stderr[-2000:])
    return r


# The product's A/A target is at most 1 % of rows FASTER or SLOWER. 73 rows
# cannot show a rate that small: at exactly 1 %, two or more false rows turn
# up in one run of six (the first form of this test, "at most one in 50",
# failed once so, reading 2, where its rerun and two CI runs read 0).
# So a run fails when its count would come up less than once in 100 runs at
# that rate: 4 or more of 73 rows. Rates this test exists to catch still fail
# it: sequential batches on this host (7-8 %) about 4 runs in 5, the H200's
# old 16-21 % always.
TARGET_RATE, SURPRISE = 0.01, 0.01


def more_than_the_rate_explains(wrong, rows, rate=TARGET_RATE):
    """Whether `wrong` or more of `rows` is rarer than SURPRISE at `rate`."""
    tail = sum(comb(rows, k) * rate**k * (1 - rate) ** (rows - k) for k in range(wrong, rows + 1))
    return tail < SURPRISE


def test_the_bound_fails_four_of_73_and_rates_far_above_the_target():
    assert not more_than_the_rate_explains(3, 73) and more_than_the_rate_explains(4, 73)
    assert more_than_the_rate_explains(6, 73, rate=0.005) and not more_than_the_rate_explains(0, 73)


def test_the_example_suite_against_itself_is_faster_or_slower_on_no_more_rows_than_1_percent_explains(tmp_path):
    out = tmp_path / "aa"
    r = ab("--a", EXAMPLE_SUITE, "--b", EXAMPLE_SUITE, "--ops", ",".join(OPS), "--out", out)
    assert r.returncode == 0, r.stdout + r.stderr
    v, table = verdicts(out), rows(out)
    assert {row["op"] for row in table} >= set(OPS) and len(table) >= 50
    # Every row was tested on its rounds: none is short of samples.
    assert v.get("UNCONFIRMED", 0) == 0 and v.get("ERROR", 0) == 0, v
    wrong = v.get("FASTER", 0) + v.get("SLOWER", 0)
    print(f"host A/A of the example suite: {len(table)} rows, verdicts {v}, {wrong} FASTER/SLOWER")
    assert not more_than_the_rate_explains(wrong, len(table)), v


def test_ten_percent_more_work_is_slower_on_at_least_90_percent_of_rows(tmp_path):
    out = tmp_path / "ke"
    args = ["--a", KNOWN_EFFECT_SUITE, "--b", KNOWN_EFFECT_SUITE, "--b-env", "ZL_KNOWN_EFFECT_PCT=10",
            "--expect-diff", "ZL_KNOWN_EFFECT_PCT", "--ops", ",".join(KNOWN_EFFECT_OPS),
            "--out", out]
    # What a user does when rounds leave rows open: more rounds, in the same
    # directory (a resume runs only the rounds added). On a quiet machine 8
    # decided 48 of 50 rows; beside a busy neighbour (placements 50-70 %
    # apart) 32 decided 44 and 64 all. Looking every 4 rounds stops at the
    # first count that decides; the rank test needs 5 a side, and at 8 a side
    # it rejects at 1 % with up to 7 of the 64 pairs of rounds out of order.
    for rounds in range(8, 129, 4):
        r = ab(*args, "--rounds", rounds, *(["--resume"] if rounds > 8 else []))
        assert r.returncode == 0, r.stdout + r.stderr
        v, table = verdicts(out), rows(out)
        print(f"known effect +10 % through ab, {rounds} rounds: {len(table)} rows, verdicts {v}")
        if v.get("SLOWER", 0) * 10 >= 9 * len(table):
            break
    assert len(table) == 50 and {row["op"] for row in table} == set(KNOWN_EFFECT_OPS)
    assert v.get("FASTER", 0) == 0, v
    assert v.get("SLOWER", 0) * 10 >= 9 * len(table), v
