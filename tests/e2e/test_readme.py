"""README.md's quick start, verbatim and in order, on the host backend: the
commands after `make demo` run where `make demo` leaves zlcore."""
import re
import subprocess
from pathlib import Path

import pytest

import zltest
from zltest import SRC

README = (SRC / "README.md").read_text()
BUILD = Path(zltest.ZLCORE).resolve().parent.parent if zltest.ZLCORE else None


def quick_start_blocks():
    section = README.split("## Quick start")[1].split("\n## ")[0]
    return [block.strip().splitlines() for block in re.findall(r"^```\n(.*?)^```", section, re.M | re.S)]


def test_the_quick_start_says_where_make_demo_installs_zlcore():
    blocks = quick_start_blocks()
    assert blocks[0] == ["make demo", "make test"]
    # make demo installs into PREFIX, which the Makefile defaults to ./_install.
    assert re.search(r"^PREFIX\s*\?=\s*\$\(CURDIR\)/_install$", (SRC / "Makefile").read_text(), re.M)
    assert any("_install/bin" in line for block in blocks[1:] for line in block)


@pytest.mark.skipif(not (BUILD and (BUILD / "CMakeCache.txt").is_file()), reason="needs the build tree (ctest)")
def test_the_quick_start_commands_run_verbatim_after_make_demo(tmp_path):
    # `make demo` itself builds and installs into ./_install; here the build
    # exists, so its install step stands for it. Every later line runs as written.
    subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(tmp_path / "_install")], check=True,
                   capture_output=True)
    later = [line for block in quick_start_blocks()[1:] for line in block]
    assert any(line.startswith("zlcore ") for line in later)
    script = "set -e\n" + "\n".join(later) + "\n"
    env = zltest.clean_env(("ZL_", "BENCH_LEVEL", "OP", "SHAPE_", "TEST_NODE", "FLAGGEMS_DIR"),
                           PATH="/usr/local/bin:/usr/bin:/bin")
    r = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "status       passed" in r.stdout or "passed" in r.stdout.splitlines()[-1], r.stdout
    assert list((tmp_path / "runs").iterdir()), "the run wrote its directory under ./runs"


def test_the_gpu_section_says_what_a_gpu_host_needs_and_how_the_interpreter_is_chosen():
    gpu = README.split("## Using it on a GPU host")[1].split("\n## ")[0]
    for need in ("torch", "triton", "pytest", "FlagGems checkout", "--python", "--flaggems-dir"):
        assert need in gpu, need
