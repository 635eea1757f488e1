"""Children: the built zlcore, and pytest on a suite."""

import subprocess

from .paths import PY, ZLCORE


def zl(*args, env=None, timeout=120, cwd=None, exe=None, backend_dir=None):
    """`zlcore [--backend-dir DIR] ARGS...` with stdout and stderr captured as text.

    exe defaults to $ZLCORE, else `zlcore` from PATH; env to the caller's
    (pass clean_env(...)); arguments go through str().
    """
    argv = [exe or ZLCORE or "zlcore"]
    if backend_dir:
        argv += ["--backend-dir", str(backend_dir)]
    argv += [str(a) for a in args]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout,
                          cwd=None if cwd is None else str(cwd))


def run_pytest(args, cwd, env, python=PY, plugins=(), timeout=120, merge_stderr=False):
    """`python -m pytest -p no:cacheprovider [-p PLUGIN]... ARGS` in cwd.

    merge_stderr: one stream (stdout) in the order the child wrote it, as a
    terminal shows it; else stdout and stderr apart.
    """
    command = [python, "-m", "pytest", "-p", "no:cacheprovider"]
    for name in plugins:
        command += ["-p", name]
    command += list(args)
    if merge_stderr:
        return subprocess.run(command, cwd=str(cwd), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout)
    return subprocess.run(command, cwd=str(cwd), env=env, capture_output=True, text=True, timeout=timeout)
