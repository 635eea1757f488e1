"""Writes ZL_CHILD_DIR/outcomes.json: what happened to every selected test.

The core turns this (with results.jsonl's rows per test) into the run's status:
passed, unsupported, partial, failed, no_tests, empty or harness_error
(docs/run-directory.md, "Statuses"). This plugin only records facts: per test its
op marks, its outcome and phase, and for a failure the exception that caused it
and whose fault it was (_blame.py). Which messages mean "the suite declined this
dtype" is the suite provider's knowledge, in the core.

Facts are written at session finish, and also after each test that failed, so a
child that crashes later still leaves what it knew.
"""

import os

import pytest

from . import _blame, _child, _scope

BUILTIN_MARKS = frozenset(
    {"parametrize", "skip", "skipif", "xfail", "usefixtures", "filterwarnings", "timeout", "tryfirst", "trylast"}
)


class _Record:
    def __init__(self):
        self.root = None
        self.collected = 0
        self.deselected = 0
        self.selected = []
        self.tests = {}
        self.collect_errors = []
        self.internal_error = None
        self.exit_status = None

    def test(self, nodeid):
        entry = self.tests.get(nodeid)
        if entry is None:
            entry = {"node": nodeid, "marks": [], "outcome": None, "when": None}
            self.tests[nodeid] = entry
        return entry

    def as_json(self):
        counts = {}
        for entry in self.tests.values():
            key = entry["outcome"] or "not_run"
            counts[key] = counts.get(key, 0) + 1
        return {
            "schema": 1,
            "collected": self.collected,
            "deselected": self.deselected,
            "selected": len(self.selected),
            "counts": dict(sorted(counts.items())),
            "tests": [self.tests[n] for n in self.selected if n in self.tests]
            + [t for n, t in self.tests.items() if n not in self.selected],
            "collect_errors": self.collect_errors,
            "internal_error": self.internal_error,
            "exit_status": self.exit_status,
        }


RECORD = None


def _write():
    if RECORD is not None:
        try:
            _child.write_json("outcomes", RECORD.as_json())
        except OSError:
            pass


def _op_marks(item):
    names = []
    for mark in item.iter_markers():
        if mark.name not in BUILTIN_MARKS and mark.name not in names:
            names.append(mark.name)
    return names


def _skip_reason(report):
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return _blame.first_line(longrepr[2]).removeprefix("Skipped: ")
    return _blame.first_line(getattr(report, "longreprtext", "") or "skipped")


# -- pytest hooks ----------------------------------------------------------------


def pytest_configure(config):
    global RECORD
    RECORD = _Record()
    RECORD.root = str(getattr(config, "rootpath", os.getcwd()))


_NAMED = pytest.StashKey()


def pytest_ignore_collect(collection_path, config):
    # The sibling test files of the one the run names: pytest would build a
    # node for each and drop it (_scope.py); skipped, they cost nothing.
    named = config.stash.get(_NAMED, None)
    if named is None:
        named = config.stash[_NAMED] = _scope.NamedFiles(config.args, config.invocation_params.dir)
    return True if named.skips(collection_path) else None


def pytest_collectreport(report):
    if report.failed and RECORD is not None:
        RECORD.collect_errors.append(
            {"node": report.nodeid, "message": _blame.first_line(getattr(report, "longreprtext", "") or "error")}
        )


def pytest_deselected(items):
    if RECORD is not None:
        RECORD.deselected += len(items)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    if RECORD is None:
        return
    RECORD.collected = len(session.items) + RECORD.deselected
    RECORD.selected = [item.nodeid for item in session.items]
    for item in session.items:
        RECORD.test(item.nodeid)["marks"] = _op_marks(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if RECORD is None or call.excinfo is None:
        return
    if report.skipped and hasattr(report, "wasxfail"):
        # What the expected failure was: if it is ours, the row's error shows it.
        RECORD.test(item.nodeid)["xfail_raised"] = _blame.describe(call.excinfo.value)
        return
    if not report.failed:
        return
    entry = RECORD.test(item.nodeid)
    if entry.get("exc_type") is None:  # the first failure of the test is its cause
        try:
            entry.update(_blame.judge(call.excinfo.value, RECORD.root))
        except Exception as exc:  # noqa: BLE001 - never let bookkeeping fail a test
            entry.update({"exc_type": type(exc).__name__, "message": f"zlcore could not read the failure: {exc}"})


def pytest_runtest_logreport(report):
    if RECORD is None:
        return
    entry = RECORD.test(report.nodeid)
    if report.failed:
        if entry["outcome"] != "failed":
            entry["outcome"], entry["when"] = "failed", report.when
        if entry.get("message") is None:
            entry["message"] = _blame.first_line(getattr(report, "longreprtext", "") or "failed")
        _write()
    elif report.skipped:
        if entry["outcome"] is None and hasattr(report, "wasxfail"):
            # The suite marks the test as failing here (pytest.mark.xfail):
            # its reason, not the expected exception's first line, says why.
            entry["outcome"], entry["when"] = "xfailed", report.when
            entry["message"] = "the suite expects this test to fail (xfail): " + (
                _blame.first_line(report.wasxfail) or "no reason given"
            )
            if entry.get("xfail_raised"):
                entry["message"] += "; it raised " + entry["xfail_raised"]
        elif entry["outcome"] is None:
            entry["outcome"], entry["when"] = "skipped", report.when
            entry["message"] = _skip_reason(report)
    elif report.when == "call" and entry["outcome"] is None:
        entry["outcome"], entry["when"] = "passed", "call"


def pytest_internalerror(excrepr, excinfo):
    if RECORD is None:
        return
    judged = _blame.judge(excinfo.value, RECORD.root)
    frames = excinfo.traceback
    ours = any(str(getattr(f, "path", "")).startswith(_blame.PACKAGE_DIR) for f in frames)
    RECORD.internal_error = dict(judged, harness=judged["harness"] or ours)
    _write()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    if RECORD is not None:
        RECORD.exit_status = int(exitstatus)
        _write()
