"""Sides that keep the sustained procedure once a run took it.

The graph timer decides per run whether a side is power-limited (the first
placement's windows, the probe, the device's throttle reasons), and near the
power limit that decision flips between runs of the same code: a GEMM's held
path reads boost clocks, its sustained path the capped plateau, 9-12 % apart
on the H200 (docs/graph-timer.md, "Known limit"). Two runs that read one side
two ways cannot show a small change.

ZL_GRAPH_SUSTAINED_ROWS names a file that the runs of one comparison share
(`zlcore ab` gives every side of an A/B the same one). A side that takes the
sustained procedure, for whatever reason, adds its key; a side whose key is
there takes the procedure in every later run even when its own run would
have held. The rule only ever moves a side to the sustained path, which reads
any side right (a side that is not power-limited reads its held pace there),
at ~3 s a side.

The file: one JSON array a line, [op, dtype, shape, side] (each of the first
three a string or null, `shape` as the row's `_bench.shape_key`; side "base"
or "gems"). Each append is one write, "\n" + key + "\n", on an O_APPEND
descriptor, so concurrent runs (an A/B over several devices) interleave whole
lines, and a write cut short (a full disk) leaves a fragment on a line of its
own, which the next append's leading newline ends: a line that starts like a
key and does not parse is such a fragment and is skipped. Any other line
stops the run at configure (SettingsError): a file this module did not write.
"""

import json
import os

from .settings import SettingsError

PINNED = "took the sustained procedure in an earlier run (ZL_GRAPH_SUSTAINED_ROWS)"
SIDES = ("base", "gems")
_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW


def key(context):
    return json.dumps([context.get("op"), context.get("dtype"), context.get("shape"), context.get("side")])


def _is_key(entry):
    return (isinstance(entry, list) and len(entry) == 4 and entry[3] in SIDES
            and all(part is None or isinstance(part, str) for part in entry[:3]))


def read_keys(path):
    """The keys in `path`; an empty set when it does not exist yet."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return set()
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"ZL_GRAPH_SUSTAINED_ROWS={path!r} cannot be read: {exc}") from None
    keys = set()
    for number, line in enumerate(text.split("\n"), 1):
        if not line:
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            if line.startswith("["):
                continue  # an append cut short
            entry = None
        if not _is_key(entry):
            raise SettingsError(f"ZL_GRAPH_SUSTAINED_ROWS={path!r} line {number} is not "
                                "[op, dtype, shape, \"base\"|\"gems\"]")
        keys.add(json.dumps(entry))
    return keys


def check(path):
    """At configure: the file parses, and this run can append to it (its
    directory exists, it is no link, it may be written)."""
    if path is None:
        return
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise SettingsError(f"ZL_GRAPH_SUSTAINED_ROWS={path!r}: directory {directory} does not exist")
    read_keys(path)
    try:
        os.close(os.open(path, _FLAGS, 0o644))
    except OSError as exc:
        raise SettingsError(f"ZL_GRAPH_SUSTAINED_ROWS={path!r} cannot be appended to: {exc.strerror}") from None


class SustainedRows:
    """The shared file, read again for every side: a run on another device may
    have added a key since this session started."""

    def __init__(self, path):
        self.path = path

    def pinned(self, context):
        """PINNED when an earlier run put this side on the sustained path, else
        None. A file that cannot be read now (it was checked at configure)
        pins nothing: the side decides for itself, as without the file."""
        if self.path is None:
            return None
        try:
            return PINNED if key(context) in read_keys(self.path) else None
        except SettingsError:
            return None

    def add(self, context):
        """Records the side; returns None, or why it could not (the reading stands)."""
        if self.path is None:
            return None
        line = ("\n" + key(context) + "\n").encode("utf-8")
        try:
            fd = os.open(self.path, _FLAGS, 0o644)
            try:
                written = os.write(fd, line)
            finally:
                os.close(fd)
        except OSError as exc:
            return f"not recorded in ZL_GRAPH_SUSTAINED_ROWS: {type(exc).__name__}: {exc}"
        if written != len(line):
            return f"not recorded in ZL_GRAPH_SUSTAINED_ROWS: {written} of {len(line)} bytes written"
        return None
