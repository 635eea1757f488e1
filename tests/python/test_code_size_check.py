"""scripts/code_size_check.py: the size limits `make lint` holds core/src to."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECKER = REPO / "scripts" / "code_size_check.py"


def function(name, body_lines):
    return f"int {name}(int x) {{\n" + "  x += 1;\n" * body_lines + "  return x;\n}\n"


def run_checker(root):
    return subprocess.run([sys.executable, str(CHECKER), "--root", str(root)], capture_output=True, text=True)


def write(root, rel, text):
    path = root / "core" / "src" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_small_files_and_functions_pass_and_the_largest_are_named(tmp_path):
    write(tmp_path, "a/small.cpp", function("short_one", 10))
    write(tmp_path, "b/other.cpp", function("shorter", 3))
    r = run_checker(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "largest file core/src/a/small.cpp (13 lines" in r.stdout
    assert "longest function short_one at core/src/a/small.cpp:1 (13 lines" in r.stdout


def test_a_function_over_100_lines_fails_naming_it(tmp_path):
    write(tmp_path, "a/long.cpp", function("fine", 5) + function("too_long", 99))
    r = run_checker(tmp_path)
    assert r.returncode == 1
    assert "core/src/a/long.cpp:9: function too_long is 102 lines, more than 100" in r.stdout
    assert "fine" not in r.stdout.split("longest function")[1].splitlines()[0]


def test_a_function_of_exactly_100_lines_passes(tmp_path):
    write(tmp_path, "a/edge.cpp", function("edge", 97))
    r = run_checker(tmp_path)
    assert r.returncode == 0, r.stdout
    assert "(100 lines, at most 100)" in r.stdout


def test_a_file_over_400_lines_fails_naming_it(tmp_path):
    write(tmp_path, "big/many.cpp", "".join(function(f"f{i}", 20) for i in range(18)))
    r = run_checker(tmp_path)
    assert r.returncode == 1
    assert "core/src/big/many.cpp: 414 lines, more than 400" in r.stdout
    assert "largest file core/src/big/many.cpp (414 lines" in r.stdout


def test_headers_count_and_files_outside_core_src_do_not(tmp_path):
    write(tmp_path, "a/long.hpp", function("inline_long", 120))
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "huge.cpp").write_text(function("elsewhere", 500))
    r = run_checker(tmp_path)
    assert r.returncode == 1
    assert "function inline_long is 123 lines" in r.stdout
    assert "elsewhere" not in r.stdout


def test_an_allowed_data_table_is_not_counted(tmp_path):
    write(tmp_path, "identity/identity_schema.cpp", function("fields", 200))
    r = run_checker(tmp_path)
    assert r.returncode == 0, r.stdout


def test_a_missing_folder_is_a_usage_error(tmp_path):
    r = run_checker(tmp_path)
    assert r.returncode == 2
    assert "is not a directory" in r.stderr
