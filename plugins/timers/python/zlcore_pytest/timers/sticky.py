"""Sides that keep the sustained procedure once a run found them power-limited.

The graph timer decides per run whether a side is power-limited (the first
placement's windows, the probe, the device's throttle reasons), and near the
power limit that decision flips between runs of the same code: a GEMM's held
path reads boost clocks, its sustained path the capped plateau, 9-12 % apart
on the H200 (docs/graph-timer.md, "Known limit"). Two runs that read one side
two ways cannot show a small change.

ZL_GRAPH_SUSTAINED_ROWS names a file that the runs of one comparison share
(`zlcore ab` gives every side of an A/B the same one). A side that takes the
sustained procedure adds its key; a side whose key is there takes the
procedure in every later run even when its own run would have held. The rule
only ever moves a side to the sustained path, which reads any side right (a
side that is not power-limited reads its held pace there), at ~3 s a side.

The file: one JSON array a line, [op, dtype, shape, side], `shape` as the
row's (`_bench.shape_key`), side "base" or "gems". Lines are appended with one
write each on an O_APPEND descriptor, so concurrent runs (an A/B over several
devices) interleave whole lines; a last line without its newline is an append
cut short and is ignored. Any other line that does not parse stops the run
before it measures (SettingsError): a file this module did not write.
"""

import json
import os

from .settings import SettingsError

PINNED = "took the sustained procedure in an earlier run (ZL_GRAPH_SUSTAINED_ROWS)"


def key(context):
    return json.dumps([context.get("op"), context.get("dtype"), context.get("shape"), context.get("side")])


def read_keys(path):
    """The keys in `path`; an empty set when it does not exist yet."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return set()
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"ZL_GRAPH_SUSTAINED_ROWS={path!r} cannot be read: {exc}") from None
    lines = text.split("\n")
    if lines and lines[-1]:
        lines.pop()  # an append cut short
    keys = set()
    for number, line in enumerate(lines, 1):
        if not line:
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            entry = None
        if not (isinstance(entry, list) and len(entry) == 4 and entry[3] in ("base", "gems")):
            raise SettingsError(f"ZL_GRAPH_SUSTAINED_ROWS={path!r} line {number} is not "
                                "[op, dtype, shape, \"base\"|\"gems\"]")
        keys.add(json.dumps(entry))
    return keys


def check(path):
    """At configure: the file parses, and its directory exists for the appends."""
    if path is None:
        return
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise SettingsError(f"ZL_GRAPH_SUSTAINED_ROWS={path!r}: directory {directory} does not exist")
    read_keys(path)


class SustainedRows:
    """The shared file, read again for every side: a run on another device may
    have added a key since this session started."""

    def __init__(self, path):
        self.path = path

    def pinned(self, context):
        """PINNED when an earlier run put this side on the sustained path, else None."""
        if self.path is None:
            return None
        return PINNED if key(context) in read_keys(self.path) else None

    def add(self, context):
        """Records the side; returns None, or why it could not (the reading stands)."""
        if self.path is None:
            return None
        line = (key(context) + "\n").encode("utf-8")
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
        except OSError as exc:
            return f"not recorded in ZL_GRAPH_SUSTAINED_ROWS: {type(exc).__name__}: {exc}"
        return None
