"""Pins the framework to the device zlcore chose, and records what it sees.

At import (pytest imports `-p` plugins before any conftest, so before
flag_gems can be imported): export the vendor zlcore named as GEMS_VENDOR,
which FlagGems reads before its other vendor variables and before probing.

At session start, for a torch device (ZL_TORCH_DEVICE = cuda, musa, npu, ...;
nothing to check for cpu): the framework must see exactly one device, and it
must be the one zlcore pinned through the backend's visibility variable
(ZL_EXPECT_DEVICE_ID, compared with the framework's UUID or PCI bus id where it
reports one). Otherwise the session stops with exit code 3 and
`PREFLIGHT_FAILED check=device_setup` before anything is measured.

Either way ZL_CHILD_DIR/device_setup.json records the device facts the
framework reports and the versions of python, torch, triton, flag_gems and the
suite.
"""

import importlib
import os
import platform
import re
import sys

import pytest

from . import _child, _env
from ._memory import DeviceMemory

EXIT_DEVICE_MISMATCH = 3  # zlcore's own "preflight failed" code
VENDOR_ALIASES = ("FLAGGEMS_VENDOR", "GEMS_BACKEND", "FLAGGEMS_BACKEND")


def _apply_vendor():
    vendor = _env.vendor()
    state = {
        "vendor": vendor or None,
        "source": "GEMS_VENDOR" if vendor else "autodetect",
        "flag_gems_imported_first": "flag_gems" in sys.modules,
        "other_vendor_vars": {k: os.environ[k] for k in VENDOR_ALIASES if os.environ.get(k)},
    }
    if vendor:
        # Normalized (stripped) value: FlagGems compares it with its vendor names.
        os.environ["GEMS_VENDOR"] = vendor
    return state


VENDOR_STATE = _apply_vendor()


# -- ids -------------------------------------------------------------------------

_HEX = re.compile(r"[0-9a-f]")
_PCI = re.compile(r"^(?:([0-9a-f]{4,8}):)?([0-9a-f]{2}):([0-9a-f]{2})\.([0-9a-f])$")


def uuid_hex(text):
    """'GPU-967ef875-e3f7-...' / '967ef875-e3f7-...' / bytes -> 32 hex digits, or None."""
    if text is None:
        return None
    if isinstance(text, (bytes, bytearray)):
        digits = bytes(text).hex()
    else:
        value = str(text).strip().lower()
        value = re.sub(r"^[a-z]*[g-z][a-z]*-", "", value)  # a word prefix such as GPU- or MIG-
        digits = "".join(_HEX.findall(value))
        if len(digits) != len(re.sub(r"[-{}\s]", "", value)):
            return None  # other characters left: not a plain UUID
    return digits if len(digits) == 32 else None


def pci_tuple(text):
    if not text:
        return None
    match = _PCI.match(str(text).strip().lower())
    if not match:
        return None
    domain, bus, device, function = match.groups()
    return (int(domain or "0", 16), int(bus, 16), int(device, 16))


# -- versions --------------------------------------------------------------------

DISTRIBUTIONS = {"torch": "torch", "triton": "triton", "flag_gems": "flag_gems"}


def module_version(module_name, dist_name=None):
    """The imported module's __version__, else the installed distribution's; never imports."""
    module = sys.modules.get(module_name)
    version = getattr(module, "__version__", None) if module is not None else None
    if version is not None:
        return str(version)
    try:
        from importlib import metadata
    except ImportError:
        return None
    for name in filter(None, (dist_name, module_name, module_name.replace("_", "-"))):
        try:
            return metadata.version(name)
        except Exception:
            continue
    return None


def versions():
    suite_name = _env.bench_package()
    suite = sys.modules.get(suite_name)
    info = {
        "python": platform.python_version(),
        "torch": module_version("torch"),
        "triton": module_version("triton"),
        "flag_gems": module_version("flag_gems"),
        "suite": {
            "package": suite_name,
            "path": os.path.dirname(getattr(suite, "__file__", "") or "") or None,
            "version": getattr(suite, "__version__", None),
        },
    }
    torch = sys.modules.get("torch")
    version = getattr(torch, "version", None)
    for key in ("cuda", "hip"):
        value = getattr(version, key, None)
        if value:
            info["torch_" + key] = str(value)
    return info


# -- device check ----------------------------------------------------------------


