"""Collect only the test files a run names.

zlcore runs one op as `pytest benchmark/test_<op>.py -m <op>`. pytest still
walks the file's directory and builds a node for every sibling test file
before it keeps the one named (FlagGems' benchmark/ holds ~700 of them:
~0.15 s of every op's collection on the H100 host). The nodes it drops were
never imported, so telling pytest to skip them changes nothing it runs.

Only when every argument names an existing file (a node id's `::` part
aside); a directory argument means its files are wanted. Paths compare by
their real path, so a file named through a link is still found.
"""

import os

_UNSET = object()


class NamedFiles:
    def __init__(self, args, invocation_dir):
        self.files = _UNSET
        self.args = list(args)
        self.invocation_dir = str(invocation_dir)

    def _resolve(self):
        files = set()
        for arg in self.args:
            path = os.path.join(self.invocation_dir, str(arg).split("::", 1)[0])
            if not os.path.isfile(path):
                return None
            files.add(os.path.realpath(path))
        return files or None

    def skips(self, path):
        """True: `path` is a Python file the run did not name (pytest need not look at it)."""
        if self.files is _UNSET:
            self.files = self._resolve()
        if self.files is None:
            return False
        name = os.path.basename(str(path))
        if not name.endswith(".py") or name in ("conftest.py", "__init__.py"):
            return False
        return os.path.realpath(str(path)) not in self.files
