"""Options, the module-global Config and result recording (FlagGems' benchmark/conftest.py role).

zlcore depends on these names and behaviours staying as FlagGems has them:
the option set (a pytest plugin must not register any of these names), the
module-global `Config` that is None until pytest_configure runs, and
`update_result` / `emit_record_logger`, which base.py copies at import.
"""

import gc
import json
import logging
import os
import sys

import pytest
import yaml

from . import consts

recordLogger = logging.getLogger("numgems_benchmark")
recordLogger.propagate = False
Config = None

BUILTIN_MARKS = (
    "parametrize",
    "skip",
    "skipif",
    "xfail",
    "usefixtures",
    "filterwarnings",
    "timeout",
    "tryfirst",
    "trylast",
)
# pytest.ini registers every op marker with a description starting with this,
# so --strict-markers works; such markers still count as op names below.
OP_MARKER_DESCRIPTION = "operator"
REGISTERED_MARKS = set()
TEST_RESULTS = {}
REPORT_FILE = "benchmark_result.json"


def update_result(op, data):
    """Collect one dtype's results of `op` for --record json.

    base.py calls this through its module-global name once per dtype, so a
    plugin can replace benchmark.base.update_result to see every result.
    """
    if not Config.record_json:
        return
    TEST_RESULTS.setdefault(op, {})
    TEST_RESULTS[op].setdefault("details", [])
    TEST_RESULTS[op]["details"].append(data)


def emit_record_logger(message) -> None:
    if not Config.record_log:
        return
    recordLogger.info(message)


class BenchConfig:
    def __init__(self):
        self.mode = consts.BenchMode.KERNEL
        self.bench_level = consts.BenchLevel.COMPREHENSIVE
        self.warm_up = consts.DEFAULT_WARMUP_TIME
        self.repetition = consts.DEFAULT_ITER_TIME
        self.record_log = False
        self.record_json = False
        self.user_desired_dtypes = None
        self.user_desired_metrics = None
        self.shape_file = os.path.join(os.path.dirname(__file__), "core_shapes.yaml")
        self.query = False
        self.parallel = 0


def pytest_addoption(parser):
    parser.addoption(
        "--mode",
        action="store",
        default="kernel",
        choices=[m.value for m in consts.BenchMode],
        help="How to measure latency: kernel (median of single calls), operator / "
        "wrapper (mean over a timed loop), cudagraph (not available on the host).",
    )
    parser.addoption(
        "--level",
        action="store",
        default="comprehensive",
        choices=[lv.value for lv in consts.BenchLevel],
        help="core runs exactly the shape file; comprehensive adds each benchmark's extra shapes.",
    )
    parser.addoption(
        "--warmup",
        default=consts.DEFAULT_WARMUP_TIME,
        help="Milliseconds of warmup calls per side and shape.",
    )
    parser.addoption(
        "--iter",
        default=consts.DEFAULT_ITER_TIME,
        help="Milliseconds of measured calls per side and shape.",
    )
    parser.addoption("--query", action="store_true", default=False, help="Enable query mode")
    parser.addoption(
        "--metrics",
        action="append",
        default=None,
        choices=sorted(consts.ALL_AVAILABLE_METRICS),
        help="Metrics to benchmark; default depends on the op.",
    )
    parser.addoption(
        "--dtypes",
        action="append",
        default=None,
        choices=list(consts.DTYPE_BY_NAME),
        help="Data types to benchmark; default depends on the op. bfloat16 has no "
        "NumPy type and is skipped.",
    )
    parser.addoption(
        "--shape_file",
        action="store",
        default=os.path.join(os.path.dirname(__file__), "core_shapes.yaml"),
        help="YAML shape file keyed by op name or benchmark class name.",
    )
    try:
        parser.addoption(
            "--record",
            action="store",
            default="none",
            choices=["none", "log", "json"],
            help="Record results in a log file (CWD) or merge them into a JSON file.",
        )
        parser.addoption("--output", default=REPORT_FILE, help="Path of the JSON report")
    except ValueError:
        # Same tolerance as FlagGems: another conftest may own --record already.
        pass
    parser.addoption(
        "--parallel",
        action="store",
        type=int,
        default=0,
        help="Accepted for FlagGems compatibility; the host has one device, so it has no effect.",
    )
    try:
        parser.addoption(
            "--collect-marks",
            default=None,
            help="Write the tests with their op markers to this YAML file and run nothing.",
        )
    except ValueError:
        pass


