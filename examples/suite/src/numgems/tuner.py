"""A small autotuner modelled on FlagGems' LibTuner (flag_gems/utils/libentry.py).

Why it exists: zlcore records autotune winners on one side of an A/B run and
replays them on the other. The example suite needs a tuner whose behaviour and
on-disk cache match FlagGems' closely enough for that machinery to be tested
without an accelerator:

* winners persist in SQLite at
  ``$FLAGGEMS_CACHE_DIR/config_cache/TunedConfig_<vendor>_numgems_<maj>_<min>.db``
  (``~/.flaggems`` by default; ``FLAGGEMS_DB_URL`` overrides the whole URL and
  ``sqlite:///:memory:`` keeps nothing), one table per kernel named
  ``<kernel>_<kernel_hash>-<md5 of key column names>`` with key columns
  ``key_0..`` and one column per config field, plus a
  ``<kernel>_<source_hash>_benchmark_v2-<md5>`` table holding p50/p20/p80 of
  every config ever tried;
* a hit in the winners table skips tuning entirely;
* ``ZL_SUITE_TUNER_PIN`` (a JSON file ``{kernel: {key_string: config}}``), or
  else zlcore's replay records (``ZL_REPLAY_RECORDS``, read by this suite
  itself), pins every lookup and never tunes; a key missing from it raises
  ``replay_miss:``;
* counters go to ``$ZL_CHILD_DIR/suite_tuner.json`` when the process exits.

See examples/suite/README.md for the full layout.
"""

import atexit
import hashlib
import inspect
import json
import math
import os
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

from . import __version__

BENCHMARK_CACHE_SCHEMA_VERSION = 2
TUNER_NAME = "numgems"
# The tuner's "compiler version" in the DB file name, like triton's maj/min.
TUNER_MAJOR, TUNER_MINOR = (int(p) for p in __version__.split(".")[:2])
# Timing protocol of one config: warmup calls, then timed calls. It is part of
# the benchmark-table key, as FlagGems keys BenchmarkCache by its protocol.
BENCH_WARMUP_CALLS = 1
BENCH_TIMED_CALLS = 5
PIN_ENV = "ZL_SUITE_TUNER_PIN"
REPLAY_RECORDS_ENV = "ZL_REPLAY_RECORDS"
CHILD_DIR_ENV = "ZL_CHILD_DIR"
COUNTERS_FILE = "suite_tuner.json"


class ReplayMiss(RuntimeError):
    """A pinned run met a key the pin file does not hold."""


class Config:
    """One point of a kernel's search space (triton.Config's role)."""

    def __init__(self, kwargs):
        self.kwargs = dict(kwargs)

    def all_kwargs(self):
        return dict(self.kwargs)

    def __str__(self):
        return ", ".join(f"{k}: {v}" for k, v in self.kwargs.items())

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, Config) and self.kwargs == other.kwargs

    def __hash__(self):
        return hash(tuple(sorted(self.kwargs.items())))


def log2_strategy(value):
    # FlagGems' "log" strategy: nearby shapes share one winner.
    return 2 ** math.ceil(math.log2(value)) if value > 0 else 0


def default_strategy(value):
    return value


STRATEGIES = {"log": log2_strategy, "default": default_strategy, None: default_strategy}


def key_string(key):
    """The pin file's and counters' spelling of a winners-table key."""
    return ",".join(str(part) for part in key)


# ---------------------------------------------------------------- storage


def cache_dir():
    value = os.environ.get("FLAGGEMS_CACHE_DIR")
    return Path(value) if value else Path.home() / ".flaggems"


def db_file_name(vendor):
    return f"TunedConfig_{vendor}_{TUNER_NAME}_{TUNER_MAJOR}_{TUNER_MINOR}.db"


def resolve_db_path(vendor):
    """The SQLite file winners live in, or ':memory:' when persistence is off."""
    url = os.environ.get("FLAGGEMS_DB_URL")
    if url:
        prefix = "sqlite:///"
        if not url.startswith(prefix):
            raise ValueError(f"numgems supports only sqlite:/// URLs in FLAGGEMS_DB_URL, got {url!r}")
        return url[len(prefix):]
    return str(cache_dir() / "config_cache" / db_file_name(vendor))


def _column_type(value):
    # The type names SQLAlchemy emits for FlagGems' columns on SQLite.
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "BIGINT"
    if isinstance(value, float):
        return "FLOAT"
    return "VARCHAR"


def _normalize(value):
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float, str)):
        return value
    return str(value)


