"""Options, the module-global Config and result recording (FlagGems' benchmark/conftest.py role).

Registers every option FlagGems' suite has, so any command line zlcore (or a
user) gives FlagGems parses here too; `Config` is None until pytest_configure,
and base.py copies it, update_result and emit_record_logger at import, as
FlagGems' base.py does.
"""

import json
import os


from . import consts

Config = None
TEST_RESULTS = {}


def update_result(op, data):
    if Config is not None and Config.record_json:
        TEST_RESULTS.setdefault(op, {}).setdefault("details", []).append(data)


def emit_record_logger(message):
    pass  # --record log is accepted and writes nothing here


class BenchConfig:
    def __init__(self):
        self.mode = consts.BenchMode.KERNEL
        self.bench_level = consts.BenchLevel.COMPREHENSIVE
        self.warm_up = consts.DEFAULT_WARMUP_TIME
        self.repetition = consts.DEFAULT_ITER_TIME
        self.record_json = False
        self.output = "benchmark_result.json"
        self.user_desired_dtypes = None
        self.user_desired_metrics = None
        self.shape_file = os.path.join(os.path.dirname(__file__), "core_shapes.yaml")
        self.query = False


def pytest_addoption(parser):
    parser.addoption("--mode", default="kernel", choices=[m.value for m in consts.BenchMode])
    parser.addoption("--level", default="comprehensive", choices=[lv.value for lv in consts.BenchLevel])
    parser.addoption("--warmup", default=consts.DEFAULT_WARMUP_TIME, help="milliseconds of warm-up per side")
    parser.addoption("--iter", default=consts.DEFAULT_ITER_TIME, help="milliseconds of measurement per side")
    parser.addoption("--query", action="store_true", default=False)
    parser.addoption("--metrics", action="append", default=None)
    parser.addoption("--dtypes", action="append", default=None, choices=list(consts.DTYPE_NAMES))
    parser.addoption("--shape_file", default=os.path.join(os.path.dirname(__file__), "core_shapes.yaml"))
    parser.addoption("--record", default="none", choices=["none", "log", "json"])
    parser.addoption("--output", default="benchmark_result.json")
    parser.addoption("--parallel", type=int, default=0)
    parser.addoption("--collect-marks", default=None)


def pytest_configure(config):
    global Config
    Config = BenchConfig()
    Config.mode = consts.BenchMode(config.getoption("--mode"))
    Config.bench_level = consts.BenchLevel(config.getoption("--level"))
    Config.warm_up = int(config.getoption("--warmup"))
    Config.repetition = int(config.getoption("--iter"))
    Config.user_desired_dtypes = config.getoption("--dtypes")
    Config.user_desired_metrics = config.getoption("--metrics")
    Config.shape_file = config.getoption("--shape_file")
    Config.query = config.getoption("--query")
    Config.record_json = config.getoption("--record") == "json"
    Config.output = config.getoption("--output")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if Config is None or not Config.record_json:
        return
    data = dict(TEST_RESULTS)
    if os.path.exists(Config.output):
        with open(Config.output) as f:
            existing = json.load(f)
        existing.update(data)
        data = existing
    with open(Config.output, "w") as f:
        json.dump(data, f, indent=2, default=str)
