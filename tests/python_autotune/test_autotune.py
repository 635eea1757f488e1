"""Autotune record/replay, end to end through the zlcore binary.

tests/fixtures/tunesuite has one plain @triton.autotune kernel and one LibTuner
kernel (tests/support/stubs/autotune: triton's Autotuner laid out like 3.6, FlagGems' LibTuner on a
real SQLite DB); the example suite's mm has its own LibTuner-like tuner. Each
test records on side A and replays on side B.
"""

import glob
import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from zltest import (EXAMPLE_SUITE as EXAMPLE, PY, SRC as REPO, STUBS as STUB_TREES, TUNE_SUITE as TUNESUITE, clean_env,
                    identity, read_jsonl, zl)

STUBS = STUB_TREES / "autotune"  # triton 3.6's Autotuner and FlagGems' LibTuner (tests/support/stubs/README.md)
# The tune suite's test exercises the tuners and writes its own rows to FIX_OUT;
# it writes no result row, so a run of it that went through ends `empty`, exit 7
# (docs/cli.md). The example suite's mm measures, and passes with 0.
MEASURED_NOTHING = 7


def _zlcore():
    candidates = [os.environ.get("ZLCORE_BIN", "")] + sorted(glob.glob(str(REPO / "build*" / "bin" / "zlcore")))
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    pytest.skip("zlcore is not built (set ZLCORE_BIN)")


def zl_run(tmp_path, out, *args, suite=TUNESUITE, op="fused", **env):
    full_env = clean_env(strip_prefixes=("ZL_", "FLAGGEMS_", "TRITON_", "GEMS_", "REPLAY_", "STUB_", "FIX_"),
                         **{"HOME": tmp_path / "home", "PYTHONPATH": STUBS, "PYTHONDONTWRITEBYTECODE": "1", **env})
    proc = zl("run", "--backend", "host", "--flaggems-dir", suite, "--op", op, "--python", PY, "--out", out, *args,
              env=full_env, timeout=300, exe=_zlcore())
    ident = identity(out) if (Path(out) / "run_identity.json").exists() else None
    return proc, ident


@pytest.fixture
def recorded(tmp_path):
    """Side A of the fixture suite: isolated cache, so record mode by default."""
    a = tmp_path / "A"
    proc, ident = zl_run(tmp_path, a, "--isolate-tuner-cache", "1", FIX_OUT=tmp_path / "A.out")
    assert proc.returncode == MEASURED_NOTHING, proc.stdout + proc.stderr
    return a, ident


def test_record_writes_both_kinds_of_winner(recorded):
    a, ident = recorded
    at = ident["autotune"]
    assert at["mode"] == "record"
    assert at["tuning_benchmarks"] == 10  # 3 configs x 2 keys + 2 configs x 2 keys
    records = a / "autotune_records"
    manifest = json.loads((records / "manifest.json").read_text())
    assert manifest["run_id"] == ident["run_id"]
    assert manifest["triton_version"] == "3.6.0"
    assert manifest["records_hash"] == at["records_hash"]
    # records_hash is reproducible with sha256sum over the sorted file list.
    listing = "".join(f"{manifest['files'][p]}  {p}\n" for p in sorted(manifest["files"]))
    import hashlib
    assert hashlib.sha256(listing.encode()).hexdigest() == manifest["records_hash"]
    for rel, digest in manifest["files"].items():
        assert hashlib.sha256((records / rel).read_bytes()).hexdigest() == digest

    plain = json.loads((records / "triton_autotune" / "benchmark.kernels.scale_kernel.json").read_text())
    assert plain["kernel"] == "scale_kernel" and plain["triton_version"] == "3.6.0"
    assert plain["source_hash"] and len(plain["source_hash"]) == 64
    by_key = {e["key_string"]: e["config"] for e in plain["entries"]}
    assert by_key == {
        "256,float16": {"kwargs": {"BLOCK": 64}, "num_warps": 4, "num_stages": 2, "num_ctas": 1,
                        "maxnreg": None, "ir_override": None, "pre_hook": False},
        "512,float16": {"kwargs": {"BLOCK": 128}, "num_warps": 8, "num_stages": 4, "num_ctas": 1,
                        "maxnreg": 128, "ir_override": None, "pre_hook": False},
    }

    (lib_file,) = glob.glob(str(records / "libtuner" / "TunedConfig_nvidia_triton_3_6" / "sum_kernel_*.json"))
    lib = json.loads(Path(lib_file).read_text())
    assert lib["kernel"] == "sum_kernel" and lib["db_file"] == "TunedConfig_nvidia_triton_3_6.db"
    assert lib["key_columns"] == ["key_0", "key_1"]
    assert [c["name"] for c in lib["columns"]][:2] == ["key_0", "key_1"]
    assert {e["key_string"]: e["config"] for e in lib["entries"]} == {
        "256,float16": {"BLOCK": 64, "num_warps": 4, "num_ctas": 1, "num_stages": 3},
        "512,float16": {"BLOCK": 256, "num_warps": 8, "num_ctas": 1, "num_stages": 2},
    }
    assert not list(records.joinpath("libtuner").rglob("*_benchmark*")), "timing tables are not winners"
    assert ident["tuner_cache"]["inherited_winners"] == 0


