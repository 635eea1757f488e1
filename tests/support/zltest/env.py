"""The environment a child gets: the caller's, less what must not leak in."""

import os


def clean_env(strip_prefixes=(), strip_names=(), base=None, **set_vars):
    """`base` (default os.environ) without the variables whose name starts with
    one of `strip_prefixes` or is in `strip_names`, then `set_vars` on top
    (values as str; None removes that variable).

    Which variables go is the caller's choice, stated at the call: the areas
    differ on purpose (tests/support/README.md).
    """
    prefixes = tuple(strip_prefixes)
    names = set(strip_names)
    env = {k: v for k, v in (os.environ if base is None else base).items()
           if not (prefixes and k.startswith(prefixes)) and k not in names}
    for key, value in set_vars.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = str(value)
    return env
