"""`zlcore history add` and `report` end to end on synthetic nightly series
(series.py): the steps found, what changed, the exit codes, the formats."""
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from series import write_series  # noqa: E402

ZLCORE = os.environ.get("ZLCORE", "zlcore")


def zl(*args, check=None):
    p = subprocess.run([ZLCORE, "history", *map(str, args)], capture_output=True, text=True, timeout=120)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
    return p


def report(db, *extra):
    return json.loads(zl("report", "--db", db, "--format", "json", *extra, check=0).stdout)


def test_two_ops_slower_from_batch_seven_are_the_only_steps(tmp_path):
    db = tmp_path / "h.db"
    dirs = write_series(tmp_path, slowed=("sin_loop", "sum_loop"))
    zl("add", "--db", db, *dirs, check=0)
    r = report(db)
    steps = {(s["op"], s["side"], s["first_bad_run"], s["last_good_run"]) for s in r["steps"]}
    assert steps == {("sin_loop", "gems", 7, 6), ("sum_loop", "gems", 7, 6)}, r["steps"]
    for s in r["steps"]:
        assert s["kind"] == "regression" and 27 < s["change_pct"] < 33
        assert s["changed"] == [{"key": "versions.flaggems.git_sha", "before": "aaa1111", "after": "bbb2222"}]
    md = zl("report", "--db", db, check=0).stdout
    assert md.splitlines()[0] == "# zlcore history: 12 runs, 80 series, 2 step(s) (2 regression(s), 0 new)"
    assert "**REGRESSION** `sin_loop` (gems): +" in md and "from run 7 (2026-11-07T02:00:00Z) on" in md
    # An old regression does not fail tonight's job.
    zl("report", "--db", db, "--fail-on-new-regression", check=0)


def test_unchanged_batches_have_no_step(tmp_path):
    db = tmp_path / "h.db"
    zl("add", "--db", db, *write_series(tmp_path, seed=7), check=0)
    r = report(db)
    assert r["steps"] == [] and r["series_steps"] == []


def test_device_model_change_starts_a_segment_not_a_step(tmp_path):
    db = tmp_path / "h.db"
    zl("add", "--db", db, *write_series(tmp_path, device_change=4), check=0)
    r = report(db)
    assert r["steps"] == []
    assert len(r["notes"]) == 1
    assert r["notes"][0].startswith("run 5 ") and \
        "device.name: Example Accelerator X1 -> Example Accelerator X2" in r["notes"][0]


def test_new_regression_fails_the_nightly_gate(tmp_path):
    db = tmp_path / "h.db"
    zl("add", "--db", db, *write_series(tmp_path, slowed=("copy_loop",), slow_from=9), check=0)
    p = zl("report", "--db", db, "--fail-on-new-regression", check=1)
    assert "**REGRESSION (new)** `copy_loop`" in p.stdout
    assert p.stderr.startswith("NEW_REGRESSION: 8 series slower from the latest run on")


def test_adding_again_is_idempotent_and_a_bad_directory_adds_nothing(tmp_path):
    db = tmp_path / "h.db"
    dirs = write_series(tmp_path, n=3)
    assert zl("add", "--db", db, *dirs, check=0).stdout.startswith("added batch ")
    assert zl("add", "--db", db, str(dirs[0]) + "/", check=0).stdout.startswith("unchanged batch ")
    (tmp_path / "empty").mkdir()
    p = zl("add", "--db", db, tmp_path / "empty", dirs[1], check=2)
    assert p.stderr.splitlines() == [f"zlcore: history add: {tmp_path / 'empty'} is neither a run directory "
                                     "(run_identity.json) nor a batch directory (ops_status.csv, runs/<op>/)"]
    assert p.stdout.startswith("unchanged batch ")
    assert len(report(db)["runs"]) == 3


def test_report_refuses_bad_input(tmp_path):
    assert zl("report", "--db", tmp_path / "none.db", check=2).stderr.startswith("zlcore: history report: --db ")
    assert "--format must be md, json, csv or html" in zl("report", "--format", "xml", check=2).stderr
    (tmp_path / "not.db").write_text("hello")
    assert zl("report", "--db", tmp_path / "not.db", check=2).stderr.startswith("zlcore: history: --db ")
    assert "needs a subcommand" in zl("remove", check=2).stderr
    # --since is a date: a word or a day no month has would filter silently.
    for since in ("yesterday", "2026-02-30", "1", "2026-13-01"):
        said = zl("report", "--db", tmp_path / "not.db", "--since", since, check=2).stderr
        assert said == f"zlcore: history report: --since '{since}' is not a date; give an ISO 8601 date, " \
                       "2026-12-07 or 2026-12-07T14:00:00Z\n", said


def edited(db, tmp_path, sql):
    """A copy of `db` with `sql` run on it, as someone editing the file would."""
    import shutil
    import sqlite3
    copy = tmp_path / "edited.db"
    shutil.copy(db, copy)
    con = sqlite3.connect(copy)
    con.executescript(sql)
    con.commit()
    con.close()
    return copy