def test_replay_pins_recorded_configs_and_tunes_nothing(tmp_path, recorded):
    a, ident_a = recorded
    proc, ident = zl_run(tmp_path, tmp_path / "B", "--replay-from", str(a), FIX_OUT=tmp_path / "B.out")
    assert proc.returncode == MEASURED_NOTHING, proc.stdout + proc.stderr
    at = ident["autotune"]
    assert at["mode"] == "replay"
    assert at["source_run_id"] == ident_a["run_id"]
    assert at["records_hash"] == ident_a["autotune"]["records_hash"]
    assert at["records_hash_modified"] is False
    assert at["tuning_benchmarks"] == 0
    assert at["replay_misses"] == 0
    assert ident["tuner_cache"]["kind"] == "isolated"  # a replay always isolates
    assert at["plugin"]["pinned"] == 2 and at["plugin"]["replayed_lookups"] == 2
    assert read_jsonl(tmp_path / "B.out", skip_blank=True) == read_jsonl(tmp_path / "A.out", skip_blank=True)
    stub = json.loads(Path(str(tmp_path / "B.out") + ".stub").read_text())
    assert stub["benched"] == []
    assert len(stub["compiled"]) == 4  # only the 4 recorded winners were compiled
    assert not (tmp_path / "B" / "autotune_records").exists()
    # Both sides used the same winners of both kinds, and say so.
    assert ident["autotune"]["winners_hash"] == ident_a["autotune"]["winners_hash"]
    kinds = {k: v["kind"] for k, v in ident_a["autotune"]["winners"].items()}
    assert kinds == {"scale_kernel": "triton", "sum_kernel": "libtuner"}
    assert all(v["entries"] == 2 for v in ident["autotune"]["winners"].values())


def test_replay_from_the_records_dir_itself(tmp_path, recorded):
    a, ident_a = recorded
    proc, ident = zl_run(tmp_path, tmp_path / "B", "--replay-from", str(a / "autotune_records"))
    assert proc.returncode == MEASURED_NOTHING, proc.stdout + proc.stderr
    assert ident["autotune"]["source_run_id"] == ident_a["run_id"]


def test_missing_key_fails_with_replay_miss(tmp_path, recorded):
    a, _ = recorded
    proc, ident = zl_run(tmp_path, tmp_path / "B", "--replay-from", str(a), FIX_NS="256,512,1024",
                         FIX_OUT=tmp_path / "B.out")
    assert proc.returncode != 0
    rows = read_jsonl(tmp_path / "B.out", skip_blank=True)
    assert "error" not in rows[0] and "error" not in rows[1]
    assert rows[2]["error"].startswith("replay_miss: kernel=scale_kernel key=1024,float16")
    plugin = ident["autotune"]["plugin"]
    assert {"kernel": "scale_kernel", "key": "1024,float16"} in plugin["replay_miss_list"]
    assert ident["autotune"]["tuning_benchmarks"] == 0
    assert ident["status"] == "failed"


