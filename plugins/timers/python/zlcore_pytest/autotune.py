"""Autotune record/replay inside the benchmark child (docs/autotune.md).

The A/B protocol: side A tunes and records every winner it used, side B
replays exactly those winners and tunes nothing, so a difference between the
sides is the compiler's, not the autotuner's. Two kinds of tuner exist in
FlagGems and both are covered:

* plain ``@triton.autotune`` kernels keep their winners in memory only. This
  plugin hooks ``triton.runtime.autotuner.Autotuner`` (class attributes, so
  every instance and every subclass that does not override them):
    - ``run``: record mode notes the keys that appear in ``self.cache``
      during a call (a new key means a winner was just chosen or loaded);
    - ``prune_configs``: called by ``run`` only when a key is not in
      ``self.cache``. Replay returns the recorded config alone (a tuner given
      one config never benchmarks), or raises ``replay_miss``;
    - ``_bench``: counts every config benchmarked, in every mode.
* LibTuner (``flag_gems.utils.libentry.LibTuner``, a subclass of Autotuner
  with its own ``run``) keeps winners in SQLite; the core harvests and
  rebuilds that DB. Its ``run`` is wrapped only to note which (table, key)
  the run looked up and whether the DB already held it: the core reports
  those as inherited winners of a shared cache. Its misses go through the
  same ``prune_configs`` hook, so a replay never silently tunes them either.

Nothing here imports triton or flag_gems: the hooks go in when the suite has
imported them (checked at session start, after collection and before each
test), so a suite without triton (the example suite) is left alone.

Environment (set by zlcore): ZL_AUTOTUNE_MODE (tune | record | replay),
ZL_AUTOTUNE_RECORD_DIR (record: where triton_autotune/*.json go),
ZL_REPLAY_RECORDS (replay: the source autotune_records/), ZL_REPLAY_FORCE=1
(replay despite a Triton version or kernel source mismatch). Counts go to
ZL_CHILD_DIR/autotune.json.
"""

import hashlib
import inspect
import itertools
import json
import os
import re
import sys

import pytest

from . import _child, _env, _phases, _precompile

EXIT_REFUSED = 3  # zlcore's "preflight failed": the replay source does not fit this run
SCHEMA = 1
MAX_LISTED = 200  # misses / lookups listed by name in autotune.json; counts are always exact


class ReplayMiss(RuntimeError):
    """A replayed run met a (kernel, key) the records do not hold."""


class ReplayRefused(RuntimeError):
    """The records were made from another kernel source; refused unless forced."""


# -- small helpers ------------------------------------------------------------------


def _norm(value):
    # FlagGems' SQLPersistantModel.normalize_value: bool as int, other
    # non-scalars as str. The same spelling on both sides keeps keys comparable
    # with what SQLite holds (the core joins key_* columns with ',').
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float, str)):
        return value
    return str(value)


def key_string(key):
    return ",".join(str(_norm(v)) for v in key)


def _sha256(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _safe_name(text):
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)[:200]


def triton_version():
    """This interpreter's Triton, without importing it when the suite has not."""
    mod = sys.modules.get("triton")
    version = getattr(mod, "__version__", None) if mod is not None else None
    if version:
        return str(version)
    try:
        from importlib import metadata

        return metadata.version("triton")
    except Exception:
        return None


def _mode():
    mode = _env.text("ZL_AUTOTUNE_MODE", "tune").lower() or "tune"
    return mode if mode in ("tune", "record", "replay") else "tune"


def _force():
    return _env.text("ZL_REPLAY_FORCE") in ("1", "true", "yes")


# -- kernel identity ------------------------------------------------------------------


def _base_fn(tuner):
    fn = getattr(tuner, "base_fn", None)
    if fn is not None and inspect.isfunction(fn):
        return fn
    fn = tuner
    for _ in range(16):
        if inspect.isfunction(fn):
            return fn
        fn = getattr(fn, "fn", None)
        if fn is None:
            break
    return None


