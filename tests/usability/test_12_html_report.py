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
             'id="not-passed"', 'id="caliber"', "<h2>Geometric means</h2>", "<h2>Results</h2>", "<h2>Method</h2>"]
    at = [html.find(m) for m in order]
    assert -1 not in at and at == sorted(at), dict(zip(order, at))
    # The four runs that did not pass: one table, not a list of notes.
    table = html[html.find('id="not-passed"'):html.find('id="caliber"')]
    for op, status in (("bmm", "crashed"), ("cos", "preflight_failed"), ("gelu", "failed"), ("rsqrt", "timeout")):
        assert f"<tr><td>{op}</td><td>B</td><td>{status}</td>" in table
    assert "status failed" not in html
    # Op groups labelled once each; every bar's shape and numbers on hover.
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