def test_missing_libtuner_key_fails_with_replay_miss(tmp_path, recorded):
    a, _ = recorded
    src = tmp_path / "Amiss"
    shutil.copytree(a / "autotune_records", src / "autotune_records")
    (lib_file,) = (src / "autotune_records" / "libtuner").rglob("*.json")
    doc = json.loads(lib_file.read_text())
    doc["entries"] = [e for e in doc["entries"] if e["key_string"] != "512,float16"]
    lib_file.write_text(json.dumps(doc))
    proc, ident = zl_run(tmp_path, tmp_path / "B", "--replay-from", str(src), FIX_OUT=tmp_path / "B.out")
    assert proc.returncode != 0
    rows = read_jsonl(tmp_path / "B.out", skip_blank=True)
    assert rows[1]["error"].startswith("replay_miss: kernel=sum_kernel key=512,float16")
    assert ident["autotune"]["records_hash_modified"] is True
    assert ident["autotune"]["tuning_benchmarks"] == 0


def test_triton_version_mismatch_is_refused_unless_forced(tmp_path, recorded):
    a, _ = recorded
    proc, ident = zl_run(tmp_path, tmp_path / "B", "--replay-from", str(a), STUB_TRITON_VERSION="3.5.1")
    assert proc.returncode == 3
    out = proc.stdout + proc.stderr
    assert "PREFLIGHT_FAILED check=autotune_replay" in out
    assert "triton 3.6.0" in out and "triton 3.5.1" in out
    assert ident["autotune"]["plugin"]["version_check"] == {"recorded": "3.6.0", "current": "3.5.1", "forced": False}

    # Forced: the run goes on with the recorded configs. LibTuner's DB file
    # name carries the Triton minor, so its lookups miss the rebuilt DB and
    # are served from the records by the prune hook, still without tuning.
    proc, ident = zl_run(tmp_path, tmp_path / "C", "--replay-from", str(a), "--force-replay",
                         STUB_TRITON_VERSION="3.5.1", FIX_OUT=tmp_path / "C.out")
    assert proc.returncode == MEASURED_NOTHING, proc.stdout + proc.stderr
    assert ident["autotune"]["force"] is True
    assert read_jsonl(tmp_path / "C.out", skip_blank=True) == read_jsonl(tmp_path / "A.out", skip_blank=True)
    assert ident["autotune"]["tuning_benchmarks"] == 0


def test_kernel_source_change_is_refused_unless_forced(tmp_path, recorded):
    a, _ = recorded
    src = tmp_path / "Aedit"
    shutil.copytree(a / "autotune_records", src / "autotune_records")
    f = src / "autotune_records" / "triton_autotune" / "benchmark.kernels.scale_kernel.json"
    doc = json.loads(f.read_text())
    doc["source_hash"] = "0" * 64
    f.write_text(json.dumps(doc))
    proc, ident = zl_run(tmp_path, tmp_path / "B", "--replay-from", str(src), FIX_OUT=tmp_path / "B.out")
    assert proc.returncode != 0
    rows = read_jsonl(tmp_path / "B.out", skip_blank=True)
    assert rows[0]["error"].startswith("replay_refused: kernel=scale_kernel source changed")
    assert ident["autotune"]["replay_refused"] >= 1

    proc, ident = zl_run(tmp_path, tmp_path / "C", "--replay-from", str(src), "--force-replay",
                         FIX_OUT=tmp_path / "C.out")
    assert proc.returncode == MEASURED_NOTHING, proc.stdout + proc.stderr
    assert read_jsonl(tmp_path / "C.out", skip_blank=True) == read_jsonl(tmp_path / "A.out", skip_blank=True)