def _jit_fn(tuner):
    # Autotuner.fn -> (Heuristics.fn ->)* JITFunction; the JITFunction is the
    # first object in the chain with a cache_key.
    fn = getattr(tuner, "fn", None)
    for _ in range(16):
        if fn is None or inspect.isfunction(fn):
            return None
        if "cache_key" in dir(type(fn)) and hasattr(fn, "src"):
            return fn
        fn = getattr(fn, "fn", None)
    return None


def kernel_identity(tuner):
    """(id, name, source_hash, cache_key) of a plain autotuned kernel.

    The id is module.qualname of the Python function, so two kernels of one
    name in different files stay apart. source_hash is sha256 of the kernel's
    own source (JITFunction.src): it changes when the kernel is edited and not
    when the compiler does, which is what an A/B between compilers needs.
    Triton's cache_key (which also hashes called JIT functions) is kept for
    information only.
    """
    cached = tuner.__dict__.get("_zl_identity") if hasattr(tuner, "__dict__") else None
    if cached is not None:
        return cached
    base = _base_fn(tuner)
    name = getattr(base, "__name__", None) or type(tuner).__name__
    module = getattr(base, "__module__", None) or "?"
    qualname = getattr(base, "__qualname__", None) or name
    jit = _jit_fn(tuner)
    src = getattr(jit, "src", None) if jit is not None else None
    if not isinstance(src, str) and base is not None:
        try:
            src = inspect.getsource(base)
        except (OSError, TypeError):
            src = None
    cache_key = None
    if jit is not None:
        try:
            cache_key = str(jit.cache_key)
        except Exception:
            cache_key = None
    ident = (f"{module}.{qualname}", name, _sha256(src) if isinstance(src, str) else None, cache_key)
    try:
        tuner._zl_identity = ident
    except Exception:
        pass
    return ident


def _is_libtuner(tuner):
    # FlagGems' LibTuner names its SQLite table and builds keys with get_key;
    # a plain Autotuner has neither.
    return hasattr(tuner, "config_table_name") and callable(getattr(tuner, "get_key", None))


def triton_key(tuner, nargs, kwargs):
    """The key Autotuner.run (triton 3.x) files a winner under in self.cache."""
    arg_names = list(getattr(tuner, "arg_names", []) or [])
    all_args = {**(nargs or {}), **(kwargs or {})}
    args = {k: v for k, v in all_args.items() if k in arg_names}
    key = [args[k] for k in getattr(tuner, "keys", []) if k in args]
    for arg in args.values():
        if hasattr(arg, "dtype"):
            key.append(str(arg.dtype))
    return tuple(key)


def libtuner_table(tuner, width):
    """The SQLite table LibTuner's ConfigCache reads: SQLPersistantModel
    appends md5 of the key column names to config_table_name."""
    base = str(getattr(tuner, "config_table_name", "?"))
    return "{}-{}".format(base, hashlib.md5("".join(f"key_{i}" for i in range(width)).encode()).hexdigest())


def _libtuner_key(tuner, nargs, kwargs):
    arg_names = list(getattr(tuner, "arg_names", []) or [])
    all_args = {**(nargs or {}), **(kwargs or {})}
    args = {k: v for k, v in all_args.items() if k in arg_names}
    return tuple(tuner.get_key(args))


# -- configs --------------------------------------------------------------------------


def config_json(config):
    """Every field of a triton.Config: kwargs, num_warps, num_stages, num_ctas,
    maxnreg, ir_override and whatever a Triton/FlagTree build adds; pre_hook
    (a function) only as whether there is one."""
    out = {"kwargs": _child.jsonable(dict(getattr(config, "kwargs", {}) or {}))}
    for name, value in sorted(vars(config).items()):
        if name in ("kwargs", "pre_hook") or name.startswith("_"):
            continue
        out[name] = _child.jsonable(value)
    out["pre_hook"] = getattr(config, "pre_hook", None) is not None
    return out


def _comparable(cfg_json):
    return {k: v for k, v in cfg_json.items() if k != "pre_hook"}


