"""The first run. A python3 without pytest is named with what failed
and the --python flag; without --python zlcore moves on to an interpreter
that has pytest and says which; with no suite given, the example suite
installed under share/zlcore is the embedded default."""
import os
import subprocess

from conftest import BUILD, PY, SUITE, clean_env, identity, zl
from zltest import executable


def python_without_pytest(tmp_path):
    """A python3 first on PATH that cannot import pytest (no site-packages)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = executable(bin_dir / "python3", f"#!/bin/sh\nexec {PY} -S \"$@\"\n")
    return bin_dir, fake


def test_a_python_without_pytest_is_named_and_passed_over(tmp_path):
    bin_dir, fake = python_without_pytest(tmp_path)
    env = clean_env(tmp_path, PATH=f"{bin_dir}:{os.environ['PATH']}")
    r = zl(tmp_path, "run", "--backend", "host", "--flaggems-dir", SUITE, "--op", "abs", "--dtypes", "float32",
           "--out", tmp_path / "r", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("  python "))
    assert f"{PY}  (Python 3." in line and f"chosen because python3 ({fake}, Python 3." in line
    assert line.endswith("cannot import pytest")
    ident = identity(tmp_path / "r")
    assert ident["python"]["command"] == PY and ident["python"]["requested"] is False
    assert ident["python"]["passed_over"][0].startswith(f"python3 ({fake}")

    # Asked for by name: refused with the interpreter, what failed and the flag.
    r = zl(tmp_path, "run", "--backend", "host", "--flaggems-dir", SUITE, "--op", "abs", "--python", fake,
           "--out", tmp_path / "r2", env=env)
    assert r.returncode == 3
    assert r.stderr.startswith(f"PREFLIGHT_FAILED check=python --python {fake} ({fake}, Python 3.")
    assert f"cannot import pytest: install it there ({fake} -m pip install pytest) or give an interpreter " \
           "that has pytest with --python PATH" in r.stderr
    r = zl(tmp_path, "run", "--backend", "host", "--flaggems-dir", SUITE, "--op", "abs", "--python",
           tmp_path / "nowhere" / "python3", "--out", tmp_path / "r3", env=env)
    assert r.returncode == 3 and "does not exist or is not executable: give an interpreter that has pytest " \
        "with --python PATH" in r.stderr


def test_the_embedded_example_suite_runs_out_of_the_box_from_an_install(tmp_path):
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)], check=True, capture_output=True)
    assert (prefix / "share" / "zlcore" / "suite" / "benchmark" / "test_abs.py").is_file()
    r = zl(tmp_path, "run", "--backend", "host", "--op", "abs", "--dtypes", "float32", "--out", tmp_path / "r",
           exe=prefix / "bin" / "zlcore")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (f"  suite        {prefix}/share/zlcore/suite   (the embedded example suite: no --flaggems-dir / "
            "FLAGGEMS_DIR given)") in r.stdout
    ident = identity(tmp_path / "r")
    assert ident["suite"]["embedded"] is True and ident["flaggems_dir"] == f"{prefix}/share/zlcore/suite"
    # The build tree has the same layout.
    r = zl(tmp_path, "run", "--backend", "host", "--op", "abs", "--dtypes", "float32", "--out", tmp_path / "r2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "(the embedded example suite" in r.stdout
    r = zl(tmp_path, "ops")
    assert r.returncode == 0 and "abs" in r.stdout, r.stderr