def test_shared_cache_counts_inherited_winners_and_records_what_was_used(tmp_path):
    cache = tmp_path / "shared"
    proc, first = zl_run(tmp_path, tmp_path / "T", "--autotune", "tune", FLAGGEMS_CACHE_DIR=cache, FIX_NS="256")
    assert proc.returncode == MEASURED_NOTHING, proc.stdout + proc.stderr
    assert first["autotune"]["mode"] == "tune" and first["tuner_cache"]["inherited_winners"] == 0
    assert not (tmp_path / "T" / "autotune_records").exists()
    # Another kernel's row in the shared DB that this run never touches.
    (db,) = (cache / "config_cache").glob("*.db")
    with sqlite3.connect(db) as conn:
        conn.execute('CREATE TABLE "other_kernel_%s-%s" (key_0 BIGINT NOT NULL, BLOCK BIGINT, PRIMARY KEY (key_0))'
                     % ("a" * 32, "b" * 32))
        conn.execute('INSERT INTO "other_kernel_%s-%s" VALUES (1, 2)' % ("a" * 32, "b" * 32))

    proc, second = zl_run(tmp_path, tmp_path / "R", "--autotune", "record", FLAGGEMS_CACHE_DIR=cache,
                          FIX_NS="256,512")
    assert proc.returncode == MEASURED_NOTHING, proc.stdout + proc.stderr
    assert second["tuner_cache"]["kind"] == "shared"
    assert second["tuner_cache"]["inherited_winners"] == 1  # sum_kernel 256 came from the first run
    (lib_file,) = (tmp_path / "R" / "autotune_records" / "libtuner").rglob("*.json")
    keys = [e["key_string"] for e in json.loads(lib_file.read_text())["entries"]]
    assert keys == ["256,float16", "512,float16"]  # the inherited one and the new one, nothing else
    assert not list((tmp_path / "R" / "autotune_records" / "libtuner").rglob("other_kernel*"))


def test_replay_in_cache_puts_the_records_into_the_callers_own_cache(tmp_path, recorded):
    # What zlcore ab's warm sides do: replay into the cache their worker
    # imported on, not an isolated one, and use exactly the record's winners.
    a, ident_a = recorded
    cache = tmp_path / "side"
    own = {"FLAGGEMS_CACHE_DIR": cache / "flaggems", "TRITON_CACHE_DIR": cache / "triton"}
    # Never into the user's default cache, only with a replay, never isolated:
    # each a one-line usage error that writes nothing.
    for out, args, env, says in (
            ("U1", ["--replay-from", str(a)], {"TRITON_CACHE_DIR": cache / "triton"}, "FLAGGEMS_CACHE_DIR"),
            ("U2", [], own, "--replay-from"),
            ("U3", ["--replay-from", str(a), "--isolate-tuner-cache", "1"], own, "--isolate-tuner-cache")):
        proc, _ = zl_run(tmp_path, tmp_path / out, *args, "--replay-in-cache", **env)
        assert proc.returncode == 2 and says in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, \
            proc.stderr
        assert not (tmp_path / out).exists() and not cache.exists()

    proc, ident = zl_run(tmp_path, tmp_path / "B", "--replay-from", str(a), "--replay-in-cache",
                         FIX_OUT=tmp_path / "B.out", **own)
    assert proc.returncode == MEASURED_NOTHING, proc.stdout + proc.stderr
    at = ident["autotune"]
    assert at["mode"] == "replay" and at["replay_in_cache"] is True
    assert at["tuning_benchmarks"] == 0 and at["replay_misses"] == 0
    assert ident["tuner_cache"]["kind"] == "shared"
    assert ident["tuner_cache"]["flaggems_dir"] == str(cache / "flaggems")
    assert at["winners_hash"] == ident_a["autotune"]["winners_hash"]

    # The cache outlives the run and holds other records' rows: one of the
    # same key as this record's (another op's winner) gives way to the record.
    (db,) = (cache / "flaggems" / "config_cache").glob("*.db")
    with sqlite3.connect(db) as conn:
        (table,) = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
                    if t.startswith("sum_kernel_") and "_benchmark" not in t]
        assert conn.execute(f'UPDATE "{table}" SET BLOCK = 32 WHERE key_0 = 256').rowcount == 1
    proc, again = zl_run(tmp_path, tmp_path / "B2", "--replay-from", str(a), "--replay-in-cache",
                         FIX_OUT=tmp_path / "B2.out", **own)
    assert proc.returncode == MEASURED_NOTHING, proc.stdout + proc.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute(f'SELECT BLOCK FROM "{table}" WHERE key_0 = 256').fetchone() == (64,)
    assert again["autotune"]["winners_hash"] == ident_a["autotune"]["winners_hash"]
    assert read_jsonl(tmp_path / "B2.out", skip_blank=True) == read_jsonl(tmp_path / "A.out", skip_blank=True)


