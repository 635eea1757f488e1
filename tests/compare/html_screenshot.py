#!/usr/bin/env python3
"""Renders `zlcore compare --html` in headless Chromium and checks the
screenshot shows the page: the table header, and the plot's bars in the
FASTER green and SLOWER red as tall columns (the verdict chips share those
colours but are only a line high).

    html_screenshot.py ZLCORE DATA_DIR OUT_DIR

Then the page of a 15-op batch A/B (data/report) at 1400 px: the answer
(counts, geomean, the plot's bars) must be on the first screen, before the
table of runs that did not pass and the caliber check.

Leaves OUT_DIR/{compare,report}_page.html and _screenshot.png behind for a
person to look at. PNG decoding is zlib + struct only: no PIL needed.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

FASTER = (0x1B, 0x87, 0x3F)
SLOWER = (0xD1, 0x24, 0x2F)
TABLE_HEADER = (0xDD, 0xE4, 0xEE)
THRESHOLD_BAND = (0xEE, 0xF1, 0xF4)


def decode_png(path):
    """Returns (width, height, rows of RGB tuples) of an 8-bit RGB/RGBA PNG."""
    with open(path, "rb") as f:
        blob = f.read()
    assert blob[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(blob):
        length, kind = struct.unpack(">I4s", blob[pos:pos + 8])
        body = blob[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, f"unsupported PNG {depth=} {colour=}"
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        filt = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if filt == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif filt == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 0xFF
        elif filt == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif filt == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def near(p, q, tol=6):
    return all(abs(a - b) <= tol for a, b in zip(p, q))


def tallest_column(rows, colour):
    """The longest vertical run of `colour` in any pixel column."""
    best = 0
    width = len(rows[0])
    for x in range(width):
        run = 0
        for row in rows:
            run = run + 1 if near(row[x], colour) else 0
            best = max(best, run)
    return best


def render(zlcore, data_dir, out_dir, name, sides, window):
    """Writes OUT_DIR/<name>_page.html for `compare SIDES` and screenshots it
    at `window` (w,h). Returns the PNG's path, or None with the reason printed."""
    page = os.path.join(out_dir, f"{name}_page.html")
    shot = os.path.join(out_dir, f"{name}_screenshot.png")
    for stale in (page, shot):
        if os.path.exists(stale):
            os.remove(stale)
    subprocess.run([zlcore, "compare", *sides, "--html", page], cwd=data_dir, check=True, stdout=subprocess.DEVNULL)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("chromium is not installed: run `bash scripts/install-deps.sh chromium` (make test does)")
        return None
    profile = tempfile.mkdtemp(prefix="zl-chromium-")
    try:
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--hide-scrollbars", "--force-device-scale-factor=1", f"--user-data-dir={profile}",
               f"--window-size={window[0]},{window[1]}", f"--screenshot={shot}", "file://" + os.path.abspath(page)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if not os.path.exists(shot):
        print(f"no screenshot; chromium exited {p.returncode}:\n{p.stderr[-3000:]}")
        return None
    print(f"screenshot: {shot}")
    return shot


def check_report_leads_with_the_answer(zlcore, data_dir, out_dir):
    """A 15-op batch A/B at 1400 px. The first screen (1400 x 900)
    must hold the answer: the plot's FASTER and SLOWER bars and its threshold
    band; the page's order is counts, plot, the runs that did not pass (one
    table), then the caliber check and the rows."""
    shot = render(zlcore, data_dir, out_dir, "report", ["report/a", "report/b"], (1400, 900))
    if shot is None:
        return False
    width, height, rows = decode_png(shot)
    green, red = tallest_column(rows, FASTER), tallest_column(rows, SLOWER)
    band = sum(1 for row in rows for px in row if near(px, THRESHOLD_BAND, 2))
    with open(os.path.join(out_dir, "report_page.html")) as f:
        html = f.read()
    marks = ["FASTER</span></div>", "<svg", 'id="provenance"', 'id="not-passed"', 'id="caliber"',
             "<h2>Geometric means</h2>", "<h2>Results</h2>", "<h2>Method</h2>"]
    at = [html.find(m) for m in marks]
    print(f"report {width}x{height}: tallest FASTER bar {green} px, SLOWER bar {red} px, band {band} px; "
          f"sections at {at}")
    checks = {
        "report: a FASTER bar on the first screen": green >= 20,
        "report: a SLOWER bar on the first screen": red >= 20,
        "report: the threshold band on the first screen": band >= 2000,
        "report: counts, plot, provenance, failed runs, caliber, per-op geomeans, rows, method in that order":
            -1 not in at and at == sorted(at),
        "report: one table of the runs that did not pass":
            html.count("status failed") == 0 and "<td>crashed</td>" in html,
        "report: every bar labelled with its shape under the axis, its numbers on hover":
            html.count("<g><title>") >= 40 and html.count('<text class="bar-label"') == html.count("<g><title>"),
        "report: a whisker past the axis ends in an arrow with its value": html.count('<path class="past-axis"') == 2,
        "report: where and with what each side was measured, after the plot": 'id="provenance"' in html,
    }
    for what, ok in checks.items():
        print(("ok    " if ok else "FAIL  ") + what)
    return all(checks.values())


def main():
    zlcore, data_dir, out_dir = sys.argv[1:4]
    os.makedirs(out_dir, exist_ok=True)
    shot = render(zlcore, data_dir, out_dir, "compare", ["verdicts/a", "verdicts/b"], (1200, 1600))
    if shot is None:
        return 1

    width, height, rows = decode_png(shot)
    pixels = width * height
    non_white = sum(1 for row in rows for px in row if not near(px, (255, 255, 255), 8))
    header = sum(1 for row in rows for px in row if near(px, TABLE_HEADER, 3))
    band = sum(1 for row in rows for px in row if near(px, THRESHOLD_BAND, 2))
    green, red = tallest_column(rows, FASTER), tallest_column(rows, SLOWER)
    print(f"{width}x{height}: {non_white} non-white pixels, table header {header} px, threshold band {band} px, "
          f"tallest FASTER bar {green} px, tallest SLOWER bar {red} px")
    checks = {
        "page is not blank (>= 3 % non-white)": non_white >= 0.03 * pixels,
        "table header rendered": header >= 2000,
        "plot threshold band rendered": band >= 2000,
        "a FASTER bar in the plot": green >= 30,
        "a SLOWER bar in the plot": red >= 30,
    }
    for what, ok in checks.items():
        print(("ok    " if ok else "FAIL  ") + what)
    report_ok = check_report_leads_with_the_answer(zlcore, data_dir, out_dir)
    return 0 if all(checks.values()) and report_ok else 1


if __name__ == "__main__":
    sys.exit(main())
