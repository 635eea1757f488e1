"""An A/A is not "not measured the same way". Runs record the winners
they used (autotune.winners, autotune.winners_hash) and compare matches those,
not the autotune mode. mm of the example suite tunes its block sizes with a
LibTuner-like tuner; abs tunes nothing."""
import glob
import json
import shutil
from pathlib import Path

from conftest import PY, SUITE, clean_env, identity, zl


def run(tmp_path, out, op, *extra, env):
    r = zl(tmp_path, "run", "--backend", "host", "--flaggems-dir", SUITE, "--op", op, "--python", PY,
           "--dtypes", "float32", "--out", tmp_path / out, *extra, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return identity(tmp_path / out)


def test_two_default_runs_that_used_the_same_winners_are_measured_alike(tmp_path):
    env = clean_env(tmp_path)  # one shared tuner cache: the second run inherits the first's winners
    first, second = run(tmp_path, "a", "mm", env=env), run(tmp_path, "b", "mm", env=env)
    assert first["autotune"]["mode"] == second["autotune"]["mode"] == "tune"
    assert first["tuner_cache"]["inherited_winners"] != second["tuner_cache"]["inherited_winners"]
    assert first["autotune"]["winners_hash"] == second["autotune"]["winners_hash"]
    assert list(first["autotune"]["winners"]) == ["mm_kernel"]
    r = zl(tmp_path, "compare", tmp_path / "a", tmp_path / "b", "--strict")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "caliber: measured the same way" in r.stdout
    assert "autotune pairing: tune/tune: same winners (1 kernel)" in r.stdout
    # An op that tunes nothing: no winners on either side, the same (empty) hash.
    run(tmp_path, "c", "abs", env=env)
    run(tmp_path, "d", "abs", env=env)
    assert identity(tmp_path / "c")["autotune"]["winners"] == {}
    r = zl(tmp_path, "compare", tmp_path / "c", tmp_path / "d", "--strict")
    assert r.returncode == 0 and "tune/tune: same winners (0 kernels)" in r.stdout, r.stdout


def test_other_winners_are_named_by_kernel(tmp_path):
    env = clean_env(tmp_path)
    run(tmp_path, "rec", "mm", "--isolate-tuner-cache", "on", env=env)
    # The same records, one winner edited: what B replays is not what A ran.
    tampered = tmp_path / "tampered"
    shutil.copytree(tmp_path / "rec" / "autotune_records", tampered / "autotune_records")
    record = glob.glob(str(tampered / "autotune_records" / "libtuner" / "*" / "*.json"))[0]
    doc = json.loads(open(record).read())
    config = doc["entries"][0]["config"]
    config["BLOCK_M"] = 16 if config["BLOCK_M"] != 16 else 32
    open(record, "w").write(json.dumps(doc))
    run(tmp_path, "same", "mm", "--replay-from", tmp_path / "rec", env=env)
    run(tmp_path, "other", "mm", "--replay-from", tampered, env=env)
    r = zl(tmp_path, "compare", tmp_path / "rec", tmp_path / "same", "--strict")
    assert r.returncode == 0 and "record/replay: same winners (1 kernel)" in r.stdout, r.stdout
    r = zl(tmp_path, "compare", tmp_path / "rec", tmp_path / "other", "--strict")
    assert r.returncode == 3
    assert "autotune pairing: record/replay: different winners in mm_kernel" in r.stdout


def test_a_relative_cache_is_the_callers_directory_not_the_suites(tmp_path):
    # The child runs in the suite's directory: handed on as given, "tc" would
    # be another cache there than the one the run reads and records.
    env = clean_env(tmp_path, TRITON_CACHE_DIR="tc", FLAGGEMS_CACHE_DIR="fc")
    caches = run(tmp_path, "a", "mm", env=env)["tuner_cache"]
    assert (caches["triton_dir"], caches["flaggems_dir"]) == (str(tmp_path / "tc"), str(tmp_path / "fc"))
    assert caches["new_winners"] > 0, caches
    assert run(tmp_path, "b", "mm", env=env)["tuner_cache"]["inherited_winners"] > 0
    # A warm worker reads FlagGems' cache directory once, at its imports,
    # before any op hands it an environment: it gets the absolute one too.
    r = zl(tmp_path, "batch", "--backend", "host", "--flaggems-dir", SUITE, "--ops", "mm", "--python", PY,
           "--dtypes", "float32", "--out", tmp_path / "w", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    warm = identity(tmp_path / "w" / "runs" / "mm")
    assert warm["worker"]["kind"] == "warm", warm["worker"]
    assert warm["tuner_cache"]["flaggems_dir"] == str(tmp_path / "fc")
    assert warm["tuner_cache"]["inherited_winners"] > 0, warm["tuner_cache"]
    assert not (Path(SUITE) / "fc").exists() and not (Path(SUITE) / "tc").exists()
