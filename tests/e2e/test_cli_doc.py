"""docs/cli.md is the reference: every command, every flag a command takes and
every variable zlcore or its plugins read or set is in it (variables zlcore
sets for the pytest child may be in run-directory.md's table, which cli.md
points to). A flag or a variable added without its line fails here."""

import re
import subprocess

import pytest

import zltest
from zltest import SRC

CLI = (SRC / "docs" / "cli.md").read_text()
CHILD_ENV = (SRC / "docs" / "run-directory.md").read_text().split("## Environment zlcore gives the pytest child")[1]


def commands():
    top = subprocess.run([zltest.ZLCORE, "--help"], capture_output=True, text=True, timeout=30).stdout
    listed = top.split("commands:")[1].split("global options")[0]
    return re.findall(r"^  ([a-z]+)\s{2,}", listed, re.M)


def test_the_help_lists_the_commands():
    assert set(commands()) >= {"backends", "devices", "plan", "run", "batch", "compare", "ops", "ab"}


@pytest.mark.parametrize("command", commands())
def test_every_flag_of_a_command_is_in_cli_md(command):
    assert re.search(rf"zlcore {command}\b|^\| `{command}\b", CLI, re.M), f"docs/cli.md does not list zlcore {command}"
    h = subprocess.run([zltest.ZLCORE, command, "--help"], capture_output=True, text=True, timeout=30)
    assert h.returncode == 0, h.stderr
    # The option column: "  --flag arg" or "  -h [ --help ]"; not flags quoted in a description.
    flags = set(re.findall(r"^  (?:-\w \[ )?(--[a-z][a-z0-9-]+)", h.stdout, re.M))
    assert flags, h.stdout
    assert sorted(f for f in flags if f not in CLI) == []


def test_every_variable_the_sources_name_is_documented():
    named = set()
    sources = [*SRC.glob("core/**/*.[ch]pp"), *SRC.glob("plugins/**/*.[ch]pp"), *SRC.glob("plugins/**/*.py")]
    for path in sources:
        # A quoted name is one read or set at run time; the SDK's ZL_ macros are never quoted.
        named |= set(re.findall(r"[\"'](ZL_[A-Z0-9_]*[A-Z0-9])[\"']", path.read_text(errors="replace")))
    assert len(named) > 30
    assert sorted(v for v in named if v not in CLI and v not in CHILD_ENV) == []