def pytest_configure(config):
    global Config, REPORT_FILE, REGISTERED_MARKS

    Config = BenchConfig()
    # Registered markers that are not op markers (helpers) are left out of
    # --collect-marks, as FlagGems leaves out every registered marker.
    REGISTERED_MARKS = set()
    for line in config.getini("markers"):
        name, _, desc = line.partition(":")
        if not desc.strip().startswith(OP_MARKER_DESCRIPTION):
            REGISTERED_MARKS.add(name.split("(")[0].strip())

    Config.mode = consts.BenchMode(config.getoption("--mode"))
    Config.query = config.getoption("--query")
    Config.bench_level = consts.BenchLevel(config.getoption("--level"))
    Config.warm_up = int(config.getoption("--warmup"))
    Config.repetition = int(config.getoption("--iter"))
    names = config.getoption("--dtypes")
    Config.user_desired_dtypes = [consts.DTYPE_BY_NAME[n] for n in names] if names else None
    Config.user_desired_metrics = config.getoption("--metrics")
    Config.shape_file = config.getoption("--shape_file")
    Config.record_log = config.getoption("--record") == "log"
    Config.record_json = config.getoption("--record") == "json"
    Config.parallel = int(config.getoption("--parallel") or 0)
    if Config.record_json:
        Config.output = config.getoption("--output")
        REPORT_FILE = Config.output

    if Config.record_log:
        # Same file name rule as FlagGems: the invocation's args joined.
        cmd_args = [
            arg.replace(".py", "").replace("=", "_").replace("/", "_")
            for arg in config.invocation_params.args
        ]
        log_file = "result_{}.log".format("_".join(cmd_args)).replace("_-", "-")
        for handler in list(recordLogger.handlers):
            recordLogger.removeHandler(handler)
            handler.close()
        handler = logging.FileHandler(log_file, mode="w", encoding="utf-8")
        handler.setLevel(logging.INFO)
        handler.setFormatter(logging.Formatter("[%(levelname)s] %(message)s"))
        recordLogger.addHandler(handler)
        recordLogger.setLevel(logging.INFO)
        emit_record_logger("Benchmark record logger enabled")


@pytest.fixture(scope="session", autouse=True)
def setup_once(request):
    if request.config.getoption("--query"):
        print("\nThis is query mode; all benchmark functions will be skipped.")


@pytest.fixture(scope="function", autouse=True)
def clear_function_cache():
    # FlagGems empties the device allocator's cache here; the host's
    # equivalent is dropping the previous test's arrays.
    yield
    gc.collect()


def get_reason(report):
    if hasattr(report.longrepr, "reprcrash"):
        return report.longrepr.reprcrash.message
    if isinstance(report.longrepr, tuple):
        return report.longrepr[2]
    return str(report.longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    marks = [m.name for m in item.iter_markers() if m.name not in BUILTIN_MARKS]
    # As in FlagGems, the first non-builtin marker names the op.
    report.opid = marks[0] if marks else item.nodeid


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    if not Config.record_json:
        return
    op = getattr(report, "opid", report.nodeid)
    TEST_RESULTS.setdefault(op, {})
    if report.when == "setup":
        if report.outcome == "skipped":
            TEST_RESULTS[op]["result"] = "skipped"
            TEST_RESULTS[op]["reason"] = get_reason(report)
            TEST_RESULTS[op]["test_case"] = report.nodeid
    elif report.when == "call":
        TEST_RESULTS[op]["result"] = report.outcome
        TEST_RESULTS[op]["test_case"] = report.nodeid
        failed_or_skipped = report.outcome in ("skipped", "failed")
        TEST_RESULTS[op]["reason"] = get_reason(report) if failed_or_skipped else None


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Merge this run's results into the JSON report (an existing file keeps other ops)."""
    if not Config.record_json:
        return
    data = TEST_RESULTS
    if os.path.exists(REPORT_FILE):
        with open(REPORT_FILE) as f:
            existing = json.load(f)
        existing.update(TEST_RESULTS)
        data = existing
    with open(REPORT_FILE, "w") as f:
        json.dump(data, f, indent=2, default=str)


def pytest_sessionfinish(session, exitstatus):
    """The tuner's counters (suite_tuner.json) at the end of every session: a
    warm worker runs many sessions in one process and never reaches the
    tuner's atexit hook, and zlcore reads which winners the op used from it."""
    tuner = sys.modules.get("numgems.tuner")
    if tuner is not None:
        tuner.write_counters()


def pytest_collection_modifyitems(session, config, items):
    collect_marks_file = config.getoption("--collect-marks")
    if not collect_marks_file:
        return
    report = []
    for item in items:
        data = {}
        if item.cls:
            data["class"] = item.cls.__name__
        data["test_case"] = item.name
        if item.originalname:
            data["function"] = item.originalname
        data["file"] = item.location[0]
        data["marks"] = [
            m.name
            for m in item.iter_markers()
            if m.name not in BUILTIN_MARKS and m.name not in REGISTERED_MARKS
        ]
        report.append(data)
    with open(collect_marks_file, "w") as f:
        yaml.dump(report, f, indent=2)
    items.clear()