def _device_module(device):
    torch = importlib.import_module("torch")
    module = getattr(torch, device, None)
    if module is None or not hasattr(module, "device_count"):
        try:
            importlib.import_module("torch_" + device)  # torch_npu, torch_musa register torch.<device>
        except ImportError:
            pass
        module = getattr(torch, device, None)
    if module is None or not hasattr(module, "device_count"):
        raise RuntimeError(f"torch has no '{device}' device module")
    return module


PROPERTY_FIELDS = ("name", "total_memory", "major", "minor", "multi_processor_count", "pci_bus_id",
                   "pci_device_id", "pci_domain_id", "gcnArchName")


def _properties(module):
    props = module.get_device_properties(0)
    facts = {}
    for field in PROPERTY_FIELDS:
        value = getattr(props, field, None)
        if value is not None:
            facts[field] = value if isinstance(value, (int, float, str)) else str(value)
    uuid = getattr(props, "uuid", None)
    if uuid is not None:
        facts["uuid"] = uuid.hex() if isinstance(uuid, (bytes, bytearray)) else str(uuid)
    return facts


def _check_identity(expected, facts):
    """(status, message): status is "match", "mismatch" or "skipped"."""
    if not expected:
        return "skipped", "ZL_EXPECT_DEVICE_ID unset"
    want_uuid = uuid_hex(expected)
    if want_uuid is not None:
        got = uuid_hex(facts.get("uuid"))
        if got is None:
            return "skipped", "the framework reports no device UUID"
        if got != want_uuid:
            return "mismatch", f"device 0 has UUID {facts.get('uuid')}, zlcore pinned {expected}"
        return "match", "uuid"
    want_pci = pci_tuple(expected)
    if want_pci is not None:
        if facts.get("pci_bus_id") is None or facts.get("pci_device_id") is None:
            return "skipped", "the framework reports no PCI bus id"
        got = (int(facts.get("pci_domain_id") or 0), int(facts["pci_bus_id"]), int(facts["pci_device_id"]))
        if got != want_pci:
            return "mismatch", f"device 0 is at PCI {got}, zlcore pinned {expected}"
        return "match", "pci"
    return "skipped", f"ZL_EXPECT_DEVICE_ID {expected!r} is neither a UUID nor a PCI bus id"


def collect():
    device = _env.torch_device()
    report = {
        "schema": 1,
        "ok": True,
        "error": None,
        "backend": _env.text("ZL_BACKEND") or None,
        "torch_device": device or None,
        "vendor": VENDOR_STATE,
        "visibility": {name: os.environ.get(name) for name in _env.visibility_vars()},
        "expect_device_id": _env.expect_device_id() or None,
        "device_count": None,
        "device": None,
        "id_check": None,
        "framework": {},
    }
    if _env.uses_torch_device():
        try:
            module = _device_module(device)
            count = int(module.device_count())
            report["device_count"] = count
            if count != 1:
                pinned = ", ".join(f"{k}={v}" for k, v in report["visibility"].items()) or "no visibility variable"
                raise RuntimeError(f"the framework sees {count} '{device}' devices, expected exactly 1 ({pinned})")
            facts = _properties(module)
            report["device"] = facts
            report["memory_at_start"] = DeviceMemory(device).snapshot()
            status, message = _check_identity(report["expect_device_id"], facts)
            report["id_check"] = {"status": status, "detail": message}
            if status == "mismatch":
                raise RuntimeError(message)
        except Exception as exc:
            report["ok"] = False
            report["error"] = f"{type(exc).__name__}: {exc}" if not isinstance(exc, RuntimeError) else str(exc)
    flag_gems = sys.modules.get("flag_gems")
    if flag_gems is not None:
        for name in ("vendor_name", "device"):
            value = getattr(flag_gems, name, None)
            if value is not None:
                report["framework"]["flag_gems_" + name] = str(value)
    report["versions"] = versions()
    return report


REPORT = None


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    global REPORT
    REPORT = collect()
    _child.write_json("device_setup", REPORT)
    if not REPORT["ok"]:
        message = f"PREFLIGHT_FAILED check=device_setup: {REPORT['error']}"
        sys.stderr.write("zlcore device_setup: " + message + "\n")
        pytest.exit(message, returncode=EXIT_DEVICE_MISMATCH)


def pytest_sessionfinish(session, exitstatus):
    # Versions again: the suite imports triton and friends after session start.
    if REPORT is not None and REPORT["ok"]:
        REPORT["versions"] = versions()
        if _env.uses_torch_device():
            REPORT["memory_at_end"] = DeviceMemory(_env.torch_device()).snapshot()
        _child.write_json("device_setup", REPORT)
