"""zlcore-conform against fake backends that each break one rule of the ABI.

ctest passes the kit (ZL_CONFORM) and the directory of fakes built from
tests/loader/fake_backend.c (ZL_CONFORM_FAKES). Each broken fake must fail
its rule, with the reason, and the kit must survive whatever the fake does.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

KIT = os.environ.get("ZL_CONFORM", "")
FAKES = Path(os.environ.get("ZL_CONFORM_FAKES", "."))

pytestmark = pytest.mark.skipif(not KIT, reason="run through ctest (ZL_CONFORM)")


def conform(*args, env=None):
    """Runs the kit; returns (exit code, {rule: (status, reason)}, stdout)."""
    run_env = dict(os.environ)
    run_env.update(env or {})
    p = subprocess.run([KIT, *args], capture_output=True, text=True,
                       env=run_env, timeout=300)
    rules = {}
    for line in p.stdout.splitlines():
        status, _, rest = line.partition(" ")
        rule, _, why = rest.partition(": ")
        rules[rule] = (status, why)
    return p.returncode, rules, p.stdout


def fake(name):
    return str(FAKES / f"{name}.so")


def rule_ids():
    p = subprocess.run([KIT, "--list"], capture_output=True, text=True, check=True)
    return [line.split()[0] for line in p.stdout.splitlines()]


def test_good_fake_passes_every_rule_with_one_line_each():
    rc, rules, out = conform(fake("good"))
    assert rc == 0, out
    assert list(rules) == rule_ids()
    not_passed = {r: v for r, v in rules.items() if v[0] != "PASS"}
    # The fake has no initialize or shutdown, which the ABI allows.
    assert not_passed == {"lifecycle": (
        "SKIP", "the table has no initialize and no shutdown (both optional)")}


def test_segfault_in_enumerate_fails_loads_in_the_loaders_words():
    rc, rules, out = conform(fake("segv_enumerate"))
    assert rc == 1, out
    assert rules["loads"] == ("FAIL", "killed by SIGSEGV in enumerate_devices")
    assert rules["devices"][0] == "SKIP"
    assert rules["exports"][0] == "PASS"


def test_hang_fails_loads_after_the_time_limit():
    rc, rules, out = conform("--timeout", "1", fake("hang_enumerate"))
    assert rc == 1, out
    assert rules["loads"] == ("FAIL", "no answer in 1 s in enumerate_devices")


def test_crash_in_one_rule_fails_that_rule_and_the_others_still_run():
    rc, rules, out = conform(fake("crash_unknown_id"))
    assert rc == 1, out
    assert rules["device-state"] == (
        "FAIL", "killed by SIGSEGV in query_device_state")
    failed = [r for r, (status, _) in rules.items() if status == "FAIL"]
    assert failed == ["device-state"], out
    assert rules["stdout-silent"][0] == "PASS"


def test_missing_entry_fails_loads_and_exports():
    rc, rules, out = conform(fake("no_entry"))
    assert rc == 1, out
    assert rules["loads"] == ("FAIL", "no entry symbol zl_backend_get_api")
    assert rules["exports"] == (
        "FAIL", "the file does not export zl_backend_get_api")


def test_extra_exported_symbol_fails_exports():
    rc, rules, out = conform(fake("extra_export"))
    assert rc == 1, out
    status, why = rules["exports"]
    assert status == "FAIL"
    assert "zl_fake_visible_helper" in why


def test_writing_on_stdout_fails_stdout_silent_and_kit_stdout_stays_clean():
    rc, rules, out = conform(fake("prints_on_stdout"))
    assert rc == 1, out
    status, why = rules["stdout-silent"]
    assert status == "FAIL"
    assert "fake backend" in why
    assert all(line.split()[0] in ("PASS", "FAIL", "SKIP")
               for line in out.splitlines())


def test_device_the_core_leaves_out_fails_devices_with_the_loaders_reason():
    rc, rules, out = conform(fake("no_vis_value"))
    assert rc == 1, out
    status, why = rules["devices"]
    assert status == "FAIL"
    assert "visibility_value" in why


def test_table_smaller_than_its_minor_fails_table_size():
    rc, rules, out = conform(fake("short_table"))
    assert rc == 1, out
    status, why = rules["table-size"]
    assert status == "FAIL"
    assert "does not reach the last entry of ABI 1.2" in why


def test_unreadable_extension_chain_fails_loads():
    rc, rules, out = conform(fake("lie_extension"))
    assert rc == 1, out
    status, why = rules["loads"]
    assert status == "FAIL"
    assert "extension [0]" in why


def test_thread_started_by_the_entry_fails_no_threads_on_load():
    rc, rules, out = conform(fake("thread_on_load"))
    assert rc == 1, out
    assert rules["no-threads-on-load"][0] == "FAIL"


def test_list_that_changes_between_calls_fails_enumerate_idempotent():
    rc, rules, out = conform(fake("grows"))
    assert rc == 1, out
    status, why = rules["enumerate-idempotent"]
    assert status == "FAIL"
    assert why.startswith("the second call reported 2 devices")


def test_backend_that_obeys_its_visibility_variable_fails_visibility_ignored():
    rc, rules, out = conform(fake("honors_visibility"))
    assert rc == 1, out
    assert rules["visibility-ignored"][0] == "FAIL"


def test_zero_devices_skips_the_device_rules_with_the_reason():
    rc, rules, out = conform(fake("good"), env={"ZL_FAKE_DEVICE_COUNT": "0"})
    assert rc == 0, out
    assert rules["device-state"] == (
        "SKIP", "no devices here to ask (fake driver reports no devices)")


@pytest.mark.parametrize("args,words", [
    ([], "no backend file given"),
    (["/nonexistent/backend.so"], "'/nonexistent/backend.so' is not a regular file"),
    (["--timeout", "soon", "x.so"], "--timeout 'soon' is not a number"),
    (["--bogus"], "unknown option '--bogus'"),
])
def test_bad_command_line_exits_2_with_one_line(args, words):
    p = subprocess.run([KIT, *args], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr.splitlines()[0].startswith("zlcore-conform: " + words)


def test_every_flag_and_rule_of_the_kit_is_documented():
    src = Path(os.environ.get("ZL_SOURCE_DIR", Path(__file__).resolve().parents[2]))
    cli = (src / "docs" / "cli.md").read_text()
    abi = (src / "docs" / "backend-abi.md").read_text()
    usage = subprocess.run([KIT, "--help"], capture_output=True, text=True, check=True).stdout
    flags = set(re.findall(r"--[a-z][a-z-]+", usage))
    assert flags >= {"--timeout", "--list"}
    assert sorted(f for f in flags if f"`{f}" not in cli) == []
    assert sorted(r for r in rule_ids() if f"| `{r}` |" not in abi) == []


def test_file_that_is_not_a_library_fails_loads_and_exports(tmp_path):
    text = tmp_path / "notes.so"
    text.write_text("not a backend\n")
    rc, rules, out = conform(str(text))
    assert rc == 1, out
    assert rules["loads"] == ("FAIL", "not an ELF shared object")
    assert rules["exports"][0] == "FAIL"
    assert rules["strings"] == ("SKIP", "the loader rejects the file (loads)")


def test_an_l2_size_in_bytes_passes_the_devices_rule():
    rc, rules, out = conform(fake("good"), env={"ZL_FAKE_L2_BYTES": "52428800"})
    assert rc == 0, out
    assert rules["devices"] == ("PASS", "")


@pytest.mark.parametrize("value", ["0", "-1", "50MB"])
def test_an_l2_size_that_is_no_positive_int64_fails_the_devices_rule(value):
    rc, rules, out = conform(fake("good"), env={"ZL_FAKE_L2_BYTES": value})
    assert rc == 1, out
    status, why = rules["devices"]
    assert status == "FAIL"
    assert why == "device [0] attribute [5] 'l2_cache_bytes' is not an int64 above 0 (the L2's size in bytes)"
