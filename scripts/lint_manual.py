#!/usr/bin/env python3
"""`make lint`'s check that the repository speaks of the product, and that docs/ stays a manual.

usage: lint_manual.py [--docs-limit BYTES]     (run from anywhere inside the repository)

Over every file git tracks:
  words   a line that speaks of how the work was organised rather than of what zlcore does:
          numbered work periods, issue numbers, pages of raw device runs, machines on loan,
          instructions received (WORDS below has each pattern). A phrase broken over two
          lines is found too. pytest's own
          vocabulary (pytest_sessionstart, scope="session", a test session) never matches:
          every session pattern needs a number. A line that must keep such words says so with
          `lint-manual: allow` on it.
  files   data archives and images (.tar.xz, .tgz, .png, ...): results go into docs/results.md
          as small tables; the data stays in the repository's history.
  names   a test file numbered in the order it was written (test_03_shapes.py, 12_test.cpp):
          a test file is named after the behaviour it checks.
  docs    the tracked files under docs/ total at most --docs-limit bytes (400000).
Prints file:line: text for every hit and a one-line summary; exit 1 on any hit, 0 otherwise.
"""

import argparse
import pathlib
import re
import subprocess
import sys

WORDS = [
    ("a numbered work period", re.compile(r"\b[Ss]ession[ _-]?[0-9]+\b|\b[Ss]essions [0-9]+")),
    ("an issue number", re.compile(r"\b[Ii]ssues?[ _-]?#?[0-9]+\b")),
    ("the raw device pages", re.compile(r"docs/evidence|\bevidence/")),
    ("a borrowed machine", re.compile(r"\b[Ll]ent\b|\bborrowed (machine|GPU|device|host|node)s?\b")),
    ("instructions received", re.compile(r"\b[Tt]he brief\b|\b[Ww]ork[ -]periods?\b|\b[Tt]ickets?\b")),
]
ALLOW = "lint-manual: allow"
# A comment's or docstring's continuation: what leads the next line before its words.
LEAD = re.compile(r"^\s*(?:#+|//+|/?\*+|\"\"\"|>)?\s*")
BINARY_EXT = re.compile(r"\.(tar|tgz|gz|xz|bz2|zst|zip|7z|png|jpe?g|gif|bmp|webp|svg|pdf|npz|npy|pkl)$", re.I)
SELF = "scripts/lint_manual.py"
# A number leading a test file's name, or following its test_ prefix, is the
# order the tests were written in, not what they check.
NUMBERED_TEST = re.compile(r"(?:^|/)(?:test_[0-9]+(?:_[^/]*)?|[0-9]+_[^/]*test[^/]*)\.(?:py|cpp|cc|c|hpp|h)$")


def tracked(root):
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True, capture_output=True).stdout
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def word_hits(path, text):
    lines = text.splitlines()
    hits = []
    for i, line in enumerate(lines):
        if ALLOW in line:
            continue
        joined = line
        if i + 1 < len(lines) and ALLOW not in lines[i + 1]:
            joined = line + " " + LEAD.sub("", lines[i + 1], count=1)
        for what, rx in WORDS:
            m = rx.search(joined)
            # A match that lies wholly on the next line is that line's hit.
            if m and m.start() < len(line):
                hits.append(f"{path}:{i + 1}: {line.strip()[:160]}  [{what}]")
                break
    return hits


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs-limit", type=int, default=400000, metavar="BYTES")
    a = ap.parse_args(argv)
    root = pathlib.Path(
        subprocess.run(["git", "rev-parse", "--show-toplevel"], check=True, capture_output=True, text=True,
                       cwd=pathlib.Path(__file__).resolve().parent).stdout.strip())
    hits, docs_bytes = [], 0
    for path in tracked(root):
        full = root / path
        if not full.is_file():
            continue
        if path.startswith("docs/"):
            docs_bytes += full.stat().st_size
        if BINARY_EXT.search(path):
            hits.append(f"{path}:0: a data archive or image  [files]")
            continue
        if NUMBERED_TEST.search(path):
            hits.append(f"{path}:0: a test file numbered, not named after what it checks  [names]")
        if path == SELF:
            continue
        data = full.read_bytes()
        if b"\0" in data[:8192]:
            continue
        hits += word_hits(path, data.decode("utf-8", "replace"))
    if docs_bytes > a.docs_limit:
        hits.append(f"docs/:0: the tracked files total {docs_bytes} bytes, over {a.docs_limit}  [docs]")
    for h in hits:
        print(h)
    print(f"lint_manual: {len(hits)} hit(s); docs/ {docs_bytes} bytes (limit {a.docs_limit})")
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main())
