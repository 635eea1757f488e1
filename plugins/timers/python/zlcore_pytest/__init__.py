"""zlcore's pytest plugins, loaded into the benchmark child with `-p zlcore_pytest.<name>`.

Which modules load, and in which order, is decided by plugins/timers/rules.yaml from
the backend's capabilities; everything else comes from environment variables
(docs/run-directory.md). The timers themselves are not pytest plugins: the timing
plugin loads the planned one from the `timers` package, by the name (and module)
rules.yaml gives it. Nothing here may register a pytest option (the suite owns
the option namespace) or import torch/triton at import time (the host suite has
neither, and importing them early would change when the device is initialized).
"""
