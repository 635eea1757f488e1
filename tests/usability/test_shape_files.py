"""A shape file given without a mode means file mode (said in the
header); file mode without a file, or a file against an explicit upstream
mode, is one line, exit 2; a missing, unparseable or empty file is
PREFLIGHT_FAILED check=shape_file, exit 3."""
from conftest import PY, SUITE, clean_env, identity, zl

SHAPES = SUITE / "benchmark" / "core_shapes.yaml"


def run(tmp_path, *extra, out="r", **env):
    return zl(tmp_path, "run", "--backend", "host", "--flaggems-dir", SUITE, "--op", "abs", "--python", PY,
              "--dtypes", "float32", "--out", tmp_path / out, *extra, env=clean_env(tmp_path, **env))


def test_a_shape_file_alone_means_file_mode(tmp_path):
    mine = tmp_path / "mine.yaml"
    mine.write_text(SHAPES.read_text())
    r = run(tmp_path, "--shape-file", mine)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"shapes       file (implied by --shape-file)  {mine}" in r.stdout
    ident = identity(tmp_path / "r")
    assert ident["shapes"]["mode"] == "file" and ident["shapes"]["mode_from"] == "implied by --shape-file"
    assert ident["shapes"]["file"] == str(mine)
    r = run(tmp_path, out="r2", SHAPE_FILE=str(mine))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "shapes       file (implied by SHAPE_FILE)" in r.stdout
    assert identity(tmp_path / "r2")["env_choices"]["SHAPE_FILE"] == str(mine)
    # An explicit upstream mode wins over an exported SHAPE_FILE, and says so.
    r = run(tmp_path, "--shape-mode", "upstream", out="r3", SHAPE_FILE=str(mine))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"note         SHAPE_FILE={mine} is set but not used: --shape-mode upstream" in r.stdout


def test_file_mode_without_a_file_or_against_upstream_is_a_usage_error(tmp_path):
    r = run(tmp_path, "--shape-mode", "file")
    assert (r.returncode, r.stderr) == (2, "zlcore: --shape-mode file needs a shape file: give --shape-file F "
                                           "(or SHAPE_FILE)\n")
    r = run(tmp_path, SHAPE_MODE="file")
    assert (r.returncode, r.stderr) == (2, "zlcore: SHAPE_MODE=file needs a shape file: give --shape-file F "
                                           "(or SHAPE_FILE)\n")
    r = run(tmp_path, "--shape-mode", "upstream", "--shape-file", SHAPES)
    assert r.returncode == 2 and "contradict each other" in r.stderr
    assert not (tmp_path / "r").exists()


def test_a_bad_shape_file_fails_preflight(tmp_path):
    (tmp_path / "broken.yaml").write_text("abs: [1, 2\n")
    (tmp_path / "empty.yaml").write_text("")
    for name, words in (("missing.yaml", "is not a file"), ("broken.yaml", "is not valid YAML"),
                        ("empty.yaml", "holds no shapes")):
        r = run(tmp_path, "--shape-file", tmp_path / name)
        assert r.returncode == 3, r.stdout + r.stderr
        assert r.stderr.startswith(f"PREFLIGHT_FAILED check=shape_file {tmp_path / name} {words}"), r.stderr
        assert len(r.stderr.splitlines()) == 1
        assert not (tmp_path / "r").exists()