def _table_name(base, column_names):
    # FlagGems' SQLPersistantModel appends md5 of the concatenated key column
    # names, so one kernel with differently shaped keys gets separate tables.
    return "{}-{}".format(base, hashlib.md5("".join(column_names).encode()).hexdigest())


def _quote(name):
    return '"' + name.replace('"', '""') + '"'


class _Store:
    """Winners and per-config timings in one SQLite file, FlagGems' layout."""

    def __init__(self, path):
        self.path = path
        self._conn = None
        self._pid = None
        self._lock = threading.Lock()

    def _connection(self):
        # A connection must not cross fork(): a worker forked from a process
        # that already used the cache opens its own.
        if self._conn is None or self._pid != os.getpid():
            self._pid = os.getpid()
            if self.path != ":memory:":
                os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            # Several benchmark processes may share one cache dir (a batch over
            # many workers); wait for a writer rather than fail.
            self._conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        return self._conn

    def _ensure_table(self, name, keys, values):
        cols = [f"{_quote(k)} {_column_type(v)} NOT NULL" for k, v in keys.items()]
        cols += [f"{_quote(k)} {_column_type(v)}" for k, v in values.items()]
        pk = ", ".join(_quote(k) for k in keys)
        self._connection().execute(
            f"CREATE TABLE IF NOT EXISTS {_quote(name)} ({', '.join(cols)}, PRIMARY KEY ({pk}))"
        )

    def _table_exists(self, name):
        row = self._connection().execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)
        ).fetchone()
        return row is not None

    def get_row(self, table, keys, value_names):
        with self._lock:
            if not self._table_exists(table):
                return None
            where = " AND ".join(f"{_quote(k)}=?" for k in keys)
            cols = ", ".join(_quote(v) for v in value_names)
            row = self._connection().execute(
                f"SELECT {cols} FROM {_quote(table)} WHERE {where}", tuple(keys.values())
            ).fetchone()
            return None if row is None else dict(zip(value_names, row))

    def put_row(self, table, keys, values):
        with self._lock:
            self._ensure_table(table, keys, values)
            names = list(keys) + list(values)
            marks = ", ".join("?" for _ in names)
            # First writer wins, as in FlagGems (put_config keeps an existing row).
            self._connection().execute(
                f"INSERT OR IGNORE INTO {_quote(table)} ({', '.join(_quote(n) for n in names)}) "
                f"VALUES ({marks})",
                tuple(keys.values()) + tuple(values.values()),
            )

    def count_rows(self, table):
        with self._lock:
            if not self._table_exists(table):
                return 0
            return self._connection().execute(f"SELECT COUNT(*) FROM {_quote(table)}").fetchone()[0]


_stores = {}


def _store_for(vendor):
    path = resolve_db_path(vendor)
    store = _stores.get(path)
    if store is None:
        store = _stores[path] = _Store(path)
    return store


# ---------------------------------------------------------------- counters


class _Stats:
    def __init__(self):
        self.reset()

    def reset(self):
        self.tuning_benchmarks = 0  # configs actually timed
        self.benchmark_cache_hits = 0  # config timings reused from the benchmark table
        self.cache_hits = 0  # keys whose winner came from the winners table
        self.tuned = 0  # keys tuned in this process
        self.pinned = 0  # keys resolved from the pin file
        self.kernels = {}

    def kernel(self, tuner):
        entry = self.kernels.get(tuner.name)
        if entry is None:
            entry = self.kernels[tuner.name] = {
                "table": tuner.config_table_name,
                "benchmark_table": tuner.benchmark_table_name,
                "config_fields": list(tuner.config_fields),
                "db_winners_at_start": None,
                "keys": [],
                "winners": {},
                "sources": {},
                "tuning_benchmarks": 0,
                "cache_hits": 0,
            }
        return entry

    def as_dict(self):
        pin = pin_source()
        return {
            "tuner": TUNER_NAME,
            "mode": "pin" if pin else "tune",
            "pin_file": pin,
            "db": _current_db_path(),
            "tuning_benchmarks": self.tuning_benchmarks,
            "benchmark_cache_hits": self.benchmark_cache_hits,
            "cache_hits": self.cache_hits,
            "tuned": self.tuned,
            "pinned": self.pinned,
            "kernels": self.kernels,
        }


_stats = _Stats()


def _current_db_path():
    from . import vendor_name

    try:
        return resolve_db_path(vendor_name)
    except ValueError:
        return None


