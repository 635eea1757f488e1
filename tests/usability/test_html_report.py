"""The HTML report leads with the answer. Recorded batches of 15
ops (tests/compare/data/report), four of which did not pass on B. The
rendered page is checked in Chromium by compare_html_chromium; here its
order and self-containment."""
from conftest import SRC, zl

DATA = SRC / "tests" / "compare" / "data"


def test_the_page_leads_with_the_answer_and_groups_failed_runs(tmp_path):
    page = tmp_path / "page.html"
    r = zl(tmp_path, "compare", DATA / "report" / "a", DATA / "report" / "b", "--html", page)
    assert r.returncode == 0, r.stderr
    html = page.read_text()
    order = ['<p class="headline">answer: ', "geomean speedup", "FASTER</span></div>", 'class="banner', "<svg",
             'id="provenance"', 'id="not-passed"', 'id="caliber"', "<h2>Geometric means</h2>", "<h2>Results</h2>",
             "<h2>Method</h2>"]
    at = [html.find(m) for m in order]
    assert -1 not in at and at == sorted(at), dict(zip(order, at))
    # The four runs that did not pass: one table, not a list of notes.
    table = html[html.find('id="not-passed"'):html.find('id="caliber"')]
    for op, status in (("bmm", "crashed"), ("cos", "preflight_failed"), ("gelu", "failed"), ("rsqrt", "timeout")):
        assert f"<tr><td>{op}</td><td>B</td><td>{status}</td>" in table
    assert "status failed" not in html
    # Op groups labelled once each; every bar's numbers on hover.
    svg = html[html.find("<svg"):html.find("</svg>")]
    assert svg.count(">layer_norm</text>") == 1
    assert svg.count("<title>") == 61 and "layer_norm  float16  [[1024, 1024]]\nA " in svg
    # A term of the answer is explained where it appears.
    assert "torch control" in html and "the same A/B of torch's own kernel" in html
    # Self-contained: nothing fetched, no script.
    assert "<script" not in html and "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html and "src=" not in html


def test_every_report_opens_with_the_answer_in_a_sentence_with_its_interval(tmp_path):
    a, b = DATA / "report" / "a", DATA / "report" / "b"
    table = zl(tmp_path, "compare", a, b)
    md = zl(tmp_path, "compare", a, b, "--format", "md")
    assert table.returncode == 0 and md.returncode == 0, table.stderr + md.stderr
    first = table.stdout.splitlines()[0]
    assert first.startswith("answer: B is ") or first.startswith("answer: no overall difference shown"), first
    assert "geomean speedup " in first and "99 % interval [" in first and "FASTER on " in first, first
    assert md.stdout.splitlines()[0] == f"**{first}**"
    page = tmp_path / "page.html"
    zl(tmp_path, "compare", a, b, "--html", page)
    body = page.read_text().split("<body>\n", 1)[1]
    assert body.startswith(f'<p class="headline">{first}</p>'), body[:200]  # before the page's title


def test_every_report_names_where_and_with_what_each_side_was_measured(tmp_path):
    """Backend, device, driver, versions and commits, dates and the command,
    from the runs' identities: side B's runs recorded no command and no run
    recorded zlcore's commit, so those read unknown rather than a guess; A's
    runs each recorded their own command, given with how many runs had it."""
    a, b = DATA / "report" / "a", DATA / "report" / "b"
    page = tmp_path / "page.html"
    table = zl(tmp_path, "compare", a, b, "--html", page).stdout
    md = zl(tmp_path, "compare", a, b, "--format", "md").stdout
    block = table[table.find("provenance:\n"):table.find("  speedup = ")]
    for line in ("  backend            gpu0\n", "  device             Example Accelerator X1\n",
                 "  device index (id)  0 (DEV-0000)\n", "  driver             1.0\n",
                 "  FlagGems           4.1, commit abc1234\n", "  zlcore             0.1.0, commit unknown\n",
                 "  Triton             3.6.0\n", "  torch              2.11.0\n",
                 "  measured (UTC)     A 2026-12-02T10:30:00Z to 2026-12-02T10:45:00Z\n"
                 "                     B 2026-12-03T10:30:00Z to 2026-12-03T10:45:00Z\n",
                 "  command            A zlcore run --batch-dir report/a --op abs (1 run); zlcore run --batch-dir "
                 "report/a --op add (1 run); zlcore run --batch-dir report/a --op bmm (1 run); 12 other values\n"):
        assert line in block, block
    assert "                     B unknown\n" in block, block
    assert "| torch | 2.11.0 | same |" in md
    assert "| **command** (differs) | zlcore run --batch-dir report/a --op abs (1 run);" in md
    html = page.read_text()
    prov = html[html.find('id="provenance"'):html.find('id="not-passed"')]
    assert '<tr><th>driver</th><td class="s" colspan="2">1.0</td></tr>' in prov, prov
    assert '<tr><th>zlcore</th><td class="s" colspan="2">0.1.0, commit unknown</td></tr>' in prov, prov
    assert '<td class="s diff">unknown</td>' in prov, prov


