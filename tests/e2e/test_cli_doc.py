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


def help_entries(command):
    """{--flag: its description} from `zlcore COMMAND --help`, continuation lines joined."""
    text = subprocess.run([zltest.ZLCORE, command, "--help"], capture_output=True, text=True, timeout=30).stdout
    entries, flag = {}, None
    for line in text.splitlines():
        m = re.match(r"^  (?:-\w \[ )?(--[a-z][a-z0-9-]+)(.*)$", line)
        if m:
            flag = m.group(1)
            entries[flag] = m.group(2)
        elif flag and line.startswith("     "):
            entries[flag] += " " + line.strip()
        else:
            flag = None
    return {f: re.sub(r"\s+", " ", d) for f, d in entries.items()}


def doc_row(command, flag):
    """The row of `flag` in cli.md's section of `zlcore COMMAND`, else the paragraphs naming it, or ''."""
    section = CLI.split(f"## `zlcore {command}`")
    if len(section) < 2:
        return ""
    body = section[1].split("\n## ")[0]
    rows = [line for line in body.splitlines() if line.startswith(f"| `{flag}")]
    if rows:
        return rows[0]
    # A section in prose (batch): the paragraphs that name the flag.
    return " ".join(p for p in body.split("\n\n") if re.search(rf"`{flag}\b", p)).replace("\n", " ")


def defaults_said(description):
    """What a help text gives as a flag's default: Boost's "(=X)" and the words after "default"."""
    said = re.findall(r"\(=([^)]+)\)", description)
    for m in re.finditer(r"\bdefault:? ([^;,)]+)", description):
        said.append(m.group(1).strip())
    return said


@pytest.mark.parametrize("command", ["run", "batch", "compare", "ab"])
def test_a_default_a_help_text_names_is_the_default_cli_md_names(command):
    # Each default is compared by its first word (a number or a name): the
    # help's "(default 600; 0: none)" and cli.md's "600" agree, "(default 10)" and "5" do not.
    wrong = []
    for flag, description in help_entries(command).items():
        row = doc_row(command, flag)
        if not row:
            continue
        for said in defaults_said(description):
            word = re.match(r"[\w.%-]+", said)
            if word and word.group(0) not in row:
                wrong.append(f"{flag}: help says default '{said}', cli.md: {row[:120]}")
    assert wrong == []


@pytest.mark.parametrize("command", commands())
def test_every_variable_cli_md_says_a_command_reads_is_in_its_help(command):
    table = CLI.split("## Environment variables")[1].split("\n## ")[0]
    h = subprocess.run([zltest.ZLCORE, command, "--help"], capture_output=True, text=True, timeout=30).stdout
    missing = []
    for row in table.splitlines():
        cells = [c.strip() for c in row.split("|")[1:-1]]
        if len(cells) < 2 or not cells[0].startswith("`"):
            continue
        readers = {w.strip() for w in re.sub(r"\(.*?\)", "", cells[1]).split(",")}
        if command not in readers:
            continue
        missing += [v for v in re.findall(r"`([A-Z][A-Z0-9_]*)`", cells[0]) if v not in h]
    assert missing == []


def test_ops_json_has_exactly_the_keys_its_help_names():
    import json

    out = subprocess.run([zltest.ZLCORE, "ops", "--json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    said = help_entries("ops")["--json"]
    assert all(re.search(rf"\b{k}\b", said) for k in doc), (sorted(doc), said)
    op = next(iter(doc["ops"].values()))
    assert all(re.search(rf"\b{k}\b", said) for k in op), (sorted(op), said)
    assert sorted(doc) == ["files", "ops", "root"]