def test_winners_an_autotuner_keeps_in_memory_only_are_counted(tmp_path):
    # zlcore turns Triton's disk autotune cache on before the suite's imports,
    # so every plain-autotune winner tuned here would be there for the next
    # process on the cache.
    proc, kept = zl_run(tmp_path, tmp_path / "K", "--autotune", "tune", FIX_OUT=tmp_path / "K.out")
    assert proc.returncode == MEASURED_NOTHING, proc.stdout + proc.stderr
    plugin = kept["autotune"]["plugin"]
    assert plugin["winners_tuned"] > 0 and plugin["winners_in_memory"] == 0
    # The user's own 0: Triton keeps the winners in this process only, and
    # the identity says how many (the next process re-tunes them).
    proc, lost = zl_run(tmp_path, tmp_path / "L", "--autotune", "tune", FIX_OUT=tmp_path / "L.out",
                        TRITON_CACHE_AUTOTUNING="0")
    assert proc.returncode == MEASURED_NOTHING, proc.stdout + proc.stderr
    plugin = lost["autotune"]["plugin"]
    assert plugin["winners_in_memory"] == plugin["winners_tuned"] > 0


def test_bad_modes_are_usage_errors(tmp_path, recorded):
    a, _ = recorded
    proc, _ = zl_run(tmp_path, tmp_path / "B", "--autotune", "replay")
    assert proc.returncode == 2 and "--replay-from" in proc.stderr
    proc, _ = zl_run(tmp_path, tmp_path / "C", "--autotune", "record", "--replay-from", str(a))
    assert proc.returncode == 2
    tune_run = tmp_path / "T"
    zl_run(tmp_path, tune_run, "--autotune", "tune")
    (tune_run / "autotune_records").mkdir()
    proc, _ = zl_run(tmp_path, tmp_path / "D", "--replay-from", str(tune_run))
    assert proc.returncode == 2 and "manifest.json" in proc.stderr


# -- the example suite: its mm has a small LibTuner-like tuner of its own ---------------