def _config_class(tuner):
    configs = getattr(tuner, "configs", None) or []
    if configs:
        return type(configs[0])
    triton = sys.modules.get("triton")
    return getattr(triton, "Config", None)


def config_from_record(tuner, recorded):
    """The recorded config as this tuner's Config: one of its own when equal
    (so its pre_hook comes along), else built from the record's fields."""
    want = _comparable(recorded)
    for cfg in getattr(tuner, "configs", None) or []:
        if _comparable(config_json(cfg)) == want:
            return cfg
    cls = _config_class(tuner)
    params = inspect.signature(cls.__init__).parameters
    init = {k: v for k, v in recorded.items() if k in params and k not in ("self", "kwargs", "pre_hook")}
    cfg = cls(dict(recorded.get("kwargs") or {}), **init)
    for k, v in recorded.items():
        if k not in params and k not in ("kwargs", "pre_hook"):
            setattr(cfg, k, v)
    return cfg


def config_from_columns(tuner, columns):
    """A LibTuner row's config columns as a Config, split the way FlagGems'
    SQLPersistantModel.get_config does: fields of Config.__init__ are options,
    the rest are kernel kwargs."""
    for cfg in getattr(tuner, "configs", None) or []:
        try:
            if {k: _norm(v) for k, v in cfg.all_kwargs().items()} == dict(columns):
                return cfg
        except Exception:
            break
    cls = _config_class(tuner)
    params = inspect.signature(cls.__init__).parameters
    options = {k: v for k, v in columns.items() if k in params and k not in ("self", "kwargs")}
    kwargs = {k: v for k, v in columns.items() if k not in params}
    return cls(kwargs, **options)


# -- the records a replay serves ---------------------------------------------------


class ReplayIndex:
    """autotune_records/ read back: plain-autotune winners by kernel id and
    key, LibTuner rows by kernel name and table."""

    def __init__(self, directory):
        self.directory = directory
        self.manifest = {}
        self.triton = {}  # id -> {"name", "source_hash", "entries": {key_string: config}}
        self.libtuner = {}  # kernel name -> {table: {key_string: config columns}}
        self.errors = []
        if not directory:
            return
        try:
            with open(os.path.join(directory, "manifest.json"), encoding="utf-8") as f:
                self.manifest = json.load(f)
        # RecursionError: json's decoder recurses per nesting level, and a
        # record is someone else's file (300,000 `[` stop it there).
        except (OSError, ValueError, RecursionError) as exc:
            self.errors.append(f"manifest.json: {exc}")
        for path in sorted(self._files("triton_autotune")):
            doc = self._load(path)
            if doc is None:
                continue
            entries = {e["key_string"]: e["config"] for e in doc.get("entries", []) if "key_string" in e}
            self.triton[doc.get("id") or doc.get("kernel")] = {
                "name": doc.get("kernel"),
                "source_hash": doc.get("source_hash"),
                "entries": entries,
            }
        for path in sorted(self._files("libtuner")):
            doc = self._load(path)
            if doc is None:
                continue
            tables = self.libtuner.setdefault(doc.get("kernel") or doc.get("table"), {})
            rows = tables.setdefault(doc.get("table"), {})
            for e in doc.get("entries", []):
                rows[e.get("key_string")] = e.get("config", {})

    def _files(self, sub):
        root = os.path.join(self.directory, sub)
        for dirpath, _, names in os.walk(root):
            for name in names:
                if name.endswith(".json"):
                    yield os.path.join(dirpath, name)

    def _load(self, path):
        try:
            with open(path, encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError, RecursionError) as exc:
            self.errors.append(f"{os.path.relpath(path, self.directory)}: {exc}")
            return None


# -- state of this child ----------------------------------------------------------------


