"""Running `zlcore ab` on the host backend for the tests of this folder."""

import zltest
from zltest import clean_env

COMMON = ["--backend", "host", "--dtypes", "float32"]
# What an A/B must not inherit: zlcore's knobs, FlagGems' selectors and a replay or suite from the caller.
STRIP = ("ZL_", "BENCH_LEVEL", "OP", "SHAPE_", "REPLAY_FROM", "FLAGGEMS_DIR")
# The loops are single-threaded NumPy: the thread's CPU time leaves out the
# stretches a busy shared machine runs something else, which on the wall
# clock left 24 rounds of a 10 % effect undecided
# (docs/results.md, "The host timer's clock").
CLOCK = "thread"


def ab(*args, check=None, timeout=600, threshold=5):
    r = zltest.zl("ab", *COMMON, "--threshold", threshold, *args, env=clean_env(STRIP, ZL_HOST_CLOCK=CLOCK),
                  timeout=timeout)
    print(r.stdout[-3000:], r.stderr[-2000:])
    if check is not None:
        assert r.returncode == check, r.stdout + r.stderr
    return r