def test_example_suite_record_then_replay(tmp_path):
    a, b = tmp_path / "A", tmp_path / "B"
    proc, ia = zl_run(tmp_path, a, "--isolate-tuner-cache", "1", suite=EXAMPLE, op="mm")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ia["autotune"]["mode"] == "record"
    assert ia["autotune"]["tuning_benchmarks"] > 0
    (lib_file,) = (a / "autotune_records" / "libtuner").rglob("mm_kernel_*.json")
    recorded = json.loads(lib_file.read_text())
    assert recorded["config_fields"] == ["BLOCK_M", "BLOCK_N", "BLOCK_K"]
    assert len(recorded["entries"]) == ia["autotune"]["records_written"] > 0

    proc, ib = zl_run(tmp_path, b, "--replay-from", str(a), suite=EXAMPLE, op="mm")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    at = ib["autotune"]
    assert at["mode"] == "replay"
    assert at["source_run_id"] == ia["run_id"]
    assert at["records_hash"] == ia["autotune"]["records_hash"]
    assert at["tuning_benchmarks"] == 0
    suite = ib["plugins"]["suite_tuner"]
    assert suite["tuned"] == 0 and suite["pinned"] == len(recorded["entries"])
    winners = {k: v for k, v in suite["kernels"]["mm_kernel"]["winners"].items()}
    assert winners == {e["key_string"]: e["config"] for e in recorded["entries"]}

    # Records missing a key: that shape fails with replay_miss, the run exits non-zero.
    src = tmp_path / "Amiss" / "autotune_records"
    shutil.copytree(a / "autotune_records", src)
    (f,) = src.joinpath("libtuner").rglob("*.json")
    doc = json.loads(f.read_text())
    dropped = doc["entries"].pop(0)["key_string"]
    f.write_text(json.dumps(doc))
    proc, ic = zl_run(tmp_path, tmp_path / "C", "--replay-from", str(src), suite=EXAMPLE, op="mm")
    assert proc.returncode != 0
    assert ic["autotune"]["replay_misses"] >= 1
    assert ic["autotune"]["tuning_benchmarks"] == 0
    assert any(f"replay_miss: kernel=mm_kernel key={dropped}" in m for m in ic["autotune"]["replay_miss_examples"])
    rows = read_jsonl(tmp_path / "C" / "results.jsonl", skip_blank=True)
    assert any((r.get("error") or "").startswith("replay_miss: kernel=mm_kernel") for r in rows)


def test_compiling_ahead_compiles_every_config_before_the_benchmarks_and_changes_no_winner(tmp_path):
    # ZL_COMPILE_AHEAD=N: once a tuner has pruned its configs, they compile N
    # at a time (the first in the tuning thread, the rest in zl-compile
    # threads); the benchmarks then compile nothing, and the configs timed,
    # the variants compiled and the winners are those of a run without it.
    isolated = ("--isolate-tuner-cache", "1")  # each tunes afresh, neither inherits the other's winners
    plain, plain_ident = zl_run(tmp_path, tmp_path / "plain", *isolated, FIX_OUT=tmp_path / "plain.out")
    ahead, ahead_ident = zl_run(tmp_path, tmp_path / "ahead", *isolated, FIX_OUT=tmp_path / "ahead.out",
                                ZL_COMPILE_AHEAD="4")
    assert plain.returncode == ahead.returncode == MEASURED_NOTHING, ahead.stdout + ahead.stderr
    stub = {name: json.loads(Path(str(tmp_path / name) + ".out.stub").read_text()) for name in ("plain", "ahead")}
    assert sorted(map(tuple, stub["ahead"]["compiled"])) == sorted(map(tuple, stub["plain"]["compiled"]))
    assert stub["ahead"]["benched"] == stub["plain"]["benched"]
    assert read_jsonl(tmp_path / "ahead.out") == read_jsonl(tmp_path / "plain.out")  # the configs each shape ran
    assert ahead_ident["autotune"]["winners_hash"] == plain_ident["autotune"]["winners_hash"]
    assert all(name == "MainThread" for name in stub["plain"]["compiled_on"])
    assert any(name.startswith("zl-compile") for name in stub["ahead"]["compiled_on"])

    done = ahead_ident["autotune"]["plugin"]["compile_ahead"]
    # Two kernels (3 and 2 configs) tuned for two keys each: 10 configs.
    assert done == {"threads": 4, "tuners": 4, "configs": 10, "failed": 0, "seconds": done["seconds"], "error": None}
    assert plain_ident["autotune"]["plugin"]["compile_ahead"]["threads"] == 0


def test_a_bad_compile_ahead_setting_stops_the_run_before_anything_is_written(tmp_path):
    # The interpreter probe asks the child's parser (docs/cli.md): one line, exit 2.
    proc, ident = zl_run(tmp_path, tmp_path / "bad", FIX_OUT=tmp_path / "bad.out", ZL_COMPILE_AHEAD="many")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr == ("zlcore: ZL_COMPILE_AHEAD='many' is not allowed; use a number of threads from 0 to 64, "
                           "or off\n")
    assert not (tmp_path / "bad").exists()