class _State:
    def __init__(self):
        self.mode = _mode()
        self.force = _force()
        self.record_dir = _env.text("ZL_AUTOTUNE_RECORD_DIR")
        self.replay_dir = _env.text("ZL_REPLAY_RECORDS")
        self.tuning_benchmarks = 0
        self.records = {}  # kernel id -> record document (plain autotune)
        self.lookups = {}  # (table, key_string) -> {"kernel", "table", "key", "hit"}
        self.inherited = 0
        self.replayed_lookups = 0
        self.pinned = 0
        self.compile_pinned = 0  # tuning calls a compile-only run answered with their first config
        self.misses = []
        self.miss_count = 0
        self.refused = []
        self.refused_count = 0
        self.hooks = []
        self.hook_error = None
        self.replay = None
        self.version_check = None
        self.records_written = 0
        self.winners_noted = 0  # plain-autotune winners seen (record mode)
        self.winners_tuned = 0  # ... of which this process benchmarked
        self.winners_from_disk = 0  # ... of which Triton's disk autotune cache served
        # ... of which were tuned by an autotuner built without disk caching
        # (TRITON_CACHE_AUTOTUNING off when its module was imported): the next
        # process on this cache tunes them again and may pick others.
        self.winners_in_memory = 0
        self.record_files = []
        try:
            self.compile_ahead = _precompile.CompileAhead(_precompile.threads_from_env())
            self.setting_error = None
        except _precompile.SettingError as exc:
            self.compile_ahead = _precompile.CompileAhead(0)
            self.setting_error = str(exc)

    def winners_digest(self):
        """Per plain-autotuned kernel the winners this process used: how many,
        and a sha256 over its sorted 'key<TAB>config' lines. Two runs that
        used the same winners give the same digests whatever their mode, so
        compare can tell an A/A from a tuning difference."""
        out = {}
        for kid, doc in sorted(self.records.items()):
            lines = sorted(f"{ks}\t{json.dumps(_child.jsonable(e['config']), sort_keys=True)}"
                           for ks, e in doc["entries"].items())
            out[kid] = {"kernel": doc["kernel"], "entries": len(lines), "sha256": _sha256("\n".join(lines))}
        return out

    def as_json(self):
        lookups = sorted(self.lookups.values(), key=lambda d: (d["table"], d["key"]))
        return {
            "schema": SCHEMA,
            "mode": self.mode,
            "force": self.force,
            "triton_version": triton_version(),
            "tuning_benchmarks": self.tuning_benchmarks,
            "records_written": self.records_written,
            "winners_noted": self.winners_noted,
            "winners_tuned": self.winners_tuned,
            "winners_from_disk": self.winners_from_disk,
            "winners_in_memory": self.winners_in_memory,
            "record_files": self.record_files,
            "replay_source": self.replay_dir or None,
            "replay_misses": self.miss_count,
            "replay_miss_list": self.misses[:MAX_LISTED],
            "replay_refused": self.refused_count,
            "replay_refused_list": self.refused[:MAX_LISTED],
            "pinned": self.pinned,
            "compile_pinned": self.compile_pinned,
            "replayed_lookups": self.replayed_lookups,
            "inherited_winners": self.inherited,
            "triton_winners": self.winners_digest(),
            "lookups": len(lookups),
            "libtuner_lookups": lookups,
            "version_check": self.version_check,
            "replay_index_errors": self.replay.errors if self.replay else [],
            "hooks": list(self.hooks),
            "compile_ahead": self.compile_ahead.as_json(),
            "hook_error": self.hook_error,
        }


STATE = _State()


def _replay_index():
    if STATE.replay is None:
        STATE.replay = ReplayIndex(STATE.replay_dir)
    return STATE.replay


# -- what the hooks do ----------------------------------------------------------------


def _miss(name, ks, detail=""):
    STATE.miss_count += 1
    entry = {"kernel": name, "key": ks}
    if entry not in STATE.misses:
        STATE.misses.append(entry)
    raise ReplayMiss(f"replay_miss: kernel={name} key={ks}{detail}")


def _refuse(name, message):
    STATE.refused_count += 1
    entry = {"kernel": name, "reason": message}
    if entry not in STATE.refused:
        STATE.refused.append(entry)
    raise ReplayRefused(f"replay_refused: kernel={name} {message}; --force-replay replays anyway")