def test_every_bar_is_labelled_with_its_shape_without_hovering(tmp_path):
    page = tmp_path / "page.html"
    zl(tmp_path, "compare", DATA / "report" / "a", DATA / "report" / "b", "--html", page)
    svg = page.read_text()
    svg = svg[svg.find("<svg"):svg.find("</svg>")]
    bars = svg.split("<g><title>")[1:]
    assert len(bars) == 61
    for bar in bars:
        op, dtype, shape = bar.split("\n", 1)[0].split("  ")
        label = bar.split('<text class="bar-label"', 1)[1].split(">", 1)[1].split("</text>")[0]
        short = {"float16": "f16", "bfloat16": "bf16"}[dtype]
        assert label == f"{short} {shape}", (op, dtype, shape, label)


def test_a_whisker_past_the_axis_ends_in_an_arrow_with_its_value(tmp_path):
    """relu's float16 [[1024, 1024]] on B spreads 80 % over two clusters: its
    interval runs past both ends of the axis, and both ends say where to."""
    a, b = DATA / "report" / "a", DATA / "report" / "b"
    page = tmp_path / "page.html"
    md = zl(tmp_path, "compare", a, b, "--format", "md", "--html", page).stdout
    row = next(line for line in md.splitlines() if line.startswith("| relu | float16 | `[[1024, 1024]]`"))
    lo, hi = row.split(" | ")[6].strip("[]").split(", ")
    svg = page.read_text()
    arrows = [part.split(">", 1)[1].split("</text>")[0] for part in svg.split('<text class="past-axis"')[1:]]
    assert arrows == [f"{hi} &#8594;", f"&#8592; {lo}"], arrows
    assert svg.count('<path class="past-axis"') == 2
    # Every other whisker ends inside the axis, with its caps.
    assert svg.count("<text class=\"past-axis\"") == 2


def test_summaries_and_the_meaning_of_each_column_come_before_the_full_table(tmp_path):
    a, b = DATA / "report" / "a", DATA / "report" / "b"
    table = zl(tmp_path, "compare", a, b).stdout
    md = zl(tmp_path, "compare", a, b, "--format", "md").stdout
    for text, geo, terms, header in ((table, "geometric means (", "columns: ", "op           dtype"),
                                     (md, "## Geometric means", "columns: ", "| op | dtype | shape |")):
        at = [text.find(m) for m in (geo, "op       layer_norm" if text is table else "| layer_norm |", terms,
                                     header)]
        assert -1 not in at and at == sorted(at), at
    assert "torch A ms, B ms, A/B: torch's own kernel on the same shape in the same runs, a control" in md


def test_a_page_that_cannot_be_written_fails_before_the_report_is_printed(tmp_path):
    a, b = DATA / "report" / "a", DATA / "report" / "b"
    r = zl(tmp_path, "compare", a, b, "--html", tmp_path / "missing" / "page.html")
    assert r.returncode == 2 and r.stdout == ""
    page, missing = tmp_path / "missing" / "page.html", tmp_path / "missing"
    assert r.stderr == f"zlcore: compare: --html {page}: directory {missing} does not exist\n"
    r = zl(tmp_path, "compare", a, b, "--html", tmp_path)
    assert r.returncode == 2 and r.stdout == "" and "is a directory; name a file" in r.stderr
