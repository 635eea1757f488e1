"""Session set-up for the Slurm tests: one throw-away cluster for all of
them, torn down by a finalizer even when a test fails or the session is
interrupted."""

import os
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import cluster as slurm_cluster  # noqa: E402


@pytest.fixture(scope="session")
def slurm(request):
    why = slurm_cluster.cannot_run()
    if why:
        msg = "SLURM TESTS SKIPPED: this machine cannot run the Slurm daemons: " + why
        print("\n" + msg, file=sys.stderr)
        # CI sets ZL_REQUIRE_SLURM=1: there a skip would hide a broken set-up.
        if os.environ.get("ZL_REQUIRE_SLURM") == "1":
            pytest.fail(msg + " (ZL_REQUIRE_SLURM=1)")
        pytest.skip(msg)
    root = tempfile.mkdtemp(prefix="zlslurm-")
    c = slurm_cluster.Cluster(root)
    request.addfinalizer(c.stop)
    c.start()
    return c