def replay_config(tuner, nargs, kwargs):
    """The recorded config for this call's key, or replay_miss / replay_refused."""
    index = _replay_index()
    if _is_libtuner(tuner):
        name = getattr(tuner, "__name__", None) or type(tuner).__name__
        key = _libtuner_key(tuner, nargs, kwargs)
        ks = key_string(key)
        tables = index.libtuner.get(name) or {}
        table = libtuner_table(tuner, len(key))
        if table in tables and ks in tables[table]:
            # The DB built from the records should have served this; serve it anyway.
            return config_from_columns(tuner, tables[table][ks])
        others = [t for t, rows in tables.items() if ks in rows]
        if others:
            if not STATE.force:
                _refuse(name, f"table {table} is not in the records (recorded {others[0]}): the kernel source or "
                              "its config list changed")
            return config_from_columns(tuner, tables[others[0]][ks])
        _miss(name, ks, f" (table {table})")
    kid, name, source_hash, _ = kernel_identity(tuner)
    ks = key_string(triton_key(tuner, nargs, kwargs))
    record = index.triton.get(kid)
    if record is None or ks not in record["entries"]:
        _miss(name, ks)
    if record.get("source_hash") and source_hash and record["source_hash"] != source_hash and not STATE.force:
        _refuse(name, f"source changed since the record (recorded {record['source_hash'][:12]}, "
                      f"now {source_hash[:12]})")
    return config_from_record(tuner, record["entries"][ks])


def note_winners(tuner, items, benchmarked):
    kid, name, source_hash, cache_key = kernel_identity(tuner)
    doc = STATE.records.get(kid)
    if doc is None:
        configs = getattr(tuner, "configs", None) or []
        doc = STATE.records[kid] = {
            "schema": SCHEMA,
            "kind": "triton_autotune",
            "id": kid,
            "kernel": name,
            "source_hash": source_hash,
            "cache_key": cache_key,
            "key_names": _child.jsonable(list(getattr(tuner, "keys", []) or [])),
            "configs_hash": hashlib.md5(",".join(str(c) for c in configs).encode()).hexdigest(),
            "configs": len(configs),
            "triton_version": triton_version(),
            "entries": {},
        }
    for key, config in items:
        ks = key_string(key)
        if ks in doc["entries"]:
            continue
        doc["entries"][ks] = {
            "key_string": ks,
            "key": _child.jsonable(list(key)),
            "config": config_json(config),
        }
        # Where the winner came from stays out of the record (and its hash):
        # the same winner tuned or loaded is the same record.
        STATE.winners_noted += 1
        STATE.winners_tuned += 1 if benchmarked else 0
        if benchmarked and getattr(tuner, "cache_results", None) is False:
            STATE.winners_in_memory += 1
        if not benchmarked and STATE.mode != "replay":
            # Chosen without a benchmark outside a replay: Triton loaded it from
            # its disk autotune cache (TRITON_CACHE_AUTOTUNING), a winner this
            # run inherited from an earlier run on the same cache.
            STATE.winners_from_disk += 1


def note_lookup(tuner, nargs, kwargs, hit):
    try:
        key = _libtuner_key(tuner, nargs, kwargs)
    except Exception:
        return
    ks = key_string(key)
    table = libtuner_table(tuner, len(key))
    if (table, ks) in STATE.lookups:
        return
    name = getattr(tuner, "__name__", None) or type(tuner).__name__
    STATE.lookups[(table, ks)] = {"kernel": name, "table": table, "key": ks, "hit": bool(hit)}
    if hit:
        # First sight in this process and already in the DB: a winner this run
        # inherited (in replay: one served from the records).
        if STATE.mode == "replay":
            STATE.replayed_lookups += 1
        else:
            STATE.inherited += 1


# -- the hooks ------------------------------------------------------------------------


class CompileOnlyStoreError(RuntimeError):
    """A compile-only run found LibTuner's store on disk: the first config it
    runs unbenchmarked would become the shared store's winner."""


