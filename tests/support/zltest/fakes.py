"""Stand-in programs a test puts where zlcore looks for a real one."""


def executable(path, text):
    """Writes a script and makes it executable; returns path."""
    path.write_text(text)
    path.chmod(0o755)
    return path


def fake_tool(path, recorded, code=0):
    """A vendor tool (nvidia-smi, rocm-smi, ...) that prints a recorded output and exits with code."""
    return executable(path, f"#!/bin/sh\ncat '{recorded}'\nexit {code}\n")
