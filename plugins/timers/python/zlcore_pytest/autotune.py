"""Autotune record/replay plugin: placeholder so `-p zlcore_pytest.autotune` loads.

Owned by the autotune engineer, who replaces this file; nothing here yet.
"""
