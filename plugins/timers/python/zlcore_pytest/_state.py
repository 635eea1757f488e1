"""The rendezvous between zlcore's `-p` plugins: keys into pytest's `config.stash`.

The plugins are separate modules loaded with separate `-p` flags, in an order
rules.yaml decides; each keeps its own state in one object per session and
puts in the stash only what another plugin needs from it:

  ROWS     the _rows.Tracker: timing reports every side it measures, results
           writes the rows (whichever configures first creates it);
  CLUSTER  cluster_fix's ClusterProbe, when that plugin is loaded; timing
           probes, checks and explains graph sides through it;
  PROFILE  profile's Profiler, when the run asks for a profile; timing hands
           it each side once that side's measurement has returned.
"""

import pytest

ROWS = pytest.StashKey()
CLUSTER = pytest.StashKey()
PROFILE = pytest.StashKey()


def tracker(config):
    from ._rows import Tracker

    return config.stash.setdefault(ROWS, Tracker())
