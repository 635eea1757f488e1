"""What the outcomes plugin records for a test the suite itself marks as failing here."""
import textwrap


def _suite(tmp_path, body):
    tmp_path.mkdir()
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    knownbad\n")
    (tmp_path / "test_knownbad.py").write_text(textwrap.dedent(body))
    return tmp_path


def test_an_xfailed_test_is_recorded_with_the_suites_reason_and_what_it_raised(run_child, tmp_path):
    suite = _suite(tmp_path / "suite", """\
        import pytest

        @pytest.mark.knownbad
        @pytest.mark.xfail(reason="compiler error on this device")
        def test_knownbad():
            raise RuntimeError("no allocator was set")
        """)
    run = run_child(["-m", "knownbad"], cwd=suite)
    assert run.rc == 0, run.output
    (entry,) = run.child("outcomes")["tests"]
    assert entry["outcome"] == "xfailed"
    assert "compiler error on this device" in entry["message"]
    assert "RuntimeError: no allocator was set" in entry["message"]


def test_a_plain_skip_stays_a_skip(run_child, tmp_path):
    suite = _suite(tmp_path / "suite", """\
        import pytest

        @pytest.mark.knownbad
        def test_knownbad():
            pytest.skip("needs a newer device")
        """)
    run = run_child(["-m", "knownbad"], cwd=suite)
    (entry,) = run.child("outcomes")["tests"]
    assert entry["outcome"] == "skipped"
    assert entry["message"] == "needs a newer device"
