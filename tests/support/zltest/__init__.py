"""Helpers shared by zlcore's Python test areas (tests/support/README.md)."""

from .cli import run_pytest, zl  # noqa: F401
from .env import clean_env  # noqa: F401
from .fakes import executable, fake_tool  # noqa: F401
from .paths import (EXAMPLE_SUITE, FAKEGEMS_SUITE, FAULT_SUITE, KNOWN_EFFECT_SUITE, PY, SRC, STUBS,  # noqa: F401
                    TUNE_SUITE, VENDOR, ZLCORE)
from .records import (OPS_STATUS_COLUMNS, ab_rounds, ab_rows, ab_verdicts, batch_identity, by_op,  # noqa: F401
                      identity, ops_status, ops_status_rows, read_jsonl, tagged_pids)
from .suites import suite_with_op, suite_without_harness  # noqa: F401
