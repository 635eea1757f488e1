"""Times the session's phases (see _phases.py) and writes them to .child/phases.json.

Loaded first of zlcore's plugins, so its import marks the end of the
interpreter's and pytest's start. Compilation is timed by wrapping what the
suite compiles through, once it has imported it (nothing is imported here):
Triton's `JITFunction._do_compile` and FlagGems' pointwise code generator
(`PointwiseDynamicFunction.instantiate`). Autotuning is timed where the
autotune plugin already sits (Autotuner._bench), and measuring by the timing
plugin; both push their phase on the same clock.
"""

import functools
import sys
import threading

import pytest

from . import _child
from ._phases import CLOCK

# (module, class, method, phase): where compiling happens, when the suite has them.
HOOK_POINTS = (
    ("triton.runtime.jit", "JITFunction", "_do_compile", "compiling"),
    ("flag_gems.utils.pointwise_dynamic", "PointwiseDynamicFunction", "instantiate", "compiling"),
)
_MARK = "_zl_phase_wrapper"
_installed = []  # (owner, attribute, original) to put back at the session's end


def _wrap(original, phase):
    @functools.wraps(original)
    def timed(*args, **kwargs):
        # One clock, the session's thread's: compilations on other threads
        # (compiling ahead, _precompile.py) are the time that thread waits
        # for them, which it clocks itself.
        if threading.current_thread() is not threading.main_thread():
            return original(*args, **kwargs)
        with CLOCK.phase(phase):
            return original(*args, **kwargs)

    setattr(timed, _MARK, phase)
    return timed


def install():
    """Wrap every hook point the suite has imported by now; idempotent, imports nothing."""
    for module_name, class_name, attribute, phase in HOOK_POINTS:
        owner = getattr(sys.modules.get(module_name), class_name, None)
        current = owner.__dict__.get(attribute) if owner is not None else None
        if current is None or not callable(current):
            continue
        if any(o is owner and a == attribute for o, a, _ in _installed):
            continue
        # A wrapper left by an earlier session of a warm worker whose end never
        # ran (the op was killed) reports to that session's clock: unwrap it.
        while getattr(current, _MARK, None) is not None and hasattr(current, "__wrapped__"):
            current = current.__wrapped__
        setattr(owner, attribute, _wrap(current, phase))
        _installed.append((owner, attribute, current))
        _hooked_seen.add(f"{module_name}.{class_name}.{attribute}")


def uninstall():
    while _installed:
        owner, attribute, original = _installed.pop()
        setattr(owner, attribute, original)


_hooked_seen = set()  # every hook point wrapped during the session, for the report


def write_report():
    report = CLOCK.as_json()
    report["hooked"] = sorted(_hooked_seen)
    return _child.write_json("phases", report)


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    install()
    CLOCK.switch("collection")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session):
    install()
    CLOCK.switch("suite")
    try:
        write_report()  # imports and collection survive a child that dies later
    except OSError:
        pass


def pytest_runtest_setup(item):
    install()  # a test module may import the compiler late


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    CLOCK.switch("teardown")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    uninstall()
    write_report()