def _check_store_in_memory():
    """LibTuner's database, where this FlagGems names it (libcache.db_url),
    must be in memory in a compile-only run (zlcore sets FLAGGEMS_DB_URL);
    a FlagGems that ignored the variable fails the run here, before any
    winner is written."""
    cache = getattr(sys.modules.get("flag_gems.utils.libentry"), "libcache", None)
    url = getattr(cache, "db_url", None)
    if isinstance(url, str) and ":memory:" not in url:
        raise CompileOnlyStoreError(f"compile only: LibTuner's store is {url}, not in memory; nothing compiled ahead")


_restore = []


def _wrap_autotuner(cls):
    orig_run = cls.__dict__["run"]
    orig_prune = cls.__dict__["prune_configs"]
    orig_bench = cls.__dict__["_bench"]

    def run(self, *args, **kwargs):
        cache = self.__dict__.get("cache")
        # Every mode notes its winners: record writes them, and all report
        # their digest, which compare matches instead of the mode.
        if not isinstance(cache, dict):
            return orig_run(self, *args, **kwargs)
        # Cheap on the hot path: only a growing cache means a new winner.
        before = len(cache)
        benchmarks = STATE.tuning_benchmarks
        try:
            return orig_run(self, *args, **kwargs)
        finally:
            if len(cache) > before:
                try:
                    note_winners(self, list(itertools.islice(cache.items(), before, None)),
                                 STATE.tuning_benchmarks - benchmarks)
                except Exception as exc:  # bookkeeping must not fail the benchmark
                    STATE.hook_error = f"record: {type(exc).__name__}: {exc}"

    def prune_configs(self, kwargs, *rest, **more):
        self._zl_pruned = True  # LibTuner hit detection: prune runs only on a miss
        if STATE.mode != "replay":
            configs = orig_prune(self, kwargs, *rest, **more)
            if _env.compile_only() and len(configs) > 1:
                _check_store_in_memory()
                # Every configuration compiled, none benchmarked: the first
                # runs, pinned as a replay's is. Its winner stays in this
                # process (the run's LibTuner store is in memory, and Triton's
                # disk entry is keyed by the one-config list), so a later
                # run still tunes over them all, compiled.
                with _phases.CLOCK.phase("compiling"):
                    STATE.compile_ahead.run(self, configs, kwargs)
                STATE.compile_pinned += 1
                self._zl_replay_pinned = configs[0]
                return [configs[0]]
            if STATE.compile_ahead.wanted(configs):
                with _phases.CLOCK.phase("compiling"):
                    STATE.compile_ahead.run(self, configs, kwargs)
            return configs
        config = replay_config(self, getattr(self, "nargs", None), kwargs)
        STATE.pinned += 1
        # A tuner with one config does not benchmark it (triton 3.6 files a
        # single pruned config straight into self.cache); older versions time
        # it once, which _bench below answers without running anything.
        self._zl_replay_pinned = config
        return [config]

    def _bench(self, *args, config, **meta):
        if self.__dict__.get("_zl_replay_pinned") is config:
            self._zl_replay_pinned = None
            return [0.0, 0.0, 0.0]
        STATE.tuning_benchmarks += 1
        with _phases.CLOCK.phase("autotuning"):
            return orig_bench(self, *args, config=config, **meta)

    for name, fn, orig in (("run", run, orig_run), ("prune_configs", prune_configs, orig_prune),
                           ("_bench", _bench, orig_bench)):
        fn.__wrapped__ = orig
        fn.__name__ = orig.__name__
        fn.__qualname__ = getattr(orig, "__qualname__", orig.__name__)
        _restore.append((cls, name, orig))
        setattr(cls, name, fn)


def _wrap_libtuner(cls):
    orig_run = cls.__dict__["run"]

    def run(self, *args, **kwargs):
        self._zl_pruned = False
        ret = orig_run(self, *args, **kwargs)
        if len(getattr(self, "configs", ()) or ()) > 1:
            try:
                note_lookup(self, dict(zip(self.arg_names, args)), kwargs, hit=not self._zl_pruned)
            except Exception as exc:
                STATE.hook_error = f"lookup: {type(exc).__name__}: {exc}"
        return ret

    run.__wrapped__ = orig_run
    run.__name__ = orig_run.__name__
    _restore.append((cls, "run", orig_run))
    setattr(cls, "run", run)


