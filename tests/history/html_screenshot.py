#!/usr/bin/env python3
"""Renders `zlcore history report --format html` of a nightly series with two
ops 30 % slower from run 7 in headless Chromium, and checks the first screen
shows the answer: the regressions listed in red, and the first op's timeline
with its step drawn as a tall red line.

    html_screenshot.py ZLCORE OUT_DIR

Leaves OUT_DIR/history_page.html and history_screenshot.png behind for a
person to look at.
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "compare"))
from html_screenshot import decode_png, near, tallest_column  # noqa: E402  (compare's PNG reader)
from series import write_series  # noqa: E402

STEP_RED = (0xD6, 0x27, 0x28)
LIST_RED = (0xBB, 0x00, 0x00)


def main():
    zlcore, out_dir = sys.argv[1:3]
    os.makedirs(out_dir, exist_ok=True)
    page = os.path.join(out_dir, "history_page.html")
    shot = os.path.join(out_dir, "history_screenshot.png")
    for stale in (page, shot):
        if os.path.exists(stale):
            os.remove(stale)
    work = Path(tempfile.mkdtemp(prefix="zl-history-"))
    try:
        dirs = write_series(work, slowed=("sin_loop", "sum_loop"))
        db = work / "h.db"
        subprocess.run([zlcore, "history", "add", "--db", db, *dirs], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([zlcore, "history", "report", "--db", db, "--format", "html", "--out", page], check=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("chromium is not installed: run `bash scripts/install-deps.sh chromium` (make test does)")
        return 1
    profile = tempfile.mkdtemp(prefix="zl-chromium-")
    try:
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--hide-scrollbars", "--force-device-scale-factor=1", f"--user-data-dir={profile}",
               "--window-size=1200,900", f"--screenshot={shot}", "file://" + os.path.abspath(page)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if not os.path.exists(shot):
        print(f"no screenshot; chromium exited {p.returncode}:\n{p.stderr[-3000:]}")
        return 1
    print(f"screenshot: {shot}")
    width, height, rows = decode_png(shot)
    listed = sum(1 for row in rows for px in row if near(px, LIST_RED, 40))
    step = tallest_column(rows, STEP_RED)
    non_white = sum(1 for row in rows for px in row if not near(px, (255, 255, 255), 8))
    print(f"{width}x{height}: {non_white} non-white pixels, red list text {listed} px, tallest step line {step} px")
    checks = {
        "page is not blank (>= 3 % non-white)": non_white >= 0.03 * width * height,
        "the regressions are listed in red text": listed >= 200,
        "the first timeline's step is a tall red line": step >= 100,
    }
    for what, ok in checks.items():
        print(("ok    " if ok else "FAIL  ") + what)
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