def stats():
    """A snapshot of this process's counters (what suite_tuner.json will hold)."""
    return json.loads(json.dumps(_stats.as_dict()))


def reset_stats():
    """Start counting afresh, e.g. in a worker that runs several ops."""
    _stats.reset()
    for tuner in _tuners:
        tuner._resolved.clear()


def write_counters(directory=None):
    """Write suite_tuner.json into `directory` (default $ZL_CHILD_DIR) atomically."""
    directory = directory or os.environ.get(CHILD_DIR_ENV)
    if not directory:
        return None
    os.makedirs(directory, exist_ok=True)
    target = os.path.join(directory, COUNTERS_FILE)
    fd, tmp = tempfile.mkstemp(prefix=".suite_tuner.", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(_stats.as_dict(), f, indent=2, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return target


atexit.register(write_counters)


# ---------------------------------------------------------------- pins

_pins_cache = {}


def _pins_from_records(records_dir):
    """{kernel: {key_string: config}} from zlcore's replay records.

    zlcore hands a replay its records directory (ZL_REPLAY_RECORDS) and knows
    nothing of this suite; the suite reads the LibTuner records itself, in
    sorted file order, the first config of a key winning.
    """
    pins = {}
    root = os.path.join(records_dir, "libtuner")
    files = sorted(
        os.path.join(d, f) for d, _, names in os.walk(root) for f in names if f.endswith(".json")
    )
    for path in files:
        with open(path) as f:
            doc = json.load(f)
        kernel = pins.setdefault(str(doc.get("kernel", "")), {})
        for entry in doc.get("entries") or []:
            ks, config = entry.get("key_string"), entry.get("config")
            if ks and config is not None and ks not in kernel:
                kernel[ks] = config
    return pins


def pin_source():
    """The pin file (ZL_SUITE_TUNER_PIN), else zlcore's replay records, else None."""
    return os.environ.get(PIN_ENV) or os.environ.get(REPLAY_RECORDS_ENV) or None


def _load_pins():
    path = os.environ.get(PIN_ENV)
    records = os.environ.get(REPLAY_RECORDS_ENV)
    if not path and not records:
        return None
    source = path or records
    pins = _pins_cache.get(source)
    if pins is None:
        if path:
            with open(path) as f:
                pins = json.load(f)
            if not isinstance(pins, dict):
                raise ValueError(f"{PIN_ENV}={path}: expected a JSON object {{kernel: {{key: config}}}}")
        else:
            pins = _pins_from_records(records)
        _pins_cache[source] = pins
    return pins


# ---------------------------------------------------------------- the tuner

_tuners = []


class LibTuner:
    """Picks a config per key, persisting winners like FlagGems' LibTuner.

    fn(*args, **config) runs the kernel; `keys` names the key arguments,
    `key_fn(*args)` returns their values in that order plus trailing dtype
    strings, as FlagGems appends tensor dtypes to its keys.
    """

    def __init__(self, fn, name, configs, key_fn, strategy="log"):
        self.fn = fn
        self.name = name
        self.configs = list(configs)
        self.key_fn = key_fn
        self.strategy = STRATEGIES[strategy]
        self.config_fields = list(self.configs[0].kwargs)
        # Triton's JIT cache key hashes the kernel's source; ours does the same
        # so that editing the kernel starts a fresh winners table.
        self.cache_key = hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()
        configs_hash = hashlib.md5(",".join(str(c) for c in self.configs).encode()).hexdigest()[:32]
        self.kernel_hash = hashlib.md5(f"{self.cache_key}{configs_hash}".encode()).hexdigest()[:32]
        self.benchmark_protocol = ("wall_clock", BENCH_WARMUP_CALLS, BENCH_TIMED_CALLS)
        self._resolved = {}
        self.best_config = None
        _tuners.append(self)

    # Table names depend on the key width, known at the first call.
    def _config_table(self, width):
        return _table_name(f"{self.name}_{self.kernel_hash}", [f"key_{i}" for i in range(width)])

    def _benchmark_table(self, width):
        cols = [f"key_{i}" for i in range(width)] + self.config_fields
        return _table_name(
            f"{self.name}_{self.cache_key}_benchmark_v{BENCHMARK_CACHE_SCHEMA_VERSION}", cols
        )

    @property
    def config_table_name(self):
        return getattr(self, "_config_table_name", None)

    @property
    def benchmark_table_name(self):
        return getattr(self, "_benchmark_table_name", None)

    def get_key(self, args):
        raw = self.key_fn(*args)
        return tuple(self.strategy(v) if isinstance(v, int) else v for v in raw)

    def get_benchmark_key(self, args):
        return tuple(self.key_fn(*args)) + self.benchmark_protocol

    def __call__(self, *args):
        config = self.resolve(args)
        self.best_config = config
        return self.fn(*args, **config.kwargs)

    def resolve(self, args):
        key = self.get_key(args)
        config = self._resolved.get(key)
        if config is not None:
            return config
        from . import vendor_name

        self._config_table_name = self._config_table(len(key))
        self._benchmark_table_name = self._benchmark_table(len(self.get_benchmark_key(args)))
        entry = _stats.kernel(self)
        entry["table"] = self._config_table_name
        entry["benchmark_table"] = self._benchmark_table_name
        ks = key_string(key)

        pins = _load_pins()
        if pins is not None:
            # A pinned run neither reads nor writes the cache: its winners come
            # from the pin file alone, whatever the cache directory holds.
            config, source = self._pinned(pins, ks), "pinned"
            _stats.pinned += 1
        else:
            store = _store_for(vendor_name)
            if entry["db_winners_at_start"] is None:
                entry["db_winners_at_start"] = store.count_rows(self._config_table_name)
            key_cols = {f"key_{i}": _normalize(v) for i, v in enumerate(key)}
            row = store.get_row(self._config_table_name, key_cols, self.config_fields)
            if row is not None:
                config, source = Config(row), "cache"
                _stats.cache_hits += 1
                entry["cache_hits"] += 1
            else:
                config, source = self._tune(store, args, entry), "tuned"
                _stats.tuned += 1
                store.put_row(self._config_table_name, key_cols, config.kwargs)
            if os.environ.get("TRITON_PRINT_AUTOTUNING") == "1":
                print(f"numgems autotuning {self.name}: key {ks} -> {config} ({source})")
        self._resolved[key] = config
        if ks not in entry["keys"]:
            entry["keys"].append(ks)
        entry["winners"][ks] = config.all_kwargs()
        entry["sources"][ks] = source
        return config

    def _pinned(self, pins, ks):
        kernel_pins = pins.get(self.name) or {}
        if ks not in kernel_pins:
            raise ReplayMiss(
                f"replay_miss: kernel={self.name} key={ks} is not in {os.environ.get(PIN_ENV)}"
            )
        pinned = kernel_pins[ks]
        if not isinstance(pinned, dict) or sorted(pinned) != sorted(self.config_fields):
            raise ValueError(
                f"replay_bad_config: kernel={self.name} key={ks} config {pinned!r} "
                f"does not have exactly the fields {self.config_fields}"
            )
        return Config({field: pinned[field] for field in self.config_fields})

    def _bench(self, args, config):
        for _ in range(BENCH_WARMUP_CALLS):
            self.fn(*args, **config.kwargs)
        samples = []
        for _ in range(BENCH_TIMED_CALLS):
            start = time.perf_counter()
            self.fn(*args, **config.kwargs)
            samples.append((time.perf_counter() - start) * 1e3)
        samples.sort()

        def quantile(q):
            return samples[min(len(samples) - 1, int(round(q * (len(samples) - 1))))]

        return [quantile(0.5), quantile(0.2), quantile(0.8)]

    def _tune(self, store, args, entry):
        bench_key = self.get_benchmark_key(args)
        bench_cols = {f"key_{i}": _normalize(v) for i, v in enumerate(bench_key)}
        timings = {}
        for config in self.configs:
            cols = dict(bench_cols, **{k: _normalize(v) for k, v in config.kwargs.items()})
            row = store.get_row(self._benchmark_table_name, cols, ["p50", "p20", "p80"])
            if row is not None:
                timings[config] = [row["p50"], row["p20"], row["p80"]]
                _stats.benchmark_cache_hits += 1
                continue
            timing = self._bench(args, config)
            _stats.tuning_benchmarks += 1
            entry["tuning_benchmarks"] += 1
            store.put_row(
                self._benchmark_table_name,
                cols,
                {"p50": float(timing[0]), "p20": float(timing[1]), "p80": float(timing[2])},
            )
            timings[config] = timing
        # Lowest p50 wins; ties fall to p20 then p80, as FlagGems compares lists.
        return min(timings, key=timings.get)


def libtuner(name, configs, key_fn, strategy="log"):
    """Decorator form, like flag_gems.utils.libentry.libtuner."""

    def decorator(fn):
        return LibTuner(fn, name, configs, key_fn, strategy)

    return decorator