def test_compile_only_compiles_every_config_tunes_none_and_leaves_the_next_run_to_tune(tmp_path):
    # zlcore run --compile-only (a batch's compile-ahead pass): every pruned
    # config compiles, none is benchmarked, the first runs; the run passes
    # with no rows. A later run on the same caches finds the configs
    # compiled and still tunes every key itself: no winner chosen without a
    # benchmark reached LibTuner's store or Triton's.
    proc, ident = zl_run(tmp_path, tmp_path / "c", "--compile-only", FIX_OUT=tmp_path / "c.out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ident["status"] == "passed" and ident["reason"].startswith("compile only:")
    assert ident["rows"] == 0
    at = ident["autotune"]
    assert at["tuning_benchmarks"] == 0 and at["plugin"]["compile_pinned"] == 4
    assert at["plugin"]["compile_ahead"]["configs"] == 10
    assert ident["env"]["ZL_COMPILE_ONLY"] == "1"
    assert ident["env"]["FLAGGEMS_DB_URL"] == "sqlite:///:memory:"
    stub = json.loads(Path(str(tmp_path / "c") + ".out.stub").read_text())
    assert stub["benched"] == [] and len(stub["compiled"]) == 5  # 3 + 2 configs, each compiled once

    later, later_ident = zl_run(tmp_path, tmp_path / "later", FIX_OUT=tmp_path / "later.out")
    assert later.returncode == MEASURED_NOTHING, later.stdout + later.stderr
    assert later_ident["autotune"]["tuning_benchmarks"] == 10
    assert later_ident["tuner_cache"]["inherited_winners"] == 0


def test_compile_only_refuses_a_cache_of_its_own(tmp_path):
    for args, word in ((("--isolate-tuner-cache", "1"), "--isolate-tuner-cache"),
                       (("--autotune", "record"), "--autotune record")):
        proc, ident = zl_run(tmp_path, tmp_path / "x", "--compile-only", *args, FIX_OUT=tmp_path / "x.out")
        assert proc.returncode == 2 and word in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
        assert ident is None


def test_compile_only_on_a_store_it_cannot_keep_in_memory_compiles_nothing_and_writes_no_winner(tmp_path):
    # A FlagGems whose LibTuner ignores FLAGGEMS_DB_URL: the first tuning call
    # fails its shapes (raised inside the op's call, so the row's, not the
    # harness's), before any winner is written; no batch marks such an op.
    proc, ident = zl_run(tmp_path, tmp_path / "c", "--compile-only", FIX_OUT=tmp_path / "c.out",
                         STUB_LIBCACHE_URL="sqlite:////var/flaggems/store.db")
    assert proc.returncode == 1 and ident["status"] == "failed", proc.stdout + proc.stderr
    assert "LibTuner's store is sqlite:////var/flaggems/store.db, not in memory" in ident["reason"]
    later, later_ident = zl_run(tmp_path, tmp_path / "later", FIX_OUT=tmp_path / "later.out")
    assert later_ident["autotune"]["tuning_benchmarks"] == 10


def test_an_inherited_compile_only_variable_changes_no_ordinary_run(tmp_path):
    # zlcore tells every child whether it is compile-only: a ZL_COMPILE_ONLY=1
    # left in the caller's environment must not pin untuned winners.
    proc, ident = zl_run(tmp_path, tmp_path / "r", FIX_OUT=tmp_path / "r.out", ZL_COMPILE_ONLY="1")
    assert proc.returncode == MEASURED_NOTHING, proc.stdout + proc.stderr
    assert ident["autotune"]["tuning_benchmarks"] == 10
    assert ident["autotune"]["plugin"]["compile_pinned"] == 0
    assert "ZL_COMPILE_ONLY" not in ident["env"]
