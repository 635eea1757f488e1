"""Atomic JSON side files in ZL_CHILD_DIR, merged by the core into run_identity.json.

Each write goes to a temporary file in the same directory, is fsynced, then
renamed over the target, so the core never reads half a file after a crash.
"""

import json
import math
import os
import tempfile

from . import _env


def jsonable(value):
    """Plain JSON values only: NaN/inf become null (json.dumps would emit invalid `NaN`)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def write_atomic(path, text):
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_json(name, data):
    """Write ZL_CHILD_DIR/<name>.json; a no-op outside zlcore (no ZL_CHILD_DIR). Returns the path."""
    directory = _env.child_dir()
    if not directory:
        return None
    path = os.path.join(directory, name + ".json")
    write_atomic(path, json.dumps(jsonable(data), indent=2, sort_keys=True) + "\n")
    return path
