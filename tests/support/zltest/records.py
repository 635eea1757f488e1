"""Reading what zlcore wrote: identities, ops_status.csv, JSON lines; and its children."""

import csv
import io
import json
import os
from pathlib import Path

# ops_status.csv's header, in order (docs/cli.md).
OPS_STATUS_COLUMNS = ["op", "test_node", "status", "exit_code", "signal", "backend", "device_index", "device_id",
                      "timer", "bench_level", "started", "seconds", "warmed_on", "attempt", "run_dir", "reason",
                      # where the run's seconds went (docs/run-directory.md, "Where the time goes")
                      "t_zlcore", "t_start", "t_imports", "t_collection", "t_compiling", "t_autotuning", "t_suite",
                      "t_measuring_base", "t_measuring_gems", "t_teardown"]


def identity(run_dir, op=None):
    """run_identity.json of a run directory; with op, of that op's run in batch directory run_dir."""
    path = Path(run_dir) if op is None else Path(run_dir) / "runs" / op
    return json.loads((path / "run_identity.json").read_text())


def batch_identity(out):
    return json.loads((Path(out) / "batch_identity.json").read_text())


def ops_status(out):
    """A batch's ops_status.csv as {op: row}."""
    with open(Path(out) / "ops_status.csv", newline="") as f:
        return {r["op"]: r for r in csv.DictReader(f)}


def ops_status_rows(out):
    """ops_status.csv, parsed strictly: the exact header, whole records only, in file order."""
    text = (Path(out) / "ops_status.csv").read_text()
    assert text.endswith("\n"), repr(text[-200:])
    rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    assert rows[0] == OPS_STATUS_COLUMNS
    for r in rows[1:]:
        assert len(r) == len(OPS_STATUS_COLUMNS), r
    return [dict(zip(OPS_STATUS_COLUMNS, r)) for r in rows[1:]]


def by_op(rows):
    return {r["op"]: r for r in rows}


def read_jsonl(path, skip_blank=False):
    """One JSON value per line; skip_blank lets empty lines through, else one fails the read."""
    lines = Path(path).read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip() or not skip_blank]


def tagged_pids(tag):
    """Processes whose environment holds ZL_BATCH_TEST_TAG=tag (a test's batch and its children)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if f"ZL_BATCH_TEST_TAG={tag}".encode() in f.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            pass
    return found


def ab_rounds(out):
    """An A/B's rounds.csv: one dict per finished run and per finished round (side "*")."""
    with open(Path(out) / "rounds.csv", newline="") as f:
        return list(csv.DictReader(f))


def ab_verdicts(out):
    """An A/B's verdict counts (ab_summary.json)."""
    return json.loads((Path(out) / "ab_summary.json").read_text())["verdicts"]


def ab_rows(out):
    """An A/B's report rows (report.json)."""
    return json.loads((Path(out) / "report.json").read_text())["rows"]
