"""The timers, one module each, behind a registry keyed by the names rules.yaml gives them.

rules.yaml names each timer and its module (`module:`); zlcore's planner
passes the planned timer's module as ZL_TIMER_MODULE and its fallback's as
ZL_TIMER_FALLBACK_MODULE, so a new timer is a new module plus a rules line.
Outside zlcore (or under rules that name no module) the built-in table below
maps the three names zlcore ships.

A timer module provides `NAME` and `create(settings, placer)`, which returns
an object with `name`, `settings_report()` (a dict of its own settings for the
timing report, or None) and `measure(call: SideCall) -> SideTiming`. The graph
timer raises CaptureFailed for a shape it cannot measure; the caller falls
back for that shape.
"""

import importlib

BUILTIN = {
    "graph": "zlcore_pytest.timers.graph",
    "direct": "zlcore_pytest.timers.direct",
    "host": "zlcore_pytest.timers.host",
}


class UnknownTimer(LookupError):
    pass


def module_name(name, env):
    """The module of timer `name`: the planner's choice, else the built-in one."""
    if name and name == env.get("ZL_TIMER", "").strip().lower() and env.get("ZL_TIMER_MODULE", "").strip():
        return env["ZL_TIMER_MODULE"].strip()
    fallback = env.get("ZL_TIMER_FALLBACK", "").strip().lower()
    if name and name == fallback and env.get("ZL_TIMER_FALLBACK_MODULE", "").strip():
        return env["ZL_TIMER_FALLBACK_MODULE"].strip()
    if name in BUILTIN:
        return BUILTIN[name]
    raise UnknownTimer(f"unknown timer {name!r} (known: {', '.join(BUILTIN)}; "
                       f"another needs its module named in rules.yaml)")


def load(name, env):
    """The timer module for `name`; ImportError (with its module named) when it cannot be imported."""
    module = module_name(name, env)
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"timer {name!r}: cannot import {module}: {exc}") from exc