def test_an_edited_store_is_read_as_hostile_input(tmp_path):
    db = tmp_path / "h.db"
    zl("add", "--db", db, *write_series(tmp_path, n=8), check=0)
    # Numbers no import writes: left out and counted, never a step of inf or nan.
    r = report(edited(db, tmp_path, "UPDATE rows SET median_ms = 1e308 * 10 WHERE run % 2 = 0;"
                                    "UPDATE rows SET median_ms = -1, lo_ms = -2 WHERE run % 3 = 0;"))
    assert r["steps"] == [] and r["series_steps"] == [], r["steps"]
    assert any(n.endswith("which no import writes (the file was edited or damaged)") and " left out" in n
               for n in r["notes"]), r["notes"]
    # Control characters reach no format: a step's series and what changed
    # between its runs carry an escape sequence, which every format shows escaped.
    slowed = tmp_path / "slowed"
    slowed.mkdir()
    db2 = tmp_path / "h2.db"
    zl("add", "--db", db2, *write_series(slowed, slowed=("sin_loop",)), check=0)
    bad = edited(db2, tmp_path, "UPDATE rows SET shape = shape || x'1b5b33316d' WHERE op = 'sin_loop';"
                                "UPDATE identity SET value = x'1b5d303b7469746c6507' || value "
                                "WHERE key = 'versions.flaggems.git_sha' AND value = 'bbb2222';")
    for fmt in ("md", "json", "csv", "html"):
        out = zl("report", "--db", bad, "--format", fmt, check=0).stdout
        assert "sin_loop" in out and "\\x1b[31m" in out.replace("\\\\", "\\"), fmt
        assert "\\x1b]0;title\\x07bbb2222" in out.replace("\\\\", "\\"), fmt
        assert not any(ord(c) < 32 and c not in "\n\t" for c in out), fmt
    # A table of version 1 changed or gone: refused at open, naming the table.
    for sql in ("DROP TABLE rows;", "ALTER TABLE rows RENAME COLUMN median_ms TO m;"):
        p = zl("report", "--db", edited(db, tmp_path, sql), check=2)
        assert p.stderr.startswith("zlcore: history: --db ")
        assert "does not hold version 1's table (rows: run op dtype" in p.stderr, p.stderr
        assert len(p.stderr.splitlines()) == 1, p.stderr
    p = zl("add", "--db", edited(db, tmp_path, "DROP TABLE identity;"), tmp_path, check=2)
    assert "does not hold version 1's table (identity: run key value)" in p.stderr
    # A directory or a FIFO is not a history file, for report or add.
    os.mkfifo(tmp_path / "fifo.db")
    for cmd in (["report", "--db", tmp_path], ["add", "--db", tmp_path / "fifo.db", tmp_path]):
        said = zl(*cmd, check=2).stderr
        assert said.endswith("is not a file (a directory or a device); name the history file\n"), said


def test_csv_and_html_carry_the_steps(tmp_path):
    db = tmp_path / "h.db"
    zl("add", "--db", db, *write_series(tmp_path, slowed=("norm_loop",)), check=0)
    rows = list(csv.DictReader(io.StringIO(zl("report", "--db", db, "--format", "csv", check=0).stdout)))
    assert {(r["op"], r["first_bad_run"]) for r in rows} == {("norm_loop", "7")} and len(rows) == 8
    page = tmp_path / "h.html"
    zl("report", "--db", db, "--format", "html", "--out", page, check=0)
    text = page.read_text()
    assert "<script" not in text and "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    # The step's label is text on the picture, not a tooltip.
    assert "run 7: +" in text and "changed: versions.flaggems.git_sha aaa1111 -&gt; bbb2222" in text
    assert text.index("<h2>norm_loop</h2>") < text.index("<h2>copy_loop</h2>")


def test_ab_directory_adds_its_b_side_pooled_over_rounds(tmp_path):
    from series import write_ab
    db = tmp_path / "h.db"
    write_ab(tmp_path / "ab1", [1.0, 3.0])
    out = zl("add", "--db", db, tmp_path / "ab1", check=0).stdout
    assert out.startswith(f"added ab {tmp_path / 'ab1'} (1 run(s), 2 row(s), started 2026-11-20T01:00:00Z)")
    import sqlite3
    rows = sqlite3.connect(db).execute("SELECT op, side, median_ms, n FROM rows ORDER BY side").fetchall()
    # B's four placements over two rounds: median 2.0 (A's 9.0 never enters).
    assert rows == [("abs", "base", 1.0, 2), ("abs", "gems", 2.0, 4)]


def test_one_op_report_keeps_the_whole_runs_pace(tmp_path):
    # All of sin_loop's series step at once: read alone they would move the
    # pace, and the step would be no series' own.
    db = tmp_path / "h.db"
    zl("add", "--db", db, *write_series(tmp_path, slowed=("sin_loop",)), check=0)
    r = report(db, "--op", "sin_loop")
    assert {(s["op"], s["first_bad_run"]) for s in r["steps"]} == {("sin_loop", 7)}
    assert r["series"] == 16
    assert zl("report", "--db", db, "--op", "nope", check=5).stderr.startswith("NOTHING_COMPARED: ")
