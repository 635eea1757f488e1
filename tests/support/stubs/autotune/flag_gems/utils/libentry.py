"""A stub of FlagGems' LibTuner (src/flag_gems/utils/libentry.py): a subclass
of triton's Autotuner with its own run, whose winners persist in a real SQLite
DB laid out like FlagGems' SQLPersistantModel writes it:
$FLAGGEMS_CACHE_DIR/config_cache/TunedConfig_<vendor>_triton_<maj>_<min>.db,
one table per kernel named <kernel>_<kernel_hash>-<md5 of key column names>,
key_0.. columns (the primary key) plus one column per config field, and a
<kernel>_<cache_key>_benchmark_v2-<md5> table of timings. FLAGGEMS_DB_URL=sqlite:///:memory:
keeps them in this process, as FlagGems' own does."""

import hashlib
import inspect
import os
import sqlite3
from pathlib import Path

import triton

VENDOR = os.environ.get("GEMS_VENDOR", "nvidia")
MAJ, MIN = triton.__version__.split(".")[:2]


class _Kept:
    """The process's in-memory DB: closing a use of it keeps it."""

    def __init__(self, db):
        self.db = db

    def execute(self, *args):
        return self.db.execute(*args)

    def close(self):
        pass


_IN_MEMORY = []


class _LibCache:
    """Where FlagGems' LibCache says its store is (libcache.db_url); STUB_LIBCACHE_URL
    plays a FlagGems that ignores FLAGGEMS_DB_URL."""

    @property
    def db_url(self):
        default = "sqlite:///" + str(Path.home() / ".flaggems" / "store.db")
        return os.environ.get("STUB_LIBCACHE_URL") or os.environ.get("FLAGGEMS_DB_URL") or default


libcache = _LibCache()


def _db():
    if os.environ.get("FLAGGEMS_DB_URL") == "sqlite:///:memory:":
        if not _IN_MEMORY:
            _IN_MEMORY.append(sqlite3.connect(":memory:", isolation_level=None))
        return _Kept(_IN_MEMORY[0])
    root = Path(os.environ.get("FLAGGEMS_CACHE_DIR") or Path.home() / ".flaggems")
    path = root / "config_cache" / f"TunedConfig_{VENDOR}_triton_{MAJ}_{MIN}.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    return sqlite3.connect(str(path), isolation_level=None)


def _type(v):
    if isinstance(v, bool):
        return "BOOLEAN"
    if isinstance(v, int):
        return "BIGINT"
    if isinstance(v, float):
        return "FLOAT"
    return "VARCHAR"


def _q(name):
    return '"' + name + '"'


def _table(base, cols):
    return "{}-{}".format(base, hashlib.md5("".join(cols).encode()).hexdigest())


class LibTuner(triton.runtime.Autotuner):
    def __init__(self, fn, arg_names, configs, key, **kw):
        super().__init__(fn, arg_names, configs, key, None, None)
        self.__name__ = self.base_fn.__name__
        jit = fn
        while not isinstance(jit, triton.runtime.JITFunction):
            jit = jit.fn
        self.cache_key = jit.cache_key
        configs_hash = hashlib.md5(",".join(map(str, self.configs)).encode()).hexdigest()[:32]
        self.kernel_hash = hashlib.md5(f"{self.cache_key}{configs_hash}".encode()).hexdigest()[:32]
        self.config_table_name = f"{self.__name__}_{self.kernel_hash}"
        self.benchmark_table_name = f"{self.__name__}_{self.cache_key}_benchmark_v2"

    def get_key(self, args):
        key = tuple(args[k] for k in self.keys if k in args)
        return key + tuple(str(v.dtype) for v in args.values() if hasattr(v, "dtype"))

    # ConfigCache over SQLite, like SQLPersistantModel.get_config / put_config.
    def _get(self, key):
        cols = [f"key_{i}" for i in range(len(key))]
        table = _table(self.config_table_name, cols)
        db = _db()
        try:
            if not db.execute("SELECT 1 FROM sqlite_master WHERE name=?", (table,)).fetchone():
                return None
            cur = db.execute(f"SELECT * FROM {_q(table)} WHERE " + " AND ".join(f"{_q(c)}=?" for c in cols), key)
            row = cur.fetchone()
            if row is None:
                return None
            names = [d[0] for d in cur.description]
        finally:
            db.close()
        values = {n: v for n, v in zip(names, row) if n not in cols}
        params = inspect.signature(triton.Config.__init__).parameters
        return triton.Config({k: v for k, v in values.items() if k not in params},
                             **{k: v for k, v in values.items() if k in params})

    def _put(self, key, config):
        cols = {f"key_{i}": v for i, v in enumerate(key)}
        values = {k: v for k, v in config.all_kwargs().items() if isinstance(v, (int, float, str, bool))}
        table = _table(self.config_table_name, list(cols))
        defs = [f"{_q(k)} {_type(v)} NOT NULL" for k, v in cols.items()]
        defs += [f"{_q(k)} {_type(v)}" for k, v in values.items()]
        db = _db()
        try:
            db.execute(f"CREATE TABLE IF NOT EXISTS {_q(table)} ({', '.join(defs)}, "
                       f"PRIMARY KEY ({', '.join(_q(c) for c in cols)}))")
            names = list(cols) + list(values)
            db.execute(f"INSERT OR IGNORE INTO {_q(table)} ({', '.join(_q(n) for n in names)}) "
                       f"VALUES ({', '.join('?' for _ in names)})", tuple(cols.values()) + tuple(values.values()))
            bench = _table(self.benchmark_table_name, list(cols) + list(values))
            db.execute(f"CREATE TABLE IF NOT EXISTS {_q(bench)} (p50 FLOAT)")
        finally:
            db.close()

    def run(self, *args, **kwargs):
        self.nargs = dict(zip(self.arg_names, args))
        if len(self.configs) > 1:
            all_args = {**self.nargs, **kwargs}
            _args = {k: v for k, v in all_args.items() if k in self.arg_names}
            key = self.get_key(_args)
            config = self._get(key)
            if config is None:
                pruned = self.prune_configs(kwargs)
                timings = {c: self._bench(*args, config=c, **kwargs) for c in pruned}
                best = min(timings, key=timings.get)
                self._put(key, best)
                config = self._get(key)
            for original in self.configs:
                if original.all_kwargs() == config.all_kwargs():
                    config = original
                    break
        else:
            config = self.configs[0]
        self.best_config = config
        ret = self.fn.run(*args, **kwargs, **config.all_kwargs())
        self.nargs = None
        return ret


def libtuner(configs, key):
    def decorator(fn):
        return LibTuner(fn, fn.arg_names, configs, key)

    return decorator