def install():
    """Hook what the suite has imported so far; idempotent and never imports."""
    if "triton.runtime.autotuner.Autotuner" not in STATE.hooks:
        mod = sys.modules.get("triton.runtime.autotuner")
        cls = getattr(mod, "Autotuner", None) if mod is not None else None
        if cls is not None:
            missing = [n for n in ("run", "prune_configs", "_bench") if not callable(cls.__dict__.get(n))]
            if missing:
                STATE.hook_error = f"triton Autotuner has no {', '.join(missing)}: plain autotune not hooked"
            else:
                _wrap_autotuner(cls)
                STATE.hooks.append("triton.runtime.autotuner.Autotuner")
    if "flag_gems.utils.libentry.LibTuner" not in STATE.hooks:
        mod = sys.modules.get("flag_gems.utils.libentry")
        cls = getattr(mod, "LibTuner", None) if mod is not None else None
        if cls is not None:
            if callable(cls.__dict__.get("run")):
                _wrap_libtuner(cls)
                STATE.hooks.append("flag_gems.utils.libentry.LibTuner")
            else:
                STATE.hook_error = "flag_gems LibTuner has no run: LibTuner lookups not tracked"


def uninstall():
    while _restore:
        owner, name, value = _restore.pop()
        setattr(owner, name, value)


def write_records():
    """Record mode: one JSON file per plain-autotuned kernel under
    ZL_AUTOTUNE_RECORD_DIR/triton_autotune/ (LibTuner rows are the core's)."""
    if STATE.mode != "record" or not STATE.record_dir:
        return
    directory = os.path.join(STATE.record_dir, "triton_autotune")
    for kid, doc in sorted(STATE.records.items()):
        out = dict(doc)
        out["entries"] = [doc["entries"][k] for k in sorted(doc["entries"])]
        name = _safe_name(kid) + ".json"
        _child.write_atomic(os.path.join(directory, name),
                            json.dumps(_child.jsonable(out), indent=2, sort_keys=True) + "\n")
        STATE.records_written += len(out["entries"])
        if name not in STATE.record_files:
            STATE.record_files.append("triton_autotune/" + name)


def check_replay_source():
    """Refuse a replay into another Triton version, unless forced. Returns the
    message, or None when the source fits."""
    if STATE.mode != "replay":
        return None
    index = _replay_index()
    recorded = index.manifest.get("triton_version")
    current = triton_version()
    STATE.version_check = {"recorded": recorded, "current": current, "forced": STATE.force}
    if recorded != current and not STATE.force:
        return (f"PREFLIGHT_FAILED check=autotune_replay: the records were made with triton {recorded}, "
                f"this run has triton {current} (--force-replay replays anyway)")
    return None


# -- pytest hooks ----------------------------------------------------------------------


def pytest_configure(config):
    if STATE.setting_error:
        raise pytest.UsageError(f"zlcore autotune: {STATE.setting_error}")


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    install()


def pytest_collection_finish(session):
    # After collection the test modules have imported the suite, and with it
    # the Triton it really uses; still before anything is measured.
    install()
    message = check_replay_source()
    if message:
        _child.write_json("autotune", STATE.as_json())
        print(message, file=sys.stderr, flush=True)
        pytest.exit(message, returncode=EXIT_REFUSED)


def pytest_runtest_setup(item):
    install()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    try:
        write_records()
    except Exception as exc:
        STATE.hook_error = f"write_records: {type(exc).__name__}: {exc}"
    uninstall()
    # A miss or refusal fails its shape through the suite; should the suite
    # swallow the error, the exit status still says so.
    if (STATE.miss_count or STATE.refused_count) and session.exitstatus == 0:
        session.exitstatus = 1
    _child.write_json("autotune", STATE.as_json())
